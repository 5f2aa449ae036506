// --memory-margin and --time-margin (see margin_flags.hpp).
#include "prof/profile/margin_flags.hpp"

namespace prof {

void add_margin_options(CLI::App& app, margin_flags& m) {
    app.add_option("--memory-margin", m.memory, "Multiplier on peak memory, >= 1.0")->capture_default_str();
    app.add_option("--time-margin", m.time, "Multiplier on median wall time, >= 1.0")->capture_default_str();
}

}  // namespace prof
