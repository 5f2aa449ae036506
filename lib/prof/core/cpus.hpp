// The CPUs this process may use: the one rule every --jobs default, every CPU set a fit is
// pinned to and every "the host is busy" threshold reads.
#pragma once

#include <vector>

namespace prof {

// The CPU numbers in this process's affinity mask (sched_getaffinity(2)), ascending. When the
// mask cannot be read, the online CPUs 0 .. sysconf(_SC_NPROCESSORS_ONLN) - 1: the kernel then
// lets the process run on any of them. Never empty (CPU 0 at least).
std::vector<int> allowed_cpus();

// How many CPUs allowed_cpus() holds: at least 1.
unsigned allowed_cpu_count();

}  // namespace prof
