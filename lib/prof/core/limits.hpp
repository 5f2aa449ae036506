// Limits that keep memory bounded on hostile input (an endless line, a gzip bomb): far beyond
// anything a real record reaches, raised by a flag every program has (cli::configure).
#pragma once

#include <cstddef>
#include <string>

namespace prof {

// The longest line, in bytes without its '\n', that a line reader hands out: 256 MiB by
// default (a fit or harvest row is under a KiB, a profile record a few MiB at most). A longer
// line is refused as bad input (65) before it is held whole; --max-line sets it.
inline constexpr std::size_t default_max_line_bytes = std::size_t{256} << 20;
std::size_t max_line_bytes() noexcept;
void set_max_line_bytes(std::size_t n) noexcept;
// The message for a line past the limit: "line longer than 256 MiB (--max-line raises the limit)".
std::string line_too_long_message();

}  // namespace prof
