// LinkRate (prof-records(5) LINK_RATE): measured host↔device transfer rate of one link, the record, its
// staleness and cache key, and the measuring loop over an injected copier (CUDA in cuda.hpp,
// host-to-host memcpy here), so every rule is tested without a GPU.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prof/core/units.hpp"

namespace prof {

// The device end of a link. For --device host: name "host", uuid "host", no PCI id.
struct link_device {
    std::string name;
    std::string uuid;                        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (as nvidia-smi)
    std::optional<std::string> pci_bus_id;   // "0000:1b:00.0" (lower case, as sysfs names it)
    std::optional<int> numa_node;            // the device's NUMA node; null when unknown
};

// LinkRate. Record key order: kind, host, device{name, uuid, pci_bus_id, numa_node},
// direction, memory, transfer_bytes, bytes_per_second, samples, measured_at, method,
// driver_version, runtime_version, cpus.
struct link_rate {
    std::string host;
    link_device device;
    std::string direction;  // h2d | d2h
    std::string memory;     // pinned | pageable
    std::uint64_t transfer_bytes = 0;
    double bytes_per_second = 0;          // median of samples
    std::vector<double> samples;          // bytes per second of each timed copy, in order
    std::optional<std::string> measured_at;  // RFC 3339; null = undated (always stale)
    std::string method;                   // cuda-events | host-memcpy
    std::optional<std::string> driver_version, runtime_version;  // "12.4"; null for host
    std::vector<int> cpus;                // CPUs the measuring thread ran on (sched_getcpu around
                                          // each copy); the allowed set where that is unavailable
};

std::string write_link_rate(const link_rate& r);
// Reads a link_rate record (kind checked); throws field_error naming the field.
link_rate read_link_rate(simdjson::ondemand::object& obj);
// The same from one JSON text (a cache file); throws field_error.
link_rate parse_link_rate_text(std::string_view text);

// Cache key (the issue: a device index is not an identity): (device uuid, host, direction,
// memory, transfer_bytes).
std::vector<std::string> link_rate_key(const std::string& uuid, const std::string& host, const std::string& direction,
                                       const std::string& memory, std::uint64_t transfer_bytes);
// The cache key a stored link_rate text names by its own fields (the ProfileCache's record_key
// for "link_rate"), after checking the record against itself: it must read as a link_rate, have
// samples, a positive transfer size, and a bytes_per_second that is exactly the median of its
// samples (as measure_link_rate computes it). Throws field_error saying what disagrees.
std::vector<std::string> link_rate_record_key(std::string_view text);
// Stale when older than max_age_s, or never dated (also: dated in the future, or not a
// valid RFC 3339 stamp). nullopt = fresh.
// The cached rates of one cache as a table for people (prof-linkrate --list): one row per
// record — device, host, direction, memory, transfer size, rate, age at `now` and whether it
// is stale under `max_age_s` — ordered by file name. An unreadable record is a row that says
// why, so a corrupt cache is visible rather than silently short.
struct cached_rate_row {
    std::string path;
    std::optional<link_rate> rate;  // nullopt: unreadable
    std::string problem;            // why it is unreadable
};
std::string format_cached_rates(const std::vector<cached_rate_row>& rows, time_point_ns now, double max_age_s);

std::optional<std::string> link_rate_stale(const link_rate& r, time_point_ns now, double max_age_s);

// "0-3,8,10-11" (Linux cpulist, sysfs local_cpulist) → {0,1,2,3,8,10,11}; throws field_error.
std::vector<int> parse_cpulist(std::string_view text);
// "0000:1B:00.0" → "0000:1b:00.0" (sysfs spelling).
std::string normalize_pci_bus_id(std::string_view id);
// The NUMA node and local CPUs of a PCI device from sysfs (ROOT/bus/pci/devices/ID/numa_node
// and local_cpulist; ROOT is "/sys" outside tests). numa_node -1 (no NUMA) reads as nullopt.
struct pci_locality {
    std::optional<int> numa_node;
    std::vector<int> local_cpus;
};
pci_locality read_pci_locality(const std::string& pci_bus_id, const std::string& sysfs_root = "/sys");
// Binds the calling thread to `cpus` ∩ its allowed CPUs (nothing when that is empty) and
// returns the CPUs it may run on afterwards.
std::vector<int> bind_thread_to(const std::vector<int>& cpus);

// ---- measuring ------------------------------------------------------------------------------

// One prepared transfer: buffers allocated once by the backend, outside the timed loop.
class link_copier {
public:
    virtual ~link_copier() = default;
    // Runs one copy of the prepared size and returns its duration in seconds, as timed by the
    // backend (CUDA events around the copy; a monotonic clock for host memcpy).
    virtual double copy_seconds() = 0;
};

// A link to measure: the device end and how to prepare copies.
class link_backend {
public:
    virtual ~link_backend() = default;
    virtual const link_device& device() const = 0;
    virtual std::string method() const = 0;
    virtual std::optional<std::string> driver_version() const = 0;
    virtual std::optional<std::string> runtime_version() const = 0;
    // CPUs the measuring thread runs on (after any NUMA binding).
    virtual std::vector<int> cpus() const = 0;
    // Allocates the buffers for one (direction, memory, bytes); throws unavailable_error.
    virtual std::unique_ptr<link_copier> prepare(const std::string& direction, const std::string& memory,
                                                 std::uint64_t bytes) = 0;
};

// The measuring loop: `warmups` copies discarded (context creation and first-call cost never
// land in a sample), then `samples` timed copies, each turned into bytes per second. A copy
// timed at 0 s or less is refused (internal error: the clock cannot resolve it).
std::vector<double> measure_samples(link_copier& copier, std::uint64_t bytes, std::size_t samples, std::size_t warmups);

// Measures one link_rate (samples, median, measured_at now, the CPUs the copies ran on) over a
// backend.
link_rate measure_link_rate(link_backend& backend, const std::string& host, const std::string& direction,
                            const std::string& memory, std::uint64_t bytes, std::size_t samples, std::size_t warmups);

// --device host: memcpy between two host buffers, allocated and touched once; "pinned" locks
// both buffers in memory (mlock), "pageable" leaves them pageable. direction only labels the
// record (both directions are the same host copy).
std::unique_ptr<link_backend> host_link_backend();

}  // namespace prof
