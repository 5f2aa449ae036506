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

// The largest document read whole, in bytes: a Chrome trace, a DuckDB or Polars profile, a
// registry run file, a profile or baseline file, a --signature, --family-map or --params file.
// 4 GiB by default: simdjson parses no single document of 4 GiB or more (its
// SIMDJSON_MAXSIZE_BYTES), and no trace viewer loads a JSON trace that size. A larger document
// is refused as bad input (65) once that many bytes have arrived (a stream, a gzip bomb) or
// before any is read (a file mapped whole); memory held for it never passes the limit.
// --max-document sets it.
inline constexpr std::size_t default_max_document_bytes = std::size_t{4} << 30;
std::size_t max_document_bytes() noexcept;
void set_max_document_bytes(std::size_t n) noexcept;
// "document larger than 4 GiB (--max-document raises the limit)".
std::string document_too_large_message();

}  // namespace prof
