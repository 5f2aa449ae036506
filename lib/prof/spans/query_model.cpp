// The query_profile model: build, fit, staleness (see query_model.hpp).
#include "prof/spans/query_model.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/spans/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace prof {

const char* const single_run_warning =
    "built from a single run: fixed cost the engine does not name (start-up, result handling) is "
    "attributed to the rows, so this profile over-prices much larger row counts; profile the query "
    "at two or more row counts and combine them with 'prof-spans fit'";

void sort_nodes(std::vector<query_node>& nodes) {
    std::sort(nodes.begin(), nodes.end(), [](const query_node& a, const query_node& b) { return a.node < b.node; });
}

// ---- building -------------------------------------------------------------------------------

namespace {

std::uint64_t require_rows(const std::optional<std::uint64_t>& rows) {
    if (!rows) throw usage_error("--rows N is required: how many rows this run processed");
    if (*rows == 0) throw usage_error("--rows must be a positive integer");
    return *rows;
}

query_profile base_profile(const query_options& opts, std::string source) {
    query_profile p;
    p.plan_key = opts.plan_key;
    p.host = opts.host;
    p.selectivity = opts.selectivity;
    p.engine_version = opts.engine_version;
    p.source = std::move(source);
    p.runs = 1;
    return p;
}

}  // namespace

query_profile build_from_spans(const span_set& s, const query_options& opts, const std::vector<std::string>& default_fixed,
                               std::string source, unsigned jobs) {
    query_profile p = base_profile(opts, std::move(source));
    p.rows = require_rows(opts.rows);
    const auto& fixed_names = opts.fixed_nodes.empty() ? default_fixed : opts.fixed_nodes;
    std::vector<bool> is_fixed(s.names.size(), false);
    for (const auto& f : fixed_names) {
        auto it = std::find(s.names.begin(), s.names.end(), f);
        if (it == s.names.end()) {
            p.warnings.push_back(fmt::format("fixed node '{}' does not appear in the spans: check the name", f));
            continue;
        }
        is_fixed[static_cast<std::size_t>(it - s.names.begin())] = true;
    }
    span_summary sum = summarize_spans(s, is_fixed, jobs);
    double fixed_s = static_cast<double>(sum.fixed_ns) / 1e9;
    double elapsed_s = static_cast<double>(sum.elapsed_ns) / 1e9;
    if (opts.fixed_seconds) {
        if (*opts.fixed_seconds > elapsed_s)
            throw usage_error(fmt::format("--fixed-seconds {} is more than the run's elapsed {} s",
                                          format_double(*opts.fixed_seconds), format_double(elapsed_s)));
        fixed_s = *opts.fixed_seconds;
        p.fixed_seconds = fixed_s;
        p.per_row_seconds = (elapsed_s - fixed_s) / static_cast<double>(p.rows);
    } else {
        if (fixed_names.empty())
            p.warnings.push_back("no fixed node named (--fixed NAME): all cost is treated as scaling with rows");
        else if (opts.fixed_nodes.empty() && std::find(is_fixed.begin(), is_fixed.end(), true) != is_fixed.end())
            p.warnings.push_back(fmt::format("fixed cost is the node '{}' by default ({} s); name the fixed nodes with "
                                             "--fixed NAME to choose others",
                                             fmt::join(fixed_names, "', '"), format_double(fixed_s)));
        // Integer time throughout (nanoseconds), converted to seconds once, here.
        p.fixed_seconds = fixed_s;
        p.per_row_seconds = static_cast<double>(sum.elapsed_ns - sum.fixed_ns) / 1e9 / static_cast<double>(p.rows);
    }
    for (std::size_t n = 0; n < s.names.size(); ++n)
        p.nodes.push_back({s.names[n], static_cast<double>(sum.node_ns[n]) / 1e9, !is_fixed[n]});
    sort_nodes(p.nodes);
    p.warnings.push_back(single_run_warning);
    return p;
}

query_profile build_from_duckdb(const duckdb_profile& d, const query_options& opts, const std::string& source_name) {
    if (!opts.fixed_nodes.empty())
        throw usage_error("--fixed names span nodes; a DuckDB profile's fixed part is planner + all_optimizers + "
                          "physical_planner (override it with --fixed-seconds)");
    query_profile p = base_profile(opts, "duckdb");
    if (!(d.latency_s > 0))  // nothing timed the query: 0 s is no measurement of it
        throw error(exit_code::data_err,
                    fmt::format("{}: the profile's 'latency' is 0 s while its operators took {} thread seconds, so the "
                                "query's time is unknown{}: profile it with PRAGMA enable_profiling='json'",
                                source_name, format_double(d.operator_seconds),
                                d.explain_analyze ? " (EXPLAIN ANALYZE before DuckDB 1.5 does not time the query)" : ""));
    const bool before_1_5 = d.before_1_5 || duckdb_version_before_1_5(opts.engine_version);
    if (opts.rows) {
        p.rows = require_rows(opts.rows);
    } else {
        if (!d.rows_scanned || *d.rows_scanned == 0)
            throw error(exit_code::data_err, fmt::format("{}: the profile has no positive 'cumulative_rows_scanned': give --rows N",
                                                         source_name));
        if (before_1_5)
            throw error(exit_code::data_err,
                        fmt::format("{}: the profile is from a DuckDB before 1.5 ({}), which counts "
                                    "'cumulative_rows_scanned' once per thread that scanned (1e6 rows on 2 threads read "
                                    "2000000), so its {} is not the row count: give --rows N",
                                    source_name,
                                    d.before_1_5 ? "its operator names say so" : "--engine-version " + opts.engine_version,
                                    *d.rows_scanned));
        p.rows = *d.rows_scanned;
    }
    double fixed = 0;
    if (opts.fixed_seconds) {
        fixed = *opts.fixed_seconds;
    } else if (d.fixed_s) {
        fixed = *d.fixed_s;
    } else if (d.planner_zero) {
        throw error(exit_code::data_err,
                    fmt::format("{}: the profile's planner, all_optimizers and physical_planner timings are all 0 s (not "
                                "timed), so its fixed cost is unknown: profile with PRAGMA enable_profiling='json' and "
                                "profiling_mode='detailed' (or give --fixed-seconds)",
                                source_name));
    } else {
        throw error(exit_code::data_err,
                    fmt::format("{}: a standard-mode DuckDB profile has no planner, all_optimizers or physical_planner "
                                "timings, so its fixed cost is unknown: profile with PRAGMA profiling_mode='detailed' "
                                "(or give --fixed-seconds)",
                                source_name));
    }
    if (fixed > d.latency_s)
        throw error(exit_code::data_err, fmt::format("{}: fixed cost {} s is more than the query's latency {} s", source_name,
                                                     format_double(fixed), format_double(d.latency_s)));
    p.fixed_seconds = fixed;
    p.per_row_seconds = (d.latency_s - fixed) / static_cast<double>(p.rows);
    for (const auto& [name, secs] : d.operators) {
        bool plan_time = name == "planner" || name == "all_optimizers" || name == "physical_planner";
        p.nodes.push_back({name, secs, !plan_time});
    }
    sort_nodes(p.nodes);
    p.warnings.push_back(single_run_warning);
    return p;
}

// ---- fit --------------------------------------------------------------------------------------

double finite_estimate(const query_profile& p, std::uint64_t rows) {
    double e = p.estimate(static_cast<double>(rows));
    if (!std::isfinite(e))
        throw field_error(fmt::format("the estimate at {} rows, fixed_seconds {} + per_row_seconds {} x rows, is beyond "
                                      "the range of a double (1.8e308 s)",
                                      rows, format_double(p.fixed_seconds), format_double(p.per_row_seconds)));
    return e;
}

line_fit nnls_line(const std::vector<double>& x, const std::vector<double>& y) {
    const std::size_t n = x.size();
    auto sse = [&](double a, double b) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += (a + b * x[i] - y[i]) * (a + b * x[i] - y[i]);
        return s;
    };
    double xm = 0, ym = 0;
    for (std::size_t i = 0; i < n; ++i) xm += x[i], ym += y[i];
    xm /= static_cast<double>(n);
    ym /= static_cast<double>(n);
    double sxx = 0, sxy = 0, xx = 0, xy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sxx += (x[i] - xm) * (x[i] - xm);
        sxy += (x[i] - xm) * (y[i] - ym);
        xx += x[i] * x[i];
        xy += x[i] * y[i];
    }
    if (sxx > 0) {
        double b = sxy / sxx, a = ym - b * xm;
        if (a >= 0 && b >= 0) return {a, b};
    }
    // The objective is convex, so when the interior optimum is infeasible the constrained one
    // lies on an edge: through the origin (a = 0) or flat (b = 0).
    line_fit through0{0, xx > 0 ? std::max(0.0, xy / xx) : 0.0};
    line_fit flat{std::max(0.0, ym), 0};
    return sse(through0.intercept, through0.slope) <= sse(flat.intercept, flat.slope) ? through0 : flat;
}

query_profile fit_query_profiles(const std::vector<query_profile>& runs) {
    if (runs.empty()) throw field_error("fit needs query_profile records on input");
    const query_profile& first = runs.front();
    std::vector<double> x, y;
    const query_profile* largest = &first;
    std::uint64_t total_runs = 0;
    bool same_selectivity = true;
    for (const auto& r : runs) {
        if (r.plan_key != first.plan_key || r.host != first.host)
            throw field_error(fmt::format("fit combines one plan on one host; found ('{}', '{}') and ('{}', '{}')",
                                          first.plan_key, first.host, r.plan_key, r.host));
        if (r.engine_version != first.engine_version)
            throw field_error(fmt::format("fit combines one engine version; found '{}' and '{}'", first.engine_version,
                                          r.engine_version));
        if (r.selectivity != first.selectivity) same_selectivity = false;
        x.push_back(static_cast<double>(r.rows));
        y.push_back(finite_estimate(r, r.rows));
        total_runs += r.runs;
        if (r.rows > largest->rows) largest = &r;
    }
    std::vector<double> distinct = x;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() < 2)
        throw field_error("fit needs runs at two or more different row counts (one row count cannot separate fixed from "
                          "per-row cost)");
    line_fit f = nnls_line(x, y);
    auto finite = [&] {
        bool ok = std::isfinite(f.intercept) && std::isfinite(f.slope);
        for (std::size_t i = 0; ok && i < x.size(); ++i) ok = std::isfinite(f.intercept + f.slope * x[i]);
        return ok;
    };
    if (!finite()) {
        // Huge times overflow the sums of squares: fitted again on the times scaled to at most 1,
        // the line scaled back. A line still beyond double range is no fit.
        double scale = *std::max_element(y.begin(), y.end());
        std::vector<double> y1 = y;
        for (double& v : y1) v /= scale;
        f = nnls_line(x, y1);
        f = {f.intercept * scale, f.slope * scale};
    }
    if (!finite())
        throw field_error(fmt::format("no fit: the line through these runs' times ({} s at {} rows, ...) is beyond the "
                                      "range of a double",
                                      format_double(y[0]), runs[0].rows));
    query_profile p;
    p.plan_key = first.plan_key;
    p.host = first.host;
    p.rows = largest->rows;
    p.fixed_seconds = f.intercept;
    p.per_row_seconds = f.slope;
    p.nodes = largest->nodes;
    p.selectivity = same_selectivity ? first.selectivity : std::nullopt;
    p.engine_version = first.engine_version;
    p.source = "fit";
    p.runs = total_runs;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double pred = f.intercept + f.slope * x[i];
        p.residuals.push_back({runs[i].rows, y[i], pred, y[i] - pred});
    }
    std::sort(p.residuals.begin(), p.residuals.end(), [](const query_fit_point& a, const query_fit_point& b) {
        return a.rows != b.rows ? a.rows < b.rows : a.measured_s < b.measured_s;
    });
    if (distinct.size() == 2)
        p.warnings.push_back("fitted over two row counts: the line passes through both, so the residuals cannot show "
                             "misfit; a third row count would");
    if (f.slope == 0)
        p.warnings.push_back("per-row cost clamped to 0: the runs do not get slower with more rows");
    if (f.intercept == 0 && distinct.size() > 2)
        p.warnings.push_back("fixed cost clamped to 0: the runs' line would cross zero rows below 0 s");
    return p;
}

// ---- staleness --------------------------------------------------------------------------------

std::optional<std::string> stale_reason(const query_profile& p, std::uint64_t rows, const std::string& engine_version,
                                        double factor) {
    std::vector<std::string> why;
    double ratio = static_cast<double>(rows) / static_cast<double>(p.rows);
    if (ratio > factor)
        why.push_back(fmt::format("{} rows is {}x the profile's {} rows (more than the factor {})", rows,
                                  format_double(ratio), p.rows, format_double(factor)));
    else if (ratio < 1.0 / factor)
        why.push_back(fmt::format("{} rows is 1/{} of the profile's {} rows (below 1/{})", rows,
                                  format_double(1.0 / ratio), p.rows, format_double(factor)));
    if (p.per_row_seconds == 0 && rows > p.rows)
        why.push_back(fmt::format("its per-row cost is 0{}, so it prices every row count alike and cannot tell what {} "
                                  "rows cost beyond the {} it measured",
                                  p.source == "fit" ? " (clamped by the fit)" : "", rows, p.rows));
    if (p.engine_version.empty())
        why.push_back("the profile's engine version is unknown");
    else if (p.engine_version != engine_version)
        why.push_back(fmt::format("the profile was taken on engine version '{}', the engine is now '{}'", p.engine_version,
                                  engine_version));
    if (why.empty()) return std::nullopt;
    std::string out = why[0];
    for (std::size_t k = 1; k < why.size(); ++k) out += "; " + why[k];
    return out;
}

}  // namespace prof
