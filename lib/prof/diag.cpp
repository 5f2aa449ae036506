// Diagnostics on stderr (see diag.hpp).
#include "prof/diag.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace prof {
namespace {
std::string& name_storage() {
    static std::string name = "prof";
    return name;
}
}  // namespace

void set_program_name(std::string name) { name_storage() = std::move(name); }
const std::string& program_name() { return name_storage(); }

void warn(std::string_view msg) {
    std::fflush(stdout);
    fmt::print(stderr, "{}: warning: {}\n", program_name(), msg);
}

void note(std::string_view msg) {
    std::fflush(stdout);
    fmt::print(stderr, "{}: {}\n", program_name(), msg);
}

}  // namespace prof
