// Byte-stable JSON writing (see json_out.hpp).
#include "prof/json_out.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {

void append_json_string(std::string& out, std::string_view s) {
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
    // to the same value (Dragonbox), which is exactly SPEC §1's "shortest round-trip form".
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

void json_writer::begin_object() {
    before_value();
    out_.push_back('{');
    first_.push_back(true);
}
void json_writer::end_object() {
    out_.push_back('}');
    first_.pop_back();
}
void json_writer::begin_array() {
    before_value();
    out_.push_back('[');
    first_.push_back(true);
}
void json_writer::end_array() {
    out_.push_back(']');
    first_.pop_back();
}
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
