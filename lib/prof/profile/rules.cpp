// The rules the profile, the harvest and the plan share (see rules.hpp).
#include "prof/profile/rules.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace prof {

namespace {

bool valid_margin(double m) { return std::isfinite(m) && m >= 1.0; }

template <class T>
void keep_max(std::optional<T>& acc, const std::optional<T>& v) {
    if (v && (!acc || *v > *acc)) acc = v;
}

}  // namespace

std::optional<std::string> latest_instant::rfc3339() const {
    if (!ns_) return std::nullopt;
    return format_rfc3339(*ns_);
}

margins::margins(double memory, double time) : memory_(memory), time_(time) {
    if (!valid_margin(memory)) throw usage_error(fmt::format("--memory-margin must be a number >= 1.0, got {}", memory));
    if (!valid_margin(time)) throw usage_error(fmt::format("--time-margin must be a number >= 1.0, got {}", time));
}

margins margins::of_record(double memory, double time) {
    if (!valid_margin(memory)) throw field_error(fmt::format("field 'memory_margin': must be >= 1.0, found {}", memory));
    if (!valid_margin(time)) throw field_error(fmt::format("field 'time_margin': must be >= 1.0, found {}", time));
    return margins(memory, time);
}

std::uint64_t scale_bytes_up(std::uint64_t bytes, double margin) {
    constexpr long double limit = 18446744073709551615.0L;
    long double x = static_cast<long double>(bytes) * static_cast<long double>(margin);
    if (!(x < limit)) return UINT64_MAX;  // saturate: an absurd slot is never printed as 0
    long double r = std::nearbyint(x);
    if (std::fabs(x - r) <= 1e-12L * x) return static_cast<std::uint64_t>(r);
    return static_cast<std::uint64_t>(std::ceil(x));
}

std::uint64_t snap_cores(double max_effective_cores) {
    double c = std::ceil(max_effective_cores - 0.05);
    if (!(c < 18446744073709551615.0)) return UINT64_MAX;
    return c < 1 ? 1 : static_cast<std::uint64_t>(c);
}

std::uint64_t oom_floor_bytes(std::uint64_t limit_bytes) {
    std::uint64_t bumped = scale_bytes_up(limit_bytes, oom_bump_ratio);
    std::uint64_t plus = limit_bytes > UINT64_MAX - oom_min_bump_bytes ? UINT64_MAX : limit_bytes + oom_min_bump_bytes;
    return std::max(bumped, plus);
}

slot_size size_slot(const slot_evidence& e, double memory_margin, const slot_size& fallback) {
    slot_size s;
    s.cores = e.max_effective_cores ? std::optional(snap_cores(*e.max_effective_cores)) : fallback.cores;
    s.rss_bytes = e.max_process_rss_bytes ? std::optional(scale_bytes_up(*e.max_process_rss_bytes, memory_margin))
                                          : fallback.rss_bytes;
    keep_max(s.rss_bytes, e.oom_floor_bytes);
    s.gpu_bytes = e.max_peak_gpu_bytes ? std::optional(scale_bytes_up(*e.max_peak_gpu_bytes, memory_margin))
                                       : fallback.gpu_bytes;
    keep_max(s.gpu_bytes, e.gpu_oom_floor_bytes);
    return s;
}

}  // namespace prof
