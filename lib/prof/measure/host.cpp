// Host identity (see host.hpp).
#include "prof/measure/host.hpp"

#include "prof/core/errors.hpp"

#include <sched.h>

#include <cstdlib>
#include <unistd.h>

namespace prof {

std::string host_identity(const std::optional<std::string>& flag) {
    if (flag && !flag->empty()) return *flag;
    if (const char* env = std::getenv("PROF_HOST"); env && *env) return env;
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0')
        throw unavailable_error("cannot read this machine's hostname: name it with --host or PROF_HOST");
    return buf;
}

unsigned usable_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? static_cast<unsigned>(n) : 1;
}

}  // namespace prof
