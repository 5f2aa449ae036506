// The DuckDB reader of the spans area: a JSON query profile, which carries per-operator times
// instead of spans.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prof {

// A DuckDB JSON profile (PRAGMA enable_profiling='json' or EXPLAIN (ANALYZE, FORMAT JSON);
// times in seconds, see shared/data/README.md): elapsed = root "latency"; fixed = "planner" +
// "all_optimizers" + "physical_planner" (detailed mode only; nullopt in standard mode, where the
// keys are absent, and when all three read 0.0, which is how EXPLAIN ANALYZE before DuckDB 1.5
// writes phases it did not time); nodes = operator_timing per operator name over the tree
// (summed over threads by DuckDB, and over operators sharing a name here), the name being
// "operator_name" without surrounding white space (DuckDB 1.2 to 1.4 write "SEQ_SCAN "), or
// "operator_type" where there is none (DuckDB 1.1: "TABLE_SCAN"); rows_scanned = root
// "cumulative_rows_scanned".
struct duckdb_profile {
    double latency_s = 0;
    std::optional<double> fixed_s;
    bool planner_zero = false;  // the three planner keys present and all 0.0: not timed
    std::vector<std::pair<std::string, double>> operators;  // sorted by name
    double operator_seconds = 0;  // the sum of every operator_timing (thread seconds)
    std::optional<std::uint64_t> rows_scanned;
    // The marks of a DuckDB before 1.5 in the profile itself: an operator without
    // "operator_name" (1.1 and older) or one whose name has surrounding white space (1.2 to 1.4);
    // 1.5 writes neither. Checked against profiles written by 1.1.3, 1.2.2, 1.3.2, 1.4.0, 1.4.4,
    // 1.5.0 and 1.5.6 (testdata/inputs/duckdb-profiles.mjs).
    bool before_1_5 = false;
    bool explain_analyze = false;  // the root's operator is EXPLAIN_ANALYZE
};
// Whether an engine version names a DuckDB before 1.5 ("1.4.4", "v1.3.2"); false when it does
// not parse as MAJOR.MINOR (unknown).
bool duckdb_version_before_1_5(const std::string& engine_version);
// Throws input_error("SOURCE:1: what") (exit 65) on bad data: the profile is one document.
duckdb_profile read_duckdb_profile(std::string_view text, const std::string& source);

}  // namespace prof
