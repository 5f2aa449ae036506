// The shared rules: usable values, the latest instant, margins, slot sizing.
#include "prof/profile/rules.hpp"

#include "prof/core/errors.hpp"

#include <doctest/doctest.h>
#include <limits>

using namespace prof;

TEST_CASE("a value is usable only when present, finite and above zero") {
    CHECK(usable(std::optional<double>(0.5)));
    CHECK_FALSE(usable(std::optional<double>()));
    CHECK_FALSE(usable(std::optional<double>(0.0)));
    CHECK_FALSE(usable(std::optional<double>(-1.0)));
    CHECK_FALSE(usable(std::optional<double>(std::numeric_limits<double>::quiet_NaN())));
    CHECK_FALSE(usable(std::optional<double>(std::numeric_limits<double>::infinity())));
    CHECK(usable(std::optional<std::uint64_t>(1)));
    CHECK_FALSE(usable(std::optional<std::uint64_t>(0)));
    CHECK_FALSE(usable(std::optional<std::uint64_t>()));
}

TEST_CASE("the latest instant keeps the largest time stamp and ignores absent ones") {
    latest_instant l;
    CHECK_FALSE(l.rfc3339());
    l.add(std::optional<std::int64_t>());
    CHECK_FALSE(l.ns());
    // 1 s and 3 s after the epoch, then 2 s: the latest stays 3 s.
    l.add(std::optional<std::int64_t>(1'000'000'000));
    l.add(std::optional<std::int64_t>(3'000'000'000));
    l.add(std::optional<std::int64_t>(2'000'000'000));
    CHECK(*l.ns() == 3'000'000'000);
    CHECK(*l.rfc3339() == "1970-01-01T00:00:03Z");
    latest_instant other;
    other.add(std::optional<std::int64_t>(4'000'000'000));
    l.add(other);
    CHECK(*l.rfc3339() == "1970-01-01T00:00:04Z");
}

TEST_CASE("margins default to 1.25 and 1.10 and refuse anything below 1 or not finite") {
    margins d;
    CHECK(d.memory() == 1.25);
    CHECK(d.time() == 1.10);
    margins m(1.0, 2.5);
    CHECK(m.memory() == 1.0);
    CHECK(m.time() == 2.5);
    CHECK_THROWS_WITH_AS(margins(0.9, 1.1), "--memory-margin must be a number >= 1.0, got 0.9", usage_error);
    CHECK_THROWS_WITH_AS(margins(1.1, 0.5), "--time-margin must be a number >= 1.0, got 0.5", usage_error);
    CHECK_THROWS_AS(margins(std::numeric_limits<double>::infinity(), 1.1), usage_error);
    CHECK_THROWS_AS(margins(1.1, std::numeric_limits<double>::quiet_NaN()), usage_error);
}

TEST_CASE("margins read from a record name the field and are a data error") {
    CHECK(margins::of_record(1.5, 1.2).memory() == 1.5);
    CHECK_THROWS_WITH_AS(margins::of_record(0.5, 1.1), "field 'memory_margin': must be >= 1.0, found 0.5", field_error);
    CHECK_THROWS_WITH_AS(margins::of_record(1.1, 0.0), "field 'time_margin': must be >= 1.0, found 0", field_error);
}

TEST_CASE("a slot is the snapped cores and the margined peaks, raised to the OOM floors") {
    slot_evidence e;
    e.max_effective_cores = 1.04;          // ceil(1.04 - 0.05) = 1
    e.max_process_rss_bytes = 1000;        // ceil(1000 × 1.25) = 1250
    e.max_peak_gpu_bytes = 100;            // 125
    slot_size s = size_slot(e, 1.25);
    CHECK(*s.cores == 1);
    CHECK(*s.rss_bytes == 1250);
    CHECK(*s.gpu_bytes == 125);
    // A fit killed at 2000 bytes: floor max(ceil(2000 × 1.2), 2000 + 100 MiB) = 104859600.
    e.oom_floor_bytes = oom_floor_bytes(2000);
    CHECK(*e.oom_floor_bytes == 2000 + (100ULL << 20));
    e.gpu_oom_floor_bytes = 50;  // below the margined peak: the peak stays
    s = size_slot(e, 1.25);
    CHECK(*s.rss_bytes == 104859600);
    CHECK(*s.gpu_bytes == 125);
}

TEST_CASE("an axis with no measurement takes the fallback, and a floor still raises it") {
    slot_size fallback{4, 8000, std::nullopt};
    slot_evidence e;
    slot_size s = size_slot(e, 1.25, fallback);
    CHECK(*s.cores == 4);
    CHECK(*s.rss_bytes == 8000);  // a default is not margined
    CHECK_FALSE(s.gpu_bytes);
    e.oom_floor_bytes = 9000;
    CHECK(*size_slot(e, 1.25, fallback).rss_bytes == 9000);
    // With no fallback (a profile), an unmeasured axis stays none unless a floor proves a value.
    CHECK_FALSE(size_slot(slot_evidence{}, 1.25).rss_bytes);
    CHECK(*size_slot(e, 1.25).rss_bytes == 9000);
}
