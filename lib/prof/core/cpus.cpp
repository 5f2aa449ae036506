// The CPUs this process may use (see cpus.hpp).
#include "prof/core/cpus.hpp"

#include <sched.h>
#include <unistd.h>

namespace prof {

std::vector<int> allowed_cpus() {
    std::vector<int> out;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) out.push_back(c);
    } else {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < online && c < CPU_SETSIZE; ++c) out.push_back(static_cast<int>(c));
    }
    if (out.empty()) out.push_back(0);
    return out;
}

unsigned allowed_cpu_count() { return static_cast<unsigned>(allowed_cpus().size()); }

}  // namespace prof
