// The `query_profile` record's schema (read and written by read_query_profile and
// write_query_profile in spans.cpp).
#include "prof/spans/query_profile_record.hpp"
#include "prof/io/json_out.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

namespace {
std::uint64_t runs_of(od::value v, std::string_view path) {
    auto r = read_count(v, path);
    return r && *r > 0 ? *r : 1;  // a run is one execution
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
// selectivity: null, or a fraction from 0 to 1, the rule prof-spans --selectivity checks on
// build, so no record with another value is stored, served or priced.
std::optional<double> fraction_or_null(od::value v, std::string_view path) {
    auto x = read_number(v, path);
    if (x && !(*x >= 0 && *x <= 1))
        throw field_error(fmt::format("field '{}': expected a fraction from 0 to 1, found {}", path, format_double(*x)));
    return x;
}
}  // namespace

const record_schema<query_node>& query_node_schema() {
    using N = query_node;
    static const record_schema<N> s{"query_profile.nodes[]", "", false, {
        member<&N::node>("node").required(),
        member_via<&N::seconds, seconds_at_least_0>("seconds"),
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
        member_via<&P::measured_s, finite_number>("measured_s"),
        member_via<&P::predicted_s, finite_number>("predicted_s"),
        member_via<&P::residual_s, finite_number>("residual_s"),
    }};
    return s;
}

const record_schema<query_profile>& query_profile_schema() {
    using Q = query_profile;
    static const record_schema<Q> s{"query_profile", "query_profile", true, {
        member<&Q::plan_key>("plan_key").required(),
        member<&Q::host>("host").required(),
        member_via<&Q::rows, positive_count>("rows").required(),
        member_via<&Q::fixed_seconds, seconds_at_least_0>("fixed_seconds").required(),
        member_via<&Q::per_row_seconds, seconds_at_least_0>("per_row_seconds").required(),
        object_array<&Q::nodes, &query_node_schema>("nodes").reads([](Q& p, od::value v, std::string_view path) {
            if (v.is_null()) throw field_error(fmt::format("field '{}': expected an array", path));
            read_objects(v, path, query_node_schema(), p.nodes);
            return true;
        }),
        member_via<&Q::selectivity, fraction_or_null>("selectivity"),
        member_via<&Q::engine_version, string_or_empty>("engine_version"),
        member_via<&Q::source, string_or_empty>("source"),
        member_via<&Q::runs, runs_of>("runs"),
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
