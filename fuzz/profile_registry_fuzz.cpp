// Fuzz target: the compute_profile reader (registry run files, baselines, prof-plan's input) and
// the registry index reader. A profile read is written and read back and must come out
// byte-identical; the index reader never throws for a bad line (it skips it with a warning).
#include "fuzz_util.hpp"

#include "prof/profile/profile.hpp"
#include "prof/resolve/resolve.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string_view text = fuzz::text_of(data, size);
    fuzz::outcome([&] {
        std::string once = write_profile(parse_profile_text(text, "run.json"));
        std::string twice = write_profile(parse_profile_text(once, "again.json"));
        if (once != twice) fuzz::finding("profile changed on a second read:\n" + once + "\n" + twice);
    });
    std::string err = fuzz::outcome([&] { parse_registry_index(std::string(text), "index.jsonl"); });
    if (!err.empty()) fuzz::finding("the registry index reader threw: " + err);
    return 0;
}
