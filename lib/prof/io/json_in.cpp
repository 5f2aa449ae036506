// JSON Lines input (see json_in.hpp).
#include "prof/io/json_in.hpp"

#include "prof/core/limits.hpp"
#include "prof/io/json_scan.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <vector>

namespace prof {
namespace od = simdjson::ondemand;

namespace {

std::string describe(od::value& v) {
    od::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS) return "malformed JSON";
    switch (t) {
    case od::json_type::object: return "an object";
    case od::json_type::array: return "an array";
    default: break;
    }
    return shown_value(trimmed_token(v));
}

// JSON number grammar (RFC 8259) on a string's contents, so "1e3" is accepted but " 1", "0x10"
// and "1." are not.
bool is_json_number(std::string_view s) {
    json_scanner sc{s.data(), s.data() + s.size()};
    std::string_view tok;
    bool integer = false;
    return sc.number(tok, integer) && sc.p == sc.e;
}

// A JSON number token (its grammar already checked) as value = ±digits × 10^exponent, read
// from its text, never through a double: `digits` are the significant digits, without leading
// or trailing zeros (none for zero). The exponent is clamped far past any double or count.
struct decimal_parts {
    bool negative = false;
    std::string digits;
    long long exponent = 0;
};

decimal_parts decimal_of(std::string_view t) {
    decimal_parts d;
    auto digit = [&](std::size_t i) { return i < t.size() && t[i] >= '0' && t[i] <= '9'; };
    d.negative = !t.empty() && t[0] == '-';
    std::size_t i = d.negative ? 1 : 0;
    for (; digit(i); ++i) d.digits += t[i];
    if (i < t.size() && t[i] == '.')
        for (++i; digit(i); ++i, --d.exponent) d.digits += t[i];
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        bool negative = i < t.size() && t[i] == '-';
        if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
        long long e = 0;
        for (; digit(i); ++i) e = std::min(e * 10 + (t[i] - '0'), 1000000000LL);
        d.exponent += negative ? -e : e;
    }
    std::size_t first = d.digits.find_first_not_of('0');
    d.digits.erase(0, first == std::string::npos ? d.digits.size() : first);
    while (!d.digits.empty() && d.digits.back() == '0') {
        d.digits.pop_back();
        ++d.exponent;
    }
    return d;
}

}  // namespace

std::optional<double> json_number_value(std::string_view tok) {
    if (!is_json_number(tok)) return std::nullopt;
    double d = 0;
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (r.ec == std::errc() && r.ptr == tok.data() + tok.size()) return d;
    // Out of range (from_chars leaves d alone): an overflow when the first significant digit's
    // decimal exponent is 0 or more, else an underflow.
    decimal_parts p = decimal_of(tok);
    bool overflow = !p.digits.empty() && static_cast<long long>(p.digits.size()) - 1 + p.exponent >= 0;
    double v = overflow ? std::numeric_limits<double>::infinity() : 0.0;
    return p.negative ? -v : v;
}

std::string shown_value(std::string_view text) {
    if (text.size() > 40) return std::string(text.substr(0, 37)) + "...";
    return std::string(text);
}

std::string_view trimmed_token(od::value v) {
    std::string_view tok = v.raw_json_token();
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t' || tok.back() == '\n' || tok.back() == '\r'))
        tok.remove_suffix(1);
    return tok;
}

[[noreturn]] void wrong_type(od::value& v, std::string_view field, std::string_view expected) {
    throw field_error(fmt::format("field '{}': expected {}, found {}", field, expected, describe(v)));
}

bool document_at_end(simdjson::ondemand::document& doc) {
    // simdjson 3.0's document has no at_end(): current_location() fails with OUT_OF_BOUNDS
    // exactly when no structural character is left, i.e. nothing follows the root value.
    const char* loc = nullptr;
    return doc.current_location().get(loc) != simdjson::SUCCESS;
}

// ---- line_reader ------------------------------------------------------------------------

line_reader::line_reader(std::unique_ptr<byte_source> src) : src_(std::move(src)) {
    if (auto r = src_->map_rest()) {
        map(*r);
        return;
    }
    cap_ = 1 << 20;
    buf_.reset(new char[cap_ + simdjson::SIMDJSON_PADDING]);
    std::memset(buf_.get() + cap_, 0, simdjson::SIMDJSON_PADDING);
    data_ = buf_.get();
}

line_reader::line_reader(const memory_region& region, std::string name, std::size_t first_line)
    : name_(std::move(name)), line_no_(first_line - 1), first_line_(first_line) {
    map(region);
}

void line_reader::map(const memory_region& r) {
    region_ = r;
    std::string_view b = r.bytes;
    // Lines in place are those that end at a '\n' with SIMDJSON_PADDING readable bytes after
    // it; the rest (often just the last line) is copied into a padded buffer of its own.
    std::size_t in_place = b.size();
    if (r.readable_after < simdjson::SIMDJSON_PADDING) {
        std::size_t need = simdjson::SIMDJSON_PADDING - r.readable_after;  // bytes after the '\n'
        std::size_t limit = b.size() > need ? b.size() - need : 0;      // the '\n' at < limit
        std::size_t nl = limit ? b.rfind('\n', limit - 1) : std::string_view::npos;
        in_place = nl == std::string_view::npos ? 0 : nl + 1;
    }
    tail_ = b.substr(in_place);
    data_ = b.data();
    end_ = in_place;
    eof_ = tail_.empty();
}

std::size_t line_reader::bytes_read() const {
    if (!region_) return bytes_read_;
    return data_ == buf_.get() ? region_->bytes.size() - tail_.size() + begin_ : begin_;
}

bool line_reader::fill() {
    if (eof_) {
        if (region_ && !verified_) {
            verified_ = true;
            verify_input();  // a mapped file read to its end: still as long as it was?
        }
        return false;
    }
    valid_to_ = 0;  // fill() runs when no newline is left: nothing unread was checked
    if (region_) {
        // The region's lines in place are done: on to its copied tail.
        release_region(*region_, data_ + released_, data_ + end_);
        cap_ = tail_.size();
        buf_.reset(new char[cap_ + simdjson::SIMDJSON_PADDING]);
        std::memcpy(buf_.get(), tail_.data(), cap_);
        std::memset(buf_.get() + cap_, 0, simdjson::SIMDJSON_PADDING);
        data_ = buf_.get();
        begin_ = scanned_ = 0;
        end_ = cap_;
        eof_ = true;
        return true;
    }
    if (begin_ > 0) {
        std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        scanned_ -= std::min(scanned_, begin_);
        begin_ = 0;
    }
    if (end_ == cap_) {  // one line longer than the buffer: grow it, up to the line limit
        if (cap_ > max_line_bytes()) throw input_error(source_name(), line_no_ + 1, line_too_long_message());
        std::size_t ncap = cap_ * 2;
        std::unique_ptr<char[]> nb(new char[ncap + simdjson::SIMDJSON_PADDING]);
        std::memcpy(nb.get(), buf_.get(), end_);
        std::memset(nb.get() + ncap, 0, simdjson::SIMDJSON_PADDING);
        buf_ = std::move(nb);
        cap_ = ncap;
        data_ = buf_.get();
    }
    std::size_t r = src_->read(buf_.get() + end_, cap_ - end_);
    if (r == 0) {
        eof_ = true;
        return false;
    }
    bytes_read_ += r;
    end_ += r;
    return true;
}

void line_reader::release_passed() {
    // In place, the lines before begin_ have been handed out and used: their pages leave the
    // resident set (the caller holds only the current line), release_step at a time.
    if (region_ && data_ != buf_.get() && begin_ - released_ >= release_step) {
        release_region(*region_, data_ + released_, data_ + begin_);
        released_ = begin_;
    }
}

bool line_reader::next(text_line& out) {
    for (;;) {
        const char* base = data_;
        std::size_t from = std::max(begin_, scanned_);
        const void* nl = from < end_ ? std::memchr(base + from, '\n', end_ - from) : nullptr;
        std::string_view text;
        bool checked = false;
        if (nl) {
            std::size_t pos = static_cast<const char*>(nl) - base;
            if (pos > valid_to_) {
                // UTF-8 is checked for all the whole lines in the buffer at once: one call per
                // megabyte instead of one per line. '\n' never occurs inside a multi-byte
                // sequence, so the block is valid exactly when each of its lines is; when it is
                // not, each line is checked on its own (by the caller) to find the bad one.
                std::size_t limit = std::min(end_, pos + (std::size_t{1} << 20));  // by the MiB at most
                auto* last = static_cast<const char*>(memrchr(base + pos, '\n', limit - pos));
                std::size_t to = static_cast<std::size_t>(last - base);
                valid_to_ = !check_utf8_ || simdjson::validate_utf8(base + begin_, to - begin_) ? to : begin_;
                release_passed();
            }
            checked = check_utf8_ && pos <= valid_to_;
            text = std::string_view(base + begin_, pos - begin_);
            begin_ = pos + 1;
        } else {
            scanned_ = end_;
            if (fill()) continue;
            if (begin_ == end_) return false;
            text = std::string_view(data_ + begin_, end_ - begin_);
            begin_ = end_;
        }
        ++line_no_;
        if (text.size() > max_line_bytes()) throw input_error(source_name(), line_no_, line_too_long_message());
        if (line_no_ == 1 && text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
        if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
        bool blank = std::all_of(text.begin(), text.end(),
                                 [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
        if (blank) continue;
        out.number = line_no_;
        out.text = text;
        out.utf8_checked = checked;
        return true;
    }
}

// ---- for_each_object --------------------------------------------------------------------

namespace {

// simdjson's on-demand parser validates only what it reads ("n_obs":007 reads as 7, a NaN or
// nul word in a column nobody reads passes), so every line is first measured against the JSON
// grammar by the strict scanner in validator mode (json_scan.hpp: syntax, not range, so 1e400
// — valid JSON, non-finite, not usable — passes). That one pass also proves that
// nothing follows the value, so a good line is parsed once, straight into fn.
bool starts_object(std::string_view text) {
    std::size_t k = text.find_first_not_of(" \t\r");
    return k != std::string_view::npos && text[k] == '{';
}

// One line through fn, or what is wrong with it. A line the scanner refuses is also given to
// simdjson, whose message (where it has one) names the problem better than a byte offset.
std::string parse_line(od::parser& parser, const text_line& line, const object_fn& fn) {
    json_syntax c = check_json_syntax(line.text);
    if (c.trailing || (c.one_value && !starts_object(line.text)))
        return starts_object(line.text) ? "unexpected content after the JSON object" : "expected a JSON object";
    if (!c.one_value && json_depth_overflow(line.text) != std::string_view::npos) return json_depth_message();
    simdjson::padded_string_view psv(line.text.data(), line.text.size(), line.text.size() + simdjson::SIMDJSON_PADDING);
    try {
        od::document doc = parser.iterate(psv);
        if (doc.type() != od::json_type::object) return "expected a JSON object";
        od::object obj = doc.get_object();
        if (c.one_value) {
            fn(obj, line.number);
            return {};
        }
        std::string_view skipped = obj.raw_json();  // for simdjson's own message, if it has one
        (void)skipped;
    } catch (const simdjson::simdjson_error& e) {
        return fmt::format("malformed JSON ({})", simdjson::error_message(e.error()));
    }
    return fmt::format("malformed JSON (near byte {}: '{}')", c.stop + 1,
                       c.stop < line.text.size() ? std::string(1, line.text[c.stop]) : std::string("end of line"));
}

}  // namespace

namespace detail {

std::string object_line_problem(od::parser& parser, const text_line& line, const object_fn& fn, const line_fn& fast) {
    try {
        if (!line.valid_utf8()) return "invalid UTF-8";
        if (fast && fast(line.text)) return {};
        return parse_line(parser, line, fn);
    } catch (const field_error& e) {
        return e.what();
    } catch (const simdjson::simdjson_error& e) {
        return malformed_json(e);
    }
}

std::string malformed_json(const simdjson::simdjson_error& e) {
    return fmt::format("malformed JSON ({})", simdjson::error_message(e.error()));
}

void judge_bad_line(const line_reader& in, const text_line& line, const std::string& what, jsonl_stats& stats,
                    std::size_t max_bad_lines, const skip_fn& skipped) {
    in.verify_input();
    if (stats.bad_lines < max_bad_lines) {
        ++stats.bad_lines;
        if (skipped) skipped(line, what);
        else warn(fmt::format("{}:{}: {} (skipped)", in.source_name(), line.number, what));
        return;
    }
    throw input_error(in.source_name(), line.number, what);
}

}  // namespace detail

jsonl_stats for_each_object(line_reader& in, std::size_t max_bad_lines, const object_fn& fn, const line_fn& fast,
                            const skip_fn& skipped) {
    auto take = [&](std::string_view text, bool utf8_checked) { return utf8_checked && fast && fast(text); };
    return for_each_object_fast(in, max_bad_lines, fn, take, skipped);
}

// ---- field readers ----------------------------------------------------------------------

std::optional<double> read_number(od::value v, std::string_view field) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    if (t == od::json_type::number) {
        // A well-formed number beyond double range (1e400) is non-finite: not usable.
        if (auto d = json_number_value(trimmed_token(v))) return *d;
        wrong_type(v, field, "a number");
    }
    if (t == od::json_type::string) {
        std::string_view s = v.get_string();
        if (auto w = nonfinite_word(s)) return *w;
        if (!is_json_number(s)) {
            throw field_error(fmt::format("field '{}': expected a number, found \"{}\"", field, shown_value(s)));
        }
        return json_number_value(s);
    }
    wrong_type(v, field, "a number");
}

namespace {

// What a JSON number token (its grammar already checked) denotes as a count, from its
// decimal parts: an integer when its value is exactly one (1.0, 1e3, 12.50e1 are; 0.5,
// 4503599627370496.5 and 1e-400 are not), `above` when that integer exceeds 2^64-1 (1e20,
// 1e400). A sign makes it no count, -0 included.
struct count_token {
    bool integer = false, above = false;
    std::uint64_t value = 0;
};

count_token count_of_number(std::string_view t) {
    count_token c;
    decimal_parts d = decimal_of(t);
    if (d.negative) return c;
    c.integer = d.digits.empty() || d.exponent >= 0;  // else a fraction remains
    if (!c.integer || d.digits.empty()) return c;
    if (static_cast<long long>(d.digits.size()) + d.exponent > 20) {
        c.above = true;
        return c;
    }
    std::uint64_t v = 0;
    auto times_ten_plus = [&](unsigned digit) {
        return !__builtin_mul_overflow(v, 10u, &v) && !__builtin_add_overflow(v, digit, &v);
    };
    for (char ch : d.digits) c.above |= !times_ten_plus(static_cast<unsigned>(ch - '0'));
    for (long long k = 0; k < d.exponent; ++k) c.above |= !times_ten_plus(0);
    c.value = v;
    return c;
}

}  // namespace

std::optional<std::uint64_t> read_count(od::value v, std::string_view field) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    // s: a string's contents (quoted in messages) or a number's token (shown as it is).
    auto from_text = [&](std::string_view s, bool quoted) -> std::optional<std::uint64_t> {
        if (nonfinite_word(s)) return std::nullopt;
        std::string shown = shown_value(s);
        if (!s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos) {  // "0012" too
            std::uint64_t u = 0;
            auto r = std::from_chars(s.data(), s.data() + s.size(), u);
            if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return u;
            throw field_error(fmt::format("field '{}': integer {} is above 2^64-1", field, shown));
        }
        if (is_json_number(s)) {
            count_token c = count_of_number(s);
            if (c.above) throw field_error(fmt::format("field '{}': integer {} is above 2^64-1", field, shown));
            if (c.integer) return c.value;
        }
        if (quoted) shown = "\"" + shown + "\"";
        throw field_error(fmt::format("field '{}': expected a non-negative integer, found {}", field, shown));
    };
    if (t == od::json_type::string) return from_text(v.get_string(), true);
    if (t == od::json_type::number) {
        std::string_view tok = trimmed_token(v);
        if (!tok.empty() && tok[0] == '-') wrong_type(v, field, "a non-negative integer");
        std::uint64_t u;
        if (v.get_uint64().get(u) == simdjson::SUCCESS) return u;
        return from_text(tok, false);
    }
    wrong_type(v, field, "a non-negative integer");
}

std::optional<std::int64_t> read_int(od::value v, std::string_view field) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    if (t == od::json_type::number) {
        std::int64_t i;
        if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
    }
    if (t == od::json_type::string) {
        std::string_view s = v.get_string();
        std::int64_t i = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), i);
        if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) return i;
    }
    wrong_type(v, field, "an integer");
}

std::optional<std::string> read_string(od::value v, std::string_view field) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    if (t != od::json_type::string) wrong_type(v, field, "a string");
    std::string_view s = v.get_string();
    return std::string(s);
}

std::optional<bool> read_bool(od::value v, std::string_view field) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    if (t != od::json_type::boolean) wrong_type(v, field, "true or false");
    return bool(v.get_bool());
}

std::string_view read_id(od::value v, std::string_view field) {
    std::string_view tok = trimmed_token(v);
    // a string without escapes is its raw token minus the quotes: no unescape copy
    if (tok.size() >= 2 && tok[0] == '"' && tok.back() == '"' && tok.find('\\') == std::string_view::npos)
        return tok.substr(1, tok.size() - 2);
    od::json_type t = v.type();
    if (t == od::json_type::string) return v.get_string();
    if (t == od::json_type::number) {
        od::number_type nt = v.get_number_type();
        if (nt == od::number_type::signed_integer || nt == od::number_type::unsigned_integer)
            return tok;
    }
    wrong_type(v, field, "a string or an integer");
}

std::string require_string(od::value v, std::string_view field) {
    auto s = read_string(v, field);
    if (!s) throw field_error(fmt::format("field '{}': expected a string, found null", field));
    return *s;
}

namespace {

// Which programs read each record kind, for a record fed to the wrong one.
std::string_view readers_of(std::string_view kind) {
    if (kind == "cell") return "prof-measure";
    if (kind == "fit") return "prof-aggregate";
    if (kind == "profile") return "prof-plan or prof-diff";
    if (kind == "query_profile") return "prof-spans estimate";
    return {};
}

}  // namespace

void check_kind(od::value v, std::string_view expected) {
    std::string k = require_string(v, "kind");
    if (k != expected) {
        std::string_view readers = readers_of(k);
        throw field_error(fmt::format("field 'kind': expected \"{}\", found \"{}\"{}", expected, k,
                                      readers.empty() ? std::string()
                                                      : fmt::format(" (a {} record is read by {})", k, readers)));
    }
}

void missing_field(std::string_view field) {
    throw field_error(fmt::format("field '{}': missing", field));
}

// ---- json_value -------------------------------------------------------------------------

json_value::json_value() = default;

const json_value* json_value::find(std::string_view key) const {
    auto it = std::lower_bound(obj.begin(), obj.end(), key,
                               [](const auto& kv, std::string_view k) { return kv.first < k; });
    if (it != obj.end() && it->first == key) return &it->second;
    return nullptr;
}

namespace {
void dump_into(const json_value& v, std::string& out) {
    using T = json_value::type;
    switch (v.t) {
    case T::null: out += "null"; break;
    case T::boolean: out += v.b ? "true" : "false"; break;
    case T::integer: out += fmt::format("{}", v.i); break;
    case T::uinteger: out += fmt::format("{}", v.u); break;
    // Negative zero dumps as 0: "-0" reads back as the integer 0, and canonical text must be a
    // fixed point of read-then-dump (a signature's digest is taken over it).
    case T::number: out += !std::isfinite(v.d) ? "null" : v.d == 0 ? "0" : fmt::format("{}", v.d); break;
    case T::string: append_json_string(out, v.s); break;
    case T::array:
        out.push_back('[');
        for (std::size_t k = 0; k < v.arr.size(); ++k) {
            if (k) out.push_back(',');
            dump_into(v.arr[k], out);
        }
        out.push_back(']');
        break;
    case T::object:
        out.push_back('{');
        for (std::size_t k = 0; k < v.obj.size(); ++k) {
            if (k) out.push_back(',');
            append_json_string(out, v.obj[k].first);
            out.push_back(':');
            dump_into(v.obj[k].second, out);
        }
        out.push_back('}');
        break;
    }
}

bool is_numeric(const json_value& v) {
    using T = json_value::type;
    return v.t == T::integer || v.t == T::uinteger || v.t == T::number;
}
}  // namespace

std::string json_value::dump() const {
    std::string out;
    dump_into(*this, out);
    return out;
}

bool operator==(const json_value& a, const json_value& b) {
    using T = json_value::type;
    if (is_numeric(a) && is_numeric(b)) {
        if (a.t == b.t) {
            if (a.t == T::integer) return a.i == b.i;
            if (a.t == T::uinteger) return a.u == b.u;
            return a.d == b.d;
        }
        if (a.t != T::number && b.t != T::number) return false;  // int64 vs uint64 ranges disjoint
        auto as_d = [](const json_value& x) {
            return x.t == T::integer ? double(x.i) : x.t == T::uinteger ? double(x.u) : x.d;
        };
        return as_d(a) == as_d(b);
    }
    if (a.t != b.t) return false;
    switch (a.t) {
    case T::null: return true;
    case T::boolean: return a.b == b.b;
    case T::string: return a.s == b.s;
    case T::array: return a.arr == b.arr;
    case T::object: return a.obj == b.obj;
    default: return false;
    }
}

namespace {
// Sorts an object's members by key; of duplicates the last one wins (stable sort keeps input
// order).
void canonical_members(json_value& out) {
    std::stable_sort(out.obj.begin(), out.obj.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::pair<std::string, json_value>> uniq;
    for (auto& kv : out.obj) {
        if (!uniq.empty() && uniq.back().first == kv.first) uniq.back() = std::move(kv);
        else uniq.push_back(std::move(kv));
    }
    out.obj = std::move(uniq);
}

// One array or object being read: where its members go and the on-demand iterator over them.
struct open_container {
    json_value* node;
    od::array_iterator at, end;             // arrays
    od::object_iterator field, fields_end;  // objects
    bool started = false;                   // `at` or `field` is on a member already read
};

// A scalar read into `out`, or an array or object opened (`out` gets its type, and the
// container is pushed on `open` for its members to be read in turn).
void start_value(od::value v, json_value& out, std::vector<open_container>& open) {
    using T = json_value::type;
    switch (od::json_type(v.type())) {
    case od::json_type::null:
        if (!v.is_null()) throw field_error("malformed JSON literal");
        out.t = T::null;
        break;
    case od::json_type::boolean: out.t = T::boolean; out.b = bool(v.get_bool()); break;
    case od::json_type::string: out.t = T::string; out.s = std::string(std::string_view(v.get_string())); break;
    case od::json_type::number: {
        od::number_type nt = v.get_number_type();
        if (nt == od::number_type::signed_integer) {
            out.t = T::integer;
            out.i = v.get_int64();
        } else if (nt == od::number_type::unsigned_integer) {
            out.t = T::uinteger;
            out.u = v.get_uint64();
        } else {
            out.t = T::number;
            auto d = json_number_value(trimmed_token(v));
            if (!d) throw field_error("malformed JSON number");
            out.d = *d;
        }
        break;
    }
    case od::json_type::array: {
        if (open.size() >= json_max_depth) throw field_error(json_depth_message());
        out.t = T::array;
        od::array a = v.get_array();
        open.push_back({&out, a.begin(), a.end(), {}, {}, false});
        break;
    }
    case od::json_type::object: {
        if (open.size() >= json_max_depth) throw field_error(json_depth_message());
        out.t = T::object;
        od::object o = v.get_object();
        open.push_back({&out, {}, {}, o.begin(), o.end(), false});
        break;
    }
    }
}
}  // namespace

// Depth first with an explicit stack, never by recursion: the bound is json_max_depth levels
// of nesting, and a recursive reader's frame (about 10 KiB under AddressSanitizer) times that
// bound would not fit an 8 MiB stack. A member is read completely before its iterator moves on
// (the on-demand parser reads forward only: advancing skips whatever of the member is unread);
// only the innermost container gets new members, so a pointer to an outer one's member stays
// valid.
json_value read_json_value(od::value v) {
    json_value root;
    std::vector<open_container> open;
    start_value(v, root, open);
    while (!open.empty()) {
        open_container& c = open.back();
        json_value& node = *c.node;
        if (node.t == json_value::type::array) {
            if (c.started) ++c.at;
            c.started = true;
            if (!(c.at != c.end)) {
                open.pop_back();
                continue;
            }
            od::value el = *c.at;
            node.arr.emplace_back();
            start_value(el, node.arr.back(), open);  // may push: `c` is not used after this
        } else {
            if (c.started) ++c.field;
            c.started = true;
            if (!(c.field != c.fields_end)) {
                canonical_members(node);
                open.pop_back();
                continue;
            }
            od::field f = *c.field;
            node.obj.emplace_back(std::string(std::string_view(f.unescaped_key())), json_value{});
            start_value(f.value(), node.obj.back().second, open);
        }
    }
    return root;
}

namespace {
// A whole JSON text made ready for the on-demand parser: valid UTF-8 and within the depth
// bound (the same refusals on every whole-text path), padded as simdjson requires.
simdjson::padded_string checked_padded_text(std::string_view text) {
    if (!simdjson::validate_utf8(text.data(), text.size())) throw field_error("invalid UTF-8");
    if (json_depth_overflow(text) != std::string_view::npos) throw field_error(json_depth_message());
    return simdjson::padded_string(text);
}
}  // namespace

void parse_object_text(std::string_view text, const std::function<void(od::object&)>& fn) {
    simdjson::padded_string padded = checked_padded_text(text);
    od::parser parser;
    try {
        od::document doc = parser.iterate(padded);
        if (od::json_type(doc.type()) != od::json_type::object) throw field_error("expected a JSON object");
        od::object obj = doc.get_object();
        fn(obj);
        if (!document_at_end(doc)) throw field_error("unexpected content after the JSON object");
    } catch (const simdjson::simdjson_error& e) {
        throw field_error(fmt::format("malformed JSON ({})", simdjson::error_message(e.error())));
    }
}

json_value parse_json_text(std::string_view text) {
    simdjson::padded_string padded = checked_padded_text(text);
    od::parser parser;
    try {
        od::document doc = parser.iterate(padded);
        json_value out;
        od::json_type t = doc.type();
        if (t == od::json_type::object || t == od::json_type::array) {
            out = read_json_value(doc.get_value());
        } else {
            throw field_error("expected a JSON object or array");
        }
        if (!document_at_end(doc)) throw field_error("unexpected content after the JSON value");
        return out;
    } catch (const simdjson::simdjson_error& e) {
        throw field_error(fmt::format("malformed JSON ({})", simdjson::error_message(e.error())));
    }
}

std::string json_depth_message() { return fmt::format("JSON nested deeper than {} levels", json_max_depth); }

std::size_t json_depth_overflow(std::string_view text) {
    std::size_t depth = 0;
    const char* b = text.data();
    const char* e = b + text.size();
    for (const char* p = b; p < e; ++p) {
        switch (*p) {
        case '"':
            for (++p; p < e && *p != '"'; ++p)
                if (*p == '\\') ++p;
            break;
        case '[': case '{':
            if (++depth > json_max_depth) return static_cast<std::size_t>(p - b);
            break;
        case ']': case '}':
            if (depth > 0) --depth;
            break;
        default: break;
        }
    }
    return std::string_view::npos;
}

namespace {
// The 1-based line holding byte `at` of text.
std::size_t line_at(std::string_view text, std::size_t at) {
    at = std::min(at, text.size());
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// The line of the first byte that is not valid UTF-8: the first line that fails on its own
// ('\n' never occurs inside a multi-byte sequence).
std::size_t bad_utf8_line(std::string_view text) {
    std::size_t line = 1;
    for (std::size_t at = 0; at <= text.size(); ++line) {
        std::size_t nl = text.find('\n', at);
        std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        if (!simdjson::validate_utf8(text.data() + at, end - at)) return line;
        if (nl == std::string_view::npos) break;
        at = nl + 1;
    }
    return 1;
}
}  // namespace

json_value parse_json_object_file(std::string_view text, const std::string& source, std::string_view flag) {
    auto fail = [&](std::size_t line, const std::string& what) -> json_value {
        throw input_error(source, line, fmt::format("{}: {}", flag, what));
    };
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return fail(1, "the file is empty; expected one JSON object");
    if (!simdjson::validate_utf8(text.data(), text.size())) return fail(bad_utf8_line(text), "invalid UTF-8");
    if (std::size_t deep = json_depth_overflow(text); deep != std::string_view::npos)
        return fail(line_at(text, deep), json_depth_message());
    // The strict scanner finds where a syntax error or trailing content is; simdjson then reads
    // the value (and words the error, when the scanner let through what simdjson refuses).
    const json_syntax sc = check_json_syntax(text);
    if (!sc.one_value && !sc.trailing) {
        const std::size_t stop = sc.stop;
        if (stop >= text.size())  // the text ends inside the value: the line is the last one with content
            return fail(line_at(text, text.find_last_not_of(" \t\r\n")), "malformed JSON (the text ends inside the value)");
        return fail(line_at(text, stop), fmt::format("malformed JSON (near byte {}: '{}')", stop + 1, text[stop]));
    }
    if (sc.trailing) {
        return fail(line_at(text, sc.stop),
                    text[first] == '{' ? "unexpected content after the JSON object" : "unexpected content after the JSON value");
    }
    if (text[first] != '{') {
        char k = text[first];
        const char* found = k == '[' ? "an array" : k == '"' ? "a string" : k == 'n' ? "null" : k == 't' || k == 'f' ? "a boolean" : "a number";
        return fail(line_at(text, first), fmt::format("expected a JSON object, found {}", found));
    }
    try {
        return parse_json_text(text);
    } catch (const field_error& e) {
        return fail(line_at(text, first), e.what());
    }
}

}  // namespace prof
