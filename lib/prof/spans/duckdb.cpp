// DuckDB JSON profiles (see duckdb.hpp).
#include "prof/spans/duckdb.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace prof {

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

std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Seconds a DuckDB profile can hold: finite, >= 0 and at most 1e9 (31.7 years), so sums over
// thousands of operators and ratios to the latency stay finite; 1e308 is a corrupt profile.
constexpr double max_timing_s = 1e9;
bool usable_timing(double x) { return std::isfinite(x) && x >= 0 && x <= max_timing_s; }

void collect_operators(const json_value& node, std::map<std::string, double>& ops, duckdb_profile& d, int depth) {
    if (depth > 10000) throw field_error("operator tree nested too deeply");
    const json_value* children = node.find("children");
    if (!children) return;
    if (children->t != json_value::type::array) throw field_error("field 'children': expected an array");
    for (const auto& c : children->arr) {
        if (!c.is_object()) throw field_error("field 'children': expected operator objects");
        std::string name;
        if (const json_value* n = c.find("operator_name"); n && n->t == json_value::type::string) {
            name = trimmed(n->s);
            if (name != n->s) d.before_1_5 = true;
        } else if (const json_value* t = c.find("operator_type"); t && t->t == json_value::type::string) {
            name = trimmed(t->s);
            d.before_1_5 = true;
        } else {
            throw field_error("an operator has neither 'operator_name' nor 'operator_type'");
        }
        if (depth == 0 && name == "EXPLAIN_ANALYZE") d.explain_analyze = true;
        auto secs = number_at(c, "operator_timing");
        if (!secs || !usable_timing(*secs))
            throw field_error(fmt::format("operator '{}': field 'operator_timing': expected seconds >= 0 and at most 1e9", name));
        ops[name] += *secs;
        d.operator_seconds += *secs;
        collect_operators(c, ops, d, depth + 1);
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
        if (!usable_timing(*latency)) throw field_error("field 'latency': expected seconds >= 0 and at most 1e9");
        d.latency_s = *latency;
        auto planner = number_at(root, "planner");
        auto optim = number_at(root, "all_optimizers");
        auto phys = number_at(root, "physical_planner");
        if (planner && optim && phys) {
            for (double x : {*planner, *optim, *phys})
                if (!usable_timing(x)) throw field_error("planner timings must be seconds >= 0 and at most 1e9");
            d.planner_zero = *planner == 0 && *optim == 0 && *phys == 0;
            if (!d.planner_zero) d.fixed_s = *planner + *optim + *phys;
            d.operators = {{"all_optimizers", *optim}, {"physical_planner", *phys}, {"planner", *planner}};
        }
        std::map<std::string, double> ops;
        collect_operators(root, ops, d, 0);
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

bool duckdb_version_before_1_5(const std::string& engine_version) {
    std::string_view v = engine_version;
    if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
    unsigned major = 0, minor = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), major);
    if (r.ec != std::errc() || r.ptr == v.data() + v.size() || *r.ptr != '.') return false;
    auto r2 = std::from_chars(r.ptr + 1, v.data() + v.size(), minor);
    if (r2.ec != std::errc()) return false;
    return major < 1 || (major == 1 && minor < 5);
}

}  // namespace prof
