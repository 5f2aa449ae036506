// The `cell` and `fit` (MeasuredFit) records of SPEC §2: shapes, reading, byte-stable writing.
#pragma once

#include "prof/json_in.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace prof {

// One unit of work to measure: one model fitted on one series (prof-sample → prof-measure).
// {"kind":"cell","ts_id":"co2","model_type":"theta","family":"statistical","n_obs":2284}
struct cell {
    std::string ts_id;
    std::string model_type;
    std::string family;                 // defaults to model_type when absent
    std::optional<std::uint64_t> n_obs; // observations in the series
};

// One measured cell (SPEC §2 "fit", the seed's MeasuredFit). Units: seconds (*_s, double),
// bytes (*_bytes, integer). Every optional is JSON null = not measured, never zero.
struct measured_fit {
    std::string ts_id, model_type, family;
    std::optional<std::uint64_t> n_obs;
    bool ok = false;
    std::optional<std::string> error;         // why ok=false: "exit 1: <last stderr line>", ...
    std::optional<std::int64_t> exit_code;    // the child's exit status
    std::optional<std::string> signal;        // terminating signal name, e.g. "SIGKILL"
    std::optional<std::uint64_t> memory_limit_bytes;  // memory limit the fit ran under; null = none
    std::optional<bool> oom_killed;           // killed for exceeding that limit; null = unknown
    std::optional<double> wall_s;             // monotonic wall clock of the fit
    std::optional<double> cpu_s;              // user + system CPU of the fit
    std::optional<std::uint64_t> process_rss_bytes;  // absolute RSS high-water of the process
    std::optional<std::uint64_t> peak_rss_bytes;     // marginal RSS the fit added
    std::optional<std::uint64_t> peak_gpu_bytes;     // peak device memory; null = not measured
    std::optional<std::string> gpu_method;           // "nvml-poll" when measured
    std::optional<std::uint64_t> intraop_threads;    // thread cap applied; null = none
    std::optional<std::uint64_t> host_cpu_count;
    std::optional<std::string> host;
    std::optional<bool> rss_peak_reset;
    std::optional<std::string> rss_method;           // "rusage" or "proc"
    std::optional<std::string> measured_at;          // RFC 3339 UTC
};

// SPEC §2: max(1.0, cpu_s / wall_s); 1.0 when wall_s < 1e-3; null unless both clocks are
// finite and > 0 (a derived field is always recomputed, never read).
// Inline: prof-harvest computes one per warehouse row.
inline std::optional<double> effective_cores(std::optional<double> wall_s, std::optional<double> cpu_s) {
    if (!wall_s || !cpu_s) return std::nullopt;
    double w = *wall_s, c = *cpu_s;
    if (!std::isfinite(w) || !std::isfinite(c) || w <= 0 || c <= 0) return std::nullopt;
    if (w < 1e-3) return 1.0;
    double e = c / w;
    if (!std::isfinite(e)) return std::nullopt;  // cpu 1e306 over wall 2e-3: no usable reading
    return std::max(1.0, e);
}

cell read_cell(simdjson::ondemand::object& obj);
std::string write_cell(const cell& c);  // one line, no '\n'

measured_fit read_fit(simdjson::ondemand::object& obj);
std::string write_fit(const measured_fit& f);  // one line, no '\n'

}  // namespace prof
