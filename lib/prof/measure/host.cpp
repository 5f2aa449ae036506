// Host identity (see host.hpp).
#include "prof/measure/host.hpp"

#include "prof/core/errors.hpp"

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

}  // namespace prof
