// The CPUs this process may use: the one rule every --jobs default, every CPU set a fit is
// pinned to and every "the host is busy" threshold reads; and how they split into disjoint
// sets for fits measured side by side.
#pragma once

#include <string>
#include <optional>
#include <sys/types.h>
#include <vector>

namespace prof {

// The CPU numbers in process `pid`'s affinity mask (0: this process), ascending; nullopt when
// sched_getaffinity(2) cannot read it (the process is gone, or not ours to ask about).
std::optional<std::vector<int>> affinity_of(pid_t pid);

// The CPU numbers in this process's affinity mask (sched_getaffinity(2)), ascending. When the
// mask cannot be read, the online CPUs 0 .. sysconf(_SC_NPROCESSORS_ONLN) - 1: the kernel then
// lets the process run on any of them. Never empty (CPU 0 at least).
std::vector<int> allowed_cpus();

// How many CPUs allowed_cpus() holds: at least 1.
unsigned allowed_cpu_count();

// Where one CPU sits: its NUMA node, its package and its core (the hardware threads of one
// core are siblings: they share its execution units and caches).
struct cpu_place {
    int cpu = 0;
    int node = 0, package = 0, core = 0;
};

// The places of `cpus` read from the kernel's topology under `sysfs_cpu_dir` (normally
// /sys/devices/system/cpu): cpuN/topology/physical_package_id and core_id, and the nodeM link
// in cpuN/. A CPU whose files are missing is a core of its own on node 0, package 0.
std::vector<cpu_place> read_cpu_places(const std::vector<int>& cpus,
                                       const std::string& sysfs_cpu_dir = "/sys/devices/system/cpu");

// Up to `max_sets` disjoint sets of `size` CPUs each, for fits run side by side. A set is made
// of whole cores (ceil(size / threads of the core) of them, all on one NUMA node), so no two
// sets share a core's siblings and no set spans two nodes; a core's siblings beyond what its
// set needs stay idle. Sets are taken node by node, cores in CPU order, and each set lists
// its CPUs ascending. Fewer sets when the places do not hold more (none when no node holds
// `size` CPUs). Pure: the places are given.
std::vector<std::vector<int>> partition_cpus(const std::vector<cpu_place>& places, unsigned size,
                                             unsigned max_sets);

}  // namespace prof
