// The rule set for trace event fields and the event sink (see chrome_events.hpp).
#include "prof/spans/chrome_events.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/spans/chrome.hpp"
#include "prof/spans/intervals.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace prof {

namespace {

// Each defect's --stats name and warning text, in the order of event_defect.
struct defect_words {
    std::string_view name, description;
};
constexpr defect_words defect_table[event_defect_kinds] = {
    {"empty-event", "empty event(s) {} (skipped)"},
    {"unknown-phase", "event(s) with no phase or one the Trace Event Format does not define (skipped)"},
    {"x-without-dur", "'X' event(s) without dur (skipped: no end)"},
    {"missing-ts", "'X', 'B' or 'E' event(s) without ts (skipped)"},
    {"bad-metadata", "metadata or other event(s) outside the spans with a null or unreadable ts or dur (not needed)"},
    {"mismatched-end", "'E' event(s) named differently from the 'B' they close (closed anyway, innermost first)"},
    {"unclosed-begin", "'B' event(s) that no 'E' of their thread closes (each closed at the last 'B' or 'E' time "
                       "stamp of its thread)"},
    {"unmatched-end", "'E' event(s) with no open 'B' on their thread (skipped)"},
};

}  // namespace

std::string_view defect_name(event_defect d) { return defect_table[static_cast<std::size_t>(d)].name; }
std::string_view defect_description(event_defect d) { return defect_table[static_cast<std::size_t>(d)].description; }

bool micros_token_to_ns(std::string_view t, std::int64_t& ns) {
    const char* p = t.data();
    const char* e = p + t.size();
    auto digit = [&](const char* q) { return q < e && *q >= '0' && *q <= '9'; };
    bool neg = p < e && *p == '-';
    if (neg) ++p;
    const char* int_b = p;
    while (digit(p)) ++p;
    const long long int_n = p - int_b;
    const char* frac_b = p;
    long long frac_n = 0;
    if (p < e && *p == '.') {
        frac_b = ++p;
        while (digit(p)) ++p;
        frac_n = p - frac_b;
    }
    long long exp = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        ++p;
        bool exp_neg = p < e && *p == '-';
        if (p < e && (*p == '-' || *p == '+')) ++p;
        for (; digit(p); ++p) exp = std::min(exp * 10 + (*p - '0'), 1000000000LL);
        if (exp_neg) exp = -exp;
    }
    // The value is the digit string D (integer digits, then fraction digits) with the decimal
    // point after its first int_n + exp digits, in microseconds: in nanoseconds the point comes
    // `whole` = int_n + exp + 3 digits in. Those digits (padded with zeros) are the integer
    // nanoseconds; the next one decides the rounding, half away from zero.
    const long long total = int_n + frac_n;
    const long long whole = int_n + exp + 3;
    auto digit_at = [&](long long i) {
        return static_cast<std::uint64_t>(i < int_n ? int_b[i] - '0' : frac_b[i - int_n] - '0');
    };
    constexpr auto limit = static_cast<std::uint64_t>(max_ns);
    std::uint64_t v = 0;
    long long k = 0;
    for (; k < whole && k < total; ++k) {
        std::uint64_t d = digit_at(k);
        if (v > (limit - 1 - d) / 10) return false;
        v = v * 10 + d;
    }
    if (v != 0)
        for (; k < whole; ++k) {
            if (v > (limit - 1) / 10) return false;
            v *= 10;
        }
    if (whole >= 0 && whole < total && digit_at(whole) >= 5 && ++v >= limit) return false;
    ns = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    return true;
}

void time_field::number_text(std::string_view token) {
    state = micros_token_to_ns(token, ns) ? time_state::ok : time_state::out_of_range;
}

void time_field::string(std::string_view contents) {
    if (!json_number_value(contents)) {
        state = time_state::not_number;
        return;
    }
    number_text(contents);
}

void time_field::double_only(double value) {
    // In range or out of it for certain, unless the double lies near the bound.
    double m = std::fabs(value);
    if (!(m < 8.9e15) && !(m > 9.1e15)) throw needs_number_text{};
    state = m < 8.9e15 ? time_state::inexact : time_state::out_of_range;
}

std::string_view identity_of_string(std::string_view contents, std::string& scratch) {
    scratch.assign(1, '"');
    scratch.append(contents);
    scratch.push_back('"');
    return scratch;
}

std::string_view identity_of_integer(std::int64_t i, std::string& scratch) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, i);
    scratch.assign(b, r.ptr);
    return scratch;
}

std::string_view identity_of_double(double d, std::string& scratch) {
    scratch = fmt::format("{}", d);
    return scratch;
}

namespace {
constexpr std::pair<std::string_view, trace_key> trace_keys[] = {
    {"ph", trace_key::ph},   {"ts", trace_key::ts},   {"dur", trace_key::dur}, {"name", trace_key::name},
    {"pid", trace_key::pid}, {"tid", trace_key::tid}, {"cat", trace_key::cat}, {"id", trace_key::id},
    {"id2", trace_key::id},
};
}  // namespace

trace_key trace_key_of(std::string_view key) { return key_id(key, trace_keys, trace_key::other); }

// A duration in nanoseconds as microseconds, for messages: -3000 is "-3", -250 is "-0.25".
std::string micros_text(std::int64_t ns) {
    std::string out = ns < 0 ? "-" : "";
    std::uint64_t m = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    out += std::to_string(m / 1000);
    if (unsigned frac = static_cast<unsigned>(m % 1000)) {
        std::string f = fmt::format("{:03}", frac);
        while (f.back() == '0') f.pop_back();
        out += "." + f;
    }
    return out;
}

namespace {

// The phases the Trace Event Format defines: duration B E, complete X, instant i I, counter C,
// async b n e and the older S T p F, flow s t f, sample P, object N O D, metadata M, memory dump
// V v, mark R, clock sync c, context ( ), linked id =.
constexpr bool known_phase(char c) {
    for (char k : std::string_view("BEXiICbneSTpFstfPNODMVvRc()=")) if (k == c) return true;
    return false;
}
[[noreturn]] void bad_micros(const char* field, time_state state) {
    if (state == time_state::not_number)
        throw field_error(fmt::format("field '{}': expected a number of microseconds (or a string holding one)", field));
    throw field_error(fmt::format("field '{}': expected a number of microseconds below 9e15 in magnitude", field));
}

// Whether a span event's ts or dur can be used: absent or null cannot (a counted defect); a
// value that is not a number or out of range is an error.
bool usable(const time_field& f, const char* field) {
    switch (f.state) {
    case time_state::ok: return true;
    case time_state::absent:
    case time_state::null_value: return false;
    case time_state::inexact: throw needs_number_text{};
    default: bad_micros(field, f.state);
    }
}
bool unreadable(const time_field& f) {
    return f.state == time_state::null_value || f.state == time_state::not_number || f.state == time_state::out_of_range;
}

}  // namespace

void trace_events::defect(event_defect d, std::size_t at, const char* where) {
    auto k = static_cast<std::size_t>(d);
    defect_count& c = out.defects[k];
    if (c.count++ == 0 || at < c.first_event) {
        c.first_event = at;
        first_at[k] = where;
    }
}

// The event rules: an 'X' is a span from ts for dur; a 'B' or 'E' waits to be matched; async
// begins and ends are counted per (cat, id, name); other phases count only as events. What
// cannot be used is a counted defect; a span event with a bad time, name or dur is an error.
void trace_events::take(const event_fields& e) {
    ++out.events;
    if (e.empty) return defect(event_defect::empty_event, index);
    switch (e.ph) {
    case 'X': {
        if (!usable(e.ts, "ts")) return defect(event_defect::missing_ts, index);
        if (!usable(e.dur, "dur")) return defect(event_defect::x_without_dur, index);
        if (e.bad_name) throw field_error("field 'name': expected a string");
        if (e.dur.ns < 0)
            throw field_error(fmt::format("'X' event '{}' has a negative dur ({})", e.name, micros_text(e.dur.ns)));
        std::int64_t end;
        if (__builtin_add_overflow(e.ts.ns, e.dur.ns, &end) || end >= max_ns)
            throw field_error(fmt::format("'X' event '{}' ends at or beyond 9e15 µs (ts {} + dur {})", e.name,
                                          micros_text(e.ts.ns), micros_text(e.dur.ns)));
        out.spans.push_back({e.ts.ns, end, names_.intern(e.name)});
        return;
    }
    case 'B':
    case 'E': {
        if (!usable(e.ts, "ts")) return defect(event_defect::missing_ts, index);
        if (e.bad_name) throw field_error("field 'name': expected a string");
        std::uint32_t node = be_event::end_mark;
        if (e.ph == 'B') {
            node = names_.intern(e.name);
        } else if (e.name.data() != nullptr) {
            node = be_event::named_end | static_cast<std::uint32_t>(named_ends_.size());
            named_ends_.push_back({end_names_.intern(e.name), index, event_at, 0});
        }
        be_.push_back({e.ts.ns, thread_of(e.pid, e.tid), node, index});
        be_text_.push_back(event_at);
        return;
    }
    case 'b':
    case 'S':
    case 'e':
    case 'F': {
        std::string key = fmt::format("{}\x1f{}\x1f{}", e.cat, e.id, e.name);
        async_open_[key] += (e.ph == 'b' || e.ph == 'S') ? 1 : -1;
        break;
    }
    default:  // instants, metadata, counters, flow, samples, objects; or no phase at all
        if (!known_phase(e.ph)) return defect(event_defect::unknown_phase, index);
        break;
    }
    if (unreadable(e.ts) || unreadable(e.dur)) defect(event_defect::bad_metadata, index);
}

bool trace_events::pin_lines(const char* begin) {
    std::vector<std::pair<const char*, std::size_t*>> at;  // each position and where its line goes
    for (std::size_t d = 0; d < event_defect_kinds; ++d) {
        if (!out.defects[d].count) continue;
        if (!first_at[d]) return false;
        at.emplace_back(first_at[d], &out.defects[d].first_line);
    }
    for (named_end& n : named_ends_) {
        if (!n.at) return false;
        at.emplace_back(n.at, &n.line);
    }
    // Each B/E event's line too: which 'B' stays open is known only when every chunk is read.
    for (std::size_t k = 0; k < be_text_.size(); ++k) {
        if (!be_text_[k]) return false;
        at.emplace_back(be_text_[k], &be_[k].line);
    }
    std::stable_sort(at.begin(), at.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const char* from = begin;
    std::size_t line = 1;
    for (auto& [where, into] : at) {
        line += static_cast<std::size_t>(std::count(from, where, '\n'));
        from = where;
        *into = line;
    }
    first_at.fill(nullptr);
    for (named_end& n : named_ends_) n.at = nullptr;
    be_text_ = {};
    return true;
}

void trace_events::append(const std::vector<trace_events*>& later, unsigned jobs, std::size_t line_base) {
    jobs = std::max(jobs, 1u);
    auto remap = [](string_interner& into, const string_interner& from) {
        std::vector<std::uint32_t> ids;
        ids.reserve(from.names().size());
        for (const auto& n : from.names()) ids.push_back(into.intern(n));
        return ids;
    };
    // Here, in file order: the ids of each pass's names and threads (interned in its order
    // after the earlier passes': the order of first appearance overall), where its spans, B/E
    // events and named ends go, and the counts. Then each pass is copied on its own thread.
    struct placement {
        std::vector<std::uint32_t> node, end_name, thread;
        std::size_t spans_at, be_at, ends_at, index_at;
    };
    std::vector<placement> at(later.size());
    std::size_t spans = out.spans.size(), bes = be_.size(), ends = named_ends_.size();
    for (std::size_t k = 0; k < later.size(); ++k) {
        const trace_events& next = *later[k];
        at[k] = {remap(names_, next.names_), remap(end_names_, next.end_names_), remap(threads_, next.threads_), spans, bes,
                 ends, index};
        spans += next.out.spans.size();
        bes += next.be_.size();
        ends += next.named_ends_.size();
        for (const auto& [key, n] : next.async_open_) async_open_[key] += n;
        out.events += next.out.events;
        for (std::size_t d = 0; d < event_defect_kinds; ++d) {
            const defect_count& c = next.out.defects[d];
            if (c.count == 0) continue;
            if (out.defects[d].count == 0) {  // every event of `next` comes after the earlier passes'
                out.defects[d].first_event = index + c.first_event;
                out.defects[d].first_line = c.first_line ? line_base + c.first_line : 0;
                first_at[d] = next.first_at[d];
            }
            out.defects[d].count += c.count;
        }
        index += next.index;
        scanned += next.scanned;
        from_dom += next.from_dom;
    }
    out.spans.resize(spans);
    be_.resize(bes);
    named_ends_.resize(ends);
    // Each pass's spans and B/E events in `jobs` slices, copied by `jobs` threads.
    parallel_for(later.size() * jobs, jobs, [&](std::size_t t) {
        const trace_events& next = *later[t / jobs];
        const placement& p = at[t / jobs];
        const std::size_t part = t % jobs;
        auto slice = [&](std::size_t n) { return std::pair{n * part / jobs, n * (part + 1) / jobs}; };
        auto [s0, s1] = slice(next.out.spans.size());
        span* sp = out.spans.data() + p.spans_at + s0;
        for (std::size_t i = s0; i < s1; ++i) {
            const span& x = next.out.spans[i];
            *sp++ = {x.start_ns, x.end_ns, p.node[x.node]};
        }
        auto [b0, b1] = slice(next.be_.size());
        be_event* b = be_.data() + p.be_at + b0;
        const auto ends_before = static_cast<std::uint32_t>(p.ends_at);
        for (std::size_t i = b0; i < b1; ++i) {
            be_event e = next.be_[i];
            e.thread = p.thread[e.thread];
            e.index += p.index_at;
            if (e.line) e.line += line_base;
            if (e.begin()) e.node = p.node[e.node];
            else if (e.node != be_event::end_mark) e.node = be_event::named_end | ((e.node & ~be_event::named_end) + ends_before);
            *b++ = e;
        }
        auto [e0, e1] = slice(next.named_ends_.size());
        named_end* ne = named_ends_.data() + p.ends_at + e0;
        for (std::size_t i = e0; i < e1; ++i) {
            const named_end& n = next.named_ends_[i];
            *ne++ = {p.end_name[n.name], p.index_at + n.index, n.at, n.line ? line_base + n.line : 0};
        }
    });
}

struct trace_events::matched {
    std::vector<span> spans;
    defect_count unclosed_begins, unmatched_ends;  // first_event: the smallest index
    std::size_t mismatched = 0, first_mismatched = 0;  // 'E' events named unlike their 'B'; the first's index
    const char* first_at = nullptr;
    std::size_t first_line = 0;  // when pinned
};

namespace {
void count_at(defect_count& d, std::size_t index, std::size_t line) {
    if (d.count++ == 0 || index < d.first_event) {
        d.first_event = index;
        d.first_line = line;
    }
}
}  // namespace

// One thread's events, in time order: an E closes the innermost open B. A B still open at the
// end is closed at the thread's last B/E time stamp, as catapult's importer closes a slice at
// its thread's end: a run loop left open holds its thread busy to there, and its start stays
// within the trace's elapsed time (Perfetto's bounds keep it too). Counted, never silent.
void trace_events::match(const be_event* v, std::size_t n, matched& m) const {
    std::vector<const be_event*> stack;
    for (std::size_t k = 0; k < n; ++k) {
        const be_event& e = v[k];
        if (e.begin()) {
            stack.push_back(&e);
        } else if (stack.empty()) {
            count_at(m.unmatched_ends, e.index, e.line);
        } else {
            const be_event& b = *stack.back();
            if (e.node != be_event::end_mark) {
                const named_end& ne = named_ends_[e.node & ~be_event::named_end];
                if (!same_text(out.names[b.node], end_names_.names()[ne.name]) && (m.mismatched++ == 0 || ne.index < m.first_mismatched)) {
                    m.first_mismatched = ne.index;
                    m.first_at = ne.at;
                    m.first_line = ne.line;
                }
            }
            m.spans.push_back({b.ts, e.ts, b.node});
            stack.pop_back();
        }
    }
    const std::int64_t last = n ? v[n - 1].ts : 0;  // sorted by time
    for (const be_event* b : stack) {
        count_at(m.unclosed_begins, b->index, b->line);
        m.spans.push_back({b->ts, last, b->node});
    }
}

span_set trace_events::finish(unsigned jobs) {
    out.names = names_.names();
    for (const auto& [k, n] : async_open_)
        if (n > 0) out.async_unmatched += static_cast<std::size_t>(n);
    // B/E pairs: per thread, in time order (ties keep file order). The events are grouped by
    // thread (bucket_sort), then each group is sorted by time (stable) and matched
    // on its own, up to `jobs` groups at once; the spans are joined in thread order.
    const std::size_t groups = threads_.names().size();
    filled_vector<be_event> grouped(be_.size());
    const std::vector<std::size_t> offset = bucket_sort(
        be_.data(), be_.size(), groups, jobs, grouped.data(), [](const be_event& e) { return e.thread; },
        [](const be_event& e, std::size_t) { return e; });
    be_ = {};
    be_text_ = {};
    std::vector<matched> result(groups);
    parallel_for(groups, jobs, [&](std::size_t g) {
        const std::size_t n = offset[g + 1] - offset[g];
        filled_vector<be_event> tmp(n < radix_sort_min ? 0 : n);
        radix_sort_range(grouped.data() + offset[g], n, tmp.data(), [](const be_event& e) { return e.ts; });
        result[g].spans.reserve(n / 2);  // a pair per two events, at most
        match(grouped.data() + offset[g], n, result[g]);
    });
    // The pairs after the other spans, in thread order, each thread's copied on its own.
    std::vector<std::size_t> at(groups + 1, out.spans.size());
    for (std::size_t g = 0; g < groups; ++g) at[g + 1] = at[g] + result[g].spans.size();
    out.spans.resize(at[groups]);
    parallel_for(groups, jobs, [&](std::size_t g) {
        std::copy(result[g].spans.begin(), result[g].spans.end(), out.spans.begin() + static_cast<std::ptrdiff_t>(at[g]));
    });
    defect_count& d = out.defects[static_cast<std::size_t>(event_defect::mismatched_end)];
    auto add = [](defect_count& into, const defect_count& c) {
        if (c.count && (into.count == 0 || c.first_event < into.first_event)) {
            into.first_event = c.first_event;
            into.first_line = c.first_line;
        }
        into.count += c.count;
    };
    for (const matched& m : result) {
        add(out.defects[static_cast<std::size_t>(event_defect::unclosed_begin)], m.unclosed_begins);
        add(out.defects[static_cast<std::size_t>(event_defect::unmatched_end)], m.unmatched_ends);
        if (m.mismatched && (d.count == 0 || m.first_mismatched < d.first_event)) {
            d.first_event = m.first_mismatched;
            first_at[static_cast<std::size_t>(event_defect::mismatched_end)] = m.first_at;
            d.first_line = m.first_line;
        }
        d.count += m.mismatched;
    }
    return std::move(out);
}

std::uint32_t trace_events::thread_of(std::string_view pid, std::string_view tid) {
    key_.assign(pid);
    key_.push_back('\x1f');
    key_.append(tid);
    return threads_.intern(key_);
}

}  // namespace prof
