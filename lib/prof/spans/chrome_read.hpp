// What the Chrome trace reader's document path (chrome.cpp) and its stream path
// (chrome_stream.cpp) share: the shape of the event array, the offsets a resumed text carries,
// and the scanners both use. Not a public header: chrome.hpp is.
#pragma once

#include "prof/spans/chrome.hpp"
#include "prof/spans/chrome_paths.hpp"
#include "prof/spans/formats.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/spans/chrome_events.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace prof::chrome_detail {

std::size_t line_of(std::string_view text, const char* loc);

// The event array of the shapes the fast path reads: a bare array, or an object with one
// "traceEvents" array among members the scanner can check (displayTimeUnit kept when it is a
// string without escapes). nullopt for anything else, which the whole-document path reads.
struct event_array {
    std::string_view whole;     // the text without a byte order mark and surrounding whitespace
    std::string_view interior;  // between the array's brackets
    std::string display_time_unit;
};

// What came before a text that continues a stream (a header rebuilt in front of the chunk that
// the stream's fast path could not read, and what followed it): the events already consumed and
// the lines between the header and that chunk, added to every index and line found in `text`.
struct resumed {
    std::size_t events = 0, lines = 0;
    std::size_t header_bytes = 0;  // the rebuilt header: the stream's own first bytes
    // A position in the header (or none, or past the text, where simdjson may place an error
    // that has no position) counts lines as the whole file does: from the header's start.
    std::size_t line(std::string_view text, const char* at) const {
        const bool resumed_part = at && at >= text.data() + header_bytes && at <= text.data() + text.size();
        return line_of(text, at) + (resumed_part ? lines : 0);
    }
};

std::string_view skip_ws(std::string_view t);

std::string_view skip_ws_back(std::string_view t);

std::optional<event_array> event_array_of(std::string_view text);

// The members of a trace object before its events, from just past its '{': checked and skipped
// (displayTimeUnit kept) up to the value of "traceEvents", where `s` is left.
bool members_before_events(json_scanner& s, event_array& out);

// The members after the event array, from just past its ']' to the object's '}' (excluded).
bool members_after_events(json_scanner after, event_array& out);

// The first event boundary at or after `from`: the position just past a '}' that is followed,
// across whitespace, by ',' and then '{'. npos when there is none. The boundary may lie inside
// a string or a nested array; a batch cut there does not parse, which the caller detects.
std::size_t next_boundary(std::string_view in, std::size_t from);

// A cut at `cut` (a boundary) is taken only when the object after it reads as an event with a
// phase: the objects of an array inside an event's args ("stackTrace": [{...},{...}]) have none,
// and a cut among them would fail the chunk before it. Only speed depends on this guess.
bool starts_event(std::string_view in, std::size_t at);

// One chunk of the event array (whole events, no comma before the first or after the last),
// checked to be UTF-8, then read by the scanner, each event it declines starting a DOM batch.
// nullopt on any error: the whole-document parse then reads the trace and names the error's
// line. Room for `expected_spans` is reserved (the first chunk reserves for the whole trace, so
// that the others are appended without moving it).
std::optional<trace_events> read_chunk(std::string_view in, const char* readable_end, std::size_t batch, bool scan, std::size_t expected_spans);

// For a JSON Array Format trace without its closing ']': the text up to its last whole event
// (a '}'), without the whitespace and the one comma after it; or just its '['. nullopt for any
// other text (a closed array, an object, a text cut inside an event), which is read as it is.
std::optional<std::string_view> unclosed_array_prefix(std::string_view text);

// The whole-document path from start to end: `text` read into `r` after `before`.
span_set read_resumed(std::string_view text, const std::string& source, trace_events r, resumed before);

}  // namespace prof::chrome_detail
