// Byte-stable JSON writing: fixed key order chosen by the caller, shortest round-trip doubles,
// null for absent and non-finite values (no program prints NaN or Infinity).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// Appends one JSON text to a string. The caller emits keys in the record's fixed order; the
// writer handles commas, escaping and number formatting.
//   json_writer w; w.begin_object(); w.field("kind", "fit"); w.end_object(); w.str()
class json_writer {
public:
    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(std::string_view k);

    void null();
    void value(std::string_view s);
    void value(const char* s) { value(std::string_view(s)); }
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(bool b);
    void value(double d);  // shortest round-trip form; non-finite → null
    void value(std::uint64_t u);
    void value(std::int64_t i);
    void value(int i) { value(static_cast<std::int64_t>(i)); }
    // Already-serialised JSON (e.g. a canonical json_value), inserted as one value.
    void raw(std::string_view json);

    template <class T>
    void value(const std::optional<T>& v) {
        if (v) value(*v); else null();
    }
    template <class T>
    void field(std::string_view k, const T& v) {
        key(k);
        value(v);
    }
    void null_field(std::string_view k) { key(k); null(); }
    // "k":[v,...] for a range of scalars (strings, numbers, optionals).
    template <class Range>
    void array_field(std::string_view k, const Range& values) {
        key(k);
        begin_array();
        for (const auto& v : values) value(v);
        end_array();
    }

    const std::string& str() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    void before_value();
    void open(char bracket);   // "{" or "[": a value that holds others
    void close(char bracket);  // its "}" or "]"
    std::string out_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool after_key_ = false;
};

// JSON string escaping (RFC 8259): quotes, backslash, control characters as \u00XX.
void append_json_string(std::string& out, std::string_view s);
// Shortest round-trip text of a finite double ("0.1", "1e-07", "110").
std::string format_double(double d);

}  // namespace prof
