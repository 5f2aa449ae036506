// Fuzz target: keys in file names. Components (the input split at NUL bytes) survive
// percent_encode/percent_decode; a key's file name is one path component inside the root, and
// two different keys never share a name; percent_decode of arbitrary text decodes or refuses.
#include "fuzz_util.hpp"

#include "prof/io/keys.hpp"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string_view text = fuzz::text_of(data, size);
    std::vector<std::string> key;
    std::size_t at = 0;
    for (;;) {
        std::size_t z = text.find('\0', at);
        key.emplace_back(text.substr(at, z == std::string_view::npos ? std::string_view::npos : z - at));
        if (z == std::string_view::npos) break;
        at = z + 1;
    }
    for (const auto& c : key) {
        std::string e = percent_encode(c);
        if (percent_decode(e) != c) fuzz::finding("percent_decode(percent_encode(x)) != x");
        if (e.find_first_of("/.@") != std::string::npos) fuzz::finding("an encoded component holds '/', '.' or '@': " + e);
    }
    std::string name = key_file_name(key);
    if (name.find('/') != std::string::npos) fuzz::finding("a key file name that is not one path component: " + name);
    if (name.size() > 220) fuzz::finding("a key file name longer than 220 bytes");
    // A different key (one more component, or the last one changed) names another file.
    std::vector<std::string> other = key;
    other.back() += "x";
    if (key_file_name(other) == name) fuzz::finding("two keys share a file name: " + name);
    other = key;
    other.emplace_back();
    if (key_file_name(other) == name) fuzz::finding("two keys share a file name: " + name);
    fuzz::outcome([&] { path_under("/root", name + ".json"); });
    fuzz::outcome([&] { percent_decode(text); }, true);
    return 0;
}
