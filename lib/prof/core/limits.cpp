// Input size limits (see limits.hpp).
#include "prof/core/limits.hpp"

#include <atomic>
#include <fmt/format.h>

namespace prof {

namespace {
std::atomic<std::size_t> g_max_line{default_max_line_bytes};
}

std::size_t max_line_bytes() noexcept { return g_max_line.load(std::memory_order_relaxed); }
void set_max_line_bytes(std::size_t n) noexcept { g_max_line.store(n, std::memory_order_relaxed); }

std::string line_too_long_message() {
    std::size_t n = max_line_bytes();
    std::string size = n % (std::size_t{1} << 30) == 0   ? fmt::format("{} GiB", n >> 30)
                       : n % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", n >> 20)
                                                          : fmt::format("{} bytes", n);
    return fmt::format("line longer than {} (--max-line raises the limit)", size);
}

}  // namespace prof
