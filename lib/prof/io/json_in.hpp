// JSON Lines input (prof-records(5) DESCRIPTION): the line reader over a byte source, typed field readers with
// line-numbered errors, the --max-bad-lines policy, and a generic canonical JSON value.
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/byte_source.hpp"

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace prof {

struct text_line {
    std::size_t number = 0;   // 1-based physical line number in the source
    std::string_view text;    // without '\n', trailing '\r' or a leading BOM; followed in
                              // memory by at least simdjson::SIMDJSON_PADDING readable bytes
    bool utf8_checked = false;  // known to be valid UTF-8 (checked with the lines around it in
                                // one pass); false = not known either way

    // Whether the line is valid UTF-8: known already, or checked now on its own.
    bool valid_utf8() const { return utf8_checked || simdjson::validate_utf8(text.data(), text.size()); }
};

// Splits a byte source into lines. Blank (all-whitespace) lines are skipped but counted in the
// numbering; a last line without '\n' is still a line. Memory is bounded by the longest line,
// and time is linear in the input however it arrives (each byte is searched for '\n' once).
// A source that maps its input (byte_source::map_rest) is read in place, without a copy; the
// pages read are released as the reader moves on, so the resident set stays a few MiB.
class line_reader {
public:
    explicit line_reader(std::unique_ptr<byte_source> src);
    // The lines of a region in memory, read in place (a chunk of a larger input): the first
    // line is numbered `first_line` (the byte-order-mark rule applies to line 1 only), and
    // `name` is what errors name. Only the last line(s), where fewer than SIMDJSON_PADDING
    // readable bytes follow, are copied.
    line_reader(const memory_region& region, std::string name, std::size_t first_line = 1);
    bool next(text_line& out);
    const std::string& source_name() const { return src_ ? src_->name() : name_; }
    // The input's bytes consumed so far (read from the source, or passed in place).
    std::size_t bytes_read() const;
    // The physical lines passed so far, blank ones included (all of them at the end).
    std::size_t lines_read() const { return line_no_ - first_line_ + 1; }
    // byte_source::verify_mapped of the source (nothing for a region handed in).
    void verify_input() const {
        if (src_) src_->verify_mapped();
    }
    // Whether lines are checked for valid UTF-8 before they are handed out (on by default: a
    // line's utf8_checked says so). Off, every line comes unchecked, for a caller whose parser
    // validates UTF-8 as it goes (for_each_object_fast with such a `fast`).
    void check_utf8(bool on) { check_utf8_ = on; }

    // For a caller that cuts lines itself (for_each_object_fast with a `cut`), skipping the
    // search for each '\n': the bytes held from the next line's start, [begin, end), which may
    // end inside a line, with loads allowed up to readable_end (SIMDJSON_PADDING past end).
    // false — call next() as usual — when none are held, when the next line is the input's
    // first (the byte-order mark is next()'s to strip) or when lines are checked for UTF-8 here
    // (a line cut by the caller would pass unchecked).
    struct unread_view {
        const char* begin;
        const char* end;
        const char* readable_end;
    };
    bool unread(unread_view& out) const {
        if (check_utf8_ || line_no_ == 0 || begin_ >= end_) return false;
        out = {data_ + begin_, data_ + end_, data_ + end_ + simdjson::SIMDJSON_PADDING};
        return true;
    }
    // The caller has used the next line, from unread()'s begin to `newline` (the '\n' that
    // ends it, inside the view): it is counted and passed, as next() would have.
    void pass_line(const char* newline) {
        begin_ = static_cast<std::size_t>(newline - data_) + 1;
        ++line_no_;
        if (begin_ - released_ >= release_step) release_passed();  // the test inline: one per line
    }

private:
    bool fill();
    void release_passed();
    static constexpr std::size_t release_step = std::size_t{8} << 20;  // pages released 8 MiB at a time
    void map(const memory_region& region);
    std::unique_ptr<byte_source> src_;
    std::string name_;
    std::unique_ptr<char[]> buf_;
    const char* data_ = nullptr;  // the bytes lines are cut from: buf_, or a region in place
    std::size_t cap_ = 0;     // usable bytes of buf_; the allocation adds SIMDJSON_PADDING
    std::size_t begin_ = 0, end_ = 0;
    std::size_t valid_to_ = 0;  // data_[.., valid_to_) is whole lines of valid UTF-8
    std::size_t scanned_ = 0;   // data_[begin_, scanned_) is known to hold no '\n': a long line
                                // arriving in many small reads (a pipe) is searched once
    std::size_t line_no_ = 0, first_line_ = 1;
    std::size_t bytes_read_ = 0;
    bool eof_ = false;
    // In place: the region, where its copied tail starts, and how far its pages are released.
    std::optional<memory_region> region_;
    std::string_view tail_;
    std::size_t released_ = 0;
    bool verified_ = false;  // the end of a mapped input has been checked against the file
    bool check_utf8_ = true;
};

// Counts from one pass over JSON Lines input.
struct jsonl_stats {
    std::size_t records = 0;    // lines parsed into a record
    std::size_t bad_lines = 0;  // malformed lines skipped under --max-bad-lines
};

// Parses each non-blank line as a JSON object and calls fn(object, line_number). Malformed
// JSON, invalid UTF-8, trailing content, or a field_error thrown by fn become
// input_error("SOURCE:LINE: what"). While fewer than max_bad_lines have been skipped, a bad
// line is reported on stderr as "PROG: warning: SOURCE:LINE: what (skipped)" and skipped;
// the next one throws. Returns the counts.
// The whole line is checked for content after its object before fn runs, so a bad line never
// reaches the caller's state. `fast`, when given, sees each valid-UTF-8 line first and returns
// true when it has consumed it without the JSON parser (prof-harvest's flat-row reader); it may
// throw field_error like fn.
// `skipped`, when given, is handed each skipped line and what is wrong with it instead of the
// warning being written (input.hpp's collect mode).
using object_fn = std::function<void(simdjson::ondemand::object&, std::size_t line)>;
using line_fn = std::function<bool(std::string_view text)>;
using skip_fn = std::function<void(const text_line& line, const std::string& what)>;
jsonl_stats for_each_object(line_reader& in, std::size_t max_bad_lines, const object_fn& fn,
                            const line_fn& fast = {}, const skip_fn& skipped = {});

namespace detail {
// for_each_object's two halves for one line: what is wrong with it ("" when fn or fast took it),
// and the verdict on a line that is wrong (counted and skipped, or thrown).
std::string object_line_problem(simdjson::ondemand::parser& parser, const text_line& line, const object_fn& fn,
                                const line_fn& fast);
std::string malformed_json(const simdjson::simdjson_error& e);  // "malformed JSON (why)"
void judge_bad_line(const line_reader& in, const text_line& line, const std::string& what, jsonl_stats& stats,
                    std::size_t max_bad_lines, const skip_fn& skipped);
}  // namespace detail

// for_each_object with `fast` called directly instead of through std::function: the same
// results, for a reader whose lines `fast` nearly always takes (prof-harvest's rows). `fast` is
// called as fast(text, utf8_checked): with utf8_checked false it must take only a line it has
// itself found to be valid UTF-8 (json_scanner::check_utf8), or decline; a line it declines is
// checked, and an invalid one is "invalid UTF-8" as for_each_object says.
// `cut`, when given, is called as cut(view) on line_reader::unread's bytes before each line is
// cut: it reads the line at view.begin as fast(line, false) would, without being told where it
// ends, and returns the '\n' that ends it when it has taken it whole (a token it accepts never
// crosses a '\n': json_scanner::newline_ends), or nullptr to decline — then the line is cut
// and handed to fast as usual. It takes only lines that fast would take, with the same effect.
template <class Fast, class Cut = std::nullptr_t>
jsonl_stats for_each_object_fast(line_reader& in, std::size_t max_bad_lines, const object_fn& fn, Fast& fast,
                                 const skip_fn& skipped = {}, Cut cut = nullptr) {
    jsonl_stats stats;
    simdjson::ondemand::parser parser;
    text_line line;
    for (;;) {
        if constexpr (!std::is_same_v<Cut, std::nullptr_t>) {
            line_reader::unread_view view;
            while (in.unread(view)) {
                const char* newline = cut(view);
                if (!newline) break;
                in.pass_line(newline);
                ++stats.records;
            }
        }
        if (!in.next(line)) break;
        std::string what;
        bool taken = false;
        try {
            taken = fast(line.text, line.utf8_checked);
            if (!taken && line.utf8_checked) what = detail::object_line_problem(parser, line, fn, {});
        } catch (const field_error& e) {
            what = e.what();
        } catch (const simdjson::simdjson_error& e) {
            what = detail::malformed_json(e);
        }
        if (taken) {
            ++stats.records;
            continue;
        }
        if (!line.utf8_checked && what.empty())
            what = detail::object_line_problem(parser, line, fn, [&](std::string_view t) { return fast(t, true); });
        if (what.empty()) ++stats.records;
        else detail::judge_bad_line(in, line, what, stats, max_bad_lines, skipped);
    }
    return stats;
}

// ---- numbers --------------------------------------------------------------------------------
// The double a JSON number token (RFC 8259 grammar, checked) denotes, correctly rounded by
// std::from_chars; beyond double's range, ±infinity for an overflow (1e400) and ±0 for an
// underflow (1e-400). nullopt when `token` is not a JSON number. Every on-demand reader takes
// doubles through this, not simdjson 3.0's value::get_double(), which misreads "0." followed by
// about 20 or more digits (0.70000000000000000000 read as 0.1466; simdjson issue 2093, fixed
// after the 3.0.1 that Debian 12 ships).
std::optional<double> json_number_value(std::string_view token);
// A value's text for a message: as it is up to 40 characters, else its first 37 and "...".
std::string shown_value(std::string_view text);
// A value's raw token without trailing whitespace (what simdjson's raw_json_token leaves on).
std::string_view trimmed_token(simdjson::ondemand::value v);
// Throws field_error "field 'F': expected EXPECTED, found X" (X: "an object", "an array", or the
// value's text cut at 40 characters).
[[noreturn]] void wrong_type(simdjson::ondemand::value& v, std::string_view field, std::string_view expected);

// ---- typed field readers (throw field_error naming the field and what was found) --------
// null → nullopt. A string holding a number is accepted (warehouse exports quote 64-bit
// integers); "NaN"/"Infinity"/"-Infinity" read as NaN/±inf: not usable.
std::optional<double> read_number(simdjson::ondemand::value v, std::string_view field);
// Non-negative integer read exactly up to 2^64-1, never through a double: a JSON number or a
// string holding one, whose value is exactly an integer (120, "120", 1.0, 1e3); a fraction
// (0.5, 1e-400), a sign (-0 included) or more than 2^64-1 is an error. "NaN" strings read as
// nullopt.
std::optional<std::uint64_t> read_count(simdjson::ondemand::value v, std::string_view field);
std::optional<std::int64_t> read_int(simdjson::ondemand::value v, std::string_view field);
std::optional<std::string> read_string(simdjson::ondemand::value v, std::string_view field);
std::optional<bool> read_bool(simdjson::ondemand::value v, std::string_view field);
// A non-null string field.
std::string require_string(simdjson::ondemand::value v, std::string_view field);
// An identifier (run_id, ts_id): a string, or an integer kept as its decimal text as written
// (warehouses use both: 7 reads as "7"). Anything else (null, a fraction, an object) is a
// field_error "expected a string or an integer". The view points into the parser's buffers.
std::string_view read_id(simdjson::ondemand::value v, std::string_view field);
// Reads a string field "kind" and refuses anything but `expected`.
void check_kind(simdjson::ondemand::value v, std::string_view expected);
// The field names: "field 'x': missing" for required fields.
[[noreturn]] void missing_field(std::string_view field);

// ---- a generic JSON value in canonical form --------------------------------------------
// Objects keep their members sorted by key (last duplicate wins), so serialisation is
// byte-stable and equality ignores key order (signatures match as JSON values).
struct json_value {
    enum class type { null, boolean, integer, uinteger, number, string, array, object };
    type t = type::null;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
    std::string s;
    std::vector<json_value> arr;
    std::vector<std::pair<std::string, json_value>> obj;  // sorted by key

    // Declared here, defined out of line: an implicit default constructor makes clang (with
    // libstdc++) ask whether std::pair<std::string, json_value> is default-constructible while
    // that pair is still being instantiated, and it refuses the recursive type.
    json_value();

    bool is_object() const { return t == type::object; }
    const json_value* find(std::string_view key) const;
    std::string dump() const;  // canonical compact text
    friend bool operator==(const json_value& a, const json_value& b);
};

// Parses `text` (any length; copied into padded memory) as exactly one JSON object, UTF-8
// checked and nothing after it, and calls fn on it. Throws field_error saying what was wrong:
// "invalid UTF-8", "expected a JSON object", "malformed JSON (...)", trailing content, or
// whatever fn throws.
void parse_object_text(std::string_view text, const std::function<void(simdjson::ondemand::object&)>& fn);

// True when nothing but whitespace follows the document's root value (trailing-content check).
bool document_at_end(simdjson::ondemand::document& doc);

// ---- nesting depth -----------------------------------------------------------------------
// The deepest nesting of arrays and objects a JSON text may have, on every path that reads JSON
// (JSON Lines records, whole files, registry index lines, values read into a json_value):
// simdjson's own default limit. Deeper text is refused with json_depth_message(), never read by
// recursion that could exhaust the stack.
inline constexpr std::size_t json_max_depth = 1024;
// "JSON nested deeper than 1024 levels" (a field_error text; callers add source and line).
std::string json_depth_message();
// The offset of the '[' or '{' that opens nesting level json_max_depth + 1, or npos when the
// text stays within the limit. Strings (escapes included) are skipped; nothing else is checked.
// One pass, no recursion.
std::size_t json_depth_overflow(std::string_view text);

// The value as a json_value; throws field_error for malformed JSON and, past json_max_depth
// levels, json_depth_message().
json_value read_json_value(simdjson::ondemand::value v);
// Parses a whole JSON text (a file's contents). Throws field_error on malformed input.
json_value parse_json_text(std::string_view text);
// Parses a whole file's text that must be one JSON object (--signature, --family-map): throws
// input_error "SOURCE:LINE: FLAG: what", LINE being the line at fault (where the syntax error,
// the invalid UTF-8, the level past json_max_depth or the content after the object is; the first
// line of the value when it is no object). An empty or all-blank text is "the file is empty;
// expected one JSON object".
json_value parse_json_object_file(std::string_view text, const std::string& source, std::string_view flag);

}  // namespace prof
