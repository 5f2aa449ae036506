// Size and duration flags, RFC 3339 time stamps, human renderings (see units.hpp).
#include "prof/core/units.hpp"

#include "prof/core/errors.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <utility>

namespace prof {
namespace {

// Splits "1.5GiB" into 1.5 and "GiB"; false when there is no leading number.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
    std::size_t i = 0;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (i == 0) return false;
    auto r = std::from_chars(text.data(), text.data() + i, value);
    if (r.ec != std::errc() || r.ptr != text.data() + i) return false;
    unit = text.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    return std::isfinite(value);
}

// A unit a flag's value may carry and what one of it is worth (bytes, seconds).
struct unit_scale {
    std::string_view name;
    double scale;
};
constexpr unit_scale size_units[] = {
    {"", 1},
    {"B", 1},
    {"KiB", 1024.0},
    {"Ki", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"Mi", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
};
constexpr unit_scale duration_units[] = {
    {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400},
};

// The leading number of a flag's value and the unit after it; "FLAG: 'TEXT' is not a WHAT"
// (usage_error) when there is no number.
std::pair<double, std::string_view> number_and_unit(std::string_view text, std::string_view flag, std::string_view what) {
    double v = 0;
    std::string_view unit;
    if (!split_number(text, v, unit)) throw usage_error(fmt::format("{}: '{}' is not a {}", flag, text, what));
    return {v, unit};
}

// What one `unit` is worth by the table; "FLAG: unknown KIND unit 'UNIT' in 'TEXT' (use
// KNOWN)" (usage_error) for a unit it does not hold.
template <std::size_t N>
double scale_of(std::string_view unit, const unit_scale (&units)[N], std::string_view text, std::string_view flag,
                std::string_view kind, std::string_view known) {
    for (const unit_scale& u : units)
        if (u.name == unit) return u.scale;
    throw usage_error(fmt::format("{}: unknown {} unit '{}' in '{}' (use {})", flag, kind, unit, text, known));
}

int days_from_civil(int y, unsigned m, unsigned d) {
    // Howard Hinnant's days_from_civil: proleptic Gregorian date → days since 1970-01-01.
    y -= m <= 2;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t k = pos; k < pos + n; ++k) {
        if (s[k] < '0' || s[k] > '9') return false;
        out = out * 10 + (s[k] - '0');
    }
    return true;
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view flag) {
    // A bare letter means 1024^n to one tool and 1000^n to another (Kubernetes' "64G" is 64e9):
    // a size that could be read two ways is refused rather than guessed.
    static constexpr std::string_view ambiguous[] = {"K", "k", "M", "G", "T"};
    auto [v, unit] = number_and_unit(text, flag, "size (e.g. 4096, 64MiB, 1.5GB)");
    for (std::string_view a : ambiguous)
        if (unit == a)
            throw usage_error(fmt::format("{}: '{}' is ambiguous: write {}iB (powers of 1024) or {}B (powers of 1000)",
                                          flag, text, unit == "k" ? "K" : std::string(unit),
                                          unit == "K" ? "k" : std::string(unit)));
    double bytes = std::ceil(v * scale_of(unit, size_units, text, flag, "size",
                                          "B, KiB/Ki, MiB/Mi, GiB/Gi, TiB/Ti, or kB, MB, GB, TB"));
    if (bytes >= 18446744073709551615.0)
        throw usage_error(fmt::format("{}: '{}' is too large", flag, text));
    return static_cast<std::uint64_t>(bytes);
}

double parse_duration(std::string_view text, std::string_view flag) {
    auto [v, unit] = number_and_unit(text, flag, "duration (e.g. 250ms, 30s, 5m, 1h, 1d)");
    return v * scale_of(unit, duration_units, text, flag, "duration", "ms, s, m, h, d");
}

double parse_double_flag(std::string_view text, std::string_view flag) {
    double v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v))
        throw usage_error(fmt::format("{}: '{}' is not a number", flag, text));
    return v;
}

namespace {

// HH:MM:SS at p (8 bytes) as seconds since midnight (a leap second's 60 allowed), or -1. One
// word: each byte ^ '0' is its digit's value (0..9: high nibble 0, low nibble + 6 below 16) and
// each ':' becomes 0x0A; then one multiply-add forms the three pairs.
int seconds_of_day(const char* p) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    x ^= 0x3030303030303030u;
    constexpr std::uint64_t digit_bytes = 0xFFFF00FFFF00FFFFu, nibbles = 0x0F0F0F0F0F0F0F0Fu;
    if ((x & digit_bytes & ~nibbles) || (((x & digit_bytes) + (0x0606060606060606u & digit_bytes)) & 0x1010101010101010u) ||
        (x & ~digit_bytes) != 0x00000A00000A0000u)
        return -1;
    const std::uint64_t pairs = x * 10 + (x >> 8);  // byte 0: HH, byte 3: MM, byte 6: SS (no carry)
    const int h = static_cast<int>(pairs & 0xFF), m = static_cast<int>(pairs >> 24 & 0xFF),
              sec = static_cast<int>(pairs >> 48 & 0xFF);
    if (h > 23 || m > 59 || sec > 60) return -1;
    return h * 3600 + m * 60 + sec;
}

}  // namespace

std::optional<time_point_ns> parse_rfc3339(std::string_view s) {
    // YYYY-MM-DDTHH:MM:SS, checked and converted in one pass (prof-harvest reads one per row).
    if (s.size() < 19) return std::nullopt;
    unsigned bad = 0;
    auto digit = [&](std::size_t i) {
        unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
        bad |= d > 9;
        return static_cast<int>(d);
    };
    auto two = [&](std::size_t i) { return digit(i) * 10 + digit(i + 1); };
    // The date (its first 10 bytes) of the last valid time stamp, and its day number: rows of
    // one run share a few dates, so the date is checked and converted once per date.
    thread_local char last_date[10] = {};
    thread_local std::int64_t last_days = 0;
    thread_local bool have_last = false;
    std::int64_t days;
    if (have_last && std::memcmp(s.data(), last_date, 10) == 0) {
        days = last_days;
    } else {
        int Y = two(0) * 100 + two(2), M = two(5), D = two(8);
        if (bad || s[4] != '-' || s[7] != '-' || M < 1 || M > 12 || D < 1 || D > 31) return std::nullopt;
        static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
        if (D > mdays[M - 1] || (M == 2 && D == 29 && !leap)) return std::nullopt;
        days = days_from_civil(Y, static_cast<unsigned>(M), static_cast<unsigned>(D));
        std::memcpy(last_date, s.data(), 10);
        last_days = days;
        have_last = true;
    }
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return std::nullopt;
    const int time_of_day = seconds_of_day(s.data() + 11);
    if (time_of_day < 0) return std::nullopt;
    std::size_t i = 19;
    std::int64_t frac_ns = 0;
    if (i < s.size() && s[i] == '.') {
        ++i;
        std::size_t start = i;
        std::int64_t scale = 100000000;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            frac_ns += (s[i] - '0') * scale;
            scale /= 10;
            ++i;
        }
        if (i == start) return std::nullopt;
    }
    if (i >= s.size()) return std::nullopt;
    std::int64_t offset_s = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        ++i;
    } else if (s[i] == '+' || s[i] == '-') {
        int oh, om;
        if (!digits(s, i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' || !digits(s, i + 4, 2, om))
            return std::nullopt;
        if (oh > 23 || om > 59) return std::nullopt;
        offset_s = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
        i += 6;
    } else {
        return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    // Nanoseconds since the epoch in 64 bits reach 1677-09-21T00:12:43.145224192Z to
    // 2262-04-11T23:47:16.854775807Z; a stamp outside is refused rather than wrapped
    // (9999-12-31 had read as 1816-03-30). Before the epoch a fraction is taken from the next
    // whole second up, so the first representable instants, whose whole seconds alone do not
    // fit, are kept.
    std::int64_t secs = days * 86400 + time_of_day - offset_s;
    if (secs < 0 && frac_ns > 0) {
        ++secs;
        frac_ns -= 1000000000;
    }
    std::int64_t ns;
    if (__builtin_mul_overflow(secs, std::int64_t{1000000000}, &ns) || __builtin_add_overflow(ns, frac_ns, &ns))
        return std::nullopt;
    return ns;
}

std::optional<time_point_ns> rfc3339_stream::read_whole(std::string_view text) {
    std::optional<time_point_ns> t = parse_rfc3339(text);
    if (!t || text.size() != 20 || text[19] != 'Z') return t;
    // A whole second in UTC: its minute is remembered for the stamps after it (a leap second's
    // 60 is not: the fast form takes 00 to 59 only).
    auto tens = static_cast<unsigned>(text[17] - '0'), ones = static_cast<unsigned>(text[18] - '0');
    if (tens > 5) return t;
    time_point_ns minute;
    if (__builtin_sub_overflow(*t, static_cast<time_point_ns>(tens * 10 + ones) * 1000000000, &minute)) return t;
    std::memcpy(minute_, text.data(), 16);
    minute_tail_ = text[16];
    minute_ns_ = minute;
    have_minute_ = true;
    return t;
}

std::string format_rfc3339(time_point_ns t) {
    std::int64_t secs = t / 1000000000, ns = t % 1000000000;  // floor division, without -t overflowing
    if (ns < 0) {
        ns += 1000000000;
        --secs;
    }
    std::time_t tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    std::int64_t us = ns / 1000;
    if (us != 0) {
        std::string f = fmt::format("{:06}", us);
        while (!f.empty() && f.back() == '0') f.pop_back();
        out += "." + f;
    }
    out += "Z";
    return out;
}

time_point_ns now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<time_point_ns>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string human_bytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    if (u == 0) return fmt::format("{:.0f} B", b);
    return fmt::format("{:.2f} {}", b, units[u]);
}

std::string human_seconds(double s) {
    if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
    if (s < 120) return fmt::format("{:.2f} s", s);
    if (s < 7200) return fmt::format("{:.1f} min", s / 60);
    return fmt::format("{:.1f} h", s / 3600);
}

std::optional<std::uint64_t> parse_size_if_given(std::string_view text, std::string_view flag) {
    if (text.empty()) return std::nullopt;
    return parse_size(text, flag);
}

std::optional<double> parse_duration_if_given(std::string_view text, std::string_view flag) {
    if (text.empty()) return std::nullopt;
    return parse_duration(text, flag);
}

}  // namespace prof
