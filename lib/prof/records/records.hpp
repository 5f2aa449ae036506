// The `cell` and `fit` (MeasuredFit) records of prof-records(5): shapes, reading, byte-stable writing.
#pragma once

#include "prof/io/json_in.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace prof {

// One unit of work to measure: one model fitted on one series (prof-sample → prof-measure).
// {"kind":"cell","ts_id":"co2","model_type":"theta","family":"statistical","n_obs":2284}
struct cell {
    std::string ts_id;
    std::string model_type;
    std::string family;                 // defaults to model_type when absent (family_named false)
    std::optional<std::uint64_t> n_obs; // observations in the series
    // The model's tuned parameters (prof-sample --params): a JSON object in canonical text
    // (members sorted by key, compact), carried to the fit as the same value; null = none.
    std::optional<std::string> params = std::nullopt;
    // false: the record named no family (absent or null) and `family` is the model's name; its
    // fits say so (their family is written null), so they do not vote on the model's family.
    bool family_named = true;
};

// Lower-case hex SHA-256 of a cell's canonical params text: two cells carry the same params
// exactly when their digests are equal (key order and spacing do not matter).
std::string params_digest(const std::string& canonical_params);

// The phases of a fit (prof-measure --warmup, --replay and --remeasure-busy; prof-records(5) FIT).
inline constexpr std::string_view fit_phase_sample = "sample";
inline constexpr std::string_view fit_phase_warmup = "warmup";
inline constexpr std::string_view fit_phase_replay = "replay";
inline constexpr std::string_view fit_phase_superseded = "superseded";

// One measured cell (MeasuredFit; prof-records(5) FIT). Units: seconds (*_s, double),
// bytes (*_bytes, integer). Every optional is JSON null = not measured, never zero.
struct measured_fit {
    std::string ts_id, model_type, family;
    bool family_named = true;  // false: no family given (family = model_type); written as a null family
    std::optional<std::uint64_t> n_obs;
    std::optional<std::string> params_digest;  // params_digest() of the cell's params; null = none
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
    std::optional<std::uint64_t> cgroup_peak_bytes;  // the fit's cgroup's own high-water mark
    std::optional<std::uint64_t> page_cache_bytes;   // page cache charged to the fit's cgroup at its end
    std::optional<std::uint64_t> peak_gpu_bytes;     // peak device memory; null = not measured
    std::optional<std::string> gpu_method;           // "nvml-poll" when measured
    std::optional<std::uint64_t> intraop_threads;    // thread cap applied; null = none
    std::optional<std::uint64_t> host_cpu_count;
    std::optional<std::string> host;
    std::optional<bool> rss_peak_reset;
    std::optional<std::string> rss_method;           // "cgroup-v2", "cgroup-v1", "proc" or "rusage"
    std::optional<double> cpu_pressure;              // share of the fit's wall time the host had
                                                     // runnable tasks waiting for a CPU (0..1)
    std::optional<std::string> pressure_method;      // "psi" or "proc-stat"
    std::optional<std::string> measured_at;          // RFC 3339 UTC
    // Why the cell ran (fit_phase_*): the sample the profile is built from, a warm-up run
    // before it (kept on the record, left out of the arithmetic), or a replay of the heaviest
    // sampled cells back to back (what a worker carries from earlier cells), or an attempt at
    // a cell of the sample that a less contended attempt replaced (--remeasure-busy: kept for
    // its memory, left out of the time arithmetic).
    std::string phase = std::string(fit_phase_sample);
    // The first cell of its model in a fresh process (every cell in process mode; in worker
    // mode the worker had served no cell of this model before); null = unknown.
    std::optional<bool> cold;
    // Worker mode: the worker's (tree's) memory high-water mark from its start through this
    // cell, never reset: what a production worker that ran the same cells would reach.
    std::optional<std::uint64_t> worker_peak_bytes;
    // Worker mode: the longest n_obs among the cells the worker has served since its start,
    // this one included (null when none had one): how long a series the history behind
    // worker_peak_bytes reaches. Absent in process mode.
    std::optional<std::uint64_t> worker_max_n_obs;
    // prof-measure --jobs above 1: the most other fits that ran at once beside this one (0: it
    // ran alone). Absent from the record under --jobs 1.
    std::optional<std::uint64_t> concurrent_fits;
    // prof-measure --remeasure-busy: on the reading that counts, how many attempts the cell
    // took (the others are phase superseded). Absent when it took one.
    std::optional<std::uint64_t> attempts;
};

// effective_cores = max(1.0, cpu_s / wall_s); 1.0 when wall_s < 1e-3; null unless both clocks are
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

// A fit of at least contended_min_wall_s measured while the host's CPU pressure was at least
// contended_cpu_pressure is contended: its wall time reads long and its effective cores short
// (prof-measure warns, prof-aggregate counts them). Shorter fits keep their reading but are not
// called contended: over a few milliseconds the pressure counter is too coarse to say.
inline constexpr double contended_cpu_pressure = 0.10;
inline constexpr double contended_min_wall_s = 0.1;
inline bool contended(const measured_fit& f) {
    return f.cpu_pressure && *f.cpu_pressure >= contended_cpu_pressure && f.wall_s && *f.wall_s >= contended_min_wall_s;
}

// prof-sample --params: a JSON object of model name → that model's tuned parameters (an object,
// or null for none). Returns model → canonical params text. Throws error(data_err) naming
// `source` when the text is not such an object.
std::map<std::string, std::string> parse_params_file(std::string_view text, const std::string& source);

cell read_cell(simdjson::ondemand::object& obj);
std::string write_cell(const cell& c);  // one line, no '\n'

measured_fit read_fit(simdjson::ondemand::object& obj);
std::string write_fit(const measured_fit& f);  // one line, no '\n'

}  // namespace prof
