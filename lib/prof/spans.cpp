// The query_profile record (see spans.hpp).
#include "prof/spans.hpp"

#include "prof/diag.hpp"
#include "prof/errors.hpp"
#include "prof/io/input.hpp"
#include "prof/json_in.hpp"
#include "prof/json_out.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {

namespace od = simdjson::ondemand;

// ---- the record -------------------------------------------------------------------------------

std::string write_query_profile(const query_profile& p) {
    // A record never carries a non-finite number (the writer would print null). Every
    // producer refuses one first, so meeting one here is a bug, not bad input.
    bool finite = std::isfinite(p.fixed_seconds) && std::isfinite(p.per_row_seconds);
    for (const auto& n : p.nodes) finite = finite && std::isfinite(n.seconds);
    for (const auto& r : p.residuals)
        finite = finite && std::isfinite(r.measured_s) && std::isfinite(r.predicted_s) && std::isfinite(r.residual_s);
    if (!finite)
        throw error(exit_code::software,
                    fmt::format("internal error: query_profile of plan '{}' holds a non-finite number", p.plan_key));
    json_writer w;
    w.begin_object();
    w.field("kind", "query_profile");
    w.field("plan_key", p.plan_key);
    w.field("host", p.host);
    w.field("rows", p.rows);
    w.field("fixed_seconds", p.fixed_seconds);
    w.field("per_row_seconds", p.per_row_seconds);
    w.key("nodes");
    w.begin_array();
    for (const auto& n : p.nodes) {
        w.begin_object();
        w.field("node", n.node);
        w.field("seconds", n.seconds);
        w.field("scales_with_rows", n.scales_with_rows);
        w.end_object();
    }
    w.end_array();
    w.field("selectivity", p.selectivity);
    w.field("engine_version", p.engine_version);
    w.field("source", p.source);
    w.field("runs", p.runs);
    w.key("residuals");
    if (p.residuals.empty()) {
        w.null();
    } else {
        w.begin_array();
        for (const auto& r : p.residuals) {
            w.begin_object();
            w.field("rows", r.rows);
            w.field("measured_s", r.measured_s);
            w.field("predicted_s", r.predicted_s);
            w.field("residual_s", r.residual_s);
            w.end_object();
        }
        w.end_array();
    }
    w.array_field("warnings", p.warnings);
    w.end_object();
    return w.take();
}

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

}  // namespace

query_profile read_query_profile(od::object& obj) {
    query_profile p;
    p.source = "";
    bool kind = false, plan = false, host = false, rows = false, fixed = false, per_row = false;
    for (auto f : obj) {
        std::string_view k = f.unescaped_key();
        od::value v = f.value();
        if (k == "kind") {
            check_kind(v, "query_profile");
            kind = true;
        } else if (k == "plan_key") {
            p.plan_key = require_string(v, "plan_key");
            plan = true;
        } else if (k == "host") {
            p.host = require_string(v, "host");
            host = true;
        } else if (k == "rows") {
            auto r = read_count(v, "rows");
            if (!r || *r == 0) throw field_error("field 'rows': expected a positive integer");
            p.rows = *r;
            rows = true;
        } else if (k == "fixed_seconds") {
            p.fixed_seconds = seconds_field(v, "fixed_seconds");
            fixed = true;
        } else if (k == "per_row_seconds") {
            p.per_row_seconds = seconds_field(v, "per_row_seconds");
            per_row = true;
        } else if (k == "nodes") {
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'nodes': expected an array");
            for (auto el : arr) {
                od::object no;
                if (el.get_object().get(no) != simdjson::SUCCESS) throw field_error("field 'nodes': expected objects");
                query_node n;
                bool has_name = false;
                for (auto nf : no) {
                    std::string_view nk = nf.unescaped_key();
                    if (nk == "node") n.node = require_string(nf.value(), "nodes.node"), has_name = true;
                    else if (nk == "seconds") n.seconds = seconds_field(nf.value(), "nodes.seconds");
                    else if (nk == "scales_with_rows") {
                        auto b = read_bool(nf.value(), "nodes.scales_with_rows");
                        n.scales_with_rows = b.value_or(true);
                    }
                }
                if (!has_name) missing_field("nodes.node");
                p.nodes.push_back(std::move(n));
            }
        } else if (k == "selectivity") {
            auto s = read_number(v, "selectivity");
            if (s && !std::isfinite(*s)) s.reset();
            p.selectivity = s;
        } else if (k == "engine_version") {
            p.engine_version = read_string(v, "engine_version").value_or("");
        } else if (k == "source") {
            p.source = read_string(v, "source").value_or("");
        } else if (k == "runs") {
            auto r = read_count(v, "runs");
            p.runs = r && *r > 0 ? *r : 1;
        } else if (k == "residuals") {
            if (v.is_null()) continue;
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'residuals': expected an array");
            for (auto el : arr) {
                od::object ro;
                if (el.get_object().get(ro) != simdjson::SUCCESS) throw field_error("field 'residuals': expected objects");
                query_fit_point r;
                for (auto rf : ro) {
                    std::string_view rk = rf.unescaped_key();
                    if (rk == "rows") r.rows = read_count(rf.value(), "residuals.rows").value_or(0);
                    else if (rk == "measured_s") r.measured_s = finite_number(rf.value(), "residuals.measured_s");
                    else if (rk == "predicted_s") r.predicted_s = finite_number(rf.value(), "residuals.predicted_s");
                    else if (rk == "residual_s") r.residual_s = finite_number(rf.value(), "residuals.residual_s");
                }
                p.residuals.push_back(r);
            }
        } else if (k == "warnings") {
            if (v.is_null()) continue;
            od::array arr;
            if (v.get_array().get(arr) != simdjson::SUCCESS) throw field_error("field 'warnings': expected an array");
            for (auto el : arr) p.warnings.push_back(require_string(el.value(), "warnings"));
        }
    }
    if (!kind) missing_field("kind");
    if (!plan) missing_field("plan_key");
    if (!host) missing_field("host");
    if (!rows) missing_field("rows");
    if (!fixed) missing_field("fixed_seconds");
    if (!per_row) missing_field("per_row_seconds");
    sort_nodes(p.nodes);
    return p;
}

std::vector<located_query_profile> read_query_profile_lines(const std::vector<std::string>& paths,
                                                            std::size_t max_bad_lines) {
    std::vector<located_query_profile> out;
    for_each_record(paths, bad_line_policy(max_bad_lines), [&](od::object& o, const record_place& at) {
        out.push_back({read_query_profile(o), std::string(at.source), at.line});
    });
    return out;
}

double located_estimate(const located_query_profile& p, std::uint64_t rows) {
    try {
        return finite_estimate(p.profile, rows);
    } catch (const field_error& e) {
        throw input_error(p.source, p.line, e.what());
    }
}

std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host) {
    return {plan_key, host};
}

std::vector<std::string> query_profile_record_key(std::string_view text) {
    query_profile p;
    parse_object_text(text, [&](od::object& obj) { p = read_query_profile(obj); });
    return query_profile_key(p.plan_key, p.host);
}

}  // namespace prof
