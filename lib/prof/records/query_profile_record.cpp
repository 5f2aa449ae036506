// The `query_profile` record's schema (read and written by read_query_profile and
// write_query_profile in spans.cpp).
#include "prof/records/kinds.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

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

// An array of objects (null = none), each read by the schema S() under `path`: "field 'PATH':
// expected an array" or "expected objects" otherwise.
template <class E>
void read_objects(od::value v, std::string_view path, const record_schema<E>& s, std::vector<E>& out) {
    if (v.is_null()) return;
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error(fmt::format("field '{}': expected an array", path));
    for (auto el : arr) {
        od::object o;
        if (el.get_object().get(o) != simdjson::SUCCESS) throw field_error(fmt::format("field '{}': expected objects", path));
        E e;
        read_record(s, o, e, path);
        out.push_back(std::move(e));
    }
}
}  // namespace

const record_schema<query_node>& query_node_schema() {
    using N = query_node;
    static const record_schema<N> s{"query_profile.nodes[]", "", false, {
        member<&N::node>("node").required(),
        member<&N::seconds>("seconds").reads([](N& n, od::value v, std::string_view path) {
            n.seconds = seconds_field(v, path);
            return true;
        }),
        member<&N::scales_with_rows>("scales_with_rows").reads([](N& n, od::value v, std::string_view path) {
            n.scales_with_rows = read_bool(v, path).value_or(true);
            return true;
        }),
    }};
    return s;
}

const record_schema<query_fit_point>& query_fit_point_schema() {
    using P = query_fit_point;
    static const record_schema<P> s{"query_profile.residuals[]", "", false, {
        member<&P::rows>("rows"),
        member<&P::measured_s>("measured_s").reads([](P& p, od::value v, std::string_view path) {
            p.measured_s = finite_number(v, path);
            return true;
        }),
        member<&P::predicted_s>("predicted_s").reads([](P& p, od::value v, std::string_view path) {
            p.predicted_s = finite_number(v, path);
            return true;
        }),
        member<&P::residual_s>("residual_s").reads([](P& p, od::value v, std::string_view path) {
            p.residual_s = finite_number(v, path);
            return true;
        }),
    }};
    return s;
}

const record_schema<query_profile>& query_profile_schema() {
    using Q = query_profile;
    static const record_schema<Q> s{"query_profile", "query_profile", true, {
        member<&Q::plan_key>("plan_key").required(),
        member<&Q::host>("host").required(),
        member<&Q::rows>("rows").required().reads([](Q& p, od::value v, std::string_view path) {
            auto r = read_count(v, path);
            if (!r || *r == 0) throw field_error("field 'rows': expected a positive integer");
            p.rows = *r;
            return true;
        }),
        member<&Q::fixed_seconds>("fixed_seconds").required().reads([](Q& p, od::value v, std::string_view path) {
            p.fixed_seconds = seconds_field(v, path);
            return true;
        }),
        member<&Q::per_row_seconds>("per_row_seconds").required().reads([](Q& p, od::value v, std::string_view path) {
            p.per_row_seconds = seconds_field(v, path);
            return true;
        }),
        object_array<&Q::nodes, &query_node_schema>("nodes").reads([](Q& p, od::value v, std::string_view path) {
            if (v.is_null()) throw field_error(fmt::format("field '{}': expected an array", path));
            read_objects(v, path, query_node_schema(), p.nodes);
            return true;
        }),
        member<&Q::selectivity>("selectivity").reads([](Q& p, od::value v, std::string_view path) {
            auto x = read_number(v, path);
            if (x && !std::isfinite(*x)) x.reset();
            p.selectivity = x;
            return true;
        }),
        member<&Q::engine_version>("engine_version").reads([](Q& p, od::value v, std::string_view path) {
            p.engine_version = read_string(v, path).value_or("");
            return true;
        }),
        member<&Q::source>("source").reads([](Q& p, od::value v, std::string_view path) {
            p.source = read_string(v, path).value_or("");
            return true;
        }),
        member<&Q::runs>("runs").reads([](Q& p, od::value v, std::string_view path) {
            auto r = read_count(v, path);
            p.runs = r && *r > 0 ? *r : 1;
            return true;
        }),
        object_array<&Q::residuals, &query_fit_point_schema>("residuals").typed(json_kind::array, true)
            .reads([](Q& p, od::value v, std::string_view path) {
                read_objects(v, path, query_fit_point_schema(), p.residuals);
                return true;
            })
            .writes([](const Q& p, json_writer& w, std::string_view key) {
                if (p.residuals.empty()) return w.null_field(key);  // not a fit: null, not []
                w.key(key);
                w.begin_array();
                for (const auto& r : p.residuals) write_record(query_fit_point_schema(), r, w);
                w.end_array();
            }),
        member<&Q::warnings>("warnings").reads([](Q& p, od::value v, std::string_view path) {
            if (v.is_null()) return true;
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'warnings': expected an array");
            for (auto el : arr) p.warnings.push_back(require_string(el.value(), path));
            return true;
        }),
    }};
    return s;
}

}  // namespace prof
