// The profile area owns the arithmetic of a run's cost: build_profile, the cost curve, the data
// signature, and the rules below, which the profile, the harvest and the plan share so each rule
// lives once: which values count, which instant is the provenance's, what a margin may be, how a
// slot is sized from measured peaks.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace prof {

// A value contributes to an axis iff it is there, finite and > 0 (a failed fit contributes to
// no axis; the caller checks ok). NaN and ±Infinity, which the readers accept, are never usable.
inline bool usable(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; }
inline bool usable(const std::optional<std::uint64_t>& v) { return v && *v > 0; }

// The provenance's measured_at: the latest instant among the inputs (a fit's measured_at, a
// warehouse row's finished_at), nanoseconds since the epoch; none when no input had one.
class latest_instant {
public:
    void add(const std::optional<std::int64_t>& ns) {
        if (ns && (!ns_ || *ns > *ns_)) ns_ = ns;
    }
    void add(const latest_instant& other) { add(other.ns_); }
    const std::optional<std::int64_t>& ns() const { return ns_; }
    // RFC 3339 UTC ("2026-11-29T15:00:00Z"), or none.
    std::optional<std::string> rfc3339() const;

private:
    std::optional<std::int64_t> ns_;
};

inline constexpr double default_memory_margin = 1.25;
inline constexpr double default_time_margin = 1.10;

// The two safety multipliers of a profile: memory (on peak bytes) and time (on wall seconds).
// Each is finite and >= 1.0 by construction, so code holding a `margins` never checks again.
class margins {
public:
    margins() = default;  // the defaults, 1.25 and 1.10
    // From the command line: throws usage_error (exit 64) naming --memory-margin or
    // --time-margin.
    margins(double memory, double time);
    // From a record: throws field_error naming the field 'memory_margin' or 'time_margin'.
    static margins of_record(double memory, double time);

    double memory() const { return memory_; }
    double time() const { return time_; }

private:
    double memory_ = default_memory_margin, time_ = default_time_margin;
};

// ceil(bytes × margin) with a relative tolerance of 1e-12 (100 × 1.1 = 110, not 111); saturates
// at 2^64 - 1 rather than wrap.
std::uint64_t scale_bytes_up(std::uint64_t bytes, double margin);
// max(1, ceil(max_effective_cores − 0.05)): a single-threaded fit reading 1.0000005 is 1 core.
std::uint64_t snap_cores(double max_effective_cores);

// The OOM bump (the Kubernetes Vertical Pod Autoscaler's oomBumpUpRatio and oomMinBumpUp): a
// fit killed for memory at limit L proves the model needs more than L, so its memory is at
// least max(ceil(L × 1.2), L + 100 MiB).
inline constexpr double oom_bump_ratio = 1.2;
inline constexpr std::uint64_t oom_min_bump_bytes = 100ULL << 20;
std::uint64_t oom_floor_bytes(std::uint64_t limit_bytes);

// What a slot is sized from: the raw maxima of the fits it must hold (no margin applied) and
// the floors their failures proved.
struct slot_evidence {
    std::optional<double> max_effective_cores;
    std::optional<std::uint64_t> max_process_rss_bytes, max_peak_gpu_bytes;
    std::optional<std::uint64_t> oom_floor_bytes, gpu_oom_floor_bytes;
};

// One slot: cores, host memory bytes, GPU memory bytes; none = no value for that axis.
struct slot_size {
    std::optional<std::uint64_t> cores, rss_bytes, gpu_bytes;
};

// The slot for `e`: cores = snap_cores(max_effective_cores); memory = scale_bytes_up(max,
// memory_margin) on each memory axis; an axis with no measured value takes `fallback`'s (the
// plan's --default-* values; none for a profile). Memory is then raised to its floor, so a slot
// is never below the limit a fit was killed at.
slot_size size_slot(const slot_evidence& e, double memory_margin, const slot_size& fallback = {});

}  // namespace prof
