// QueryProfile from spans and DuckDB profiles (see spans.hpp).
#include "prof/spans.hpp"

#include "prof/errors.hpp"
#include "prof/json_in.hpp"
#include "prof/json_out.hpp"
#include "prof/interner.hpp"
#include "prof/json_scan.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <unordered_map>

namespace prof {

namespace od = simdjson::ondemand;

const char* const single_run_warning =
    "built from a single run: fixed cost the engine does not name (start-up, result handling) is "
    "attributed to the rows, so this profile over-prices much larger row counts; profile the query "
    "at two or more row counts and combine them with 'prof-spans fit'";

// ---- arithmetic -----------------------------------------------------------------------------

namespace {

// Stable LSD radix sort of v[0, n) by an integer key, 11 bits a pass over the keys' actual
// range (a trace's time stamps span ~25 bits: 3 passes), O(n) per pass, through `tmp` (room for
// n elements). Below a few thousand elements std::stable_sort is as fast. Stability keeps file
// order among equal keys.
template <class T, class Key>
void radix_sort_range(T* v, std::size_t n, T* tmp, Key key) {
    if (n < 4096) {
        std::stable_sort(v, v + n, [&](const T& a, const T& b) { return key(a) < key(b); });
        return;
    }
    std::int64_t lo = key(v[0]), hi = lo;
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t k = key(v[i]);
        lo = std::min(lo, k);
        hi = std::max(hi, k);
    }
    auto range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    constexpr int bits = 11;
    constexpr std::size_t radix = std::size_t{1} << bits;
    auto digit = [&](const T& x, int shift) {
        return (static_cast<std::uint64_t>(key(x)) - static_cast<std::uint64_t>(lo)) >> shift & (radix - 1);
    };
    T* src = v;
    T* dst = tmp;
    for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += bits) {
        std::size_t count[radix + 1] = {};
        for (std::size_t i = 0; i < n; ++i) ++count[digit(src[i], shift) + 1];
        for (std::size_t d = 1; d <= radix; ++d) count[d] += count[d - 1];
        for (std::size_t i = 0; i < n; ++i) dst[count[digit(src[i], shift)]++] = src[i];
        std::swap(src, dst);
    }
    if (src != v) std::copy(src, src + n, v);
}

using interval = std::pair<std::int64_t, std::int64_t>;

// The union's length of iv[0, n), sorted in place by start (through tmp, room for n).
std::int64_t union_length(interval* iv, std::size_t n, interval* tmp) {
    // Ordered by start only: among equal starts the sweep below takes the largest end anyway.
    auto by_start = [](const interval& a, const interval& b) { return a.first < b.first; };
    if (!std::is_sorted(iv, iv + n, by_start)) radix_sort_range(iv, n, tmp, [](const interval& x) { return x.first; });
    std::int64_t total = 0;
    bool open = false;
    std::int64_t cur_s = 0, cur_e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        auto [s, e] = iv[i];
        if (e <= s) continue;
        if (open && s <= cur_e) {
            cur_e = std::max(cur_e, e);
            continue;
        }
        if (open) total += cur_e - cur_s;
        cur_s = s;
        cur_e = e;
        open = true;
    }
    if (open) total += cur_e - cur_s;
    return total;
}

}  // namespace

std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv) {
    std::vector<interval> tmp(iv.size() < 4096 ? 0 : iv.size());
    return union_length(iv.data(), iv.size(), tmp.data());
}

span_summary summarize_spans(const span_set& s, const std::vector<bool>& is_fixed) {
    span_summary out;
    out.node_us.assign(s.names.size(), 0);
    if (s.spans.empty()) return out;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    // Bucket by node (counting sort, O(n)), then each bucket's union, sorted in place through
    // one scratch buffer: O(n log n) overall, on integers only.
    std::vector<std::size_t> offset(s.names.size() + 1, 0);
    for (const auto& sp : s.spans) {
        lo = std::min(lo, sp.start_us);
        hi = std::max(hi, sp.end_us);
        ++offset[sp.node + 1];
    }
    std::size_t largest = 0;
    for (std::size_t k = 1; k < offset.size(); ++k) {
        largest = std::max(largest, offset[k]);
        offset[k] += offset[k - 1];
    }
    std::vector<interval> iv(s.spans.size());
    {
        std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
        for (const auto& sp : s.spans) iv[fill[sp.node]++] = {sp.start_us, sp.end_us};
    }
    std::vector<interval> tmp(largest < 4096 ? 0 : largest);
    std::vector<interval> fixed_iv;
    for (std::size_t n = 0; n < s.names.size(); ++n) {
        out.node_us[n] = union_length(iv.data() + offset[n], offset[n + 1] - offset[n], tmp.data());
        if (n < is_fixed.size() && is_fixed[n])
            fixed_iv.insert(fixed_iv.end(), iv.begin() + static_cast<std::ptrdiff_t>(offset[n]),
                            iv.begin() + static_cast<std::ptrdiff_t>(offset[n + 1]));
    }
    if (fixed_iv.size() > tmp.size() && fixed_iv.size() >= 4096) tmp.resize(fixed_iv.size());
    out.fixed_us = union_length(fixed_iv.data(), fixed_iv.size(), tmp.data());
    out.elapsed_us = hi - lo;
    return out;
}

// ---- format detection ---------------------------------------------------------------------

namespace {

std::string_view skip_bom_ws(std::string_view t) {
    if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    while (!t.empty() && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n')) t.remove_prefix(1);
    return t;
}

std::string_view first_line(std::string_view t) {
    auto nl = t.find('\n');
    std::string_view l = nl == std::string_view::npos ? t : t.substr(0, nl);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
}

std::size_t line_of(std::string_view text, const char* loc) {
    if (!loc || loc < text.data() || loc > text.data() + text.size()) return 1;
    return 1 + static_cast<std::size_t>(std::count(text.data(), loc, '\n'));
}

// RFC 4180 fields of one line; throws field_error on an unterminated quote.
std::vector<std::string> csv_fields(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    std::size_t i = 0;
    for (;;) {
        cur.clear();
        if (i < line.size() && line[i] == '"') {
            ++i;
            for (;;) {
                if (i >= line.size()) throw field_error("unterminated quoted field");
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        cur.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                cur.push_back(line[i++]);
            }
            if (i < line.size() && line[i] != ',') throw field_error("unexpected text after a quoted field");
        } else {
            while (i < line.size() && line[i] != ',') cur.push_back(line[i++]);
        }
        out.push_back(cur);
        if (i >= line.size()) break;
        ++i;  // the comma
    }
    return out;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
    std::size_t k = 0;
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    return s.substr(k);
}

bool csv_header_has_columns(std::string_view line) {
    try {
        auto f = csv_fields(line);
        bool n = false, s = false, e = false;
        for (auto& x : f) {
            x = trim(x);
            n |= x == "node";
            s |= x == "start";
            e |= x == "end";
        }
        return n && s && e;
    } catch (const field_error&) {
        return false;
    }
}

bool first_line_is_polars_object(std::string_view line) {
    simdjson::padded_string p(line);
    od::parser parser;
    od::document doc;
    if (parser.iterate(p).get(doc) != simdjson::SUCCESS) return false;
    od::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
    bool has_node = false;
    for (auto f : obj) {
        std::string_view k;
        if (f.unescaped_key().get(k) != simdjson::SUCCESS) return false;
        if (k == "node") has_node = true;
    }
    return has_node;
}

}  // namespace

span_format detect_span_format(std::string_view text, const std::string& source) {
    std::string_view t = skip_bom_ws(text);
    if (!t.empty() && t[0] == '[') return span_format::chrome;
    if (!t.empty() && t[0] == '{') {
        if (first_line_is_polars_object(first_line(t))) return span_format::polars_jsonl;
        if (t.find("\"traceEvents\"") != std::string_view::npos) return span_format::chrome;
        if (t.find("\"latency\"") != std::string_view::npos) return span_format::duckdb;
    } else if (csv_header_has_columns(first_line(t))) {
        return span_format::polars_csv;
    }
    throw input_error(source, 1,
                      "cannot tell the input format (expected Polars node/start/end rows, a Chrome trace or a "
                      "DuckDB JSON profile); name it with --input-format");
}

std::string_view format_name(span_format f) {
    switch (f) {
    case span_format::polars_jsonl: return "polars-jsonl";
    case span_format::polars_csv: return "polars-csv";
    case span_format::chrome: return "chrome";
    case span_format::duckdb: return "duckdb";
    }
    return "?";
}

// ---- readers ------------------------------------------------------------------------------

namespace {

void add_polars_row(span_set& out, string_interner& names, std::string_view node, std::int64_t start, std::int64_t end) {
    if (end < start) throw field_error(fmt::format("span '{}' ends before it starts (start {}, end {})", node, start, end));
    out.spans.push_back({start, end, names.intern(node)});
}

}  // namespace

span_set read_polars_jsonl(std::string_view text, const std::string& source) {
    span_set out;
    string_interner names;
    line_reader in(string_source(std::string(text), source));
    for_each_object(in, 0, [&](od::object& obj, std::size_t) {
        std::optional<std::string> node;
        std::optional<std::int64_t> start, end;
        bool has_start = false, has_end = false;
        for (auto f : obj) {
            std::string_view k = f.unescaped_key();
            if (k == "node") node = read_string(f.value(), "node");
            else if (k == "start") start = read_int(f.value(), "start"), has_start = true;
            else if (k == "end") end = read_int(f.value(), "end"), has_end = true;
        }
        if (!node) missing_field("node");
        if (!has_start || !start) missing_field("start");
        if (!has_end || !end) missing_field("end");
        add_polars_row(out, names, *node, *start, *end);
    });
    out.names = names.names();
    return out;
}

span_set read_polars_csv(std::string_view text, const std::string& source) {
    span_set out;
    string_interner names;
    line_reader in(string_source(std::string(text), source));
    text_line line;
    int ci_node = -1, ci_start = -1, ci_end = -1;
    std::size_t ncols = 0;
    bool header = true;
    while (in.next(line)) {
        try {
            auto f = csv_fields(line.text);
            if (header) {
                for (std::size_t k = 0; k < f.size(); ++k) {
                    std::string c = trim(f[k]);
                    if (c == "node") ci_node = static_cast<int>(k);
                    else if (c == "start") ci_start = static_cast<int>(k);
                    else if (c == "end") ci_end = static_cast<int>(k);
                }
                if (ci_node < 0 || ci_start < 0 || ci_end < 0)
                    throw field_error("the CSV header must name the columns node, start and end");
                ncols = f.size();
                header = false;
                continue;
            }
            if (f.size() != ncols)
                throw field_error(fmt::format("expected {} CSV fields as in the header, found {}", ncols, f.size()));
            auto integer = [&](int col, const char* what) {
                std::string s = trim(f[static_cast<std::size_t>(col)]);
                std::int64_t v = 0;
                auto r = std::from_chars(s.data(), s.data() + s.size(), v);
                if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
                    throw field_error(fmt::format("field '{}': expected an integer (microseconds), found \"{}\"", what, s));
                return v;
            };
            add_polars_row(out, names, f[static_cast<std::size_t>(ci_node)], integer(ci_start, "start"),
                           integer(ci_end, "end"));
        } catch (const field_error& e) {
            throw input_error(source, line.number, e.what());
        }
    }
    out.names = names.names();
    return out;
}

namespace {

// Time stamps and durations are bounded to |x| < 9e15 µs (285 years) on every path, integers
// and fractions alike: sums and differences of two of them then stay far inside 64 bits
// (9223372036854775000 + 10000 wrapped into a negative span before).
constexpr std::int64_t max_micros = 9000000000000000;

// A fractional time stamp in range, rounded to the nearest microsecond.
std::optional<std::int64_t> rounded_micros(double d) {
    if (!std::isfinite(d) || !(std::fabs(d) < static_cast<double>(max_micros))) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(d));
}

[[noreturn]] void bad_micros(const char* field) {
    throw field_error(fmt::format("field '{}': expected a number of microseconds below 9e15 in magnitude", field));
}

// A ts or dur as read: an integer, or a number with a fraction rounded to the nearest
// microsecond, its value kept (an 'X' event's end is then ts + dur rounded once, not the sum
// of two roundings, which can be 1 µs off: 1.5 + 2.5 is 4, not 5). Every reader sets it
// through set(), which refuses what is out of range; a later key replaces an earlier one.
// Nothing is initialized: a field is read only once set (event_fields' has_ts / has_dur say
// so), and zeroing the fields for every event cost 4 % of a trace read.
struct micros_field {
    std::int64_t us;          // rounded to the microsecond
    bool fractional;
    double exact;             // the value read, when fractional
    bool set(std::int64_t i) {
        if (i <= -max_micros || i >= max_micros) return false;
        us = i;
        fractional = false;
        return true;
    }
    bool set(double d) {
        auto r = rounded_micros(d);
        if (!r) return false;
        us = *r;
        exact = d;
        fractional = true;
        return true;
    }
    double value() const { return fractional ? exact : static_cast<double>(us); }  // |us| < 2^53: exact
};

// Reads an integer microsecond value, or a number rounded to the nearest microsecond (Chrome's
// ts/dur may carry fractions).
void micros(od::value v, const char* field, micros_field& out) {
    std::int64_t i;
    if (v.get_int64().get(i) == simdjson::SUCCESS) {
        if (out.set(i)) return;
    } else if (auto d = json_number_value(trimmed_token(v)); d && out.set(*d)) {  // not get_double(): json_in.hpp
        return;
    }
    bad_micros(field);
}

// A string value read in place when it holds no escape (a view into the input text, valid as
// long as the text), else unescaped by simdjson (a view into the parser's buffer, valid for the
// whole document). Either way no copy is made per event.
std::string_view string_in_place(od::value v, const char* field) {
    std::string_view tok = trimmed_token(v);
    if (tok.size() < 2 || tok.front() != '"' || tok.back() != '"')
        throw field_error(fmt::format("field '{}': expected a string", field));
    std::string_view inner = tok.substr(1, tok.size() - 2);
    if (inner.find('\\') == std::string_view::npos) return inner;
    return v.get_string();
}

// Where the index-th (1-based) event of a trace starts, or nullptr.
const char* event_location(std::string_view text, std::size_t index) {
    od::parser parser;
    od::document doc;
    if (parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING).get(doc)) return nullptr;
    od::array events;
    od::json_type t;
    if (doc.type().get(t)) return nullptr;
    if (t == od::json_type::array) {
        if (doc.get_array().get(events)) return nullptr;
    } else {
        od::value v;
        if (doc.find_field_unordered("traceEvents").get(v) || v.get_array().get(events)) return nullptr;
    }
    std::size_t k = 0;
    for (auto el : events) {
        od::value v;
        if (el.get(v)) return nullptr;
        if (++k == index) {
            const char* loc = nullptr;
            return v.current_location().get(loc) ? nullptr : loc;
        }
    }
    return nullptr;
}

// The identity fields (pid, tid, cat, id) are compared as text, in one canonical form on every
// path, so that a thread is one thread however its pid is spelled: a string as its unescaped
// contents in quotes, an integer in decimal, any other number as the shortest text that reads
// back as the same double, a literal as its word. For the plain forms that is the raw token.
// The pieces of the canonical identity text, shared by identity() and dom_token().
std::string_view quoted_text(std::string_view contents, std::string& scratch) {
    scratch.assign(1, '"');
    scratch.append(contents);
    scratch.push_back('"');
    return scratch;
}
std::string_view integer_text(std::int64_t i, std::string& scratch) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, i);
    scratch.assign(b, r.ptr);
    return scratch;
}
std::string_view number_text(double d, std::string& scratch) {
    scratch = fmt::format("{}", d);
    return scratch;
}

std::string_view identity(od::value v, std::string& scratch) {
    std::string_view raw = trimmed_token(v);
    if (raw.empty()) return raw;
    if (raw[0] == '"') {
        if (raw.find('\\') == std::string_view::npos) return raw;
        return quoted_text(std::string_view(v.get_string()), scratch);
    }
    if (raw[0] == '{' || raw[0] == '[') {
        // A container (never seen in practice): the DOM reader's text for it, so both paths
        // agree — its raw text parsed by the DOM parser and minified.
        std::string_view whole;
        if (raw[0] == '{') whole = od::object(v.get_object()).raw_json();
        else whole = od::array(v.get_array()).raw_json();
        simdjson::dom::parser dom;
        simdjson::padded_string padded(whole);
        scratch = simdjson::minify(dom.parse(padded).value());
        return scratch;
    }
    if (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
        std::int64_t i;
        if (v.get_int64().get(i) == simdjson::SUCCESS) return integer_text(i, scratch);
        if (auto d = json_number_value(raw)) return number_text(*d, scratch);
    }
    return raw;
}

// The fields of one trace event that matter here, read in one pass over its members.
struct event_fields {
    char ph = 0;
    bool has_ts = false, has_dur = false;
    micros_field ts, dur;
    std::string_view name, cat, id, pid, tid;
};

// The trace's keys, one table for the three event readers (in-place scanner, DOM, on-demand).
enum class trace_key { ph, ts, dur, name, pid, tid, cat, id, other, bad };

trace_key trace_key_of(std::string_view key) {
    if (scan_key_is(key, "ph")) return trace_key::ph;
    if (scan_key_is(key, "ts")) return trace_key::ts;
    if (scan_key_is(key, "dur")) return trace_key::dur;
    if (scan_key_is(key, "name")) return trace_key::name;
    if (scan_key_is(key, "pid")) return trace_key::pid;
    if (scan_key_is(key, "tid")) return trace_key::tid;
    if (scan_key_is(key, "cat")) return trace_key::cat;
    if (scan_key_is(key, "id") || scan_key_is(key, "id2")) return trace_key::id;
    return trace_key::other;
}

// Kept out of line: inlined into the event loop, the field iterator's copies spilled through
// the stack with store-to-load forwarding stalls that cost more than the whole parse.
[[gnu::noinline]] void read_event(od::object& ev, event_fields& e, std::string (&scratch)[4]) {
    for (auto f : ev) {
        // A key is compared as written when it holds no escape (the common case, no copy),
        // else unescaped: "p\u0068" is "ph", as the DOM reader and JSON itself have it.
        const char* raw = f.key().raw();
        const char* q = raw;
        while (*q != '"' && *q != '\\') ++q;
        std::string_view k = *q == '"' ? std::string_view(raw, static_cast<std::size_t>(q - raw))
                                       : std::string_view(f.unescaped_key());
        switch (trace_key_of(k)) {
        case trace_key::ph: {
            od::value pv = f.value();
            std::string_view tok = pv.raw_json_token();
            if (tok.size() >= 3 && tok[0] == '"' && tok[2] == '"') {
                e.ph = tok[1];
                break;
            }
            std::string_view p = string_in_place(pv, "ph");
            if (p.size() != 1) throw field_error(fmt::format("field 'ph': unknown phase \"{}\"", p));
            e.ph = p[0];
            break;
        }
        case trace_key::ts: micros(f.value(), "ts", e.ts), e.has_ts = true; break;
        case trace_key::dur: micros(f.value(), "dur", e.dur), e.has_dur = true; break;
        case trace_key::name: e.name = string_in_place(f.value(), "name"); break;
        case trace_key::pid: e.pid = identity(f.value(), scratch[0]); break;
        case trace_key::tid: e.tid = identity(f.value(), scratch[1]); break;
        case trace_key::cat: e.cat = identity(f.value(), scratch[2]); break;
        case trace_key::id: e.id = identity(f.value(), scratch[3]); break;
        default: break;
        }
    }
}

void micros(simdjson::dom::element v, const char* field, micros_field& out) {
    std::int64_t i;
    double d;
    if (v.get_int64().get(i) == simdjson::SUCCESS) {
        if (out.set(i)) return;
    } else if (v.get_double().get(d) == simdjson::SUCCESS && out.set(d)) {
        return;
    }
    bad_micros(field);
}

// A DOM value as the raw-token reader above sees it, for the fields kept only as identity
// (pid, tid, cat, id): strings by content, numbers by their JSON text.
std::string_view dom_token(simdjson::dom::element v, std::string& scratch) {
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS) return quoted_text(s, scratch);
    std::int64_t i;
    if (v.get_int64().get(i) == simdjson::SUCCESS) return integer_text(i, scratch);
    double d;
    if (v.get_double().get(d) == simdjson::SUCCESS) return number_text(d, scratch);
    scratch = simdjson::minify(v);
    return scratch;
}

// Identity fields of a DOM event, turned into text only when the phase needs them (pid/tid
// for B/E, cat/id for async events): most events are 'X' and never need them.
struct dom_identity {
    simdjson::dom::element pid, tid, cat, id;
    bool has_pid = false, has_tid = false, has_cat = false, has_id = false;
};

void read_event(simdjson::dom::object ev, event_fields& e, dom_identity& ids) {
    for (auto [k, v] : ev) {
        switch (trace_key_of(k)) {
        case trace_key::ph: {
            std::string_view p;
            if (v.get_string().get(p) != simdjson::SUCCESS || p.size() != 1)
                throw field_error("field 'ph': expected a one-letter phase");
            e.ph = p[0];
            break;
        }
        case trace_key::ts: micros(v, "ts", e.ts), e.has_ts = true; break;
        case trace_key::dur: micros(v, "dur", e.dur), e.has_dur = true; break;
        case trace_key::name:
            if (v.get_string().get(e.name) != simdjson::SUCCESS) throw field_error("field 'name': expected a string");
            break;
        case trace_key::pid: ids.pid = v, ids.has_pid = true; break;
        case trace_key::tid: ids.tid = v, ids.has_tid = true; break;
        case trace_key::cat: ids.cat = v, ids.has_cat = true; break;
        case trace_key::id: ids.id = v, ids.has_id = true; break;
        default: break;
        }
    }
}

// The fast reader of one event (json_scan.hpp): the fields read_event reads, in the plainest
// form of each; false declines the event (an escape in a wanted string, a quoted or huge
// number, a float or -0 where an identity is kept, any syntax error) and simdjson reads it.
// Identity fields keep their JSON text, which for the forms accepted here is what the DOM path
// builds (dom_token): a string with its quotes, an integer's digits, a literal's word.
bool scan_micros(json_scanner& s, micros_field& out) {
    // An integer (json_scanner::uint19 after an optional '-'), bounded like every time stamp
    // (out of range: declined, and the DOM reader says so); anything with a fraction or
    // exponent goes through json_scanner::number and from_chars (correctly rounded, as
    // simdjson's), then to the nearest microsecond.
    json_scanner digits = s;
    bool neg = digits.eat('-');
    std::uint64_t u;
    if (digits.uint19(u)) {
        if (u >= static_cast<std::uint64_t>(max_micros)) return false;
        s.p = digits.p;
        return out.set(neg ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u));
    }
    std::string_view t;
    bool integer = false;
    if (s.p >= s.e || (*s.p != '-' && (*s.p < '0' || *s.p > '9')) || !s.number(t, integer)) return false;
    double v = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    return r.ec == std::errc() && r.ptr == t.data() + t.size() && out.set(v);
}

bool scan_identity(json_scanner& s, std::string_view& out) {
    const char* b = s.p;
    // The common form first: a non-negative integer of at most 18 digits (an int64, whose
    // decimal text is the DOM path's text for it).
    json_scanner digits = s;
    std::uint64_t u;
    if (digits.uint19(u) && digits.p - b <= 18) {
        s.p = digits.p;
        out = std::string_view(b, static_cast<std::size_t>(s.p - b));
        return true;
    }
    scan_kind k;
    std::string_view t;
    if (!s.scalar(k, t)) return false;
    if (k == scan_kind::number || (k == scan_kind::integer && (t == "-0" || t.size() > 18))) return false;
    out = std::string_view(b, static_cast<std::size_t>(s.p - b));
    return true;
}

// The little-endian word of up to 8 characters, as a load of them reads it.
constexpr std::uint64_t word_of(std::string_view t) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < t.size(); ++i) v |= std::uint64_t{static_cast<unsigned char>(t[i])} << (8 * i);
    return v;
}

// A member name, at s.p. The keys read here are recognized, closing quote included, from one
// 8-byte load when 9 bytes remain (a key followed by its quote has no escape, so this is
// exact); anything else goes through json_scanner::string.
[[gnu::always_inline]] inline trace_key read_key(json_scanner& s) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (s.e - s.p >= 9 && *s.p == '"') {
        std::uint64_t w;
        std::memcpy(&w, s.p + 1, 8);
        std::uint64_t w3 = w & 0xFFFFFFu, w4 = w & 0xFFFFFFFFu, w5 = w & 0xFFFFFFFFFFu;
        auto hit = [&](trace_key k, std::size_t len) {
            s.p += len + 2;
            return k;
        };
        if (w3 == word_of("ph\"")) return hit(trace_key::ph, 2);
        if (w3 == word_of("ts\"")) return hit(trace_key::ts, 2);
        if (w4 == word_of("dur\"")) return hit(trace_key::dur, 3);
        if (w5 == word_of("name\"")) return hit(trace_key::name, 4);
        if (w4 == word_of("pid\"")) return hit(trace_key::pid, 3);
        if (w4 == word_of("tid\"")) return hit(trace_key::tid, 3);
        if (w4 == word_of("cat\"")) return hit(trace_key::cat, 3);
        if (w3 == word_of("id\"")) return hit(trace_key::id, 2);
        if (w4 == word_of("id2\"")) return hit(trace_key::id, 3);
    }
#endif
    std::string_view key;
    if (!s.string(key)) return trace_key::bad;
    return trace_key_of(key);
}

bool scan_event(json_scanner& s, event_fields& e) {
    if (!s.eat('{')) return false;
    s.ws();
    if (s.eat('}')) return true;
    for (;;) {
        trace_key key = read_key(s);
        if (key == trace_key::bad) return false;
        s.ws();
        if (!s.eat(':')) return false;
        s.ws();
        bool ok;
        switch (key) {
        case trace_key::ph: {
            // A one-character string: its quote, one printable ASCII character, its quote.
            if (s.e - s.p >= 3 && s.p[0] == '"' && s.p[2] == '"' && s.p[1] >= 0x20 && s.p[1] < 0x7F && s.p[1] != '\\' &&
                s.p[1] != '"') {
                e.ph = s.p[1];
                s.p += 3;
                ok = true;
            } else {
                ok = false;
            }
            break;
        }
        case trace_key::ts: ok = e.has_ts = scan_micros(s, e.ts); break;
        case trace_key::dur: ok = e.has_dur = scan_micros(s, e.dur); break;
        case trace_key::name: ok = s.p < s.e && *s.p == '"' && s.string(e.name); break;
        case trace_key::pid: ok = scan_identity(s, e.pid); break;
        case trace_key::tid: ok = scan_identity(s, e.tid); break;
        case trace_key::cat: ok = scan_identity(s, e.cat); break;
        case trace_key::id: ok = scan_identity(s, e.id); break;
        default: ok = s.skip_value(); break;
        }
        if (!ok) return false;
        s.ws();
        if (s.eat('}')) return true;
        if (!s.eat(',')) return false;
        s.ws();
    }
}

// A 'B' or 'E' event waiting to be matched: 16 bytes, since a large trace holds millions. File
// order among equal time stamps is kept by the stable sorts, not stored.
struct be_event {
    std::int64_t ts;
    std::uint32_t thread;  // interned (pid, tid) raw JSON tokens
    std::uint32_t node;    // interned name of a 'B'; end_mark for an 'E'
    static constexpr std::uint32_t end_mark = UINT32_MAX;
    bool begin() const { return node != end_mark; }
};

}  // namespace

namespace {

// The state of one pass over a trace's events: spans, interned names and threads, B/E events
// waiting to be matched, async begins and ends. Every key it keeps is its own copy, so events
// may come from a buffer that is reused between batches.
class chrome_reader {
public:
    span_set out;
    std::size_t index = 0;  // events consumed (1-based index of the last one)

    explicit chrome_reader(std::size_t expected_spans) { out.spans.reserve(expected_spans); }

    void consume(od::value v) {
        ++index;
        od::object ev;
        if (v.get_object().get(ev) != simdjson::SUCCESS) throw field_error("expected an event object");
        event_fields e;
        read_event(ev, e, scratch_);
        take(e);
    }

    // The same from a DOM element (the batched path).
    void consume(simdjson::dom::element v) {
        ++index;
        simdjson::dom::object ev;
        if (v.get_object().get(ev) != simdjson::SUCCESS) throw field_error("expected an event object");
        event_fields e;
        dom_identity ids;
        read_event(ev, e, ids);
        if (e.ph == 'B' || e.ph == 'E') {
            if (ids.has_pid) e.pid = dom_token(ids.pid, scratch_[0]);
            if (ids.has_tid) e.tid = dom_token(ids.tid, scratch_[1]);
        } else if (e.ph == 'b' || e.ph == 'e' || e.ph == 'S' || e.ph == 'F') {
            if (ids.has_cat) e.cat = dom_token(ids.cat, scratch_[2]);
            if (ids.has_id) e.id = dom_token(ids.id, scratch_[3]);
        }
        take(e);
    }

    // An event read by the fast scanner.
    void consume(const event_fields& e) {
        ++index;
        take(e);
    }

private:
    void take(const event_fields& e) {
        ++out.events;
        switch (e.ph) {
        case 'X':
            if (!e.has_ts) missing_field("ts");
            if (!e.has_dur) missing_field("dur");
            if (e.dur.fractional ? e.dur.exact < 0 : e.dur.us < 0)
                throw field_error(fmt::format("'X' event '{}' has a negative dur ({})", e.name,
                                              e.dur.fractional ? format_double(e.dur.exact) : std::to_string(e.dur.us)));
            // With a fraction, the event's true end rounded once (monotone: never before the
            // rounded start; sums below 1.8e16 fit 64 bits).
            out.spans.push_back({e.ts.us,
                                 e.ts.fractional || e.dur.fractional ? std::llround(e.ts.value() + e.dur.value())
                                                                     : e.ts.us + e.dur.us,
                                 names_.intern(e.name)});
            break;
        case 'B':
        case 'E':
            if (!e.has_ts) missing_field("ts");
            be_.push_back({e.ts.us, thread_of(e.pid, e.tid), e.ph == 'B' ? names_.intern(e.name) : be_event::end_mark});
            break;
        case 'b':
        case 'S':
        case 'e':
        case 'F': {
            std::string key = fmt::format("{}\x1f{}\x1f{}", e.cat, e.id, e.name);
            async_open_[key] += (e.ph == 'b' || e.ph == 'S') ? 1 : -1;
            break;
        }
        case 0: missing_field("ph");
        default: break;  // instants, metadata, counters, flow, samples, objects
        }
    }

public:
    span_set finish() {
        out.names = names_.names();
        for (const auto& [k, n] : async_open_)
            if (n > 0) out.async_unmatched += static_cast<std::size_t>(n);
        // B/E pairs: per thread, in time order (ties keep file order), an E closes the
        // innermost open B. Two stable passes: by time, then by thread.
        std::vector<be_event> tmp(be_.size() < 4096 ? 0 : be_.size());
        radix_sort_range(be_.data(), be_.size(), tmp.data(), [](const be_event& e) { return e.ts; });
        radix_sort_range(be_.data(), be_.size(), tmp.data(), [](const be_event& e) { return std::int64_t{e.thread}; });
        tmp = {};
        std::vector<const be_event*> stack;
        for (std::size_t k = 0; k < be_.size(); ++k) {
            const be_event& e = be_[k];
            if (k > 0 && be_[k - 1].thread != e.thread) {
                out.unmatched_begins += stack.size();
                stack.clear();
            }
            if (e.begin()) {
                stack.push_back(&e);
            } else if (stack.empty()) {
                ++out.unmatched_ends;
            } else {
                out.spans.push_back({stack.back()->ts, e.ts, stack.back()->node});
                stack.pop_back();
            }
        }
        out.unmatched_begins += stack.size();
        return std::move(out);
    }

private:
    // (pid, tid) raw tokens → a small integer.
    std::uint32_t thread_of(std::string_view pid, std::string_view tid) {
        key_.assign(pid);
        key_.push_back('\x1f');
        key_.append(tid);
        return threads_.intern(key_);
    }

    string_interner names_;
    string_interner threads_;
    std::string key_;
    std::vector<be_event> be_;
    std::unordered_map<std::string, std::int64_t> async_open_;
    std::string scratch_[4];
};

std::string_view skip_ws(std::string_view t) {
    while (!t.empty() && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n')) t.remove_prefix(1);
    return t;
}

std::string_view skip_ws_back(std::string_view t) {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r' || t.back() == '\n')) t.remove_suffix(1);
    return t;
}

// The inside of the event array, for the two common shapes: a bare array, or an object whose
// only key is "traceEvents". nullopt for anything else (the whole-document path reads it).
std::optional<std::string_view> event_array_interior(std::string_view text) {
    std::string_view t = text;
    if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    t = skip_ws_back(skip_ws(t));
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') return t.substr(1, t.size() - 2);
    if (t.size() < 2 || t.front() != '{' || t.back() != '}') return std::nullopt;
    std::string_view in = skip_ws(t.substr(1, t.size() - 2));
    constexpr std::string_view key = "\"traceEvents\"";
    if (in.substr(0, key.size()) != key) return std::nullopt;
    in = skip_ws(in.substr(key.size()));
    if (in.empty() || in[0] != ':') return std::nullopt;
    in = skip_ws_back(skip_ws(in.substr(1)));
    if (in.size() < 2 || in.front() != '[' || in.back() != ']') return std::nullopt;
    return in.substr(1, in.size() - 2);
}

// The first event boundary at or after `from`: the position just past a '}' that is followed,
// across whitespace, by ',' and then '{'. npos when there is none. The boundary may lie inside
// a string or a nested array; a batch cut there does not parse, which the caller detects.
std::size_t next_boundary(std::string_view in, std::size_t from) {
    while (from < in.size()) {
        const void* hit = std::memchr(in.data() + from, '}', in.size() - from);
        if (!hit) return std::string_view::npos;
        std::size_t k = static_cast<std::size_t>(static_cast<const char*>(hit) - in.data()) + 1;
        std::size_t j = k;
        while (j < in.size() && (in[j] == ' ' || in[j] == '\t' || in[j] == '\r' || in[j] == '\n')) ++j;
        if (j < in.size() && in[j] == ',') {
            ++j;
            while (j < in.size() && (in[j] == ' ' || in[j] == '\t' || in[j] == '\r' || in[j] == '\n')) ++j;
            if (j < in.size() && in[j] == '{') return k;
        }
        from = k;
    }
    return std::string_view::npos;
}

// The DOM reader of the batched path: from `pos` (the start of an event), about `batch` bytes
// of events copied into a reused buffer as "[" + events + "]" and parsed whole by simdjson's
// DOM parser, whose buffers are reused from batch to batch, so memory stays bounded by the
// batch and each batch is walked while it is in cache. The DOM parse validates the whole batch
// before a single event is taken, so a batch cut in the wrong place (a '},{' inside a string or
// a nested array) is simply extended to the next boundary. Returns where the next event starts
// (past the ',' after the batch), or nullopt when the batch does not parse after a few tries.
class dom_batches {
public:
    explicit dom_batches(std::size_t batch) : batch_(batch) {}

    std::optional<std::size_t> read(std::string_view in, std::size_t pos, chrome_reader& r) {
        if (!allocated_) {
            // Room for a batch and a few extensions, allocated once: a parser grown batch by
            // batch would map (and fault in) fresh buffers each time a batch came out longer.
            if (parser_.allocate(batch_ + (batch_ >> 1) + 4096)) return std::nullopt;
            buf_.reserve(batch_ + (batch_ >> 1) + 4096 + simdjson::SIMDJSON_PADDING);
            allocated_ = true;
        }
        std::size_t cut = in.size() - pos <= batch_ ? std::string_view::npos : next_boundary(in, pos + batch_);
        for (int attempt = 0;; ++attempt) {
            std::size_t end = cut == std::string_view::npos ? in.size() : cut;
            buf_.assign(1, '[');
            buf_.append(in.data() + pos, end - pos);
            buf_.push_back(']');
            std::size_t len = buf_.size();
            buf_.append(simdjson::SIMDJSON_PADDING, '\0');
            simdjson::dom::element doc;
            simdjson::dom::array arr;
            if (parser_.parse(buf_.data(), len, false).get(doc) == simdjson::SUCCESS &&
                doc.get_array().get(arr) == simdjson::SUCCESS) {
                for (simdjson::dom::element el : arr) {
                    r.consume(el);
                    ++r.out.dom_events;
                }
                pos = end;
                while (pos < in.size() && in[pos] != ',') ++pos;
                if (pos < in.size()) ++pos;
                return pos;
            }
            if (cut == std::string_view::npos || attempt == 4) return std::nullopt;
            cut = next_boundary(in, cut);
        }
    }

private:
    std::size_t batch_;
    bool allocated_ = false;
    simdjson::dom::parser parser_;
    std::string buf_;
};

// The fast path, for the two common shapes (see event_array_interior): the whole array checked
// to be UTF-8 once, then each event read in place by scan_event; an event the scanner declines
// starts a DOM batch (dom_batches), after which the scanner goes on. Any error at all returns
// nullopt, and the whole-document path reads (and, for bad input, reports with its line)
// instead.
std::optional<span_set> read_chrome_batched(std::string_view text, std::size_t batch, bool scan) {
    auto interior = event_array_interior(text);
    if (!interior) return std::nullopt;
    std::string_view in = *interior;
    if (!simdjson::validate_utf8(in.data(), in.size())) return std::nullopt;
    chrome_reader r(text.size() / 80);
    dom_batches dom(batch);
    try {
        json_scanner s{in.data(), in.data() + in.size()};
        s.ws();
        while (s.p < s.e) {
            const char* start = s.p;
            event_fields e;
            if (scan && scan_event(s, e)) {
                r.consume(e);
                ++r.out.scanned_events;
                s.ws();
                if (s.p == s.e) break;
                if (!s.eat(',')) return std::nullopt;
                s.ws();
                if (s.p == s.e) return std::nullopt;  // a trailing comma
                continue;
            }
            auto next = dom.read(in, static_cast<std::size_t>(start - in.data()), r);
            if (!next) return std::nullopt;
            s.p = in.data() + *next;
            s.ws();
        }
    } catch (const field_error&) {
        return std::nullopt;
    } catch (const simdjson::simdjson_error&) {
        return std::nullopt;
    }
    return r.finish();
}

// Where stage 1 of a parse of `text` found `error`, for the line number of the message:
// the first line that is not valid UTF-8, or the first control character inside a string;
// nullptr when not found (line 1 is reported).
const char* stage1_error_location(std::string_view text, simdjson::error_code error) {
    if (error == simdjson::UTF8_ERROR) {
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t nl = text.find('\n', start);
            std::size_t end = nl == std::string_view::npos ? text.size() : nl;
            if (!simdjson::validate_utf8(text.data() + start, end - start)) return text.data() + start;
            start = end + 1;
        }
        return nullptr;
    }
    bool in_string = false;
    for (std::size_t k = 0; k < text.size(); ++k) {
        unsigned char c = static_cast<unsigned char>(text[k]);
        if (in_string) {
            if (c == '\\') ++k;
            else if (c == '"') in_string = false;
            else if (c < 0x20) return text.data() + k;
        } else if (c == '"') {
            in_string = true;
        }
    }
    return nullptr;
}

}  // namespace

span_set read_chrome_trace(std::string_view text, const std::string& source, std::size_t batch_bytes, bool scan) {
    if (batch_bytes > 0)
        if (auto fast = read_chrome_batched(text, batch_bytes, scan)) return std::move(*fast);
    chrome_reader r(text.size() / 80);
    r.out.whole_document = true;
    od::parser parser;
    od::document doc;
    const char* loc = text.data();
    bool iterated = false;
    // A UTF-8 byte order mark is not JSON; like the JSON Lines readers, this one skips it.
    std::string_view body = text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
    try {
        if (auto err = parser.iterate(body.data(), body.size(), body.size() + simdjson::SIMDJSON_PADDING).get(doc))
            throw simdjson::simdjson_error(err);
        iterated = true;
        od::array events;
        od::json_type root_type = doc.type();
        if (root_type == od::json_type::array) {
            events = doc.get_array();
        } else if (root_type == od::json_type::object) {
            od::value ev_value;
            if (doc.find_field_unordered("traceEvents").get(ev_value) != simdjson::SUCCESS)
                throw field_error("a trace object must hold \"traceEvents\"");
            if (ev_value.get_array().get(events) != simdjson::SUCCESS)
                throw field_error("field 'traceEvents': expected an array");
        } else {
            throw field_error("expected a trace object or an array of events");
        }
        for (auto el : events) r.consume(el.value());
    } catch (const field_error& e) {
        // Asking for a location per event costs a noticeable share of a parse, so the failing
        // event's line is found on this error path only, by walking the events again.
        std::size_t index = r.index;
        loc = index ? event_location(text, index) : nullptr;
        throw input_error(source, line_of(text, loc), index ? fmt::format("event {}: {}", index, e.what()) : e.what());
    } catch (const simdjson::simdjson_error& e) {
        // A document whose stage 1 failed (invalid UTF-8, a control character in a string, an
        // unclosed string) has no position to ask for: the bad byte is looked for instead.
        const char* at = nullptr;
        if (!iterated) at = stage1_error_location(body, e.error());
        else if (doc.current_location().get(at) != simdjson::SUCCESS) at = loc;
        throw input_error(source, line_of(text, at), fmt::format("malformed JSON ({})", simdjson::error_message(e.error())));
    }
    return r.finish();
}

namespace {

std::optional<double> number_at(const json_value& root, std::string_view key) {
    const json_value* v = root.find(key);
    if (!v) return std::nullopt;
    switch (v->t) {
    case json_value::type::integer: return static_cast<double>(v->i);
    case json_value::type::uinteger: return static_cast<double>(v->u);
    case json_value::type::number: return v->d;
    default: throw field_error(fmt::format("field '{}': expected a number", key));
    }
}

void collect_operators(const json_value& node, std::map<std::string, double>& ops, int depth) {
    if (depth > 10000) throw field_error("operator tree nested too deeply");
    const json_value* children = node.find("children");
    if (!children) return;
    if (children->t != json_value::type::array) throw field_error("field 'children': expected an array");
    for (const auto& c : children->arr) {
        if (!c.is_object()) throw field_error("field 'children': expected operator objects");
        std::string name;
        if (const json_value* n = c.find("operator_name"); n && n->t == json_value::type::string) name = n->s;
        else if (const json_value* t = c.find("operator_type"); t && t->t == json_value::type::string) name = t->s;
        else throw field_error("an operator has neither 'operator_name' nor 'operator_type'");
        auto secs = number_at(c, "operator_timing");
        if (!secs || !std::isfinite(*secs) || *secs < 0)
            throw field_error(fmt::format("operator '{}': field 'operator_timing': expected seconds >= 0", name));
        ops[name] += *secs;
        collect_operators(c, ops, depth + 1);
    }
}

}  // namespace

duckdb_profile read_duckdb_profile(std::string_view text, const std::string& source) {
    try {
        json_value root = parse_json_text(text);
        if (!root.is_object()) throw field_error("a DuckDB profile is one JSON object");
        duckdb_profile d;
        auto latency = number_at(root, "latency");
        if (!latency) missing_field("latency");
        if (!std::isfinite(*latency) || *latency < 0) throw field_error("field 'latency': expected seconds >= 0");
        d.latency_s = *latency;
        auto planner = number_at(root, "planner");
        auto optim = number_at(root, "all_optimizers");
        auto phys = number_at(root, "physical_planner");
        if (planner && optim && phys) {
            for (double x : {*planner, *optim, *phys})
                if (!std::isfinite(x) || x < 0) throw field_error("planner timings must be seconds >= 0");
            d.fixed_s = *planner + *optim + *phys;
            d.operators = {{"all_optimizers", *optim}, {"physical_planner", *phys}, {"planner", *planner}};
        }
        std::map<std::string, double> ops;
        collect_operators(root, ops, 0);
        for (auto& kv : ops) d.operators.push_back(kv);
        std::sort(d.operators.begin(), d.operators.end());
        if (const json_value* r = root.find("cumulative_rows_scanned")) {
            if (r->t == json_value::type::uinteger) d.rows_scanned = r->u;
            else if (r->t == json_value::type::integer && r->i >= 0) d.rows_scanned = static_cast<std::uint64_t>(r->i);
            else throw field_error("field 'cumulative_rows_scanned': expected a non-negative integer");
        }
        return d;
    } catch (const field_error& e) {
        // The profile is one document; errors name it at line 1 (parse errors carry no offset).
        throw input_error(source, 1, e.what());
    }
}

// ---- building -------------------------------------------------------------------------------

namespace {

std::uint64_t require_rows(const std::optional<std::uint64_t>& rows) {
    if (!rows) throw usage_error("--rows N is required: how many rows this run processed");
    if (*rows == 0) throw usage_error("--rows must be a positive integer");
    return *rows;
}

void sort_nodes(std::vector<query_node>& nodes) {
    std::sort(nodes.begin(), nodes.end(), [](const query_node& a, const query_node& b) { return a.node < b.node; });
}

query_profile base_profile(const query_options& opts, std::string source) {
    query_profile p;
    p.plan_key = opts.plan_key;
    p.host = opts.host;
    p.selectivity = opts.selectivity;
    p.engine_version = opts.engine_version;
    p.source = std::move(source);
    p.runs = 1;
    return p;
}

}  // namespace

query_profile build_from_spans(const span_set& s, const query_options& opts, const std::vector<std::string>& default_fixed,
                               std::string source) {
    query_profile p = base_profile(opts, std::move(source));
    p.rows = require_rows(opts.rows);
    const auto& fixed_names = opts.fixed_nodes.empty() ? default_fixed : opts.fixed_nodes;
    std::vector<bool> is_fixed(s.names.size(), false);
    for (const auto& f : fixed_names) {
        auto it = std::find(s.names.begin(), s.names.end(), f);
        if (it == s.names.end()) {
            p.warnings.push_back(fmt::format("fixed node '{}' does not appear in the spans: check the name", f));
            continue;
        }
        is_fixed[static_cast<std::size_t>(it - s.names.begin())] = true;
    }
    span_summary sum = summarize_spans(s, is_fixed);
    std::int64_t fixed_us = sum.fixed_us;
    double fixed_s = static_cast<double>(fixed_us) / 1e6;
    double elapsed_s = static_cast<double>(sum.elapsed_us) / 1e6;
    if (opts.fixed_seconds) {
        if (*opts.fixed_seconds > elapsed_s)
            throw usage_error(fmt::format("--fixed-seconds {} is more than the run's elapsed {} s",
                                          format_double(*opts.fixed_seconds), format_double(elapsed_s)));
        fixed_s = *opts.fixed_seconds;
        p.fixed_seconds = fixed_s;
        p.per_row_seconds = (elapsed_s - fixed_s) / static_cast<double>(p.rows);
    } else {
        if (fixed_names.empty())
            p.warnings.push_back("no fixed node named (--fixed NAME): all cost is treated as scaling with rows");
        // SPEC: integer microseconds throughout, converted to seconds once, here.
        p.fixed_seconds = fixed_s;
        p.per_row_seconds = static_cast<double>(sum.elapsed_us - fixed_us) / 1e6 / static_cast<double>(p.rows);
    }
    for (std::size_t n = 0; n < s.names.size(); ++n)
        p.nodes.push_back({s.names[n], static_cast<double>(sum.node_us[n]) / 1e6, !is_fixed[n]});
    sort_nodes(p.nodes);
    p.warnings.push_back(single_run_warning);
    return p;
}

query_profile build_from_duckdb(const duckdb_profile& d, const query_options& opts, const std::string& source_name) {
    if (!opts.fixed_nodes.empty())
        throw usage_error("--fixed names span nodes; a DuckDB profile's fixed part is planner + all_optimizers + "
                          "physical_planner (override it with --fixed-seconds)");
    query_profile p = base_profile(opts, "duckdb");
    if (opts.rows) {
        p.rows = require_rows(opts.rows);
    } else {
        if (!d.rows_scanned || *d.rows_scanned == 0)
            throw error(exit_code::data_err, fmt::format("{}: the profile has no positive 'cumulative_rows_scanned': give --rows N",
                                                         source_name));
        p.rows = *d.rows_scanned;
    }
    double fixed = 0;
    if (opts.fixed_seconds) {
        fixed = *opts.fixed_seconds;
    } else if (d.fixed_s) {
        fixed = *d.fixed_s;
    } else {
        throw error(exit_code::data_err,
                    fmt::format("{}: a standard-mode DuckDB profile has no planner, all_optimizers or physical_planner "
                                "timings, so its fixed cost is unknown: profile with PRAGMA profiling_mode='detailed' "
                                "(or give --fixed-seconds)",
                                source_name));
    }
    if (fixed > d.latency_s)
        throw error(exit_code::data_err, fmt::format("{}: fixed cost {} s is more than the query's latency {} s", source_name,
                                                     format_double(fixed), format_double(d.latency_s)));
    p.fixed_seconds = fixed;
    p.per_row_seconds = (d.latency_s - fixed) / static_cast<double>(p.rows);
    for (const auto& [name, secs] : d.operators) {
        bool plan_time = name == "planner" || name == "all_optimizers" || name == "physical_planner";
        p.nodes.push_back({name, secs, !plan_time});
    }
    sort_nodes(p.nodes);
    p.warnings.push_back(single_run_warning);
    return p;
}

// ---- fit --------------------------------------------------------------------------------------

line_fit nnls_line(const std::vector<double>& x, const std::vector<double>& y) {
    const std::size_t n = x.size();
    auto sse = [&](double a, double b) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += (a + b * x[i] - y[i]) * (a + b * x[i] - y[i]);
        return s;
    };
    double xm = 0, ym = 0;
    for (std::size_t i = 0; i < n; ++i) xm += x[i], ym += y[i];
    xm /= static_cast<double>(n);
    ym /= static_cast<double>(n);
    double sxx = 0, sxy = 0, xx = 0, xy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sxx += (x[i] - xm) * (x[i] - xm);
        sxy += (x[i] - xm) * (y[i] - ym);
        xx += x[i] * x[i];
        xy += x[i] * y[i];
    }
    if (sxx > 0) {
        double b = sxy / sxx, a = ym - b * xm;
        if (a >= 0 && b >= 0) return {a, b};
    }
    // The objective is convex, so when the interior optimum is infeasible the constrained one
    // lies on an edge: through the origin (a = 0) or flat (b = 0).
    line_fit through0{0, xx > 0 ? std::max(0.0, xy / xx) : 0.0};
    line_fit flat{std::max(0.0, ym), 0};
    return sse(through0.intercept, through0.slope) <= sse(flat.intercept, flat.slope) ? through0 : flat;
}

query_profile fit_query_profiles(const std::vector<query_profile>& runs) {
    if (runs.empty()) throw field_error("fit needs query_profile records on input");
    const query_profile& first = runs.front();
    std::vector<double> x, y;
    const query_profile* largest = &first;
    std::uint64_t total_runs = 0;
    bool same_selectivity = true;
    for (const auto& r : runs) {
        if (r.plan_key != first.plan_key || r.host != first.host)
            throw field_error(fmt::format("fit combines one plan on one host; found ('{}', '{}') and ('{}', '{}')",
                                          first.plan_key, first.host, r.plan_key, r.host));
        if (r.engine_version != first.engine_version)
            throw field_error(fmt::format("fit combines one engine version; found '{}' and '{}'", first.engine_version,
                                          r.engine_version));
        if (r.selectivity != first.selectivity) same_selectivity = false;
        x.push_back(static_cast<double>(r.rows));
        y.push_back(r.estimate(static_cast<double>(r.rows)));
        total_runs += r.runs;
        if (r.rows > largest->rows) largest = &r;
    }
    std::vector<double> distinct = x;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() < 2)
        throw field_error("fit needs runs at two or more different row counts (one row count cannot separate fixed from "
                          "per-row cost)");
    line_fit f = nnls_line(x, y);
    query_profile p;
    p.plan_key = first.plan_key;
    p.host = first.host;
    p.rows = largest->rows;
    p.fixed_seconds = f.intercept;
    p.per_row_seconds = f.slope;
    p.nodes = largest->nodes;
    p.selectivity = same_selectivity ? first.selectivity : std::nullopt;
    p.engine_version = first.engine_version;
    p.source = "fit";
    p.runs = total_runs;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double pred = f.intercept + f.slope * x[i];
        p.residuals.push_back({runs[i].rows, y[i], pred, y[i] - pred});
    }
    std::sort(p.residuals.begin(), p.residuals.end(), [](const query_fit_point& a, const query_fit_point& b) {
        return a.rows != b.rows ? a.rows < b.rows : a.measured_s < b.measured_s;
    });
    if (distinct.size() == 2)
        p.warnings.push_back("fitted over two row counts: the line passes through both, so the residuals cannot show "
                             "misfit; a third row count would");
    if (f.slope == 0)
        p.warnings.push_back("per-row cost clamped to 0: the runs do not get slower with more rows");
    if (f.intercept == 0 && distinct.size() > 2)
        p.warnings.push_back("fixed cost clamped to 0: the runs' line would cross zero rows below 0 s");
    return p;
}

// ---- staleness --------------------------------------------------------------------------------

std::optional<std::string> stale_reason(const query_profile& p, std::uint64_t rows, const std::string& engine_version,
                                        double factor) {
    std::vector<std::string> why;
    double ratio = static_cast<double>(rows) / static_cast<double>(p.rows);
    if (ratio > factor)
        why.push_back(fmt::format("{} rows is {}x the profile's {} rows (more than the factor {})", rows,
                                  format_double(ratio), p.rows, format_double(factor)));
    else if (ratio < 1.0 / factor)
        why.push_back(fmt::format("{} rows is 1/{} of the profile's {} rows (below 1/{})", rows,
                                  format_double(1.0 / ratio), p.rows, format_double(factor)));
    if (p.engine_version.empty())
        why.push_back("the profile's engine version is unknown");
    else if (p.engine_version != engine_version)
        why.push_back(fmt::format("the profile was taken on engine version '{}', the engine is now '{}'", p.engine_version,
                                  engine_version));
    if (why.empty()) return std::nullopt;
    std::string out = why[0];
    for (std::size_t k = 1; k < why.size(); ++k) out += "; " + why[k];
    return out;
}

// ---- the record -------------------------------------------------------------------------------

std::string write_query_profile(const query_profile& p) {
    json_writer w;
    w.begin_object();
    w.field("kind", "query_profile");
    w.field("plan_key", p.plan_key);
    w.field("host", p.host);
    w.field("rows", p.rows);
    w.field("fixed_seconds", p.fixed_seconds);
    w.field("per_row_seconds", p.per_row_seconds);
    w.key("nodes");
    w.begin_array();
    for (const auto& n : p.nodes) {
        w.begin_object();
        w.field("node", n.node);
        w.field("seconds", n.seconds);
        w.field("scales_with_rows", n.scales_with_rows);
        w.end_object();
    }
    w.end_array();
    w.field("selectivity", p.selectivity);
    w.field("engine_version", p.engine_version);
    w.field("source", p.source);
    w.field("runs", p.runs);
    w.key("residuals");
    if (p.residuals.empty()) {
        w.null();
    } else {
        w.begin_array();
        for (const auto& r : p.residuals) {
            w.begin_object();
            w.field("rows", r.rows);
            w.field("measured_s", r.measured_s);
            w.field("predicted_s", r.predicted_s);
            w.field("residual_s", r.residual_s);
            w.end_object();
        }
        w.end_array();
    }
    w.array_field("warnings", p.warnings);
    w.end_object();
    return w.take();
}

namespace {

double finite_number(od::value v, std::string_view field) {
    auto d = read_number(v, field);
    if (!d || !std::isfinite(*d)) throw field_error(fmt::format("field '{}': expected a finite number", field));
    return *d;
}

double seconds_field(od::value v, std::string_view field) {
    double d = finite_number(v, field);
    if (d < 0) throw field_error(fmt::format("field '{}': expected seconds >= 0, found {}", field, format_double(d)));
    return d;
}

}  // namespace

query_profile read_query_profile(od::object& obj) {
    query_profile p;
    p.source = "";
    bool kind = false, plan = false, host = false, rows = false, fixed = false, per_row = false;
    for (auto f : obj) {
        std::string_view k = f.unescaped_key();
        od::value v = f.value();
        if (k == "kind") {
            check_kind(v, "query_profile");
            kind = true;
        } else if (k == "plan_key") {
            p.plan_key = require_string(v, "plan_key");
            plan = true;
        } else if (k == "host") {
            p.host = require_string(v, "host");
            host = true;
        } else if (k == "rows") {
            auto r = read_count(v, "rows");
            if (!r || *r == 0) throw field_error("field 'rows': expected a positive integer");
            p.rows = *r;
            rows = true;
        } else if (k == "fixed_seconds") {
            p.fixed_seconds = seconds_field(v, "fixed_seconds");
            fixed = true;
        } else if (k == "per_row_seconds") {
            p.per_row_seconds = seconds_field(v, "per_row_seconds");
            per_row = true;
        } else if (k == "nodes") {
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'nodes': expected an array");
            for (auto el : arr) {
                od::object no;
                if (el.get_object().get(no) != simdjson::SUCCESS) throw field_error("field 'nodes': expected objects");
                query_node n;
                bool has_name = false;
                for (auto nf : no) {
                    std::string_view nk = nf.unescaped_key();
                    if (nk == "node") n.node = require_string(nf.value(), "nodes.node"), has_name = true;
                    else if (nk == "seconds") n.seconds = seconds_field(nf.value(), "nodes.seconds");
                    else if (nk == "scales_with_rows") {
                        auto b = read_bool(nf.value(), "nodes.scales_with_rows");
                        n.scales_with_rows = b.value_or(true);
                    }
                }
                if (!has_name) missing_field("nodes.node");
                p.nodes.push_back(std::move(n));
            }
        } else if (k == "selectivity") {
            auto s = read_number(v, "selectivity");
            if (s && !std::isfinite(*s)) s.reset();
            p.selectivity = s;
        } else if (k == "engine_version") {
            p.engine_version = read_string(v, "engine_version").value_or("");
        } else if (k == "source") {
            p.source = read_string(v, "source").value_or("");
        } else if (k == "runs") {
            auto r = read_count(v, "runs");
            p.runs = r && *r > 0 ? *r : 1;
        } else if (k == "residuals") {
            if (v.is_null()) continue;
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'residuals': expected an array");
            for (auto el : arr) {
                od::object ro;
                if (el.get_object().get(ro) != simdjson::SUCCESS) throw field_error("field 'residuals': expected objects");
                query_fit_point r;
                for (auto rf : ro) {
                    std::string_view rk = rf.unescaped_key();
                    if (rk == "rows") r.rows = read_count(rf.value(), "residuals.rows").value_or(0);
                    else if (rk == "measured_s") r.measured_s = finite_number(rf.value(), "residuals.measured_s");
                    else if (rk == "predicted_s") r.predicted_s = finite_number(rf.value(), "residuals.predicted_s");
                    else if (rk == "residual_s") r.residual_s = finite_number(rf.value(), "residuals.residual_s");
                }
                p.residuals.push_back(r);
            }
        } else if (k == "warnings") {
            if (v.is_null()) continue;
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'warnings': expected an array");
            for (auto el : arr) p.warnings.push_back(require_string(el.value(), "warnings"));
        }
    }
    if (!kind) missing_field("kind");
    if (!plan) missing_field("plan_key");
    if (!host) missing_field("host");
    if (!rows) missing_field("rows");
    if (!fixed) missing_field("fixed_seconds");
    if (!per_row) missing_field("per_row_seconds");
    sort_nodes(p.nodes);
    return p;
}

std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host) {
    return {plan_key, host};
}

std::vector<std::string> query_profile_record_key(std::string_view text) {
    query_profile p;
    parse_object_text(text, [&](od::object& obj) { p = read_query_profile(obj); });
    return query_profile_key(p.plan_key, p.host);
}

}  // namespace prof
