// The Chrome reader's parse paths one at a time, for the differential tests and the fuzzer
// (spans_test.cpp, fuzz/chrome_trace_fuzz.cpp): every path, batch size and chunking must give
// the result and the error read_chrome_trace gives. Not for use by tools.
//
// The paths: the common shapes (a bare array; an object holding "traceEvents" once, among
// members the scanner can check and skip) are checked to be UTF-8 once, then read event by event
// in place by a strict scanner of a subset of JSON (json_scan.hpp); an event it declines (an
// escape in a name, a fractional pid, ...) starts a batch of about `batch_bytes` parsed by
// simdjson's DOM parser (cut at "},{" boundaries, each batch validated whole before any event is
// taken, a bad cut extended to the next boundary), so memory stays bounded and every batch is
// parsed in cache. The DOM keeps a number only as a double, so a span's time with a fraction
// found there sends the trace to the whole-document parse, which reads its text. Any other
// shape, and any error, goes through one whole-document parse with simdjson's on-demand parser,
// which is also what names the line of a bad event.
//
// Chunks: with more than one job, the event array is cut at "},{" boundaries into at least
// `jobs` chunks of about `chunk_bytes` (more chunks than threads, taken from a shared counter,
// so that the threads finish together), none shorter than `min_chunk_bytes`; each is read by
// the scanner and DOM batches on whichever thread takes it. A cut inside a
// string cannot pass unnoticed: the chunk before it then ends inside that string, which no
// parser accepts, and any chunk that fails sends the whole trace to the whole-document parse.
#pragma once

#include "prof/spans/chrome.hpp"

namespace prof {

struct chrome_paths {
    std::size_t batch_bytes = std::size_t{1} << 20;  // 0: the whole-document parse only
    bool scan = true;                                // false: every event through DOM batches
    unsigned jobs = 1;
    std::size_t chunk_bytes = std::size_t{4} << 20;
    std::size_t min_chunk_bytes = std::size_t{1} << 20;
    // The file mapping the text lies in (byte_source.hpp), when its pages may be released:
    // they are, behind the readers, and the event array is then cut into chunks on one thread
    // too. The result does not depend on it.
    const memory_region* mapped = nullptr;
};
span_set read_chrome_trace(std::string_view padded_text, const std::string& source, const chrome_paths& paths,
                           chrome_read_stats* stats = nullptr);
span_set read_chrome_stream(std::string_view head, byte_source& rest, const std::string& source, const chrome_paths& paths,
                            chrome_read_stats* stats, std::uint64_t& bytes);

}  // namespace prof
