// The spans area (lib/prof/spans/) turns one profiled query execution into a query_profile:
// readers, one per input format (Chrome trace, DuckDB profile, Polars rows), the interval
// arithmetic over their spans, and the query_profile model (build, fit, staleness). This header
// holds what every span reader produces.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace prof {

// One span of one node, in integer nanoseconds; `node` indexes span_set::names. Without member
// initializers, so that an array of millions can be sized without being written (span{} is
// all zero).
struct span {
    std::int64_t start_ns;
    std::int64_t end_ns;
    std::uint32_t node;
};

// std::allocator, except that resize() leaves new elements default-initialized (for a type like
// span: not written), so that the threads that fill a large array are the ones that fault in its
// pages, instead of one thread zeroing it first.
template <class T>
struct default_init_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = default_init_allocator<U>;
    };
    default_init_allocator() = default;
    template <class U>
    default_init_allocator(const default_init_allocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        std::allocator_traits<std::allocator<T>>::construct(*this, p, std::forward<Args>(args)...);
    }
};
template <class T>
using filled_vector = std::vector<T, default_init_allocator<T>>;

// Why an event of a Chrome trace was not used as written. Each is tolerated (the event is
// skipped, or for a mismatched end, used as the format's nesting says) and counted; --strict
// refuses them.
enum class event_defect : std::uint8_t {
    empty_event,     // {} : no member at all
    unknown_phase,   // no "ph", or one the Trace Event Format does not define ("XXX", "Q", 5)
    x_without_dur,   // an 'X' event with no dur, or dur null: it has no end
    missing_ts,      // an 'X', 'B' or 'E' event with no ts, or ts null
    bad_metadata,    // an event outside the spans (metadata, instant, counter, ...) whose ts or
                     // dur is null, not a number, or out of range: not needed, so not refused
    mismatched_end,  // an 'E' whose name differs from the 'B' it closes (it closes it anyway)
    unclosed_begin,  // a 'B' no 'E' of its thread closes: closed at its thread's last B/E time
    unmatched_end,   // an 'E' with no open 'B' on its thread (a pair split across threads too)
};
inline constexpr std::size_t event_defect_kinds = 8;
// A defect's short name ("x-without-dur", as --stats lists them) and what a warning says of it
// ("'X' event(s) without dur (skipped: no end)").
std::string_view defect_name(event_defect d);
std::string_view defect_description(event_defect d);

// How often one defect was met, and where first: the 1-based index of the event in the trace's
// event array and the line it starts on (both 0 when count is 0).
struct defect_count {
    std::size_t count = 0;
    std::size_t first_event = 0;
    std::size_t first_line = 0;
};

// What a span reader produced: the spans, their node names (interned, in order of first
// appearance), and counts of what was seen but does not count toward elapsed time. How a reader
// went about it is not here: the Chrome reader reports that separately (chrome_read_stats).
struct span_set {
    std::vector<std::string> names;
    filled_vector<span> spans;
    std::size_t events = 0;               // trace events read (all phases)
    std::size_t async_unmatched = 0;      // Chrome async begins ('b', 'S') with no end: ignored
    std::array<defect_count, event_defect_kinds> defects{};  // indexed by event_defect
    bool unclosed = false;                // a JSON Array Format trace without its closing ']'
    std::string display_time_unit;        // the trace object's displayTimeUnit, as given ("" = none)

    const defect_count& defect(event_defect d) const { return defects[static_cast<std::size_t>(d)]; }
};

}  // namespace prof
