// --memory-margin and --time-margin on a program's command line: the margins of profile/rules.hpp
// read as numbers, and validated once parsed (value()). In the profile area, not core, so the
// shared CLI knows nothing of profiles.
#pragma once

#include "prof/profile/rules.hpp"

#include <CLI/CLI.hpp>

namespace prof {

struct margin_flags {
    double memory = default_memory_margin, time = default_time_margin;
    margins value() const { return margins(memory, time); }  // throws usage_error naming the flag
};
void add_margin_options(CLI::App& app, margin_flags& m);

}  // namespace prof
