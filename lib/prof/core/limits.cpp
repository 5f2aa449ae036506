// Input size limits (see limits.hpp).
#include "prof/core/limits.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <fmt/format.h>

namespace prof {

namespace {
std::atomic<std::size_t> g_max_line{default_max_line_bytes};
std::atomic<std::size_t> g_max_document{default_max_document_bytes};

// "4 GiB", "1 MiB", "1000 bytes": the size as the user most likely wrote it.
std::string size_text(std::size_t n) {
    return n % (std::size_t{1} << 30) == 0   ? fmt::format("{} GiB", n >> 30)
           : n % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", n >> 20)
           : n % (std::size_t{1} << 10) == 0 ? fmt::format("{} KiB", n >> 10)
                                              : fmt::format("{} bytes", n);
}
}  // namespace

std::size_t max_line_bytes() noexcept { return g_max_line.load(std::memory_order_relaxed); }
void set_max_line_bytes(std::size_t n) noexcept { g_max_line.store(n, std::memory_order_relaxed); }

std::string line_too_long_message() {
    return fmt::format("line longer than {} (--max-line raises the limit)", size_text(max_line_bytes()));
}

std::size_t max_document_bytes() noexcept { return g_max_document.load(std::memory_order_relaxed); }
// At most half the address space: a reader adds its padding to the limit without overflow.
void set_max_document_bytes(std::size_t n) noexcept {
    g_max_document.store(std::min(n, std::numeric_limits<std::size_t>::max() / 2), std::memory_order_relaxed);
}

std::string document_too_large_message() {
    return fmt::format("document larger than {} (--max-document raises the limit)", size_text(max_document_bytes()));
}

}  // namespace prof
