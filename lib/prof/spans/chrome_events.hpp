// Inside the Chrome reader (not for use outside lib/prof/spans/): the one rule set for a trace
// event's fields and the sink that turns events into spans. Three parsers read events
// (chrome_parse.hpp: the in-place scanner, simdjson's DOM, simdjson's on-demand parser); each
// only says which JSON value it met for which key, and the rules here say what that value
// means, so the parsers cannot disagree on a field.
#pragma once

#include "prof/io/interner.hpp"
#include "prof/spans/span_set.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace prof {

// Time points are integer nanoseconds below 9e18 in magnitude (9e15 µs, 285 years) on every
// path, integers and fractions alike: the difference of two fits 64 unsigned bits, and an 'X'
// event's end (ts + dur) is checked against the same bound.
inline constexpr std::int64_t max_us = 9000000000000000;
inline constexpr std::int64_t max_ns = max_us * 1000;

// A ts or dur as read. A later key replaces an earlier one. `inexact`: a number with a fraction
// seen only as a double (the DOM parser), which only a reader of its text can take exactly.
enum class time_state : std::uint8_t { absent, ok, null_value, not_number, out_of_range, inexact };

// The simdjson DOM parser met a span's time with a fraction, or a double too near the bound to
// tell: the trace goes to the whole-document parse, which reads the number's text.
struct needs_number_text {};

// Only the state is initialized: ns is read only once the state is ok, and zeroing both fields
// for every event is measurable in the hot loop.
struct time_field {
    std::int64_t ns;
    time_state state = time_state::absent;

    // The rules, by the JSON value met. An integer of microseconds, as its magnitude and sign
    // (the scanner reads digits) or as an int64:
    void micros(std::uint64_t magnitude, bool negative) {
        if (magnitude >= static_cast<std::uint64_t>(max_us)) {
            state = time_state::out_of_range;
            return;
        }
        auto v = static_cast<std::int64_t>(magnitude) * 1000;
        ns = negative ? -v : v;
        state = time_state::ok;
    }
    void integer(std::int64_t us) { micros(us < 0 ? 0 - static_cast<std::uint64_t>(us) : static_cast<std::uint64_t>(us), us < 0); }
    // A number's token (RFC 8259 grammar, already checked), read exactly from its digits.
    void number_text(std::string_view token);
    // Nanoseconds already computed from a number's digits (the scanner's fast decimals):
    // `magnitude` in ns, `over` when the digits overflowed 64 bits.
    void nanoseconds(std::uint64_t magnitude, bool negative, bool over) {
        if (over || magnitude >= static_cast<std::uint64_t>(max_ns)) {
            state = time_state::out_of_range;
            return;
        }
        ns = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
        state = time_state::ok;
    }
    // A string holding a JSON number reads as that number: the rule of read_number (json_in.hpp),
    // by which prof-harvest reads quoted numbers in rows; anything else ("abc", " 1", "NaN") is no
    // number.
    void string(std::string_view contents);
    // A number the parser kept only as a double (the DOM parser): inexact when certainly in
    // range, out of range when certainly not, else needs_number_text is thrown.
    void double_only(double value);
    void null() { state = time_state::null_value; }
    void not_number() { state = time_state::not_number; }  // true, false, an object, an array
    void too_large() { state = time_state::out_of_range; }  // an integer beyond int64
};

// The phase of an event whose "ph" is not a one-character string.
inline constexpr char unknown_ph = '\x01';

// The fields of one trace event that matter here, read in one pass over its members.
struct event_fields {
    char ph = 0;            // 0: no "ph"; unknown_ph: not a one-character string
    bool empty = true;      // no member at all
    bool bad_name = false;  // "name" is not a string
    time_field ts, dur;
    std::string_view name, cat, id, pid, tid;  // name.data() == nullptr: no name

    // The rules of "ph" and "name", by the JSON value met.
    void phase_string(std::string_view contents) { ph = contents.size() == 1 ? contents[0] : unknown_ph; }
    void phase_not_string() { ph = unknown_ph; }
    void name_string(std::string_view contents) {
        name = contents;
        bad_name = false;
    }
    void name_not_string() {
        name = {};
        bad_name = true;
    }
    // Whether the phase keeps pid and tid (B/E pairs), or cat and id (async events).
    bool wants_thread() const { return ph == 'B' || ph == 'E'; }
    bool wants_async_id() const { return ph == 'b' || ph == 'e' || ph == 'S' || ph == 'F'; }
};

// The identity fields (pid, tid, cat, id) are compared as text, in one canonical form on every
// path, so that a thread is one thread however its pid is spelled: a string as its unescaped
// contents in quotes, an integer in decimal, any other number as the shortest text that reads
// back as the same double, a literal as its word, a container as its minified text. For the
// plain forms that is the raw token, which the parsers pass on without a copy.
std::string_view identity_of_string(std::string_view contents, std::string& scratch);
std::string_view identity_of_integer(std::int64_t i, std::string& scratch);
std::string_view identity_of_double(double d, std::string& scratch);

// The keys an event is read for: one table for the three parsers (json_scan.hpp's key_id; the
// scanner's key_predictor remembers these ids). "id2" is read as "id".
enum class trace_key : std::uint8_t { ph, ts, dur, name, pid, tid, cat, id, other };
trace_key trace_key_of(std::string_view key);

// The state of one pass over events (all of a trace's, or one chunk's in file order): spans,
// interned names and threads, B/E events waiting to be matched, async begins and ends. Every key
// it keeps is its own copy, so events may come from a buffer that is reused between batches.
// Chunks read apart are joined in file order by append(); finish() then matches B/E pairs.
class trace_events {
public:
    span_set out;
    std::size_t index = 0;  // events consumed (1-based index of the last one)
    // Where the event being consumed starts in the text, when the caller knows (the scanner);
    // kept for each defect's first event, so that its line needs no second walk of the events.
    const char* event_at = nullptr;
    std::array<const char*, event_defect_kinds> first_at{};
    std::size_t scanned = 0, from_dom = 0;  // events read by the scanner, by DOM batches

    explicit trace_events(std::size_t expected_spans) { out.spans.reserve(expected_spans); }

    // One more event: start_event() before its fields are parsed (so that an error names it),
    // take() applies the event rules to them (throws field_error for a bad span event).
    void start_event() { ++index; }
    void take(const event_fields& e);
    void consume(const event_fields& e) {
        start_event();
        take(e);
    }
    // The events of `later` (passes over the chunks that followed this pass's in the trace, in
    // file order), as if consumed here; their spans and B/E events are copied on up to `jobs`
    // threads. `later` may then be destroyed. `line_base` is added to the lines pin_lines gave
    // them (the lines of the input before their chunk).
    void append(const std::vector<trace_events*>& later, unsigned jobs = 1, std::size_t line_base = 0);
    // For a pass over a chunk whose text will not outlive it (a stream's): the line of each
    // defect's first event and of each named 'E', counted from `begin` (line 1) and kept in
    // place of their positions. false when one of them was read without a position (by a DOM
    // batch), whose line only a walk of the whole document can find.
    bool pin_lines(const char* begin);
    // The spans (B/E pairs matched: per thread, in time order, an E closes the innermost B),
    // the threads' events sorted and matched on up to `jobs` threads; the same for every `jobs`.
    span_set finish(unsigned jobs = 1);

private:
    struct be_event;
    struct matched;  // what matching one thread's events gave
    void defect(event_defect d, std::size_t at, const char* where);
    void defect(event_defect d, std::size_t at) { defect(d, at, event_at); }
    void match(const be_event* v, std::size_t n, matched& m) const;
    std::uint32_t thread_of(std::string_view pid, std::string_view tid);

    // A 'B' or 'E' event waiting to be matched: 32 bytes, since a large trace holds millions.
    // File order among equal time stamps is kept by the stable sorts, not stored.
    struct be_event {
        std::int64_t ts;       // ns
        std::uint32_t thread;  // interned (pid, tid) identity texts
        // A 'B': its interned name (below named_end). An 'E': end_mark when it has no name, else
        // named_end | k, where k indexes named_ends_ (its name and event index).
        std::uint32_t node;
        std::size_t index;     // the event's 1-based index in the trace (an unclosed 'B' is named by it)
        std::size_t line = 0;  // its line, when pinned (pin_lines: a stream's text is let go), else 0
        static constexpr std::uint32_t named_end = 0x80000000u;
        static constexpr std::uint32_t end_mark = UINT32_MAX;
        bool begin() const { return node < named_end; }
    };
    struct named_end {
        std::uint32_t name;  // in end_names_
        std::size_t index;   // the event's 1-based index in the trace
        const char* at;      // where it starts in the text, when known
        std::size_t line;    // its line, when pinned (pin_lines), else 0
    };
    string_interner names_;
    string_interner end_names_;  // names of 'E' events: compared with their 'B', never nodes
    std::vector<named_end> named_ends_;
    string_interner threads_;
    std::string key_;
    filled_vector<be_event> be_;
    std::vector<const char*> be_text_;  // where each of be_ starts in this pass's text (null: unknown)
    std::unordered_map<std::string, std::int64_t> async_open_;
};

// A duration in nanoseconds as microseconds, for messages: -3000 is "-3", -250 is "-0.25".
std::string micros_text(std::int64_t ns);

}  // namespace prof
