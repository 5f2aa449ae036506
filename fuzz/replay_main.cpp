// Replays a fuzz target over files without libFuzzer: each file named, or each file in each
// directory named (sorted), is given once to LLVMFuzzerTestOneInput. `make check` builds every
// target with this driver and the project's own compiler, so a reproducer kept in fuzz/corpus/
// stays fixed on machines without clang. A finding aborts (exit by SIGABRT).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        fs::path p(argv[i]);
        if (fs::is_directory(p)) {
            for (const auto& e : fs::directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
            return 2;
        }
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay: %s\n", f.c_str());
        // A copy of exactly `size` bytes, as libFuzzer gives: reading past it is a bug ASan sees.
        std::vector<std::uint8_t> exact(data.begin(), data.end());
        LLVMFuzzerTestOneInput(exact.data(), exact.size());
    }
    std::printf("replay: %zu inputs\n", files.size());
    return 0;
}
