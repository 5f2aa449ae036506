// build_profile against SPEC §2's arithmetic, each rule with hand-computed values.
#include "prof/profile.hpp"

#include "prof/errors.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <random>

using namespace prof;

namespace {
measured_fit fit(std::string ts, std::string model, std::string family, bool ok, std::optional<double> wall,
                 std::optional<double> cpu, std::optional<std::uint64_t> rss) {
    measured_fit f;
    f.ts_id = std::move(ts);
    f.model_type = std::move(model);
    f.family = std::move(family);
    f.ok = ok;
    f.wall_s = wall;
    f.cpu_s = cpu;
    f.process_rss_bytes = rss;
    f.intraop_threads = 1;
    if (!ok) f.error = "exit 1: boom";
    return f;
}

compute_profile profile_from_lines(const std::string& jsonl) {
    line_reader in(string_source(jsonl, "t"));
    profile_builder b(1.25, 1.1);
    for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { b.add(read_fit(o)); });
    return b.finish({});
}
}  // namespace

TEST_CASE("an even count of wall times takes the mean of the two middle values as the median") {
    // walls 0.1, 0.4, 0.2, 0.3 → sorted 0.1 0.2 0.3 0.4 → (0.2 + 0.3) / 2 = 0.25
    std::vector<measured_fit> fits = {fit("a", "m", "f", true, 0.1, 0.1, 100), fit("b", "m", "f", true, 0.4, 0.4, 100),
                                      fit("c", "m", "f", true, 0.2, 0.2, 100), fit("d", "m", "f", true, 0.3, 0.3, 100)};
    auto p = build_profile(fits, 1.25, 1.1);
    CHECK(p.models.at("m").median_wall_s.value() == doctest::Approx(0.25).epsilon(1e-15));
    CHECK(p.families.at("f").median_wall_s.value() == doctest::Approx(0.25).epsilon(1e-15));
    // planning_wall_s_per_cell = 0.25 × 1.1 = 0.275
    CHECK(p.families.at("f").planning_wall_s_per_cell.value() == doctest::Approx(0.275));
}

TEST_CASE("a single-threaded fit reading 1.0000005 effective cores snaps to one core, 1.06 to two") {
    CHECK(snap_cores(1.0000005) == 1);
    CHECK(snap_cores(1.05) == 1);   // ceil(1.00) = 1
    CHECK(snap_cores(1.06) == 2);   // ceil(1.01) = 2
    CHECK(snap_cores(0.3) == 1);    // never below one
    CHECK(snap_cores(3.9) == 4);
}

TEST_CASE("byte counts scale up with a relative tolerance so 100 x 1.1 is 110, not 111") {
    CHECK(scale_bytes_up(100, 1.1) == 110);
    CHECK(scale_bytes_up(101, 1.25) == 127);  // 126.25 → 127
    CHECK(scale_bytes_up(1000, 1.0) == 1000);
    CHECK(scale_bytes_up(3, 1.5) == 5);       // 4.5 → 5
}

TEST_CASE("usability is per axis: a record with no RSS still counts for wall time") {
    std::vector<measured_fit> fits = {fit("a", "m", "f", true, 2.0, 1.0, std::nullopt),
                                      fit("b", "m", "f", true, std::nullopt, std::nullopt, 500)};
    auto p = build_profile(fits, 1.25, 1.1);
    const auto& m = p.models.at("m");
    CHECK(m.median_wall_s.value() == 2.0);
    CHECK(m.max_process_rss_bytes.value() == 500);
    CHECK(m.n_fits == 2);
    CHECK(m.n_ok == 2);
    // effective cores need both clocks: only record a → max(1, 1.0/2.0) = 1.0
    CHECK(m.max_effective_cores.value() == 1.0);
}

TEST_CASE("failed fits and non-positive or non-finite values never reach an axis") {
    std::vector<measured_fit> fits = {fit("a", "m", "f", false, 9.0, 9.0, 9999),
                                      fit("b", "m", "f", true, 0.0, -1.0, 0),
                                      fit("c", "m", "f", true, std::numeric_limits<double>::quiet_NaN(), 1.0, 300)};
    auto p = build_profile(fits, 1.25, 1.1);
    const auto& m = p.models.at("m");
    CHECK_FALSE(m.median_wall_s.has_value());
    CHECK(m.median_cpu_s.value() == 1.0);
    CHECK(m.max_process_rss_bytes.value() == 300);
    CHECK(p.n_failed == 1);
    CHECK(p.first_error_by_model.at("m") == "exit 1: boom");
}

TEST_CASE("null is never turned into zero: an unmeasured axis stays null through sizing") {
    std::vector<measured_fit> fits = {fit("a", "m", "f", true, 1.0, std::nullopt, 1000)};
    auto p = build_profile(fits, 1.25, 1.1);
    const auto& f = p.families.at("f");
    CHECK_FALSE(f.max_effective_cores.has_value());
    CHECK_FALSE(f.slot_cores.has_value());  // not 1: the consumer applies its own default
    CHECK_FALSE(f.slot_gpu_bytes.has_value());
    CHECK(f.slot_rss_bytes.value() == 1250);
    std::string json = write_profile(p);
    CHECK(json.find("\"slot_cores\":null") != std::string::npos);
    CHECK(json.find("\"max_peak_gpu_bytes\":null") != std::string::npos);
}

TEST_CASE("a measured zero GPU reading counts as no GPU evidence") {
    auto f = fit("a", "m", "f", true, 1.0, 1.0, 1000);
    f.peak_gpu_bytes = 0;
    auto p = build_profile({f}, 1.25, 1.1);
    CHECK_FALSE(p.models.at("m").max_peak_gpu_bytes.has_value());
    auto g = f;
    g.peak_gpu_bytes = 1000;
    p = build_profile({f, g}, 1.25, 1.1);
    CHECK(p.families.at("f").slot_gpu_bytes.value() == 1250);
}

TEST_CASE("a model with no usable axis is dropped and its first error is the smallest ts_id's") {
    std::vector<measured_fit> fits = {fit("zz", "bad", "f", false, 1.0, 1.0, 1), fit("aa", "bad", "f", false, 1.0, 1.0, 1),
                                      fit("a", "good", "f", true, 1.0, 1.0, 10)};
    fits[0].error = "exit 2: later";
    fits[1].error = "exit 9: first";
    auto p = build_profile(fits, 1.25, 1.1);
    CHECK(p.dropped_models == std::vector<std::string>{"bad"});
    CHECK(p.models.count("bad") == 0);
    CHECK(p.first_error_by_model.at("bad") == "exit 9: first");
    CHECK(p.families.at("f").models == std::vector<std::string>{"good"});
}

TEST_CASE("family roll-up: peaks are max over models, total wall per series sums model medians") {
    std::vector<measured_fit> fits = {fit("a", "m1", "f", true, 1.0, 1.0, 100), fit("b", "m1", "f", true, 3.0, 3.0, 200),
                                      fit("a", "m2", "f", true, 10.0, 25.0, 50)};
    auto p = build_profile(fits, 1.5, 1.2);
    const auto& f = p.families.at("f");
    // m1 median wall = 2.0, m2 = 10.0 → total 12.0; family median over {1, 3, 10} = 3.0
    CHECK(f.total_wall_s_per_series.value() == 12.0);
    CHECK(f.median_wall_s.value() == 3.0);
    CHECK(f.planning_wall_s_per_series.value() == doctest::Approx(14.4));
    CHECK(f.max_process_rss_bytes.value() == 200);
    CHECK(f.slot_rss_bytes.value() == 300);
    CHECK(f.max_effective_cores.value() == 2.5);  // 25 / 10
    CHECK(f.slot_cores.value() == 3);
    CHECK(f.n_fits == 3);
}

TEST_CASE("shuffled input gives identical bytes") {
    std::vector<measured_fit> fits;
    for (int i = 0; i < 40; ++i) {
        auto f = fit("s" + std::to_string(i % 7), "m" + std::to_string(i % 3), i % 3 == 2 ? "g" : "f", i % 11 != 0,
                     0.01 * (i + 1), 0.011 * (i + 1), 1000u + 37u * static_cast<unsigned>(i));
        f.measured_at = "2026-11-29T15:00:0" + std::to_string(i % 10) + "Z";
        if (!f.ok) f.error = "exit " + std::to_string(i);
        fits.push_back(f);
    }
    std::string first = write_profile(build_profile(fits, 1.25, 1.1));
    std::mt19937 rng(42);
    for (int k = 0; k < 5; ++k) {
        std::shuffle(fits.begin(), fits.end(), rng);
        CHECK(write_profile(build_profile(fits, 1.25, 1.1)) == first);
    }
    CHECK(first.find("\"measured_at\":\"2026-11-29T15:00:09Z\"") != std::string::npos);
}

TEST_CASE("a margin below 1.0 is refused as usage (exit 64)") {
    CHECK_THROWS_AS(build_profile({}, 0.9, 1.1), usage_error);
    CHECK_THROWS_AS(build_profile({}, 1.25, 0.5), usage_error);
    try {
        check_margins(0.99, 1.1);
    } catch (const error& e) {
        CHECK(e.code() == exit_code::usage);
        CHECK(std::string(e.what()).find("--memory-margin") != std::string::npos);
    }
}

TEST_CASE("intraop_threads is the common cap, and null when mixed") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    CHECK(build_profile({a, b}, 1.25, 1.1).models.at("m").intraop_threads.value() == 1);
    b.intraop_threads = 4;
    auto p = build_profile({a, b}, 1.25, 1.1);
    CHECK_FALSE(p.models.at("m").intraop_threads.has_value());
    CHECK_FALSE(p.families.at("f").intraop_threads.has_value());
}

TEST_CASE("sample_ts_ids are sorted, unique and cut to 100 while n_sample_series keeps the count") {
    std::vector<measured_fit> fits;
    for (int i = 0; i < 150; ++i) fits.push_back(fit("ts" + std::to_string(1000 + i), "m", "f", true, 1.0, 1.0, 10));
    fits.push_back(fit("ts1000", "m", "f", true, 1.0, 1.0, 10));
    auto p = build_profile(fits, 1.25, 1.1);
    CHECK(p.n_sample_series == 150);
    CHECK(p.sample_ts_ids.size() == 100);
    CHECK(p.sample_ts_ids.front() == "ts1000");
    CHECK(std::is_sorted(p.sample_ts_ids.begin(), p.sample_ts_ids.end()));
}

TEST_CASE("reading a profile back recomputes derived values and ignores tampered ones") {
    auto p = build_profile({fit("a", "m", "f", true, 2.0, 2.0, 1000)}, 1.25, 1.1);
    std::string json = write_profile(p);
    // Tamper with sized and roll-up values: they must be recomputed from the raw model fields.
    auto pos = json.find("\"slot_rss_bytes\":1250");
    REQUIRE(pos != std::string::npos);
    json.replace(pos, 21, "\"slot_rss_bytes\":9999");
    auto back = parse_profile_text(json, "t");
    CHECK(back.families.at("f").slot_rss_bytes.value() == 1250);
    CHECK(write_profile(back) == write_profile(p));
}

TEST_CASE("derived fields of fit records are recomputed, never trusted") {
    // effective_cores given as 8 is ignored: cpu 1 / wall 2 → 1.0
    auto p = profile_from_lines(R"({"kind":"fit","ts_id":"a","model_type":"m","ok":true,"wall_s":2,"cpu_s":1,"effective_cores":8})");
    CHECK(p.models.at("m").max_effective_cores.value() == 1.0);
}

TEST_CASE("effective cores: wall under a millisecond reads 1.0, otherwise max(1, cpu / wall)") {
    CHECK(effective_cores(0.0005, 0.002).value() == 1.0);
    CHECK(effective_cores(1.0, 0.5).value() == 1.0);
    CHECK(effective_cores(1.0, 1.8).value() == 1.8);
    CHECK_FALSE(effective_cores(std::nullopt, 1.0).has_value());
    CHECK_FALSE(effective_cores(0.0, 1.0).has_value());
}

TEST_CASE("fit records with quoted numbers, integers above 2^53 and NaN strings read exactly") {
    auto p = profile_from_lines(
        "{\"kind\":\"fit\",\"ts_id\":\"a\",\"model_type\":\"m\",\"ok\":true,\"wall_s\":\"0.5\",\"cpu_s\":\"NaN\","
        "\"process_rss_bytes\":\"18446744073709551615\"}\n"
        "{\"kind\":\"fit\",\"ts_id\":\"b\",\"model_type\":\"m\",\"ok\":true,\"wall_s\":0.5,\"process_rss_bytes\":9007199254740993}\n");
    const auto& m = p.models.at("m");
    CHECK(m.max_process_rss_bytes.value() == 18446744073709551615ull);
    CHECK_FALSE(m.median_cpu_s.has_value());
    CHECK(m.median_wall_s.value() == 0.5);
}

TEST_CASE("sized values saturate instead of wrapping to 0 on absurd inputs") {
    CHECK(scale_bytes_up(14757395258967641293ull, 1.25) == UINT64_MAX);
    CHECK(scale_bytes_up(18446744073709551615ull, 1.0) == UINT64_MAX);
    CHECK(snap_cores(1e25) == UINT64_MAX);
    CHECK_FALSE(effective_cores(2e-3, 1e306).has_value());
}
