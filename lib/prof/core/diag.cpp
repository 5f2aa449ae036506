// Diagnostics on stderr (see diag.hpp).
#include "prof/core/diag.hpp"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <unistd.h>

namespace prof {
namespace {
std::string& name_storage() noexcept {
    static std::string name = "prof";
    return name;
}

// One message at a time: threads that watch fits side by side warn too, and a message's parts
// must not interleave with another's.
std::mutex g_put_mutex;

// Straight to the descriptor: stdio's stderr is unbuffered anyway, and write(2) reports a
// failure as a return value, never as an exception.
void put(std::string_view a, std::string_view b = {}, std::string_view c = {}, std::string_view d = {}) noexcept {
    std::lock_guard<std::mutex> lock(g_put_mutex);
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

std::string printable(std::string_view text, bool keep_newlines) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\t' && !(c == '\n' && keep_newlines)) || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            auto d = static_cast<unsigned char>(text[++i]);
            out += "\\u00";
            out += hex[d >> 4];
            out += hex[d & 15];
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

void warn(std::string_view msg) noexcept {
    try {
        put(program_name(), ": warning: ", printable(msg), "\n");
    } catch (...) {  // no memory for the copy: the message as it is
        put(program_name(), ": warning: ", msg, "\n");
    }
}

void note(std::string_view msg) noexcept {
    try {
        put(program_name(), ": ", printable(msg), "\n");
    } catch (...) {
        put(program_name(), ": ", msg, "\n");
    }
}

void write_stderr(std::string_view text) noexcept { put(text); }

}  // namespace prof
