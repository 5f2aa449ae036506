// Host identity: --host, else $PROF_HOST, else the machine's hostname; never invented.
#pragma once

#include <optional>
#include <string>

namespace prof {

// Throws unavailable_error when no flag or variable names the host and gethostname() fails.
std::string host_identity(const std::optional<std::string>& flag);

}  // namespace prof
