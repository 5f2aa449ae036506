// Diagnostics on stderr (see diag.hpp).
#include "prof/core/diag.hpp"

#include <cerrno>
#include <cstdio>
#include <unistd.h>

namespace prof {
namespace {
std::string& name_storage() noexcept {
    static std::string name = "prof";
    return name;
}

// Straight to the descriptor: stdio's stderr is unbuffered anyway, and write(2) reports a
// failure as a return value, never as an exception.
void put(std::string_view a, std::string_view b = {}, std::string_view c = {}, std::string_view d = {}) noexcept {
    std::fflush(stdout);
    for (std::string_view s : {a, b, c, d}) {
        while (!s.empty()) {
            ssize_t w = ::write(2, s.data(), s.size());
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return;
            s.remove_prefix(static_cast<std::size_t>(w));
        }
    }
}
}  // namespace

void set_program_name(std::string name) { name_storage() = std::move(name); }
const std::string& program_name() noexcept { return name_storage(); }

void warn(std::string_view msg) noexcept { put(program_name(), ": warning: ", msg, "\n"); }

void note(std::string_view msg) noexcept { put(program_name(), ": ", msg, "\n"); }

void write_stderr(std::string_view text) noexcept { put(text); }

}  // namespace prof
