// Naming a device without CUDA, and the link rate cache: fresh, stale, unreadable, listed.
#include "prof/device/linkrate_cache.hpp"

#include "prof/core/units.hpp"
#include "prof/core/test_support.hpp"
#include "prof/device/test_support.hpp"

#include <doctest/doctest.h>

using namespace prof;

namespace {

// The shared sample rate, measured at `when`; its cache key and what a message calls it.
link_rate rate_measured_at(const std::string& when) {
    link_rate r = test::sample_link_rate();
    r.measured_at = when;
    return r;
}
const link_rate sample = test::sample_link_rate();
const std::vector<std::string> sample_key =
    link_rate_key(sample.device.uuid, sample.host, sample.direction, sample.memory, sample.transfer_bytes);
constexpr const char* sample_what = "h2d pinned 67108864 bytes";

}  // namespace

TEST_CASE("a device ordinal is digits only, and a UUID is spelled as the driver reports it") {
    CHECK(is_device_ordinal("0"));
    CHECK(is_device_ordinal("12"));
    CHECK_FALSE(is_device_ordinal(""));
    CHECK_FALSE(is_device_ordinal("GPU-0a1b"));
    CHECK(canonical_device_uuid("GPU-0A1B") == "GPU-0a1b");
    CHECK(canonical_device_uuid("gpu-0a1b") == "GPU-0a1b");
    CHECK(canonical_device_uuid("0A1B") == "GPU-0a1b");
}

TEST_CASE("a cached rate younger than max-age is used, an older or unreadable one is not") {
    test::temp_dir t("linkrate-cache");
    profile_cache cache(t.path);
    CHECK_FALSE(fresh_cached_rate(cache, sample_key, sample_what, 3600));  // nothing cached
    cache.put("link_rate", sample_key, write_link_rate(rate_measured_at(format_rfc3339(now_ns()))));
    auto fresh = fresh_cached_rate(cache, sample_key, sample_what, 3600);
    REQUIRE(fresh);
    CHECK(fresh->bytes_per_second == 5.1e10);
    cache.put("link_rate", sample_key, write_link_rate(rate_measured_at("2020-01-01T00:00:00Z")));
    CHECK_FALSE(fresh_cached_rate(cache, sample_key, sample_what, 3600));  // stale
    cache.put("link_rate", sample_key, "{\"kind\":\"link_rate\",\"host\":\"h\"}");
    CHECK_FALSE(fresh_cached_rate(cache, sample_key, sample_what, 3600));  // unreadable
}

TEST_CASE("listing a cache with no link rate gives nothing, and one rate gives a table") {
    test::temp_dir t("linkrate-cache");
    CHECK_FALSE(list_cached_rates(t.path, 3600));
    profile_cache cache(t.path);
    cache.put("link_rate", sample_key, write_link_rate(rate_measured_at(format_rfc3339(now_ns()))));
    auto table = list_cached_rates(t.path, 3600);
    REQUIRE(table);
    CHECK(table->find("h2d") != std::string::npos);
}
