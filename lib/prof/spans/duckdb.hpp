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

// A DuckDB JSON profile (PRAGMA enable_profiling='json'; times in seconds, see
// shared/data/README.md): elapsed = root "latency"; fixed = "planner" + "all_optimizers" +
// "physical_planner" (detailed mode only; nullopt in standard mode, where the keys are absent);
// nodes = operator_timing per operator_name over the tree (summed over threads by DuckDB, and
// over operators sharing a name here); rows_scanned = root "cumulative_rows_scanned".
struct duckdb_profile {
    double latency_s = 0;
    std::optional<double> fixed_s;
    std::vector<std::pair<std::string, double>> operators;  // sorted by name
    std::optional<std::uint64_t> rows_scanned;
};
// Throws input_error("SOURCE:1: what") (exit 65) on bad data: the profile is one document.
duckdb_profile read_duckdb_profile(std::string_view text, const std::string& source);

}  // namespace prof
