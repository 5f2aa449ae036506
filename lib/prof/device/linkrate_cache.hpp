// The device area owns what prof knows of accelerators: the CUDA runtime and NVML loaded at run
// time, and the host<->device link rate. This part: which device a --device names without
// loading CUDA, and the ProfileCache of measured link rates (freshness, listing).
#pragma once

#include "prof/io/cache.hpp"
#include "prof/device/linkrate.hpp"

#include <optional>
#include <string>

namespace prof {

// A CUDA device ordinal: digits only ("0", "12").
bool is_device_ordinal(const std::string& device);
// The UUID a --device UUID names, spelled as the driver reports it (lower case, "GPU-" prefix),
// so a cached rate is found without loading CUDA: "gpu-ABC" and "ABC" are both "GPU-abc".
std::string canonical_device_uuid(std::string device);

// The cached rate of one link, when the cache holds one younger than max_age_s. Says on stderr
// which: a fresh rate used (a note), a stale one measured again (a note), an unreadable one
// measured again (a warning). `what` names the link in those lines ("h2d pinned 1024 bytes").
std::optional<link_rate> fresh_cached_rate(const profile_cache& cache, const std::vector<std::string>& key,
                                           const std::string& what, double max_age_s);

// prof-linkrate --list: the table of every link rate in the cache at `dir` with its age, or
// none when the cache holds no link rate.
std::optional<std::string> list_cached_rates(const std::string& dir, double max_age_s);

}  // namespace prof
