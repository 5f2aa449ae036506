// Size and duration flags, RFC 3339 time stamps.
#include "prof/core/units.hpp"

#include "prof/core/errors.hpp"

#include <limits>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("sizes take plain bytes, IEC powers of 1024 and SI powers of 1000") {
    CHECK(parse_size("4096", "--x") == 4096);
    CHECK(parse_size("64MiB", "--x") == 64ull << 20);
    CHECK(parse_size("2GiB", "--x") == 2ull << 30);
    CHECK(parse_size("1.5GB", "--x") == 1500000000ull);
    CHECK(parse_size("64Gi", "--x") == 64ull << 30);
    CHECK_THROWS_AS(parse_size("64G", "--x"), usage_error);  // 64 GiB or 64e9? refused, not guessed
    CHECK_THROWS_AS(parse_size("12 parsecs", "--x"), usage_error);
    CHECK_THROWS_AS(parse_size("", "--x"), usage_error);
}

TEST_CASE("durations take ms, s, m, h and d") {
    CHECK(parse_duration("250ms", "--t") == doctest::Approx(0.25));
    CHECK(parse_duration("30s", "--t") == 30);
    CHECK(parse_duration("5m", "--t") == 300);
    CHECK(parse_duration("1h", "--t") == 3600);
    CHECK(parse_duration("1d", "--t") == 86400);
    CHECK_THROWS_AS(parse_duration("soon", "--t"), usage_error);
}

TEST_CASE("a bad size or duration is refused with the flag, the text and the units the flag takes") {
    auto message = [](auto parse, std::string_view text) {
        try {
            parse(text, "--x");
        } catch (const usage_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    auto size = [](std::string_view t, std::string_view f) { return parse_size(t, f); };
    auto duration = [](std::string_view t, std::string_view f) { return parse_duration(t, f); };
    CHECK(message(size, "lots") == "--x: 'lots' is not a size (e.g. 4096, 64MiB, 1.5GB)");
    CHECK(message(size, "3 parsecs") ==
          "--x: unknown size unit 'parsecs' in '3 parsecs' (use B, KiB/Ki, MiB/Mi, GiB/Gi, TiB/Ti, or kB, MB, GB, TB)");
    CHECK(message(size, "64K") == "--x: '64K' is ambiguous: write KiB (powers of 1024) or kB (powers of 1000)");
    CHECK(message(size, "64k") == "--x: '64k' is ambiguous: write KiB (powers of 1024) or kB (powers of 1000)");
    CHECK(message(size, "1e30") == "--x: unknown size unit 'e30' in '1e30' (use B, KiB/Ki, MiB/Mi, GiB/Gi, TiB/Ti, or kB, MB, GB, TB)");
    // 2^64 bytes = 16 EiB = 16777216 TiB: one past the largest count.
    CHECK(message(size, "16777216TiB") == "--x: '16777216TiB' is too large");
    CHECK(message(duration, "soon") == "--x: 'soon' is not a duration (e.g. 250ms, 30s, 5m, 1h, 1d)");
    CHECK(message(duration, "2 weeks") == "--x: unknown duration unit 'weeks' in '2 weeks' (use ms, s, m, h, d)");
    // 1.5 min = 90 s; 3 us = 3e-6 s; a bare number is seconds.
    CHECK(parse_duration("1.5min", "--t") == 90);
    CHECK(parse_duration("3us", "--t") == doctest::Approx(3e-6));
    CHECK(parse_duration("7", "--t") == 7);
    // 1 KB = 1000 bytes (as kB); 2 TB = 2e12.
    CHECK(parse_size("1KB", "--x") == 1000);
    CHECK(parse_size("2TB", "--x") == 2000000000000ull);
}

TEST_CASE("RFC 3339 time stamps compare as instants, whatever their offset") {
    auto a = parse_rfc3339("2026-11-29T15:00:00Z");
    auto b = parse_rfc3339("2026-11-29T16:00:00+01:00");
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*a == *b);
    CHECK(format_rfc3339(*b) == "2026-11-29T15:00:00Z");
    CHECK(format_rfc3339(*parse_rfc3339("2026-11-29T15:00:00.250Z")) == "2026-11-29T15:00:00.25Z");
    CHECK_FALSE(parse_rfc3339("2026-02-30T00:00:00Z"));
    CHECK_FALSE(parse_rfc3339("yesterday"));
    CHECK_FALSE(parse_rfc3339("2026-11-29T15:00:00"));  // no offset: not an instant
}

TEST_CASE("rfc3339_stream reads each stamp of a stream as parse_rfc3339 does") {
    // Stamps in one minute (converted from their seconds), a minute, an hour and a date that
    // change, a leap second, bad seconds after a remembered minute, other forms between, and
    // the first and last whole seconds that 64-bit nanoseconds hold (and the ones past them).
    const char* stamps[] = {"2026-11-28T00:00:01Z", "2026-11-28T00:00:02Z", "2026-11-28T00:00:59Z",
                            "2026-11-28T00:00:60Z", "2026-11-28T00:00:61Z", "2026-11-28T00:00:6Z",
                            "2026-11-28T00:00:0aZ", "2026-11-28T00:00:03z", "2026-11-28T00:00:03+00:00",
                            "2026-11-28T00:00:04Z", "2026-11-28T00:01:00Z", "2026-11-28T01:01:00Z",
                            "2026-11-29T01:01:07Z", "2026-11-28T01:01:07Z", "2026-11-28T01:01:07.5Z",
                            "2026-11-28T01:01:08Z", "2026-11-28 01:01:09Z", "2026-11-28T01:01:09Z",
                            "2262-04-11T23:47:16Z", "2262-04-11T23:47:17Z", "2262-04-11T23:47:59Z",
                            "2262-04-11T23:47:15Z", "2262-04-11T23:47:17Z", "1677-09-21T00:12:44Z",
                            "1677-09-21T00:12:43Z", "1677-09-21T00:12:59Z", "1677-09-21T00:12:00Z",
                            "1969-12-31T23:59:59Z", "1969-12-31T23:59:01Z", "1970-01-01T00:00:00Z"};
    prof::rfc3339_stream stream;
    int fast_form = 0;
    for (const char* t : stamps) {
        CAPTURE(t);
        auto want = prof::parse_rfc3339(t);
        CHECK(stream(t) == want);
        fast_form += want.has_value();
    }
    // 2262-04-11T23:47:16Z is the last whole second: 9223372036 s; 23:47:17Z would overflow.
    CHECK(prof::parse_rfc3339("2262-04-11T23:47:16Z") == std::int64_t{9223372036} * 1000000000);
    CHECK_FALSE(prof::parse_rfc3339("2262-04-11T23:47:17Z"));
    CHECK(fast_form > 15);
}

TEST_CASE("parse_rfc3339: the per-date cache never accepts a date it did not check") {
    // Ten NUL bytes match a zero-filled cache; the same date twice, then a bad one after it.
    CHECK(!prof::parse_rfc3339(std::string(10, '\0') + "T00:00:00Z"));
    auto a = prof::parse_rfc3339("2026-11-28T00:00:01Z");
    auto b = prof::parse_rfc3339("2026-11-28T00:00:02Z");
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*b - *a == 1000000000);
    CHECK(!prof::parse_rfc3339("2026-11-28T24:00:00Z"));
    CHECK(!prof::parse_rfc3339("2026-02-29T00:00:00Z"));
    CHECK(prof::parse_rfc3339("2024-02-29T00:00:00Z"));
    CHECK(!prof::parse_rfc3339("2024-02-30T00:00:00Z"));
    CHECK(*prof::parse_rfc3339("2026-11-28T00:00:01+01:00") == *a - 3600000000000LL);
}

TEST_CASE("parse_rfc3339: stamps beyond 64-bit nanoseconds are refused, not wrapped; the ends format back") {
    CHECK(!prof::parse_rfc3339("9999-12-31T23:59:59Z"));
    CHECK(!prof::parse_rfc3339("0000-01-01T00:00:00Z"));
    CHECK(!prof::parse_rfc3339("2262-04-11T23:47:17Z"));
    CHECK(!prof::parse_rfc3339("1677-09-21T00:12:43Z"));
    auto hi = prof::parse_rfc3339("2262-04-11T23:47:16Z");
    auto lo = prof::parse_rfc3339("1677-09-21T00:12:44Z");
    REQUIRE(hi);
    REQUIRE(lo);
    CHECK(prof::format_rfc3339(*hi) == "2262-04-11T23:47:16Z");
    CHECK(prof::format_rfc3339(*lo) == "1677-09-21T00:12:44Z");
    CHECK(prof::format_rfc3339(std::numeric_limits<std::int64_t>::min()).rfind("1677-09-21T00:12:43.", 0) == 0);
    // The first and last representable instants themselves (their whole seconds alone overflow).
    CHECK(prof::parse_rfc3339("1677-09-21T00:12:43.145224192Z") == std::numeric_limits<std::int64_t>::min());
    CHECK(!prof::parse_rfc3339("1677-09-21T00:12:43.145224191Z"));
    CHECK(prof::parse_rfc3339("2262-04-11T23:47:16.854775807Z") == std::numeric_limits<std::int64_t>::max());
    CHECK(!prof::parse_rfc3339("2262-04-11T23:47:16.854775808Z"));
}
