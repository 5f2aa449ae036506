// Record schemas: one table of fields per record kind, from which the kind's reader, its writer,
// its key order and the check of man/prof-records.5 are all derived.
//
// The records area (lib/prof/records/) owns the record contract of prof-records(5): every kind's
// fields (name, JSON type, unit, nullability, order, reader rule) and how each is read and
// written. A kind is a `record_schema<T>`: an ordered list of `field<T>`, each naming the member
// it stands for and the codec that reads and writes it. Adding a field is one line in its table.
//
// Why a table of function pointers rather than a generated parser: every reader rule that the
// records had (required, defaulted from another field, range checks with their exact messages)
// stays one expression beside the field's name, and the hot readers (cell and fit, on
// prof-measure's and prof-aggregate's path) stay as fast as the hand-written chains they replace:
// keys are matched from the field after the last one read, so a record written in its own key
// order costs one comparison per key.
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_out.hpp"

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace prof {

// The JSON type of a field's value as prof-records(5) names it. `map` is an object keyed by name
// (models, families); `any` is a JSON value carried as it is (a signature, params).
enum class json_kind { string, integer, number, boolean, object, array, map, any };
std::string_view json_kind_name(json_kind k);

// How a field is read. required: absent is "field 'x': missing"; optional: absent keeps the
// member's default; defaulted: absent is filled in by the field's rule (family = model_type);
// derived: written, never read (recomputed, or taken from the map key).
enum class read_rule { required, optional, defaulted, derived };
std::string_view read_rule_name(read_rule r);

// One field of a record kind. `read` gets the field's path for messages ("device.uuid",
// "models.theta.n_fits") and returns whether the field counts as given (a null family does not).
// `write` writes the key and its value, or nothing for a field omitted when absent.
template <class T>
struct field {
    std::string_view name;
    json_kind type = json_kind::string;
    std::string_view unit;  // "s", "bytes" or "" (from the name's suffix unless given)
    bool nullable = false;
    read_rule rule = read_rule::optional;
    bool (*read)(T&, simdjson::ondemand::value, std::string_view path) = nullptr;
    void (*write)(const T&, json_writer&, std::string_view key) = nullptr;
    void (*absent)(T&) = nullptr;  // rule defaulted: fills the value in

    field required() const { auto c = *this; c.rule = read_rule::required; return c; }
    field defaults(void (*fill)(T&)) const { auto c = *this; c.rule = read_rule::defaulted; c.absent = fill; return c; }
    field reads(bool (*r)(T&, simdjson::ondemand::value, std::string_view)) const { auto c = *this; c.read = r; return c; }
    field writes(void (*w)(const T&, json_writer&, std::string_view)) const { auto c = *this; c.write = w; return c; }
    field derived() const { auto c = *this; c.rule = read_rule::derived; c.read = nullptr; return c; }
    field typed(json_kind k, bool can_be_null) const { auto c = *this; c.type = k; c.nullable = can_be_null; return c; }
    field in_unit(std::string_view u) const { auto c = *this; c.unit = u; return c; }
};

// One record kind, or one nested object of one (name "profile.models.*"). `kind`, when not
// empty, is written first as "kind":"<kind>" and checked on read (check_kind); `kind_required`
// makes its absence an error. At most 64 fields.
template <class T>
struct record_schema {
    std::string_view name;
    std::string_view kind;
    bool kind_required = false;
    std::vector<field<T>> fields;
};

// A schema without its member type: what the man page check compares (name, type, unit,
// nullability, rule, in order; "kind" first where the record carries one).
struct field_description {
    std::string name;
    json_kind type;
    std::string unit;
    bool nullable;
    read_rule rule;
};
struct schema_description {
    std::string name;
    std::vector<field_description> fields;
};

// The unit a field's name implies: seconds for "_s", "_seconds" and "_s_per_..." ("seconds"
// alone too), bytes for "_bytes", else none.
constexpr std::string_view unit_of_name(std::string_view n) {
    auto ends = [&](std::string_view x) { return n.size() > x.size() && n.substr(n.size() - x.size()) == x; };
    if (ends("_s") || ends("_seconds") || n == "seconds" || n.find("_s_per_") != std::string_view::npos) return "s";
    if (ends("_bytes")) return "bytes";
    return {};
}

template <class T>
schema_description describe(const record_schema<T>& s) {
    schema_description d{std::string(s.name), {}};
    if (!s.kind.empty())
        d.fields.push_back({"kind", json_kind::string, "", false, s.kind_required ? read_rule::required : read_rule::optional});
    for (const auto& f : s.fields) d.fields.push_back({std::string(f.name), f.type, std::string(f.unit), f.nullable, f.rule});
    return d;
}


// ---- reading and writing ------------------------------------------------------------------

// "PREFIX.NAME", or NAME at the top level.
std::string field_path(std::string_view prefix, std::string_view name);
// The value as an object, or field_error "field 'PATH': expected an object".
simdjson::ondemand::object require_object(simdjson::ondemand::value v, std::string_view path);

// Reads obj's members into `out` by the schema: each known key through its field's codec (in
// the input's order, so the first bad field is the one reported), unknown keys ignored; then
// each field not given is refused (required) or filled in (defaulted), in the schema's order.
// `prefix` names the object inside its record for messages ("device"; empty at the top level).
template <class T>
void read_record(const record_schema<T>& s, simdjson::ondemand::object& obj, T& out, std::string_view prefix = {}) {
    const auto& fs = s.fields;
    std::uint64_t given = 0;
    bool kind_seen = false;
    std::size_t next = 0;
    for (auto member : obj) {
        std::string_view k = member.unescaped_key();
        simdjson::ondemand::value v = member.value();
        if (!s.kind.empty() && k == "kind") {
            check_kind(v, s.kind);
            kind_seen = true;
            continue;
        }
        // Records mostly arrive in their own key order: try the field after the last one first.
        std::size_t i = next < fs.size() && fs[next].name == k ? next : fs.size();
        if (i == fs.size())
            for (std::size_t j = 0; j < fs.size(); ++j)
                if (fs[j].name == k) { i = j; break; }
        if (i == fs.size()) continue;
        next = i + 1;
        const field<T>& f = fs[i];
        if (!f.read) continue;
        bool got = prefix.empty() ? f.read(out, v, f.name) : f.read(out, v, field_path(prefix, f.name));
        if (got) given |= std::uint64_t(1) << i;
    }
    if (s.kind_required && !kind_seen) missing_field("kind");
    for (std::size_t i = 0; i < fs.size(); ++i) {
        if (given & (std::uint64_t(1) << i)) continue;
        if (fs[i].rule == read_rule::required) missing_field(prefix.empty() ? std::string(fs[i].name) : field_path(prefix, fs[i].name));
        if (fs[i].rule == read_rule::defaulted) fs[i].absent(out);
    }
}

template <class T>
T read_record(const record_schema<T>& s, simdjson::ondemand::object& obj) {
    T out;
    read_record(s, obj, out);
    return out;
}

// Writes `value` as one JSON object, its fields in the schema's order ("kind" first).
template <class T>
void write_record(const record_schema<T>& s, const T& value, json_writer& w) {
    w.begin_object();
    if (!s.kind.empty()) w.field("kind", s.kind);
    for (const auto& f : s.fields)
        if (f.write) f.write(value, w, f.name);
    w.end_object();
}
template <class T>
std::string write_record(const record_schema<T>& s, const T& value) {
    json_writer w;
    write_record(s, value, w);
    return w.take();
}

// ---- codecs -------------------------------------------------------------------------------

namespace schema_detail {
template <class C, class V>
C owner_of(V C::*);
template <class C, class V>
V value_of(V C::*);
template <class X>
struct is_optional : std::false_type { using base = X; };
template <class X>
struct is_optional<std::optional<X>> : std::true_type { using base = X; };
template <class X>
struct is_vector : std::false_type {};
template <class X>
struct is_vector<std::vector<X>> : std::true_type {};
}  // namespace schema_detail

template <auto M>
using owner_t = decltype(schema_detail::owner_of(M));
template <auto M>
using member_t = decltype(schema_detail::value_of(M));

// Shared reader rules (for member_via), each a field_error naming the field otherwise:
// a string, null read as ""; an integer > 0 ("expected a positive integer"); a finite number > 0
// ("expected a positive number"); a finite number ("expected a finite number"); finite seconds
// >= 0 ("expected seconds >= 0, found X"); a number, NaN and infinities read as absent.
std::string string_or_empty(simdjson::ondemand::value v, std::string_view path);
std::uint64_t positive_count(simdjson::ondemand::value v, std::string_view path);
double positive_number(simdjson::ondemand::value v, std::string_view path);
double finite_number(simdjson::ondemand::value v, std::string_view path);
double seconds_at_least_0(simdjson::ondemand::value v, std::string_view path);
std::optional<double> usable_number(simdjson::ondemand::value v, std::string_view path);
// A string holding an RFC 3339 time stamp, or null (nullopt): "field 'PATH': expected an RFC
// 3339 time stamp, found "X"" otherwise. The text is kept as written.
std::optional<std::string> time_stamp_or_null(simdjson::ondemand::value v, std::string_view path);
// A number, null read as Default (a margin absent from an older record). Default is a
// constant named by reference: clang before 18 takes no double as a template argument.
template <const double& Default>
double number_or(simdjson::ondemand::value v, std::string_view path) {
    return read_number(v, path).value_or(Default);
}

// An array of strings; null reads as empty. Elements are require_string(PATH).
std::vector<std::string> read_string_array(simdjson::ondemand::value v, std::string_view path);

// The member's value read by the reader its C++ type calls for: std::string require_string,
// optional<string> read_string, optional<uint64_t> read_count, uint64_t read_count or 0,
// optional<int64_t> read_int, optional<double> read_number, optional<bool> read_bool,
// vector<string> read_string_array, optional<json_value> read_json_value (null = absent), double
// finite_number and bool read_bool (null refused: a field documented as always a number or a
// boolean).
template <auto M>
bool read_member(owner_t<M>& t, simdjson::ondemand::value v, std::string_view path) {
    using V = member_t<M>;
    if constexpr (std::is_same_v<V, std::string>) t.*M = require_string(v, path);
    else if constexpr (std::is_same_v<V, std::optional<std::string>>) t.*M = read_string(v, path);
    else if constexpr (std::is_same_v<V, std::optional<std::uint64_t>>) t.*M = read_count(v, path);
    else if constexpr (std::is_same_v<V, std::uint64_t>) t.*M = read_count(v, path).value_or(0);
    else if constexpr (std::is_same_v<V, std::optional<std::int64_t>>) t.*M = read_int(v, path);
    else if constexpr (std::is_same_v<V, std::optional<double>>) t.*M = read_number(v, path);
    else if constexpr (std::is_same_v<V, std::optional<bool>>) t.*M = read_bool(v, path);
    else if constexpr (std::is_same_v<V, double>) t.*M = finite_number(v, path);
    else if constexpr (std::is_same_v<V, bool>) {
        std::optional<bool> b = read_bool(v, path);
        if (!b) throw field_error(std::string("field '") + std::string(path) + "': expected a boolean, found null");
        t.*M = *b;
    } else if constexpr (std::is_same_v<V, std::vector<std::string>>) t.*M = read_string_array(v, path);
    else if constexpr (std::is_same_v<V, std::optional<json_value>>) {
        json_value x = read_json_value(v);
        if (x.t != json_value::type::null) t.*M = std::move(x);
    } else static_assert(sizeof(V) == 0, "no reader for this member type: give the field .reads(...)");
    return true;
}

// The member written as json_writer writes its C++ type (optionals as null when absent; a
// vector as an array).
template <auto M>
void write_member(const owner_t<M>& t, json_writer& w, std::string_view key) {
    using V = member_t<M>;
    if constexpr (schema_detail::is_vector<V>::value) w.array_field(key, t.*M);
    else if constexpr (std::is_same_v<V, std::optional<json_value>>) {
        w.key(key);
        if (t.*M) w.raw((t.*M)->dump());
        else w.null();
    } else if constexpr (std::is_same_v<V, double>) {
        // A field documented as always a number never becomes null: json_writer writes a
        // non-finite double as null, so the arithmetic that made it must be refused instead.
        if (!std::isfinite(t.*M))
            throw error(exit_code::data_err,
                        fmt::format("field '{}' is not a finite number ({}): the arithmetic overflowed; nothing written",
                                    key, t.*M));
        w.field(key, t.*M);
    } else w.field(key, t.*M);
}

template <class V>
inline constexpr bool has_member_reader =
    std::is_same_v<V, std::string> || std::is_same_v<V, std::optional<std::string>> ||
    std::is_same_v<V, std::optional<std::uint64_t>> || std::is_same_v<V, std::uint64_t> ||
    std::is_same_v<V, std::optional<std::int64_t>> || std::is_same_v<V, std::optional<double>> ||
    std::is_same_v<V, std::optional<bool>> || std::is_same_v<V, std::vector<std::string>> ||
    std::is_same_v<V, std::optional<json_value>> || std::is_same_v<V, double> || std::is_same_v<V, bool>;

template <class V>
constexpr json_kind json_kind_of() {
    using B = typename schema_detail::is_optional<V>::base;
    if constexpr (std::is_same_v<B, std::string>) return json_kind::string;
    else if constexpr (std::is_same_v<B, json_value>) return json_kind::any;
    else if constexpr (std::is_same_v<B, bool>) return json_kind::boolean;
    else if constexpr (std::is_integral_v<B>) return json_kind::integer;
    else if constexpr (std::is_floating_point_v<B>) return json_kind::number;
    else if constexpr (schema_detail::is_vector<B>::value) return json_kind::array;
    else return json_kind::object;
}

// The field of member M: type, nullability and unit from the member and the name; read and
// written by read_member / write_member (a member type without a reader needs .reads()).
template <auto M>
field<owner_t<M>> member(std::string_view name) {
    using V = member_t<M>;
    field<owner_t<M>> f;
    f.name = name;
    f.type = json_kind_of<V>();
    f.unit = unit_of_name(name);
    f.nullable = schema_detail::is_optional<V>::value;
    if constexpr (has_member_reader<V>) f.read = &read_member<M>;
    f.write = &write_member<M>;
    return f;
}

// A field from its parts; the unit follows from the name.
template <class T>
field<T> make_field(std::string_view name, json_kind type, bool nullable, read_rule rule,
                    bool (*r)(T&, simdjson::ondemand::value, std::string_view),
                    void (*w)(const T&, json_writer&, std::string_view)) {
    field<T> f;
    f.name = name;
    f.type = type;
    f.unit = unit_of_name(name);
    f.nullable = nullable;
    f.rule = rule;
    f.read = r;
    f.write = w;
    return f;
}

// The field of member M read by Fn(value, path), which returns the member's value (or throws
// field_error): one line for a reader rule shared by several fields.
template <auto M, auto Fn>
field<owner_t<M>> member_via(std::string_view name) {
    return member<M>(name).reads([](owner_t<M>& t, simdjson::ondemand::value v, std::string_view path) {
        t.*M = Fn(v, path);
        return true;
    });
}

// A field with no member: written by `w` (a value computed from the record), never read.
template <class T>
field<T> computed(std::string_view name, json_kind type, bool nullable, void (*w)(const T&, json_writer&, std::string_view)) {
    return make_field<T>(name, type, nullable, read_rule::derived, nullptr, w);
}

// A nested object member read and written by its own schema (S() returns it), its fields'
// paths under this field's name.
template <auto M, auto S>
field<owner_t<M>> nested(std::string_view name) {
    using T = owner_t<M>;
    return make_field<T>(
        name, json_kind::object, false, read_rule::optional,
        [](T& t, simdjson::ondemand::value v, std::string_view path) {
            simdjson::ondemand::object o = require_object(v, path);
            read_record(S(), o, t.*M, path);
            return true;
        },
        [](const T& t, json_writer& w, std::string_view key) {
            w.key(key);
            write_record(S(), t.*M, w);
        });
}

// Writes "key":{name:value,...} for a map, each value by `value` (a string, or a record).
template <class Map, class Fn>
void write_map(json_writer& w, std::string_view key, const Map& m, Fn value) {
    w.key(key);
    w.begin_object();
    for (const auto& [k, v] : m) {
        w.key(k);
        value(v);
    }
    w.end_object();
}

// A std::map<std::string, std::string> written as an object of strings; read with each value
// a require_string("PATH.KEY").
template <auto M>
field<owner_t<M>> string_map(std::string_view name) {
    using T = owner_t<M>;
    return make_field<T>(
        name, json_kind::map, false, read_rule::optional,
        [](T& t, simdjson::ondemand::value v, std::string_view path) {
            for (auto e : require_object(v, path)) {
                std::string key(std::string_view(e.unescaped_key()));
                (t.*M)[key] = require_string(e.value(), field_path(path, key));
            }
            return true;
        },
        [](const T& t, json_writer& w, std::string_view key) {
            write_map(w, key, t.*M, [&](const std::string& v) { w.value(v); });
        });
}

// A vector of objects, each written by the schema S(); `read` is left to the field (the
// element readers differ in their messages and checks).
template <auto M, auto S>
field<owner_t<M>> object_array(std::string_view name) {
    using T = owner_t<M>;
    return make_field<T>(name, json_kind::array, false, read_rule::optional, nullptr,
                         [](const T& t, json_writer& w, std::string_view key) {
                             w.key(key);
                             w.begin_array();
                             for (const auto& e : t.*M) write_record(S(), e, w);
                             w.end_array();
                         });
}

// A std::map<std::string, V> written as an object of V objects, each by the schema S(); `read`
// is left to the field.
template <auto M, auto S>
field<owner_t<M>> object_map(std::string_view name) {
    using T = owner_t<M>;
    return make_field<T>(name, json_kind::map, false, read_rule::optional, nullptr,
                         [](const T& t, json_writer& w, std::string_view key) {
                             write_map(w, key, t.*M, [&](const auto& e) { write_record(S(), e, w); });
                         });
}

// Reads an object of objects into `out`: each member's value an object (else "field
// 'PATH.KEY': expected an object") read by the schema under PATH.KEY into a fresh V, passed to
// `keep(key, v)`.
template <class V, class Keep>
void read_object_map(simdjson::ondemand::value v, std::string_view path, const record_schema<V>& s, Keep keep) {
    for (auto e : require_object(v, path)) {
        std::string key(std::string_view(e.unescaped_key()));
        std::string where = field_path(path, key);
        simdjson::ondemand::object o = require_object(e.value(), where);
        V x;
        read_record(s, o, x, where);
        keep(std::move(key), std::move(x));
    }
}

}  // namespace prof
