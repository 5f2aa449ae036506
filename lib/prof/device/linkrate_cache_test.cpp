// Naming a device without CUDA, and the link rate cache: fresh, stale, unreadable, listed.
#include "prof/device/linkrate_cache.hpp"

#include "prof/io/units.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <unistd.h>

using namespace prof;
namespace fs = std::filesystem;

namespace {

link_rate rate_measured_at(const std::string& when) {
    link_rate r;
    r.host = "h";
    r.device = {"NVIDIA H200", "GPU-0a1b", "0000:1b:00.0", 0};
    r.direction = "h2d";
    r.memory = "pinned";
    r.transfer_bytes = 1024;
    r.samples = {1.0e9};
    r.bytes_per_second = 1.0e9;
    r.measured_at = when;
    r.method = "cuda-events";
    return r;
}

struct temp_cache {
    fs::path dir = fs::temp_directory_path() / ("prof-linkrate-cache-" + std::to_string(::getpid()));
    temp_cache() { fs::remove_all(dir); }
    ~temp_cache() { fs::remove_all(dir); }
};

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
    temp_cache t;
    profile_cache cache(t.dir.string());
    auto key = link_rate_key("GPU-0a1b", "h", "h2d", "pinned", 1024);
    CHECK_FALSE(fresh_cached_rate(cache, key, "h2d pinned 1024 bytes", 3600));  // nothing cached
    cache.put("link_rate", key, write_link_rate(rate_measured_at(format_rfc3339(now_ns()))));
    auto fresh = fresh_cached_rate(cache, key, "h2d pinned 1024 bytes", 3600);
    REQUIRE(fresh);
    CHECK(fresh->bytes_per_second == 1.0e9);
    cache.put("link_rate", key, write_link_rate(rate_measured_at("2020-01-01T00:00:00Z")));
    CHECK_FALSE(fresh_cached_rate(cache, key, "h2d pinned 1024 bytes", 3600));  // stale
    cache.put("link_rate", key, "{\"kind\":\"link_rate\",\"host\":\"h\"}");
    CHECK_FALSE(fresh_cached_rate(cache, key, "h2d pinned 1024 bytes", 3600));  // unreadable
}

TEST_CASE("listing a cache with no link rate gives nothing, and one rate gives a table") {
    temp_cache t;
    CHECK_FALSE(list_cached_rates(t.dir.string(), 3600));
    profile_cache cache(t.dir.string());
    cache.put("link_rate", link_rate_key("GPU-0a1b", "h", "h2d", "pinned", 1024),
              write_link_rate(rate_measured_at(format_rfc3339(now_ns()))));
    auto table = list_cached_rates(t.dir.string(), 3600);
    REQUIRE(table);
    CHECK(table->find("h2d") != std::string::npos);
}
