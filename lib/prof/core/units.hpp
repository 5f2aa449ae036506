// Size and duration flags, RFC 3339 time stamps, and human renderings.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace prof {

// "4096", "64MiB", "2GiB", "64Gi" (powers of 1024: KiB MiB GiB TiB, or Ki Mi Gi Ti as Kubernetes
// writes them), "1.5GB" (powers of 1000: kB/KB MB GB TB), "512B". A bare K, M, G or T is refused
// as ambiguous. Result rounded up to whole bytes. Throws usage_error naming `flag`.
std::uint64_t parse_size(std::string_view text, std::string_view flag);
// "250ms", "30s", "5m", "1h", "1d", "1.5s"; a bare number is seconds. Throws usage_error.
double parse_duration(std::string_view text, std::string_view flag);
// The same for an optional flag: none when `text` is empty (the flag was not given).
std::optional<std::uint64_t> parse_size_if_given(std::string_view text, std::string_view flag);
std::optional<double> parse_duration_if_given(std::string_view text, std::string_view flag);
// Parses a positive or non-negative number flag value; throws usage_error.
double parse_double_flag(std::string_view text, std::string_view flag);

// Nanoseconds since the Unix epoch, UTC.
using time_point_ns = std::int64_t;
// RFC 3339: "2026-11-29T15:00:00Z", "2026-11-29T15:00:00.123+01:00", 'T' or ' ', 'z' allowed.
// nullopt when the text is not a valid time stamp.
std::optional<time_point_ns> parse_rfc3339(std::string_view text);
// "2026-11-29T15:00:00Z", with ".ffffff" microseconds (trailing zeros cut) when not whole.
std::string format_rfc3339(time_point_ns t);
time_point_ns now_ns();

// "1.50 GiB", "512 MiB", "300 B": for tables and messages, never for records.
std::string human_bytes(double bytes);
// "12.30 ms", "1.50 s", "2.0 min", "1.5 h".
std::string human_seconds(double s);

}  // namespace prof
