// The gate (should_profile) and the sample of SPEC §2 "The sample (prof-sample)".
#pragma once

#include "prof/records.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace prof {

enum class profile_mode { off, always, automatic };
// "off" | "always" | "auto"; throws usage_error naming `flag` otherwise.
profile_mode parse_profile_mode(const std::string& text, const std::string& flag);

struct gate_decision {
    bool sample = false;
    std::string reason;  // one line for stderr when the gate is skipped
};

// The gate compares cells (usable series × models), not series: off → never; always → always;
// auto → only when cells >= min_cells.
gate_decision should_profile(profile_mode mode, std::uint64_t cells, std::uint64_t min_cells);

// Indices of a k-point spread over n sorted items: floor(j·(n−1)/(k−1) + 0.5) for j = 0…k−1,
// k = min(k, n); k = 1 gives floor((n−1)/2). Exact integer arithmetic; the first and last item
// are always in when k >= 2.
std::vector<std::size_t> spread_indices(std::size_t n, std::size_t k);

struct series_ref {
    std::string ts_id;
    std::uint64_t n_obs = 0;
};
struct model_spec {
    std::string model_type, family;
};
// "NAME" or "NAME:FAMILY" (family defaults to the model name); throws usage_error.
model_spec parse_model_spec(const std::string& text);

// Sorts usable series by (n_obs, ts_id) and picks the spread; returns them in that order.
std::vector<series_ref> select_sample(std::vector<series_ref> usable, std::size_t k);
// Cells series-outer, models-inner (every model sees the same spread of lengths).
std::vector<cell> sample_cells(const std::vector<series_ref>& sample, const std::vector<model_spec>& models);

}  // namespace prof
