// Fuzz target: RFC 3339 time stamps (a stamp read, formatted and read again is the same instant
// to the microsecond, and formatting is a fixed point), sizes and durations (a usage error or a value; a
// duration is finite and non-negative).
#include "fuzz_util.hpp"

#include "prof/core/units.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string_view text = fuzz::text_of(data, size);
    fuzz::outcome([&] {
        if (auto t = parse_rfc3339(text)) {
            std::string f = format_rfc3339(*t);
            auto back = parse_rfc3339(f);
            // format_rfc3339 keeps whole microseconds (the fraction floored).
            std::int64_t us_floor = *t - (((*t % 1000) + 1000) % 1000);
            if (!back || *back != us_floor)
                fuzz::finding("RFC 3339 round trip changed the instant: " + std::string(text) + " -> " + f);
            if (format_rfc3339(*back) != f) fuzz::finding("format_rfc3339 is not a fixed point: " + f);
        }
    });
    fuzz::outcome([&] { parse_size(text, "--bytes"); });
    fuzz::outcome([&] {
        double d = parse_duration(text, "--max-age");
        if (!std::isfinite(d) || d < 0) fuzz::finding("a duration that is not finite and non-negative: " + std::string(text));
    });
    fuzz::outcome([&] {
        double d = parse_double_flag(text, "--x");
        if (!std::isfinite(d)) fuzz::finding("a number flag that is not finite: " + std::string(text));
    });
    return 0;
}
