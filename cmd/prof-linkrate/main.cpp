// prof-linkrate: measured host↔device bandwidth (CUDA runtime, or host memcpy with --device host),
// one link_rate line per (direction, memory, size), cached per link in the ProfileCache.
#include "prof/io/cache.hpp"
#include "prof/core/cli.hpp"
#include "prof/device/cuda.hpp"
#include "prof/device/linkrate_cache.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/measure/host.hpp"
#include "prof/device/linkrate.hpp"
#include "prof/core/units.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace {

struct config {
    std::string device = "0", direction = "both", memory = "both", cache, max_age = "1d";
    std::vector<std::string> bytes{"64MiB"};
    std::uint64_t samples = 20;
    bool refresh = false, list = false;
    std::optional<std::string> host;
};

constexpr std::size_t warmups = 3;
constexpr std::uint64_t max_samples = 100000;

void add_options(CLI::App& app, config& c) {
    prof::cli::configure(app, "prof-linkrate --device 0 --memory pinned --bytes 64MiB 1GiB --cache ~/.cache/prof | jq .bytes_per_second",
                         "reads nothing; writes link_rate lines (one per direction x memory x size)");
    app.add_option("--device", c.device, "CUDA device ordinal, its UUID, or 'host'")->capture_default_str();
    app.add_option("--direction", c.direction, "h2d, d2h or both")->capture_default_str()->check(CLI::IsMember({"h2d", "d2h", "both"}));
    app.add_option("--memory", c.memory, "Host memory: pinned, pageable or both")
        ->capture_default_str()
        ->check(CLI::IsMember({"pinned", "pageable", "both"}));
    app.add_option("--bytes", c.bytes, "Transfer sizes (64MiB, 1GiB, 1.5GB, plain bytes); several allowed")->capture_default_str();
    prof::cli::add_count_option(app, "--samples", c.samples, "Timed copies per rate (the median is the rate)");
    app.add_option("--cache", c.cache, "ProfileCache directory: a fresh cached rate is returned without measuring");
    app.add_option("--max-age", c.max_age, "A cached rate older than this is measured again (250ms, 30s, 5m, 1h, 1d)")
        ->capture_default_str();
    app.add_flag("--refresh", c.refresh, "Measure even when the cache holds a fresh rate");
    app.add_flag("--list", c.list, "Show the rates in --cache with their age, measuring nothing");
    prof::cli::add_host_option(app, c.host);
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Measure the host<->device transfer rate of one link through the CUDA runtime (loaded at run\n"
                 "time; nothing links CUDA): buffers allocated once, warm-up copies discarded, each copy timed\n"
                 "with CUDA events, rate = median of the samples. --device host measures a host-to-host memcpy\n"
                 "the same way. Rates are cached per (device UUID, host, direction, memory, size).",
                 "prof-linkrate"};
    add_options(app, c);
    prof::cli::parse(app, argc, argv);

    // The samples are held in memory and written into the record: a bound keeps a typo (2^32)
    // a usage error rather than an allocation failure.
    if (c.samples < 1 || c.samples > max_samples)
        throw prof::usage_error(fmt::format("--samples must be from 1 to {}", max_samples));
    double max_age = prof::parse_duration(c.max_age, "--max-age");
    std::vector<std::uint64_t> sizes;
    for (const auto& b : c.bytes) {
        std::uint64_t n = prof::parse_size(b, "--bytes");
        if (n == 0) throw prof::usage_error("--bytes must be at least 1 byte");
        sizes.push_back(n);
    }
    std::vector<std::string> directions = c.direction == "both" ? std::vector<std::string>{"h2d", "d2h"} : std::vector<std::string>{c.direction};
    std::vector<std::string> memories = c.memory == "both" ? std::vector<std::string>{"pinned", "pageable"} : std::vector<std::string>{c.memory};
    if (c.list) {
        if (c.cache.empty()) throw prof::usage_error("--list needs --cache DIR");
        if (auto table = prof::list_cached_rates(c.cache, max_age)) std::fputs(table->c_str(), stdout);
        else prof::note(fmt::format("{} holds no cached link rate", c.cache));
        return 0;
    }
    std::string host = prof::host_identity(c.host);
    bool on_host = c.device == "host";

    // Loaded only when something must be measured, or an ordinal must be turned into a UUID.
    std::unique_ptr<prof::cuda_runtime> runtime;
    std::unique_ptr<prof::link_backend> backend;
    auto get_backend = [&]() -> prof::link_backend& {
        if (!backend) {
            if (on_host) {
                backend = prof::host_link_backend();
            } else {
                if (!runtime) runtime = prof::cuda_runtime::load();
                backend = prof::cuda_link_backend(*runtime, c.device);
            }
        }
        return *backend;
    };
    std::string uuid = on_host ? "host" : prof::is_device_ordinal(c.device) ? "" : prof::canonical_device_uuid(c.device);
    std::optional<prof::profile_cache> cache;
    if (!c.cache.empty()) {
        cache.emplace(c.cache);
        if (uuid.empty()) uuid = get_backend().device().uuid;
    }

    for (const auto& dir : directions) {
        for (const auto& mem : memories) {
            for (std::uint64_t size : sizes) {
                std::string what = fmt::format("{} {} {} bytes", dir, mem, size);
                if (cache && !c.refresh) {
                    auto key = prof::link_rate_key(uuid, host, dir, mem, size);
                    if (auto cached = prof::fresh_cached_rate(*cache, key, what, max_age)) {
                        prof::cli::emit_line(prof::write_link_rate(*cached));
                        continue;
                    }
                }
                auto rate = prof::measure_link_rate(get_backend(), host, dir, mem, size, c.samples, warmups);
                std::string line = prof::write_link_rate(rate);
                if (cache) cache->put("link_rate", prof::link_rate_key(rate.device.uuid, host, dir, mem, size), line);
                prof::cli::emit_line(line);
            }
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-linkrate", argc, argv, run); }
