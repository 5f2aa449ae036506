// Byte-stable JSON writing (see json_out.hpp).
#include "prof/io/json_out.hpp"

#include <cmath>
#include <simdjson.h>
#include <fmt/format.h>

namespace prof {

namespace {
// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when the bytes there are not valid UTF-8.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((b(i + k) & 0xC0) != 0x80) return 0;
    if (n == 2 && c < 0xC2) return 0;
    if (n == 3) {
        unsigned cp = ((c & 0x0Fu) << 12) | ((b(i + 1) & 0x3Fu) << 6);
        if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    }
    if (n == 4) {
        unsigned cp = ((c & 0x07u) << 18) | ((b(i + 1) & 0x3Fu) << 12);
        if (cp < 0x10000 || cp > 0x10FFFF) return 0;
    }
    return n;
}
}  // namespace

void append_json_string(std::string& out, std::string_view s) {
    // Output is UTF-8 JSON even when a child's stderr or an environment value is not:
    // each invalid byte becomes U+FFFD.
    if (!simdjson::validate_utf8(s.data(), s.size())) {
        std::string clean;
        for (std::size_t i = 0; i < s.size();) {
            std::size_t n = utf8_sequence(s, i);
            if (n == 0) {
                clean += "\xEF\xBF\xBD";
                ++i;
            } else {
                clean.append(s, i, n);
                i += n;
            }
        }
        append_json_string(out, clean);
        return;
    }
    out.push_back('"');
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (c < 0x20) {
                out += fmt::format("\\u{:04x}", c);
            } else {
                out.push_back(static_cast<char>(c));
            }
        }
    }
    out.push_back('"');
}

std::string format_double(double d) {
    // fmt's default presentation for double is the shortest representation that reads back
    // to the same value (Dragonbox), which is exactly the records' "shortest round-trip form".
    return fmt::format("{}", d);
}

void json_writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_.push_back(',');
        first_.back() = false;
    }
}

void json_writer::open(char bracket) {
    before_value();
    out_.push_back(bracket);
    first_.push_back(true);
}
void json_writer::close(char bracket) {
    out_.push_back(bracket);
    first_.pop_back();
}
void json_writer::begin_object() { open('{'); }
void json_writer::end_object() { close('}'); }
void json_writer::begin_array() { open('['); }
void json_writer::end_array() { close(']'); }
void json_writer::key(std::string_view k) {
    before_value();
    append_json_string(out_, k);
    out_.push_back(':');
    after_key_ = true;
}
void json_writer::null() {
    before_value();
    out_ += "null";
}
void json_writer::value(std::string_view s) {
    before_value();
    append_json_string(out_, s);
}
void json_writer::value(bool b) {
    before_value();
    out_ += b ? "true" : "false";
}
void json_writer::value(double d) {
    before_value();
    if (!std::isfinite(d)) {
        out_ += "null";
        return;
    }
    out_ += format_double(d);
}
void json_writer::value(std::uint64_t u) {
    before_value();
    out_ += fmt::format("{}", u);
}
void json_writer::value(std::int64_t i) {
    before_value();
    out_ += fmt::format("{}", i);
}
void json_writer::raw(std::string_view json) {
    before_value();
    out_ += json;
}

}  // namespace prof
