// The query_profile model of the spans area: a query's fixed and per-row host cost, built from
// one run's spans or DuckDB profile, fitted over several runs, and judged stale or not.
#pragma once

#include "prof/spans/duckdb.hpp"
#include "prof/spans/span_set.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prof {

struct query_node {
    std::string node;
    double seconds = 0;
    bool scales_with_rows = true;
};
// Sorts nodes by name (the record's order).
void sort_nodes(std::vector<query_node>& nodes);

// One run's place in a fit: its row count, what it took, what the fitted line says.
struct query_fit_point {
    std::uint64_t rows = 0;
    double measured_s = 0;
    double predicted_s = 0;
    double residual_s = 0;  // measured - predicted
};

// A QueryProfile, plus how it was obtained. Key order of the record:
// kind, plan_key, host, rows, fixed_seconds, per_row_seconds, nodes (sorted by node),
// selectivity, engine_version, source, runs, residuals, warnings.
struct query_profile {
    std::string plan_key;
    std::string host;
    std::uint64_t rows = 0;  // > 0; for a fit, the largest row count fitted
    double fixed_seconds = 0;
    double per_row_seconds = 0;
    std::vector<query_node> nodes;  // for a fit, the largest run's, as measured (not refitted)
    std::optional<double> selectivity;
    std::string engine_version;  // "" = unknown
    std::string source;          // polars | chrome | duckdb | fit
    std::uint64_t runs = 1;      // executions behind the numbers
    std::vector<query_fit_point> residuals;  // fit only
    std::vector<std::string> warnings;

    // fixed_seconds + per_row_seconds × rows; +inf when that is beyond double range
    // (finite_estimate refuses it).
    double estimate(double at_rows) const { return fixed_seconds + per_row_seconds * at_rows; }
};

// What the build step needs besides the spans.
struct query_options {
    std::string plan_key;
    std::string host;
    std::optional<std::uint64_t> rows;          // required for span inputs
    std::vector<std::string> fixed_nodes;       // --fixed; empty = the format's default
    std::optional<double> fixed_seconds;        // --fixed-seconds: overrides the fixed part
    std::optional<double> selectivity;
    std::string engine_version;
};

// The warning every single-run profile carries (shared/data/README.md: the 1e3-row DuckDB
// profile alone over-prices 1e5 rows ~45x).
extern const char* const single_run_warning;

// Builds from spans: fixed nodes are opts.fixed_nodes, or `default_fixed` when none are named
// (default_fixed_nodes in formats.hpp; none warns that all cost is treated as scaling).
// Throws usage_error for rows missing/0, or --fixed-seconds above the elapsed time. The unions
// are computed on up to `jobs` threads (summarize_spans), the same for every `jobs`.
query_profile build_from_spans(const span_set& s, const query_options& opts, const std::vector<std::string>& default_fixed,
                               std::string source, unsigned jobs = 1);
// Builds from a DuckDB profile. Refused (exit 65, saying the way out): a latency of 0 (EXPLAIN
// ANALYZE before DuckDB 1.5 writes 0.0 for the query and its planner phases); a profile without
// planner timings (standard mode, or all three 0.0) unless --fixed-seconds is given; rows taken
// from cumulative_rows_scanned of a DuckDB before 1.5 (its marks in the profile, or
// opts.engine_version), which counts the rows once per scanning thread (fixed upstream in
// duckdb/duckdb#20161), unless --rows is given.
query_profile build_from_duckdb(const duckdb_profile& d, const query_options& opts, const std::string& source_name);

// Non-negative least squares of measured = fixed + per_row × rows over several profiles of
// one plan and host (each contributes the point (rows, its own estimate(rows))). The result
// has source "fit", rows = the largest row count, runs = the number of inputs (runs summed),
// nodes of the largest run, one residual per input (sorted by rows, then measured). Throws
// field_error when plan_key or host differ, engine versions differ, fewer than two distinct
// row counts are given, or a run's estimate or the fitted line is beyond double range (a record
// never carries a non-finite number).
query_profile fit_query_profiles(const std::vector<query_profile>& runs);

// estimate(rows), or field_error when it is beyond double range (per_row_seconds 1e308 at 10
// rows): no record or output carries a non-finite number.
double finite_estimate(const query_profile& p, std::uint64_t rows);

// The unconstrained-then-clamped 2-parameter NNLS itself: minimises Σ(a + b·x − y)² with
// a, b ≥ 0 (the best of the interior solution and the three boundary solutions).
struct line_fit {
    double intercept = 0;
    double slope = 0;
};
line_fit nnls_line(const std::vector<double>& x, const std::vector<double>& y);

// The single staleness predicate: the reason the profile cannot price `rows` on
// `engine_version` (rows / profile.rows above factor or below 1/factor; engine version
// different from the current one; the profile's engine version unknown), or nullopt when it
// can; also stale when its per_row_seconds is 0 (a fit clamped it, or the run spent nothing
// beyond its fixed part) and `rows` is above the rows it measured, which it would price as no
// more than they cost. factor must be > 1; a ratio of exactly the factor is not stale.
std::optional<std::string> stale_reason(const query_profile& p, std::uint64_t rows, const std::string& engine_version,
                                        double factor = 10.0);

}  // namespace prof
