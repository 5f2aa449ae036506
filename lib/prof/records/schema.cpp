// The record schema's helpers: names of types and rules, paths, and the shared element readers.
#include "prof/records/schema.hpp"

#include "prof/core/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

std::string_view json_kind_name(json_kind k) {
    switch (k) {
    case json_kind::string: return "string";
    case json_kind::integer: return "integer";
    case json_kind::number: return "number";
    case json_kind::boolean: return "boolean";
    case json_kind::object: return "object";
    case json_kind::array: return "array";
    case json_kind::map: return "map";
    case json_kind::any: return "any";
    }
    return "?";
}

std::string_view read_rule_name(read_rule r) {
    switch (r) {
    case read_rule::required: return "required";
    case read_rule::optional: return "optional";
    case read_rule::defaulted: return "defaulted";
    case read_rule::derived: return "derived";
    }
    return "?";
}

std::string field_path(std::string_view prefix, std::string_view name) {
    if (prefix.empty()) return std::string(name);
    std::string out;
    out.reserve(prefix.size() + 1 + name.size());
    out.append(prefix).push_back('.');
    out.append(name);
    return out;
}

od::object require_object(od::value v, std::string_view path) {
    if (od::json_type(v.type()) != od::json_type::object)
        throw field_error(fmt::format("field '{}': expected an object", path));
    return v.get_object();
}

std::vector<std::string> read_string_array(od::value v, std::string_view path) {
    std::vector<std::string> out;
    if (od::json_type(v.type()) == od::json_type::null) return out;
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of strings", path));
    for (auto el : v.get_array()) out.push_back(require_string(el.value(), path));
    return out;
}

std::string string_or_empty(od::value v, std::string_view path) { return read_string(v, path).value_or(""); }

std::uint64_t positive_count(od::value v, std::string_view path) {
    auto n = read_count(v, path);
    if (!n || *n == 0) throw field_error(fmt::format("field '{}': expected a positive integer", path));
    return *n;
}

double positive_number(od::value v, std::string_view path) {
    auto x = read_number(v, path);
    if (!x || !std::isfinite(*x) || *x <= 0) throw field_error(fmt::format("field '{}': expected a positive number", path));
    return *x;
}

double finite_number(od::value v, std::string_view path) {
    auto d = read_number(v, path);
    if (!d || !std::isfinite(*d)) throw field_error(fmt::format("field '{}': expected a finite number", path));
    return *d;
}

double seconds_at_least_0(od::value v, std::string_view path) {
    double d = finite_number(v, path);
    if (d < 0) throw field_error(fmt::format("field '{}': expected seconds >= 0, found {}", path, format_double(d)));
    return d;
}

std::optional<double> usable_number(od::value v, std::string_view path) {
    auto x = read_number(v, path);
    if (x && !std::isfinite(*x)) x.reset();
    return x;
}

std::optional<std::string> time_stamp_or_null(od::value v, std::string_view path) {
    auto t = read_string(v, path);
    if (t && !parse_rfc3339(*t))
        throw field_error(fmt::format("field '{}': expected an RFC 3339 time stamp, found \"{}\"", path, *t));
    return t;
}

}  // namespace prof
