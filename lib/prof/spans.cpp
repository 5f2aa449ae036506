// QueryProfile from spans and DuckDB profiles (see spans.hpp).
#include "prof/spans.hpp"

#include "prof/diag.hpp"
#include "prof/errors.hpp"
#include "prof/json_in.hpp"
#include "prof/json_out.hpp"
#include "prof/interner.hpp"
#include "prof/json_scan.hpp"
#include "prof/records/kinds.hpp"

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
// range, from their lowest bit that differs (time stamps in whole microseconds, as nanoseconds,
// are multiples of 1000 = 8 x 125: 3 bits that need no pass; a trace's nanoseconds span ~35
// bits: 3 passes), O(n) per pass, through `tmp` (room for n elements). Below a few thousand
// elements std::stable_sort is as fast. Stability keeps file order among equal keys.
template <class T, class Key>
void radix_sort_range(T* v, std::size_t n, T* tmp, Key key) {
    if (n < 4096) {
        std::stable_sort(v, v + n, [&](const T& a, const T& b) { return key(a) < key(b); });
        return;
    }
    const std::int64_t first = key(v[0]);
    std::int64_t lo = first, hi = lo;
    std::uint64_t differ = 0;  // the bits in which some key differs from the first
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t k = key(v[i]);
        lo = std::min(lo, k);
        hi = std::max(hi, k);
        differ |= static_cast<std::uint64_t>(k ^ first);
    }
    if (differ == 0) return;  // all keys equal: already in order
    auto range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    constexpr int bits = 11;
    constexpr std::size_t radix = std::size_t{1} << bits;
    auto digit = [&](const T& x, int shift) {
        return (static_cast<std::uint64_t>(key(x)) - static_cast<std::uint64_t>(lo)) >> shift & (radix - 1);
    };
    T* src = v;
    T* dst = tmp;
    // Every key - lo is a multiple of 2^(trailing zeros of differ): those low bits are all zero.
    for (int shift = __builtin_ctzll(differ); shift < 64 && (range >> shift) != 0; shift += bits) {
        std::size_t count[radix + 1] = {};
        for (std::size_t i = 0; i < n; ++i) ++count[digit(src[i], shift) + 1];
        for (std::size_t d = 1; d <= radix; ++d) count[d] += count[d - 1];
        for (std::size_t i = 0; i < n; ++i) dst[count[digit(src[i], shift)]++] = src[i];
        std::swap(src, dst);
    }
    if (src != v) std::copy(src, src + n, v);
}

using interval = std::pair<std::int64_t, std::int64_t>;

// The union's length of iv[0, n), sorted in place by start (through tmp, room for n). Lengths
// are unsigned differences: exact for any two int64 time points.
std::uint64_t union_length(interval* iv, std::size_t n, interval* tmp) {
    // Ordered by start only: among equal starts the sweep below takes the largest end anyway.
    auto by_start = [](const interval& a, const interval& b) { return a.first < b.first; };
    if (!std::is_sorted(iv, iv + n, by_start)) radix_sort_range(iv, n, tmp, [](const interval& x) { return x.first; });
    auto length = [](std::int64_t s, std::int64_t e) {
        return static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(s);
    };
    std::uint64_t total = 0;
    bool open = false;
    std::int64_t cur_s = 0, cur_e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        auto [s, e] = iv[i];
        if (e <= s) continue;
        if (open && s <= cur_e) {
            cur_e = std::max(cur_e, e);
            continue;
        }
        if (open) total += length(cur_s, cur_e);
        cur_s = s;
        cur_e = e;
        open = true;
    }
    if (open) total += length(cur_s, cur_e);
    return total;
}

}  // namespace

std::uint64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv) {
    std::vector<interval> tmp(iv.size() < 4096 ? 0 : iv.size());
    return union_length(iv.data(), iv.size(), tmp.data());
}

span_summary summarize_spans(const span_set& s, const std::vector<bool>& is_fixed) {
    span_summary out;
    out.node_ns.assign(s.names.size(), 0);
    if (s.spans.empty()) return out;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    // Bucket by node (counting sort, O(n)), then each bucket's union, sorted in place through
    // one scratch buffer: O(n log n) overall, on integers only.
    std::vector<std::size_t> offset(s.names.size() + 1, 0);
    for (const auto& sp : s.spans) {
        lo = std::min(lo, sp.start_ns);
        hi = std::max(hi, sp.end_ns);
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
        for (const auto& sp : s.spans) iv[fill[sp.node]++] = {sp.start_ns, sp.end_ns};
    }
    std::vector<interval> tmp(largest < 4096 ? 0 : largest);
    std::vector<interval> fixed_iv;
    for (std::size_t n = 0; n < s.names.size(); ++n) {
        out.node_ns[n] = union_length(iv.data() + offset[n], offset[n + 1] - offset[n], tmp.data());
        if (n < is_fixed.size() && is_fixed[n])
            fixed_iv.insert(fixed_iv.end(), iv.begin() + static_cast<std::ptrdiff_t>(offset[n]),
                            iv.begin() + static_cast<std::ptrdiff_t>(offset[n + 1]));
    }
    if (fixed_iv.size() > tmp.size() && fixed_iv.size() >= 4096) tmp.resize(fixed_iv.size());
    out.fixed_ns = union_length(fixed_iv.data(), fixed_iv.size(), tmp.data());
    out.elapsed_ns = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
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
};

}  // namespace

std::string_view defect_name(event_defect d) { return defect_table[static_cast<std::size_t>(d)].name; }
std::string_view defect_description(event_defect d) { return defect_table[static_cast<std::size_t>(d)].description; }

namespace {

// Polars rows are integer microseconds, bounded like every time stamp (max_ns below).
constexpr std::int64_t max_polars_us = 9000000000000000;

void add_polars_row(span_set& out, string_interner& names, std::string_view node, std::int64_t start, std::int64_t end) {
    for (auto [v, what] : {std::pair{start, "start"}, std::pair{end, "end"}})
        if (v <= -max_polars_us || v >= max_polars_us)
            throw field_error(fmt::format("field '{}': expected microseconds below 9e15 in magnitude, found {}", what, v));
    if (end < start) throw field_error(fmt::format("span '{}' ends before it starts (start {}, end {})", node, start, end));
    out.spans.push_back({start * 1000, end * 1000, names.intern(node)});
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

// Time points are integer nanoseconds below 9e18 in magnitude (9e15 µs, 285 years) on every
// path, integers and fractions alike: the difference of two fits 64 unsigned bits, and an 'X'
// event's end (ts + dur) is checked against the same bound.
constexpr std::int64_t max_us = 9000000000000000;
constexpr std::int64_t max_ns = max_us * 1000;

}  // namespace

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

namespace {

// A ts or dur as read. A later key replaces an earlier one. `inexact`: a number with a fraction
// seen only as a double (the DOM reader), which only a reader of its text can take exactly.
enum class time_state : std::uint8_t { absent, ok, null_value, not_number, out_of_range, inexact };
// Only the state is initialized: ns is read only once the state is ok, and zeroing both fields
// for every event is measurable in the hot loop.
struct time_field {
    std::int64_t ns;
    time_state state = time_state::absent;
};

void set_from_token(time_field& f, std::string_view number_token) {
    f.state = micros_token_to_ns(number_token, f.ns) ? time_state::ok : time_state::out_of_range;
}
void set_from_integer(time_field& f, std::int64_t us) {
    if (us <= -max_us || us >= max_us) {
        f.state = time_state::out_of_range;
        return;
    }
    f.ns = us * 1000;
    f.state = time_state::ok;
}
// A string holding a JSON number reads as that number: the rule of read_number (json_in.hpp),
// by which prof-harvest reads quoted numbers in rows; anything else ("abc", " 1", "NaN") is no
// number.
void set_from_string(time_field& f, std::string_view contents) {
    if (!json_number_value(contents)) {
        f.state = time_state::not_number;
        return;
    }
    set_from_token(f, contents);
}

// The simdjson DOM reader meets a span's time with a fraction: the batched path gives the trace
// to the whole-document parse, which reads the number's text.
struct needs_number_text {};

[[noreturn]] void bad_micros(const char* field) {
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
    default: bad_micros(field);
    }
}
bool unreadable(const time_field& f) {
    return f.state == time_state::null_value || f.state == time_state::not_number || f.state == time_state::out_of_range;
}

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

// The phases the Trace Event Format defines: duration B E, complete X, instant i I, counter C,
// async b n e and the older S T p F, flow s t f, sample P, object N O D, metadata M, memory dump
// V v, mark R, clock sync c, context ( ), linked id =.
constexpr bool known_phase(char c) {
    for (char k : std::string_view("BEXiICbneSTpFstfPNODMVvRc()=")) if (k == c) return true;
    return false;
}
// The phase of an event whose "ph" is not a one-character string.
constexpr char unknown_ph = '\x01';

// On-demand: a ts or dur value.
void read_time(od::value v, time_field& out) {
    switch (v.type()) {
    case od::json_type::number: {
        std::int64_t i;
        if (v.get_int64().get(i) == simdjson::SUCCESS) return set_from_integer(out, i);
        std::string_view tok = trimmed_token(v);
        if (!json_number_value(tok)) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);  // not JSON
        return set_from_token(out, tok);
    }
    case od::json_type::string: return set_from_string(out, v.get_string());
    case od::json_type::null: {
        // The word checked, as the other readers check it: "nul" is not JSON.
        bool null = false;
        if (auto err = v.is_null().get(null); err || !null) throw simdjson::simdjson_error(err ? err : simdjson::N_ATOM_ERROR);
        out.state = time_state::null_value;
        return;
    }
    case od::json_type::boolean: {
        bool b = false;
        if (auto err = v.get_bool().get(b)) throw simdjson::simdjson_error(err);
        out.state = time_state::not_number;
        return;
    }
    default: out.state = time_state::not_number; return;
    }
}

// A string value read in place when it holds no escape (a view into the input text, valid as
// long as the text), else unescaped by simdjson (a view into the parser's buffer, valid for the
// whole document). Either way no copy is made per event.
std::string_view string_in_place(od::value v, std::string_view tok) {
    std::string_view inner = tok.substr(1, tok.size() - 2);
    if (inner.find('\\') == std::string_view::npos) return inner;
    return v.get_string();
}

// Where the events of the given 1-based indices (ascending) start, by one walk of the trace's
// events; nullptr for one not reached.
std::vector<const char*> event_locations(std::string_view text, const std::vector<std::size_t>& indices) {
    std::vector<const char*> out(indices.size(), nullptr);
    od::parser parser;
    od::document doc;
    if (indices.empty() || parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING).get(doc))
        return out;
    od::array events;
    od::json_type t;
    if (doc.type().get(t)) return out;
    if (t == od::json_type::array) {
        if (doc.get_array().get(events)) return out;
    } else {
        od::value v;
        if (doc.find_field_unordered("traceEvents").get(v) || v.get_array().get(events)) return out;
    }
    std::size_t k = 0, j = 0;
    for (auto el : events) {
        od::value v;
        if (el.get(v)) return out;
        ++k;
        while (j < indices.size() && indices[j] == k) {
            const char* loc = nullptr;
            if (v.current_location().get(loc)) return out;
            out[j++] = loc;
        }
        if (j == indices.size()) break;
    }
    return out;
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
    char ph = 0;            // 0: no "ph"; unknown_ph: not a one-character string
    bool empty = true;      // no member at all
    bool bad_name = false;  // "name" is not a string
    time_field ts, dur;
    std::string_view name, cat, id, pid, tid;  // name.data() == nullptr: no name
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
        e.empty = false;
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
            std::string_view p;
            e.ph = pv.get_string().get(p) == simdjson::SUCCESS && p.size() == 1 ? p[0] : unknown_ph;
            break;
        }
        case trace_key::ts: read_time(f.value(), e.ts); break;
        case trace_key::dur: read_time(f.value(), e.dur); break;
        case trace_key::name: {
            od::value nv = f.value();
            std::string_view tok = trimmed_token(nv);
            e.bad_name = tok.empty() || tok[0] != '"';
            e.name = e.bad_name ? std::string_view() : string_in_place(nv, tok);
            break;
        }
        case trace_key::pid: e.pid = identity(f.value(), scratch[0]); break;
        case trace_key::tid: e.tid = identity(f.value(), scratch[1]); break;
        case trace_key::cat: e.cat = identity(f.value(), scratch[2]); break;
        case trace_key::id: e.id = identity(f.value(), scratch[3]); break;
        default: break;
        }
    }
}

// DOM: a ts or dur value. The DOM keeps a number with a fraction only as a double: inexact.
void read_time(simdjson::dom::element v, time_field& out) {
    switch (v.type()) {
    case simdjson::dom::element_type::INT64: return set_from_integer(out, std::int64_t(v));
    case simdjson::dom::element_type::UINT64: out.state = time_state::out_of_range; return;
    case simdjson::dom::element_type::DOUBLE: {
        // In range or out of it for certain, unless the double lies near the bound.
        double m = std::fabs(double(v));
        if (!(m < 8.9e15) && !(m > 9.1e15)) throw needs_number_text{};
        out.state = m < 8.9e15 ? time_state::inexact : time_state::out_of_range;
        return;
    }
    case simdjson::dom::element_type::STRING: return set_from_string(out, std::string_view(v));
    case simdjson::dom::element_type::NULL_VALUE: out.state = time_state::null_value; return;
    default: out.state = time_state::not_number; return;
    }
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
        e.empty = false;
        switch (trace_key_of(k)) {
        case trace_key::ph: {
            std::string_view p;
            e.ph = v.get_string().get(p) == simdjson::SUCCESS && p.size() == 1 ? p[0] : unknown_ph;
            break;
        }
        case trace_key::ts: read_time(v, e.ts); break;
        case trace_key::dur: read_time(v, e.dur); break;
        case trace_key::name:
            e.bad_name = v.get_string().get(e.name) != simdjson::SUCCESS;
            if (e.bad_name) e.name = {};
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
[[gnu::always_inline]] inline bool scan_time(json_scanner& s, time_field& out) {
    // An integer (json_scanner::uint19 after an optional '-'); a number with a fraction or
    // exponent from its token (json_scanner::number); a string without escapes holding a JSON
    // number; null. Anything else declines.
    json_scanner digits = s;
    bool neg = digits.eat('-');
    std::uint64_t u;
    if (digits.uint19(u)) {
        s.p = digits.p;
        if (u >= static_cast<std::uint64_t>(max_us)) {
            out.state = time_state::out_of_range;
        } else {
            auto ns = static_cast<std::int64_t>(u) * 1000;
            out.ns = neg ? -ns : ns;
            out.state = time_state::ok;
        }
        return true;
    }
    if (s.p >= s.e) return false;
    // A fraction of at most 19 digits in all, the common form (PyTorch writes 198093488368.463):
    // its digits m with k after the point are m x 10^(3 - k) ns, or for k > 3 rounded half away
    // from zero at the first digit dropped, as micros_token_to_ns reads it.
    std::uint64_t m;
    int k;
    if (digits = s; digits.decimal(m, k, neg)) {
        static constexpr std::uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                                  1000000000, 10000000000, 100000000000, 1000000000000,
                                                  10000000000000, 100000000000000, 1000000000000000,
                                                  10000000000000000, 100000000000000000, 1000000000000000000,
                                                  10000000000000000000u};
        std::uint64_t ns;
        bool over = false;
        if (k <= 3) over = __builtin_mul_overflow(m, pow10[3 - k], &ns);
        else ns = m / pow10[k - 3] + (m / pow10[k - 4] % 10 >= 5);
        s.p = digits.p;
        if (over || ns >= static_cast<std::uint64_t>(max_ns)) {
            out.state = time_state::out_of_range;
        } else {
            out.ns = neg ? -static_cast<std::int64_t>(ns) : static_cast<std::int64_t>(ns);
            out.state = time_state::ok;
        }
        return true;
    }
    std::string_view t;
    bool integer = false;
    if (*s.p == '"') {
        if (!s.string(t)) return false;
        json_scanner inner{t.data(), t.data() + t.size()};
        std::string_view tok;
        if (inner.number(tok, integer) && inner.p == inner.e) set_from_token(out, t);
        else out.state = time_state::not_number;
        return true;
    }
    if (*s.p == 'n') {
        if (!s.literal("null")) return false;
        out.state = time_state::null_value;
        return true;
    }
    if ((*s.p != '-' && (*s.p < '0' || *s.p > '9')) || !s.number(t, integer)) return false;
    set_from_token(out, t);
    return true;
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
    e.empty = false;
    for (;;) {
        trace_key key = read_key(s);
        if (key == trace_key::bad) return false;
        s.ws();
        if (!s.eat(':')) return false;
        s.ws();
        bool ok;
        switch (key) {
        case trace_key::ph: {
            // A one-character string: its quote, one printable ASCII character, its quote. Any
            // other string without escapes ("XXX", "") is a phase the format does not define.
            if (s.e - s.p >= 3 && s.p[0] == '"' && s.p[2] == '"' && s.p[1] >= 0x20 && s.p[1] < 0x7F && s.p[1] != '\\' &&
                s.p[1] != '"') {
                e.ph = s.p[1];
                s.p += 3;
                ok = true;
            } else {
                std::string_view p;
                ok = s.p < s.e && *s.p == '"' && s.string(p);
                if (ok) e.ph = p.size() == 1 ? p[0] : unknown_ph;
            }
            break;
        }
        case trace_key::ts: ok = scan_time(s, e.ts); break;
        case trace_key::dur: ok = scan_time(s, e.dur); break;
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
    std::int64_t ts;       // ns
    std::uint32_t thread;  // interned (pid, tid) raw JSON tokens
    // A 'B': its interned name (below named_end). An 'E': end_mark when it has no name, else
    // named_end | k, where k indexes the reader's named ends (its name and event index).
    std::uint32_t node;
    static constexpr std::uint32_t named_end = 0x80000000u;
    static constexpr std::uint32_t end_mark = UINT32_MAX;
    bool begin() const { return node < named_end; }
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
    // Where the event being consumed starts in the text, when the caller knows (the scanner);
    // kept for each defect's first event, so that its line needs no second walk of the events.
    const char* event_at = nullptr;
    std::array<const char*, event_defect_kinds> first_at{};

    explicit chrome_reader(std::size_t expected_spans) { out.spans.reserve(expected_spans); }

    void consume(od::value v) {
        ++index;
        od::object ev;
        if (v.get_object().get(ev) != simdjson::SUCCESS) {
            // simdjson's on-demand array iteration takes "[{...},]" for an element "]".
            std::string_view tok = v.raw_json_token();
            if (tok.empty() || tok[0] == ']') throw simdjson::simdjson_error(simdjson::TAPE_ERROR);
            throw field_error("expected an event object");
        }
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
    void defect(event_defect d, std::size_t at, const char* where) {
        auto k = static_cast<std::size_t>(d);
        defect_count& c = out.defects[k];
        if (c.count++ == 0 || at < c.first_event) {
            c.first_event = at;
            first_at[k] = where;
        }
    }
    void defect(event_defect d, std::size_t at) { defect(d, at, event_at); }

    void take(const event_fields& e) {
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
                named_ends_.push_back({end_names_.intern(e.name), index, event_at});
            }
            be_.push_back({e.ts.ns, thread_of(e.pid, e.tid), node});
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
                const be_event& b = *stack.back();
                if (e.node != be_event::end_mark) {
                    const named_end& n = named_ends_[e.node & ~be_event::named_end];
                    if (!same_text(out.names[b.node], end_names_.names()[n.name]))
                        defect(event_defect::mismatched_end, n.index, n.at);
                }
                out.spans.push_back({b.ts, e.ts, b.node});
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

    struct named_end {
        std::uint32_t name;  // in end_names_
        std::size_t index;   // the event's 1-based index in the trace
        const char* at;      // where it starts in the text, when known
    };
    string_interner names_;
    string_interner end_names_;  // names of 'E' events: compared with their 'B', never nodes
    std::vector<named_end> named_ends_;
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

// The event array of the shapes the fast path reads: a bare array, or an object with one
// "traceEvents" array among members the scanner can check (displayTimeUnit kept when it is a
// string without escapes). nullopt for anything else, which the whole-document path reads.
struct event_array {
    std::string_view whole;     // the text without a byte order mark and surrounding whitespace
    std::string_view interior;  // between the array's brackets
    std::string display_time_unit;
};

// One member's value, skipped (checked), or kept when it is displayTimeUnit.
bool trace_member(json_scanner& s, std::string_view key, event_array& out) {
    if (key != "displayTimeUnit") return s.skip_value();
    std::string_view unit;
    if (!s.string(unit)) return false;
    out.display_time_unit = std::string(unit);
    return true;
}

std::optional<event_array> event_array_of(std::string_view text) {
    event_array out;
    std::string_view t = text;
    if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    t = skip_ws_back(skip_ws(t));
    out.whole = t;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
        out.interior = t.substr(1, t.size() - 2);
        return out;
    }
    if (t.size() < 2 || t.front() != '{' || t.back() != '}') return std::nullopt;
    json_scanner s{t.data() + 1, t.data() + t.size() - 1};
    std::string_view key;
    for (s.ws();; s.ws()) {  // the members before the events
        if (!s.string(key)) return std::nullopt;
        s.ws();
        if (!s.eat(':')) return std::nullopt;
        s.ws();
        if (key == "traceEvents") break;
        if (!trace_member(s, key, out)) return std::nullopt;
        s.ws();
        if (!s.eat(',')) return std::nullopt;
    }
    // The array's end is taken to be the text's last ']'. When a later member holds a ']', the
    // last event seems to be followed by ']' instead of ',' and the scanner declines the trace:
    // a wrong guess costs the fast path, never the answer.
    std::string_view rest(s.p, static_cast<std::size_t>(s.e - s.p));
    std::size_t close = rest.rfind(']');
    if (rest.empty() || rest[0] != '[' || close == std::string_view::npos || close == 0) return std::nullopt;
    out.interior = rest.substr(1, close - 1);
    json_scanner after{rest.data() + close + 1, s.e};
    for (after.ws(); after.p < after.e; after.ws()) {  // the members after them
        if (!after.eat(',')) return std::nullopt;
        after.ws();
        if (!after.string(key) || key == "traceEvents") return std::nullopt;  // a second one: read whole
        after.ws();
        if (!after.eat(':')) return std::nullopt;
        after.ws();
        if (!trace_member(after, key, out)) return std::nullopt;
    }
    return out;
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

// The fast path, for the common shapes (see event_array_of): the whole text checked to be UTF-8
// once, then each event read in place by scan_event; an event the scanner declines starts a DOM
// batch (dom_batches), after which the scanner goes on. Any error at all returns nullopt, and the
// whole-document path reads (and, for bad input, reports with its line) instead.
std::optional<span_set> read_chrome_batched(std::string_view text, std::size_t batch, bool scan) {
    auto shape = event_array_of(text);
    if (!shape || !simdjson::validate_utf8(shape->whole.data(), shape->whole.size())) return std::nullopt;
    std::string_view in = shape->interior;
    chrome_reader r(text.size() / 80);
    r.out.display_time_unit = std::move(shape->display_time_unit);
    dom_batches dom(batch);
    try {
        json_scanner s{in.data(), in.data() + in.size()};
        s.ws();
        while (s.p < s.e) {
            const char* start = s.p;
            event_fields e;
            if (scan && scan_event(s, e)) {
                r.event_at = start;
                r.consume(e);
                r.event_at = nullptr;
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
    } catch (const needs_number_text&) {
        return std::nullopt;
    }
    span_set out = r.finish();
    // The lines of the defects whose first event the scanner read, counted in file order.
    std::array<std::size_t, event_defect_kinds> order{};
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r.first_at[a] < r.first_at[b]; });
    const char* from = text.data();
    std::size_t line = 1;
    for (std::size_t k : order) {
        const char* at = r.first_at[k];
        if (!at || !out.defects[k].count) continue;
        line += static_cast<std::size_t>(std::count(from, at, '\n'));
        from = at;
        out.defects[k].first_line = line;
    }
    return out;
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

namespace {

// The whole-document parse with simdjson's on-demand parser (see read_chrome_trace).
span_set read_chrome_document(std::string_view text, const std::string& source) {
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
        od::json_type root_type = doc.type();
        if (root_type == od::json_type::array) {
            for (auto el : doc.get_array()) r.consume(el.value());
        } else if (root_type == od::json_type::object) {
            // The members in order: the first "traceEvents" is read, displayTimeUnit kept.
            bool found = false;
            for (auto f : doc.get_object()) {
                std::string_view k = f.unescaped_key();
                if (k == "traceEvents" && !found) {
                    found = true;
                    od::array events;
                    if (f.value().get_array().get(events) != simdjson::SUCCESS)
                        throw field_error("field 'traceEvents': expected an array");
                    for (auto el : events) r.consume(el.value());
                } else if (k == "displayTimeUnit") {
                    od::value v = f.value();
                    std::string_view unit;
                    r.out.display_time_unit = v.get_string().get(unit) == simdjson::SUCCESS ? std::string(unit)
                                                                                          : std::string(trimmed_token(v));
                }
            }
            if (!found) throw field_error("a trace object must hold \"traceEvents\"");
        } else {
            throw field_error("expected a trace object or an array of events");
        }
    } catch (const field_error& e) {
        // Asking for a location per event costs a noticeable share of a parse, so the failing
        // event's line is found on this error path only, by walking the events again.
        std::size_t index = r.index;
        loc = index ? event_locations(body, {index})[0] : nullptr;
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

// For a JSON Array Format trace without its closing ']': the text up to its last whole event
// (a '}'), without the whitespace and the one comma after it; or just its '['. nullopt for any
// other text (a closed array, an object, a text cut inside an event), which is read as it is.
std::optional<std::string_view> unclosed_array_prefix(std::string_view text) {
    std::string_view t = skip_bom_ws(text);
    if (t.empty() || t[0] != '[') return std::nullopt;
    std::string_view r = skip_ws_back(t);
    if (r.size() > 1 && r.back() == ',') {
        r = skip_ws_back(r.substr(0, r.size() - 1));
        if (r.back() != '}') return std::nullopt;
    }
    if (r.back() != '}' && r.size() != 1) return std::nullopt;
    return text.substr(0, static_cast<std::size_t>(r.data() + r.size() - text.data()));
}

// Each defect's first line, from its first event's index (one walk over the events).
void locate_defects(std::string_view text, span_set& s) {
    std::vector<std::size_t> at;
    for (const auto& d : s.defects)
        if (d.count && !d.first_line) at.push_back(d.first_event);
    if (at.empty()) return;
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    std::string_view body = text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
    std::vector<const char*> where = event_locations(body, at);
    for (auto& d : s.defects)
        if (d.count && !d.first_line) {
            auto k = static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), d.first_event) - at.begin());
            d.first_line = line_of(text, where[k]);
        }
}

}  // namespace

span_set read_chrome_trace(std::string_view text, const std::string& source, std::size_t batch_bytes, bool scan) {
    // Without its closing ']', the array is read from a copy that has it.
    std::optional<simdjson::padded_string> closed;
    if (auto prefix = unclosed_array_prefix(text)) {
        closed.emplace(prefix->size() + 1);
        std::memcpy(closed->data(), prefix->data(), prefix->size());
        closed->data()[prefix->size()] = ']';
        text = std::string_view(closed->data(), closed->size());
    }
    std::optional<span_set> s;
    if (batch_bytes > 0) s = read_chrome_batched(text, batch_bytes, scan);
    if (!s) s = read_chrome_document(text, source);
    s->unclosed = closed.has_value();
    locate_defects(text, *s);
    return std::move(*s);
}

trace_report report_trace(const span_set& s, const std::string& source) {
    trace_report r;
    if (s.unclosed)
        r.notes.push_back("the event array has no closing ']' (a trace stopped abruptly, which the format allows): "
                          "read to its last whole event");
    if (s.async_unmatched) r.notes.push_back(fmt::format("ignored {} async begin(s) with no end", s.async_unmatched));
    for (std::size_t k = 0; k < event_defect_kinds; ++k) {
        const defect_count& d = s.defects[k];
        if (d.count)
            r.warnings.push_back(fmt::format("{}:{}: {} {}, the first here (--strict refuses them)", source, d.first_line,
                                             d.count, defect_description(static_cast<event_defect>(k))));
    }
    if (s.unmatched_begins || s.unmatched_ends)
        r.warnings.push_back(fmt::format("ignored {} 'B' event(s) with no 'E' and {} 'E' event(s) with no 'B'",
                                         s.unmatched_begins, s.unmatched_ends));
    if (!s.display_time_unit.empty() && s.display_time_unit != "ms" && s.display_time_unit != "ns")
        r.warnings.push_back(fmt::format("displayTimeUnit {} is not one the format defines (ms, ns); it sets only how "
                                         "viewers show times: ts and dur are read as microseconds",
                                         s.display_time_unit));
    return r;
}

void refuse_defects(const span_set& s, const std::string& source) {
    const defect_count* first = nullptr;
    std::size_t kind = 0;
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        if (s.defects[k].count && (!first || s.defects[k].first_event < first->first_event)) {
            first = &s.defects[k];
            kind = k;
        }
    if (!first) return;
    throw input_error(source, first->first_line,
                      fmt::format("event {}: {} {}, the first here; refused under --strict", first->first_event,
                                  first->count, defect_description(static_cast<event_defect>(kind))));
}

std::string defect_counts(const span_set& s) {
    std::string out;
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        if (s.defects[k].count)
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ", defect_name(static_cast<event_defect>(k)),
                               s.defects[k].count);
    return out;
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
    double fixed_s = static_cast<double>(sum.fixed_ns) / 1e9;
    double elapsed_s = static_cast<double>(sum.elapsed_ns) / 1e9;
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
        // SPEC: integer time throughout (nanoseconds), converted to seconds once, here.
        p.fixed_seconds = fixed_s;
        p.per_row_seconds = static_cast<double>(sum.elapsed_ns - sum.fixed_ns) / 1e9 / static_cast<double>(p.rows);
    }
    for (std::size_t n = 0; n < s.names.size(); ++n)
        p.nodes.push_back({s.names[n], static_cast<double>(sum.node_ns[n]) / 1e9, !is_fixed[n]});
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

double finite_estimate(const query_profile& p, std::uint64_t rows) {
    double e = p.estimate(static_cast<double>(rows));
    if (!std::isfinite(e))
        throw field_error(fmt::format("the estimate at {} rows, fixed_seconds {} + per_row_seconds {} x rows, is beyond "
                                      "the range of a double (1.8e308 s)",
                                      rows, format_double(p.fixed_seconds), format_double(p.per_row_seconds)));
    return e;
}

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
        y.push_back(finite_estimate(r, r.rows));
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
    auto finite = [&] {
        bool ok = std::isfinite(f.intercept) && std::isfinite(f.slope);
        for (std::size_t i = 0; ok && i < x.size(); ++i) ok = std::isfinite(f.intercept + f.slope * x[i]);
        return ok;
    };
    if (!finite()) {
        // Huge times overflow the sums of squares: fitted again on the times scaled to at most 1,
        // the line scaled back. A line still beyond double range is no fit.
        double scale = *std::max_element(y.begin(), y.end());
        std::vector<double> y1 = y;
        for (double& v : y1) v /= scale;
        f = nnls_line(x, y1);
        f = {f.intercept * scale, f.slope * scale};
    }
    if (!finite())
        throw field_error(fmt::format("no fit: the line through these runs' times ({} s at {} rows, ...) is beyond the "
                                      "range of a double",
                                      format_double(y[0]), runs[0].rows));
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
    // A record never carries a non-finite number (the writer would print null). Every
    // producer refuses one first, so meeting one here is a bug, not bad input.
    bool finite = std::isfinite(p.fixed_seconds) && std::isfinite(p.per_row_seconds);
    for (const auto& n : p.nodes) finite = finite && std::isfinite(n.seconds);
    for (const auto& r : p.residuals)
        finite = finite && std::isfinite(r.measured_s) && std::isfinite(r.predicted_s) && std::isfinite(r.residual_s);
    if (!finite)
        throw error(exit_code::software,
                    fmt::format("internal error: query_profile of plan '{}' holds a non-finite number", p.plan_key));
    return write_record(query_profile_schema(), p);
}

query_profile read_query_profile(od::object& obj) {
    query_profile p;
    p.source = "";
    read_record(query_profile_schema(), obj, p);
    sort_nodes(p.nodes);
    return p;
}

std::vector<located_query_profile> read_query_profile_lines(const std::vector<std::string>& paths,
                                                            std::size_t max_bad_lines) {
    std::vector<located_query_profile> out;
    std::size_t bad = 0;
    for (const auto& path : paths) {
        line_reader in(open_input(path));
        std::string source = path == "-" ? "<stdin>" : path;
        bad += for_each_object(in, max_bad_lines - bad, [&](od::object& o, std::size_t line) {
                   out.push_back({read_query_profile(o), source, line});
               }).bad_lines;
    }
    if (bad) warn(fmt::format("skipped {} malformed line(s)", bad));
    return out;
}

double located_estimate(const located_query_profile& p, std::uint64_t rows) {
    try {
        return finite_estimate(p.profile, rows);
    } catch (const field_error& e) {
        throw input_error(p.source, p.line, e.what());
    }
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
