// The Chrome reader of the spans area: a trace in the Trace Event Format (PyTorch, clangd,
// Node, viztracer, Perfetto exports) as spans, with what it tolerated and what it refused.
#pragma once

#include "prof/spans/span_set.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

struct memory_region;

// How the reader went about one trace, for prof-spans --stats and the tests: events taken by
// the strict in-place scanner, events taken from simdjson DOM batches, or the whole document by
// simdjson's on-demand parser; and on how many threads the event array was read.
struct chrome_read_stats {
    std::size_t scanned_events = 0;
    std::size_t dom_events = 0;
    bool whole_document = false;
    std::size_t chunks = 1;  // chunks the event array was cut into (1 when read in one piece)
    bool streamed = false;   // read from a stream through a ring of chunks (read_chrome_stream)
};
// The --stats words: "; events: 3 scanned, 0 from DOM batches" (and " in 2 chunks" when cut
// into several, ", from a stream" when read through the ring) or "; events read by one
// whole-document parse".
std::string stats_words(const chrome_read_stats& st);

// Chrome Trace Event Format: an object with "traceEvents" or a bare array of events (the JSON
// Array Format, whose closing ']' is optional: a trace cut short may end after any whole event,
// with or without its comma). Spans are 'X' events (ts, dur) and 'B'/'E' pairs matched per
// (pid, tid) with nesting: per thread the events are ordered by ts (ties keep file order) and an
// 'E' closes the innermost open 'B', whatever its name (a different name is counted). Instants,
// metadata, counters, flow and async events do not count; async begins with no end are counted.
// ts and dur are microseconds whatever displayTimeUnit says (the format defines it as a display
// setting only; it is kept in span_set). Each is read exactly to the nanosecond from its decimal
// text, never through a double (5.1 is 5100 ns; digits below the nanosecond round half away
// from zero), and must be below 9e15 µs in magnitude, as must an 'X' event's end; a string
// holding a JSON number ("100", "5.1") reads as that number, as quoted numbers do in
// prof-harvest's rows. Identity fields (pid, tid, cat, id) are compared in one canonical text: a
// string by its unescaped contents, an integer in decimal, another number as the shortest text
// of its double. An event that cannot be used is skipped and counted by its event_defect, the
// line of the first of each kind found; invalid JSON, a ts or dur that is not a number where it
// is needed, a negative dur and a name that is not a string are input_error naming the line
// (exit 65).
//
// The event array of the common shapes is cut at event boundaries into chunks read on up to
// `jobs` threads (each thread taking the next chunk as it is free), the results joined in file
// order: the result, and every error, is the
// same for every `jobs`. `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
// `stats`, when given, receives how the trace was read. `mapped`, when given, is the file
// mapping `text` lies in (byte_source.hpp's memory_region): its pages are released behind the
// readers as the chunks are read, so that a large trace read from a file holds about the
// memory the same trace read from a stream does (the spans, not the text).
span_set read_chrome_trace(std::string_view padded_text, const std::string& source, unsigned jobs = 1,
                           chrome_read_stats* stats = nullptr, const memory_region* mapped = nullptr);

class byte_source;

// A Chrome trace read from a stream that is not mapped (stdin, a pipe, a gzip file, a URL), to
// the result and the errors read_chrome_trace gives for the whole text: `head` holds its first
// bytes (already read; when it holds all of the text before the event array, in a shape the
// scanner checks, the fast path below serves), `rest` the others. The event array is cut at
// event boundaries into chunks of about 4 MiB that up to `jobs` threads read while this one
// reads the stream, through a ring of 2 x jobs + 1 chunk buffers: memory holds the ring and
// the spans, not the text. Chunks are joined in file order; a chunk that cannot be read so (an
// error, an event the fast readers decline whose line must be found, a cut inside an event) is
// read again, with everything after it, by the whole-document parse behind the trace's header,
// from where the chunks before it left off. `bytes` receives the bytes read.
span_set read_chrome_stream(std::string_view head, byte_source& rest, const std::string& source, unsigned jobs,
                            chrome_read_stats* stats, std::uint64_t& bytes);

// A JSON number token (RFC 8259 grammar, already checked) of microseconds as integer
// nanoseconds, from its decimal digits: exact, rounded half away from zero below the
// nanosecond. false when the value is 9e15 µs or more in magnitude (nothing is written then).
bool micros_token_to_ns(std::string_view token, std::int64_t& ns);

// What prof-spans says on stderr of a Chrome trace it read: notes (async begins without an end,
// an array without its closing ']') and warnings (one line per defect met, with its count and
// the line of the first; 'B'/'E' events left unmatched; a displayTimeUnit the format does not
// define, which changes nothing: times are microseconds).
struct trace_report {
    std::vector<std::string> notes, warnings;
};
trace_report report_trace(const span_set& s, const std::string& source);
// --strict: throws input_error naming the line of the first defect in file order, if any.
void refuse_defects(const span_set& s, const std::string& source);
// The --stats words for the defects met ("x-without-dur 2, unknown-phase 1"); "" for none.
std::string defect_counts(const span_set& s);

}  // namespace prof
