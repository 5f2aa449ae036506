// Fuzz target: the gzip decoder (files and HTTP bodies) over arbitrary bytes, read in reads of
// sizes taken from the input: it decodes or throws io_error, and the bytes it returns do not
// depend on the read sizes.
#include "fuzz_util.hpp"

#include "prof/io/json_in.hpp"

#include <algorithm>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    if (size == 0) return 0;
    std::size_t step = 1 + data[0] % 97;
    std::string in(fuzz::text_of(data + 1, size - 1));
    auto decode = [&](std::size_t chunk) {
        std::string out;
        std::string err = fuzz::outcome([&] {
            auto g = gunzip(string_source(in, "x.gz"));
            std::vector<char> buf(chunk);
            for (std::size_t n; (n = g->read(buf.data(), buf.size())) > 0;) {
                out.append(buf.data(), n);
                if (out.size() > (16u << 20)) break;  // a bomb: enough is seen
            }
            out.resize(std::min<std::size_t>(out.size(), 16u << 20));
        });
        return err.empty() ? out : err;
    };
    if (decode(step) != decode(65536)) fuzz::finding("gunzip's output depends on the read size");
    return 0;
}
