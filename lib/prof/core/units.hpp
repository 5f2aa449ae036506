// Size and duration flags, RFC 3339 time stamps, and human renderings.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
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
// parse_rfc3339 over a stream of stamps that mostly share their minute with the one before (a
// run's rows, written in the order they finished): a stamp "YYYY-MM-DDTHH:MM:SSZ" whose first
// 17 bytes are those of the last such stamp read is converted from its seconds alone; any
// other goes through parse_rfc3339. The results are parse_rfc3339's, stamp by stamp.
class rfc3339_stream {
public:
    std::optional<time_point_ns> operator()(std::string_view text) {
        if (text.size() == 20 && have_minute_ && text[19] == 'Z' && same_minute(text.data())) {
            auto tens = static_cast<unsigned>(static_cast<unsigned char>(text[17]) - '0');
            auto ones = static_cast<unsigned>(static_cast<unsigned char>(text[18]) - '0');
            time_point_ns t;
            // An overflow here is one in parse_rfc3339's seconds × 10^9: the same instant, refused.
            if (tens <= 5 && ones <= 9) {
                if (__builtin_add_overflow(minute_ns_, static_cast<time_point_ns>(tens * 10 + ones) * 1000000000, &t))
                    return std::nullopt;
                return t;
            }
        }
        return read_whole(text);
    }

private:
    bool same_minute(const char* p) const {
        std::uint64_t a, b;
        std::memcpy(&a, p, 8);
        std::memcpy(&b, p + 8, 8);
        return a == minute_[0] && b == minute_[1] && p[16] == minute_tail_;
    }
    std::optional<time_point_ns> read_whole(std::string_view text);
    std::uint64_t minute_[2] = {};  // the first 16 bytes of the last "…:SSZ" stamp read
    char minute_tail_ = 0;          // and its 17th (the ':' before the seconds)
    bool have_minute_ = false;
    time_point_ns minute_ns_ = 0;   // that stamp's minute (its seconds 00)
};
// "2026-11-29T15:00:00Z", with ".ffffff" microseconds (trailing zeros cut) when not whole.
std::string format_rfc3339(time_point_ns t);
time_point_ns now_ns();

// "1.50 GiB", "512 MiB", "300 B": for tables and messages, never for records.
std::string human_bytes(double bytes);
// "12.30 ms", "1.50 s", "2.0 min", "1.5 h".
std::string human_seconds(double s);

}  // namespace prof
