// Fuzz target, differential: the Chrome trace reader's three paths (the strict scanner with DOM
// batches, DOM batches alone with tiny batches, the whole-document on-demand parse), and the
// first two cut into chunks read on several threads, must give the same spans and counts, or the
// same error.
#include "fuzz_util.hpp"

#include "prof/spans/chrome_paths.hpp"

#include <fmt/format.h>
#include <iterator>

namespace {
std::string show(const prof::span_set& s) {
    std::string out = fmt::format("events {} async {} unclosed {} unit '{}'\n", s.events, s.async_unmatched,
                                  s.unclosed, s.display_time_unit);
    for (const auto& d : s.defects) out += fmt::format("defect {} first line {}\n", d.count, d.first_line);
    for (const auto& sp : s.spans) out += fmt::format("{} {} {}\n", s.names.at(sp.node), sp.start_ns, sp.end_ns);
    return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string padded = fuzz::padded_copy(fuzz::text_of(data, size));
    std::string_view text(padded.data(), size);
    struct way {
        std::size_t batch;
        bool scan;
        unsigned jobs;
    };
    const way ways[] = {{std::size_t{1} << 20, true, 1}, {64, false, 1}, {0, true, 1}, {std::size_t{1} << 20, true, 3},
                        {64, false, 2}};
    std::string first;
    for (std::size_t k = 0; k < std::size(ways); ++k) {
        chrome_paths paths;
        paths.batch_bytes = ways[k].batch;
        paths.scan = ways[k].scan;
        paths.jobs = ways[k].jobs;
        paths.min_chunk_bytes = 1;
        std::string got;
        std::string err = fuzz::outcome([&] { got = show(read_chrome_trace(text, "trace.json", paths)); });
        std::string result = err.empty() ? got : err;
        if (k == 0) first = result;
        else if (result != first)
            fuzz::finding(fmt::format("read_chrome_trace(batch {}, scan {}, jobs {}) gave\n{}\nbut the default gave\n{}",
                                      ways[k].batch, ways[k].scan, ways[k].jobs, result, first));
    }
    return 0;
}
