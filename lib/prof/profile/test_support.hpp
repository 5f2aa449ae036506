// Builders of fit records, model costs and profiles for unit tests, in which every field a test
// does not name stays null (or zero), so each test states only the values its hand-computed
// expectation uses.
// Included by *_test.cpp only: never part of libprof.a.
#pragma once

#include "prof/core/test_support.hpp"
#include "prof/profile/profile.hpp"
#include "prof/records/records.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace prof::test {

// The measured values of one fit, in measured_fit's units; those left out stay null.
// (Each member has an initializer, so designated initializers may leave any out.)
struct fit_values {
    std::optional<std::uint64_t> n_obs = {};
    std::optional<double> wall_s = {}, cpu_s = {};
    std::optional<std::uint64_t> process_rss_bytes = {}, peak_rss_bytes = {}, peak_gpu_bytes = {};
    std::optional<std::uint64_t> intraop_threads = {};
    std::optional<std::string> measured_at = {};  // RFC 3339
};

// A fit of model_type on series ts_id that ended ok (error null) or failed with `error`.
inline measured_fit fit_of(std::string ts_id, std::string model_type, std::string family, const fit_values& v,
                           std::optional<std::string> error = std::nullopt) {
    measured_fit f;
    std::tie(f.ts_id, f.model_type, f.family) = std::tie(ts_id, model_type, family);
    f.ok = !error;
    f.error = std::move(error);
    std::tie(f.n_obs, f.wall_s, f.cpu_s, f.process_rss_bytes, f.peak_rss_bytes, f.peak_gpu_bytes, f.intraop_threads,
             f.measured_at) = std::tie(v.n_obs, v.wall_s, v.cpu_s, v.process_rss_bytes, v.peak_rss_bytes,
                                       v.peak_gpu_bytes, v.intraop_threads, v.measured_at);
    return f;
}

// The raw roll-up of one model as a profile stores it; n_fits = n_ok (no failed fit).
struct cost_values {
    std::uint64_t n_ok = 0;
    std::optional<double> max_effective_cores = {};
    std::optional<std::uint64_t> max_process_rss_bytes = {}, max_peak_gpu_bytes = {};
    std::optional<double> median_wall_s = {}, median_cpu_s = {};
    std::optional<std::uint64_t> intraop_threads = {};
};

inline model_cost model_of(std::string model_type, std::string family, const cost_values& v) {
    model_cost m;
    std::tie(m.model_type, m.family) = std::tie(model_type, family);
    m.n_fits = m.n_ok = v.n_ok;
    std::tie(m.max_effective_cores, m.max_process_rss_bytes, m.max_peak_gpu_bytes, m.median_wall_s, m.median_cpu_s,
             m.intraop_threads) = std::tie(v.max_effective_cores, v.max_process_rss_bytes, v.max_peak_gpu_bytes,
                                           v.median_wall_s, v.median_cpu_s, v.intraop_threads);
    return m;
}

// A profile holding these models under the given margins, its families left empty (give each
// family an entry before recompute_derived sizes them).
inline compute_profile profile_of(std::vector<model_cost> models, double memory_margin, double time_margin) {
    compute_profile p;
    p.memory_margin = memory_margin;
    p.time_margin = time_margin;
    for (auto& m : models) p.models[m.model_type] = std::move(m);
    return p;
}

}  // namespace prof::test
