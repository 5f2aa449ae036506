// build_profile against the profile's arithmetic (prof-aggregate(1)), each rule with hand-computed values.
#include "prof/profile/profile.hpp"

#include "prof/core/errors.hpp"
#include "prof/profile/test_support.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <random>

using namespace prof;

namespace {
// A fit under a thread cap of 1; a failed one says "exit 1: boom".
measured_fit fit(std::string ts, std::string model, std::string family, bool ok, std::optional<double> wall,
                 std::optional<double> cpu, std::optional<std::uint64_t> rss) {
    return test::fit_of(std::move(ts), std::move(model), std::move(family),
                        {.wall_s = wall, .cpu_s = cpu, .process_rss_bytes = rss, .intraop_threads = 1},
                        ok ? std::nullopt : std::optional<std::string>("exit 1: boom"));
}

compute_profile profile_from_lines(const std::string& jsonl) {
    line_reader in(string_source(jsonl, "t"));
    profile_builder b({1.25, 1.1});
    for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { b.add(read_fit(o)); });
    return b.finish({});
}
}  // namespace

TEST_CASE("an even count of wall times takes the mean of the two middle values as the median") {
    // walls 0.1, 0.4, 0.2, 0.3 → sorted 0.1 0.2 0.3 0.4 → (0.2 + 0.3) / 2 = 0.25
    std::vector<measured_fit> fits = {fit("a", "m", "f", true, 0.1, 0.1, 100), fit("b", "m", "f", true, 0.4, 0.4, 100),
                                      fit("c", "m", "f", true, 0.2, 0.2, 100), fit("d", "m", "f", true, 0.3, 0.3, 100)};
    auto p = build_profile(fits, {1.25, 1.1});
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
    auto p = build_profile(fits, {1.25, 1.1});
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
    auto p = build_profile(fits, {1.25, 1.1});
    const auto& m = p.models.at("m");
    CHECK_FALSE(m.median_wall_s.has_value());
    CHECK(m.median_cpu_s.value() == 1.0);
    CHECK(m.max_process_rss_bytes.value() == 300);
    CHECK(p.n_failed == 1);
    CHECK(p.first_error_by_model.at("m") == "exit 1: boom");
}

TEST_CASE("null is never turned into zero: an unmeasured axis stays null through sizing") {
    std::vector<measured_fit> fits = {fit("a", "m", "f", true, 1.0, std::nullopt, 1000)};
    auto p = build_profile(fits, {1.25, 1.1});
    const auto& f = p.families.at("f");
    CHECK_FALSE(f.max_effective_cores.has_value());
    CHECK_FALSE(f.slot_cores.has_value());  // not 1: the consumer applies its own default
    CHECK_FALSE(f.slot_gpu_bytes.has_value());
    CHECK(f.slot_rss_bytes.value() == 1250);
    std::string json = write_profile(p);
    CHECK(json.find("\"slot_cores\":null") != std::string::npos);
    CHECK(json.find("\"max_peak_gpu_bytes\":null") != std::string::npos);
}

// prof-records(5): peak_gpu_bytes null = not measured, 0 = measured none. 0 stays 0 through
// the profile and its JSON, sized to slot_gpu_bytes 0 (ceil(0 × 1.25)); a larger reading wins.
TEST_CASE("a measured zero GPU reading stays measured none, not unmeasured") {
    auto f = fit("a", "m", "f", true, 1.0, 1.0, 1000);
    f.peak_gpu_bytes = 0;
    auto p = build_profile({f}, {1.25, 1.1});
    CHECK(p.models.at("m").max_peak_gpu_bytes == 0u);
    CHECK(p.families.at("f").slot_gpu_bytes == 0u);
    auto back = parse_profile_text(write_profile(p), "t");
    CHECK(back.models.at("m").max_peak_gpu_bytes == 0u);
    auto g = f;
    g.peak_gpu_bytes = 1000;
    p = build_profile({f, g}, {1.25, 1.1});
    CHECK(p.families.at("f").slot_gpu_bytes.value() == 1250);
}

TEST_CASE("a model with no usable axis is dropped and its first error is the smallest ts_id's") {
    std::vector<measured_fit> fits = {fit("zz", "bad", "f", false, 1.0, 1.0, 1), fit("aa", "bad", "f", false, 1.0, 1.0, 1),
                                      fit("a", "good", "f", true, 1.0, 1.0, 10)};
    fits[0].error = "exit 2: later";
    fits[1].error = "exit 9: first";
    auto p = build_profile(fits, {1.25, 1.1});
    CHECK(p.dropped_models == std::vector<std::string>{"bad"});
    CHECK(p.models.count("bad") == 0);
    CHECK(p.first_error_by_model.at("bad") == "exit 9: first");
    CHECK(p.families.at("f").models == std::vector<std::string>{"good"});
}

TEST_CASE("family roll-up: peaks are max over models, total wall per series sums model medians") {
    std::vector<measured_fit> fits = {fit("a", "m1", "f", true, 1.0, 1.0, 100), fit("b", "m1", "f", true, 3.0, 3.0, 200),
                                      fit("a", "m2", "f", true, 10.0, 25.0, 50)};
    auto p = build_profile(fits, {1.5, 1.2});
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
    std::string first = write_profile(build_profile(fits, {1.25, 1.1}));
    std::mt19937 rng(42);
    for (int k = 0; k < 5; ++k) {
        std::shuffle(fits.begin(), fits.end(), rng);
        CHECK(write_profile(build_profile(fits, {1.25, 1.1})) == first);
    }
    CHECK(first.find("\"measured_at\":\"2026-11-29T15:00:09Z\"") != std::string::npos);
}

TEST_CASE("a margin below 1.0 is refused as usage (exit 64)") {
    CHECK_THROWS_AS(build_profile({}, {0.9, 1.1}), usage_error);
    CHECK_THROWS_AS(build_profile({}, {1.25, 0.5}), usage_error);
    try {
        (void)margins(0.99, 1.1);
        FAIL("margins(0.99, 1.1) did not throw");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::usage);
        CHECK(std::string(e.what()).find("--memory-margin") != std::string::npos);
    }
}

TEST_CASE("intraop_threads is the common cap; fits under several caps are counted and sized under the largest") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    auto c = fit("c", "m", "f", true, 1.0, 1.0, 10);
    auto one = build_profile({a, b, c}, {1.25, 1.1});
    CHECK(one.models.at("m").intraop_threads.value() == 1);
    CHECK(one.models.at("m").thread_caps.empty());
    CHECK(one.provenance.warnings.empty());
    // caps 1, 2, 1: two fits under 1, one under 2; sized under the largest, 2.
    b.intraop_threads = 2;
    auto p = build_profile({a, b, c}, {1.25, 1.1});
    const model_cost& m = p.models.at("m");
    CHECK(m.thread_caps == std::vector<thread_cap_count>{{1, 2}, {2, 1}});
    CHECK(m.intraop_threads == std::optional<std::uint64_t>(2));
    CHECK(p.families.at("f").intraop_threads == std::optional<std::uint64_t>(2));
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0] ==
          "model 'm': its fits ran under different thread caps: 1 (2 fits), 2 (1 fit); it is sized under the largest, "
          "2, which the renderings set: measure it under one cap (prof-measure --threads) to size it from readings "
          "taken as production runs");
    // No cap counts as the largest: the model is sized uncapped, and no cap is set.
    c.intraop_threads.reset();
    auto q = build_profile({a, b, c}, {1.25, 1.1});
    CHECK(q.models.at("m").thread_caps == std::vector<thread_cap_count>{{std::nullopt, 1}, {1, 1}, {2, 1}});
    CHECK_FALSE(q.models.at("m").intraop_threads.has_value());
    CHECK_FALSE(q.families.at("f").intraop_threads.has_value());
    REQUIRE(q.provenance.warnings.size() == 1);
    CHECK(q.provenance.warnings[0].find("none (1 fit), 1 (1 fit), 2 (1 fit); it is sized under the largest, no cap, "
                                        "so the renderings set no thread-pool variables") != std::string::npos);
}

TEST_CASE("the thread caps survive a write and a read; the sized cap is recomputed, never trusted") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    b.intraop_threads = 4;
    const std::string text = write_profile(build_profile({a, b}, {1.25, 1.1}));
    REQUIRE(text.find("\"thread_caps\":[{\"intraop_threads\":1,\"n_fits\":1},{\"intraop_threads\":4,\"n_fits\":1}]") !=
            std::string::npos);
    auto p = parse_profile_text(text, "p.json");
    CHECK(p.models.at("m").thread_caps == std::vector<thread_cap_count>{{1, 1}, {4, 1}});
    CHECK(p.models.at("m").intraop_threads == std::optional<std::uint64_t>(4));
    std::string lying = text;
    lying.replace(lying.find("\"intraop_threads\":4,\"thread_caps\""), 19, "\"intraop_threads\":1");
    CHECK(parse_profile_text(lying, "p.json").models.at("m").intraop_threads == std::optional<std::uint64_t>(4));
    // One cap is written as no list at all.
    CHECK(write_profile(build_profile({a}, {1.25, 1.1})).find("thread_caps") == std::string::npos);
    std::string twice = text;
    twice.replace(twice.find("{\"intraop_threads\":4,"), 21, "{\"intraop_threads\":1,");
    CHECK_THROWS_WITH_AS(parse_profile_text(twice, "p.json"), doctest::Contains("thread cap 1 twice"), input_error);
}

TEST_CASE("merged builders count each thread cap's fits as one builder would") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    auto c = fit("c", "m", "f", true, 1.0, 1.0, 10);
    auto failed = fit("d", "m", "f", false, std::nullopt, std::nullopt, std::nullopt);
    b.intraop_threads = c.intraop_threads = 2;
    failed.intraop_threads = 8;
    profile_builder x({1.25, 1.1}), y({1.25, 1.1});
    x.add(failed);  // x has no fit that ran: its failed vote is dropped when merged with y's
    x.add(a);
    y.add(b);
    y.add(c);
    x.merge(std::move(y));
    CHECK(x.finish({}).models.at("m").thread_caps == std::vector<thread_cap_count>{{1, 1}, {2, 2}});
    profile_builder f1({1.25, 1.1}), f2({1.25, 1.1});
    f1.add(failed);
    f2.add(b);
    f1.merge(std::move(f2));
    CHECK(f1.finish({}).models.at("m").thread_caps.empty());  // the failed fit's 8 does not vote
}

TEST_CASE("a failed fit does not vote on the thread cap: a null or another cap there erases nothing") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    auto failed = fit("c", "m", "f", false, std::nullopt, std::nullopt, std::nullopt);
    failed.intraop_threads.reset();  // a warehouse row whose columns were never filled
    auto p = build_profile({a, failed, b}, {1.25, 1.1});
    CHECK(p.models.at("m").intraop_threads == std::optional<std::uint64_t>(1));
    CHECK(p.families.at("f").intraop_threads == std::optional<std::uint64_t>(1));
    failed.intraop_threads = 8;
    CHECK(build_profile({failed, a, b}, {1.25, 1.1}).models.at("m").intraop_threads == std::optional<std::uint64_t>(1));
    // A model whose every fit failed (killed for memory) keeps the cap its failures ran under.
    auto oom = fit("d", "n", "f", false, std::nullopt, std::nullopt, std::nullopt);
    oom.error = "OOMKilled";
    oom.memory_limit_bytes = 1u << 30;
    CHECK(build_profile({a, oom}, {1.25, 1.1}).models.at("n").intraop_threads == std::optional<std::uint64_t>(1));
}

TEST_CASE("n_sample_series is checked against sample_ts_ids on read, never trusted") {
    auto p = build_profile({fit("a", "m", "f", true, 1.0, 1.0, 10), fit("b", "m", "f", true, 1.0, 1.0, 10)}, {1.25, 1.1});
    const std::string text = write_profile(p);
    REQUIRE(text.find("\"n_sample_series\":2,") != std::string::npos);
    CHECK(parse_profile_text(text, "p.json").n_sample_series == 2);
    auto with = [&](const std::string& n) {
        std::string t = text;
        t.replace(t.find("\"n_sample_series\":2,"), 20, "\"n_sample_series\":" + n + ",");
        return t;
    };
    for (const char* bad : {"3", "1", "0", "1000"}) {
        CAPTURE(bad);
        const std::string why = "p.json:1: field 'n_sample_series': " + std::string(bad) +
                                " does not agree with sample_ts_ids, which holds 2 distinct id(s)";
        CHECK_THROWS_WITH_AS(parse_profile_text(with(bad), "p.json"), doctest::Contains(why.c_str()), input_error);
    }
    // 150 series keep 100 ids: any count of at least 100 agrees with them.
    std::vector<measured_fit> fits;
    for (int i = 0; i < 150; ++i) fits.push_back(fit("ts" + std::to_string(1000 + i), "m", "f", true, 1.0, 1.0, 10));
    std::string many = write_profile(build_profile(fits, {1.25, 1.1}));
    CHECK(parse_profile_text(many, "p.json").n_sample_series == 150);
    auto at = many.find("\"n_sample_series\":150,");
    REQUIRE(at != std::string::npos);
    CHECK(parse_profile_text(std::string(many).replace(at, 22, "\"n_sample_series\":100,"), "p").n_sample_series == 100);
    CHECK_THROWS_AS(parse_profile_text(std::string(many).replace(at, 22, "\"n_sample_series\":99,"), "p"), input_error);
}

TEST_CASE("sample_ts_ids are sorted, unique and cut to 100 while n_sample_series keeps the count") {
    std::vector<measured_fit> fits;
    for (int i = 0; i < 150; ++i) fits.push_back(fit("ts" + std::to_string(1000 + i), "m", "f", true, 1.0, 1.0, 10));
    fits.push_back(fit("ts1000", "m", "f", true, 1.0, 1.0, 10));
    auto p = build_profile(fits, {1.25, 1.1});
    CHECK(p.n_sample_series == 150);
    CHECK(p.sample_ts_ids.size() == 100);
    CHECK(p.sample_ts_ids.front() == "ts1000");
    CHECK(std::is_sorted(p.sample_ts_ids.begin(), p.sample_ts_ids.end()));
}

TEST_CASE("reading a profile back recomputes derived values and ignores tampered ones") {
    auto p = build_profile({fit("a", "m", "f", true, 2.0, 2.0, 1000)}, {1.25, 1.1});
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

TEST_CASE("max_n_obs counts ok fits only, and a dropped model keeps its declared family") {
    auto a = fit("long", "m", "f", false, std::nullopt, std::nullopt, std::nullopt);
    a.n_obs = 5000;
    auto b = fit("short", "m", "f", true, 1.0, 1.0, 10);
    b.n_obs = 50;
    auto c = fit("x", "broken", "statistical", false, std::nullopt, std::nullopt, std::nullopt);
    auto p = build_profile({a, b, c}, {1.25, 1.1});
    CHECK(p.models.at("m").max_n_obs == 50u);  // the failed fit on 5000 observations is no evidence
    CHECK(p.dropped_models == std::vector<std::string>{"broken"});
    CHECK(p.dropped_model_families.at("broken") == "statistical");
    // ... and it survives a write and a read.
    auto back = parse_profile_text(write_profile(p), "t");
    CHECK(back.dropped_model_families.at("broken") == "statistical");
}

TEST_CASE("a model's curve comes from its ok fits' lengths and survives a write and a read") {
    std::vector<measured_fit> fits;
    for (auto [ts, n, w] : std::vector<std::tuple<std::string, std::uint64_t, double>>{
             {"a", 12, 0.01}, {"b", 12, 0.03}, {"c", 12, 0.02}, {"d", 200, 0.5}}) {
        auto f = fit(ts, "ets", "statistical", true, w, w, 10);
        f.n_obs = n;
        fits.push_back(f);
    }
    auto nolen = fit("e", "ets", "statistical", true, 9.0, 9.0, 10);  // no n_obs: not on the curve
    fits.push_back(nolen);
    auto p = build_profile(fits, {1.25, 1.1});
    const auto& c = p.models.at("ets").wall_curve;
    REQUIRE(c.size() == 2);
    CHECK(c[0].n_obs == 12);
    CHECK(c[0].n_fits == 3);
    CHECK(c[0].wall_s == 0.02);
    CHECK(c[1].n_obs == 200);
    CHECK(c[1].cpu_s == 0.5);
    auto back = parse_profile_text(write_profile(p), "t");
    CHECK(back.models.at("ets").wall_curve.size() == 2);
    CHECK(write_profile(back) == write_profile(p));
}

TEST_CASE("a curve out of order is refused when a profile is read") {
    auto p = build_profile({fit("a", "m", "f", true, 1.0, 1.0, 10)}, {1.25, 1.1});
    std::string text = write_profile(p);
    auto at = text.find("\"wall_curve\":[]");
    REQUIRE(at != std::string::npos);
    text.replace(at, 15,
                 R"("wall_curve":[{"n_obs":20,"n_obs_min":20,"n_obs_max":20,"n_fits":1,"wall_s":1,"cpu_s":null},)"
                 R"({"n_obs":10,"n_obs_min":10,"n_obs_max":10,"n_fits":1,"wall_s":1,"cpu_s":null}])");
    CHECK_THROWS_WITH(parse_profile_text(text, "p.json"),
                      "p.json:1: field 'models.m.wall_curve[1]': points must be in increasing, disjoint n_obs ranges");
}

TEST_CASE("memory kills are read from oom_killed, SIGKILL under a limit, or the error text") {
    fit_evidence f;
    f.ok = false;
    f.oom_killed = true;
    CHECK(fit_was_oom_killed(f));
    f.oom_killed = false;
    f.memory_limit_bytes = 1;
    f.signal = "SIGKILL";
    CHECK(!fit_was_oom_killed(f));  // prof-measure said no: a timeout kill, say
    f.oom_killed.reset();
    CHECK(fit_was_oom_killed(f));   // SIGKILL under a known limit
    f.signal.reset();
    f.error = "exit 137";
    CHECK(fit_was_oom_killed(f));
    f.memory_limit_bytes.reset();
    CHECK(!fit_was_oom_killed(f));  // a bare 137 with no limit may be anything
    f.error = "container OOMKilled";
    CHECK(fit_was_oom_killed(f));
    f.error = "MemoryError: Unable to allocate 2.00 GiB";
    CHECK(fit_was_oom_killed(f));
    f.ok = true;
    CHECK(!fit_was_oom_killed(f));
}

TEST_CASE("an OOM kill at a limit raises the family's slot to the OOM bump above that limit") {
    // ok fits peak at 100 MiB (x1.25 = 125 MiB); one fit was killed at a 512 MiB limit:
    // max(512 × 1.2 = 614.4 MiB → 644245095 bytes, 512 + 100 = 612 MiB) = 644245095 bytes.
    constexpr std::uint64_t MiB = 1ULL << 20;
    auto ok = fit("a", "big", "f", true, 1.0, 1.0, 100 * MiB);
    auto killed = fit("b", "big", "f", false, std::nullopt, std::nullopt, std::nullopt);
    killed.error = "signal SIGKILL";
    killed.signal = "SIGKILL";
    killed.memory_limit_bytes = 512 * MiB;
    killed.oom_killed = true;
    auto p = build_profile({ok, killed}, {1.25, 1.1});
    CHECK(p.models.at("big").n_oom_killed == 1);
    CHECK(p.models.at("big").oom_limit_bytes == 512 * MiB);
    CHECK(oom_floor_bytes(512 * MiB) == 644245095u);  // ceil(536870912 × 1.2)
    CHECK(oom_floor_bytes(100) == 100 + 100 * MiB);    // small limits take the +100 MiB
    CHECK(p.families.at("f").oom_floor_bytes == 644245095u);
    CHECK(p.families.at("f").slot_rss_bytes == 644245095u);
    // A model killed every time keeps the bound as its only evidence: not dropped.
    auto q = build_profile({killed}, {1.25, 1.1});
    CHECK(q.dropped_models.empty());
    CHECK(q.models.at("big").n_ok == 0);
    CHECK(q.families.at("f").slot_rss_bytes == 644245095u);
    // A kill at no known limit bounds nothing and says so.
    auto nolimit = killed;
    nolimit.memory_limit_bytes.reset();
    nolimit.signal.reset();
    nolimit.oom_killed.reset();
    nolimit.error = "MemoryError";
    auto r = build_profile({ok, nolimit}, {1.25, 1.1});
    CHECK(!r.models.at("big").oom_limit_bytes);
    REQUIRE(r.provenance.warnings.size() == 1);
    CHECK(r.provenance.warnings[0].find("model 'big': 1 fit(s) killed for memory under no known limit") == 0);
}

TEST_CASE("a device OOM is GPU evidence: counted apart, never raising host memory") {
    // ok fit: RSS 1e9 → slot_rss ceil(1e9 × 1.25) = 1250000000; peak GPU 2e9 → 2500000000.
    // The failed fit's CUDA error also holds "out of memory" and "OutOfMemoryError", and it ran
    // under a 4 GiB host limit: before, it was a host kill and slot_rss rose to
    // ceil(4294967296 × 1.2) = 5153960756.
    auto ok = fit("a", "nn", "deep", true, 10.0, 10.0, 1000000000);
    ok.peak_gpu_bytes = 2000000000;
    auto cuda = fit("b", "nn", "deep", false, std::nullopt, std::nullopt, std::nullopt);
    cuda.error = "exit 1: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
    cuda.memory_limit_bytes = 4294967296;
    fit_evidence e;
    e.ok = false;
    e.error = *cuda.error;
    e.memory_limit_bytes = 4294967296;
    CHECK(fit_was_device_oom(e));
    CHECK(!fit_was_oom_killed(e));
    for (std::string_view t : {"cudaErrorMemoryAllocation", "CUBLAS_STATUS_ALLOC_FAILED",
                               "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
                               "allocate 2147483648 bytes."}) {
        e.error = t;
        CHECK(fit_was_device_oom(e));
        CHECK(!fit_was_oom_killed(e));
    }
    e.error = "MemoryError";
    CHECK(!fit_was_device_oom(e));  // host texts stay host kills
    CHECK(fit_was_oom_killed(e));
    e.error = "CUDA out of memory";
    e.oom_killed = true;  // the kernel said it killed the process for its limit: a host kill
    CHECK(fit_was_oom_killed(e));

    auto p = build_profile({ok, cuda}, {1.25, 1.1});
    const auto& m = p.models.at("nn");
    CHECK(m.n_oom_killed == 0);
    CHECK(!m.oom_limit_bytes);
    CHECK(m.n_gpu_oom == 1);
    CHECK(!m.gpu_oom_peak_bytes);
    CHECK(p.families.at("deep").slot_rss_bytes == 1250000000u);
    CHECK(p.families.at("deep").slot_gpu_bytes == 2500000000u);
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0].find("model 'nn': 1 fit(s) ran out of GPU memory") == 0);
    CHECK(p.provenance.warnings[0].find("slot_gpu_bytes may be too small") != std::string::npos);
    CHECK(p.provenance.warnings[0].find("no lower bound follows") != std::string::npos);

    // With the peak it reached recorded (6e9), the model needs more than that: the OOM bump
    // max(ceil(6e9 × 1.2) = 7200000000, 6e9 + 104857600) = 7200000000 over the ok fits' 2.5e9.
    cuda.peak_gpu_bytes = 6000000000;
    auto q = build_profile({ok, cuda}, {1.25, 1.1});
    CHECK(q.models.at("nn").gpu_oom_peak_bytes == 6000000000u);
    CHECK(q.models.at("nn").max_peak_gpu_bytes == 2000000000u);  // a failed fit's peak sizes nothing else
    CHECK(q.families.at("deep").gpu_oom_floor_bytes == 7200000000u);
    CHECK(q.families.at("deep").slot_gpu_bytes == 7200000000u);
    CHECK(q.families.at("deep").slot_rss_bytes == 1250000000u);
    CHECK(q.provenance.warnings[0].find("slot_gpu_bytes is at least 7200000000") != std::string::npos);
    // The record round-trips: read back, the derived values are recomputed the same.
    auto r = parse_profile_text(write_profile(q), "q");
    CHECK(r.models.at("nn").n_gpu_oom == 1);
    CHECK(r.families.at("deep").slot_gpu_bytes == 7200000000u);
    CHECK(format_profile_table(q).find("out of GPU memory: 1 fit(s) of nn") != std::string::npos);
}

TEST_CASE("a model's memory curve is the peak process RSS per point and survives a write and a read") {
    std::vector<measured_fit> fits;
    for (auto [ts, n, rss] : std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>>{
             {"a", 12, 100}, {"b", 12, 300}, {"c", 200, 250}}) {
        auto f = fit(ts, "ets", "statistical", true, 0.1, 0.1, rss);
        f.n_obs = n;
        fits.push_back(f);
    }
    fits.push_back(fit("e", "ets", "statistical", true, 0.1, 0.1, 9000));  // no n_obs: off the curve
    auto p = build_profile(fits, {1.25, 1.1});
    const auto& c = p.models.at("ets").wall_curve;
    REQUIRE(c.size() == 2);
    CHECK(c[0].max_process_rss_bytes == 300u);  // max(100, 300), not their median
    CHECK(c[1].max_process_rss_bytes == 250u);
    CHECK(p.models.at("ets").max_process_rss_bytes == 9000u);  // the model's maximum keeps every fit
    const std::string text = write_profile(p);
    CHECK(text.find(R"("cpu_s":0.1,"max_process_rss_bytes":300})") != std::string::npos);
    auto back = parse_profile_text(text, "t");
    CHECK(back.models.at("ets").wall_curve[0].max_process_rss_bytes == 300u);
    CHECK(write_profile(back) == text);
}

TEST_CASE("warm-up runs are left out of the times, peaks and curve, and their cold extra wall is the cold start") {
    // Sample fits of m at n_obs 100 (wall 1.0) and 300 (wall 3.0): median 2.0, curve through both.
    // Cold warm-ups at n 100 (wall 3.5) and 300 (wall 3.2), a warm one at 100 (wall 9, not cold):
    // extras 3.5 - 1.0 = 2.5 and max(0, 3.2 - 3.0) = 0.2, median (2.5 + 0.2) / 2 = 1.35.
    const std::string lines =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"cpu_s":1.0,"process_rss_bytes":1000,"phase":"sample"}
{"ts_id":"b","model_type":"m","n_obs":300,"ok":true,"wall_s":3.0,"cpu_s":3.0,"process_rss_bytes":3000}
{"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":3.5,"cpu_s":3.5,"process_rss_bytes":90000,"phase":"warmup","cold":true}
{"ts_id":"b","model_type":"m","n_obs":300,"ok":true,"wall_s":3.2,"cpu_s":3.2,"process_rss_bytes":90000,"phase":"warmup","cold":true}
{"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":9.0,"cpu_s":9.0,"process_rss_bytes":90000,"phase":"warmup","cold":false}
)";
    auto p = profile_from_lines(lines);
    const model_cost& m = p.models.at("m");
    CHECK(p.n_measurements == 2);
    CHECK(m.n_fits == 2);
    CHECK(m.n_warmup == 3);
    CHECK(m.median_wall_s.value() == doctest::Approx(2.0));
    CHECK(m.max_process_rss_bytes.value() == 3000);
    REQUIRE(m.wall_curve.size() == 2);
    CHECK(m.cold_start_s.value() == doctest::Approx(1.35));
    CHECK(m.memory_basis.value() == "per-cell");
    CHECK_FALSE(m.max_replay_rss_bytes.has_value());
    // The fields survive a write and a read back.
    auto back = parse_profile_text(write_profile(p), "t");
    CHECK(back.models.at("m").cold_start_s.value() == doctest::Approx(1.35));
    CHECK(back.models.at("m").n_warmup == 3);
}

TEST_CASE("a superseded attempt changes no time value of its model, and its memory counts") {
    // Counted fits of m at n_obs 100 (wall 1.0, cpu 1.0, 1000 B; its second attempt) and 300
    // (wall 3.0, cpu 3.0, 3000 B). The superseded first attempt at 100 read the busy host: wall
    // 4.0, cpu 8.0 (2 effective cores), pressure 0.5, and peaked at 5000 B, 400 B marginal and
    // 700 B of GPU. Times: exactly those of the two counted fits (median wall 2.0, median cpu
    // 2.0, 1.0 effective cores, the same curve and readings); memory: 5000 B, also on the curve
    // at n 100; n_fits 2, and no contended fit (the busy reading is not counted).
    const std::string counted =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"cpu_s":1.0,"process_rss_bytes":1000,"cpu_pressure":0.02,"attempts":2}
{"ts_id":"b","model_type":"m","n_obs":300,"ok":true,"wall_s":3.0,"cpu_s":3.0,"process_rss_bytes":3000}
)";
    const std::string superseded =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":4.0,"cpu_s":8.0,"process_rss_bytes":5000,"peak_rss_bytes":400,"peak_gpu_bytes":700,"cpu_pressure":0.5,"phase":"superseded"}
)";
    auto alone = profile_from_lines(counted);
    auto both = profile_from_lines(superseded + counted);
    const model_cost& a = alone.models.at("m");
    const model_cost& m = both.models.at("m");
    CHECK(both.n_measurements == 2);
    CHECK(m.n_fits == 2);
    CHECK(m.n_ok == 2);
    CHECK(m.median_wall_s.value() == doctest::Approx(2.0));
    CHECK(m.median_wall_s == a.median_wall_s);
    CHECK(m.median_cpu_s.value() == doctest::Approx(2.0));
    CHECK(m.median_cpu_s == a.median_cpu_s);
    CHECK(m.max_effective_cores.value() == doctest::Approx(1.0));
    CHECK(m.readings == a.readings);
    REQUIRE(m.wall_curve.size() == 2);
    REQUIRE(a.wall_curve.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(m.wall_curve[i].wall_s == a.wall_curve[i].wall_s);
        CHECK(m.wall_curve[i].cpu_s == a.wall_curve[i].cpu_s);
        CHECK(m.wall_curve[i].n_fits == a.wall_curve[i].n_fits);
    }
    CHECK(m.max_process_rss_bytes.value() == 5000);
    CHECK(m.wall_curve[0].max_process_rss_bytes.value() == 5000);
    CHECK(a.wall_curve[0].max_process_rss_bytes.value() == 1000);
    CHECK(m.max_peak_rss_bytes.value() == 400);
    CHECK(m.max_peak_gpu_bytes.value() == 700);
    CHECK(std::none_of(both.provenance.warnings.begin(), both.provenance.warnings.end(),
                       [](const std::string& w) { return w.find("busy host") != std::string::npos; }));
}

TEST_CASE("a replayed worker peak above every cell's sizes the family's slot, and the profile says so") {
    // Cells peak at 1000 and 3000 bytes; the replay's worker peaked at 8000 (its process reading
    // 5000): max_replay_rss_bytes 8000, slot = ceil(8000 x 1.25) = 10000, basis replay.
    const std::string lines =
        R"({"ts_id":"a","model_type":"m","family":"f","n_obs":100,"ok":true,"wall_s":1.0,"process_rss_bytes":1000}
{"ts_id":"b","model_type":"m","family":"f","n_obs":300,"ok":true,"wall_s":3.0,"process_rss_bytes":3000}
{"ts_id":"b","model_type":"m","family":"f","n_obs":300,"ok":true,"wall_s":30.0,"process_rss_bytes":5000,"worker_peak_bytes":8000,"phase":"replay"}
{"ts_id":"x","model_type":"k","family":"f","n_obs":100,"ok":true,"wall_s":1.0,"process_rss_bytes":6000}
)";
    auto p = profile_from_lines(lines);
    const model_cost& m = p.models.at("m");
    CHECK(m.n_replay == 1);
    CHECK(m.max_replay_rss_bytes.value() == 8000);
    CHECK(m.memory_basis.value() == "replay");
    CHECK(m.max_process_rss_bytes.value() == 3000);
    CHECK(m.median_wall_s.value() == doctest::Approx(2.0));  // the replay's 30 s is not a sample
    CHECK(slot_memory_evidence(m).value() == 8000);
    CHECK(p.models.at("k").memory_basis.value() == "per-cell");
    const family_cost& f = p.families.at("f");
    CHECK(f.max_process_rss_bytes.value() == 6000);
    CHECK(f.max_replay_rss_bytes.value() == 8000);
    CHECK(f.memory_basis.value() == "replay");
    CHECK(f.slot_rss_bytes.value() == 10000);
    // Read back: the derived basis and slot are recomputed from the raw fields.
    auto back = parse_profile_text(write_profile(p), "t");
    CHECK(back.families.at("f").slot_rss_bytes.value() == 10000);
    CHECK(back.models.at("m").memory_basis.value() == "replay");
}

TEST_CASE("replay runs beside another fit give the model's slowdown against its curve; alone ones do not") {
    // Sample: 1 s at n_obs 100, 10 s at 1000. Beside a neighbour the 1000-point cell took 12 and
    // 13 s: (12 + 13) / (10 + 10) = 1.25 over 2 runs. The replay alone (no concurrent_fits) and
    // the one with concurrent_fits 0 count in no ratio; nor a failed one, a contended one (its
    // wait is the busy host's) or one under 0.1 s (the short cell's 0.05 s).
    const std::string lines =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":10.0}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":50.0,"phase":"replay"}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":40.0,"phase":"replay","concurrent_fits":0}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":12.0,"phase":"replay","concurrent_fits":1}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":13.0,"phase":"replay","concurrent_fits":1}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":false,"error":"exit 1","wall_s":99.0,"phase":"replay","concurrent_fits":1}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":30.0,"phase":"replay","concurrent_fits":1,"cpu_pressure":0.5}
{"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":0.05,"phase":"replay","concurrent_fits":1}
{"ts_id":"a","model_type":"k","n_obs":100,"ok":true,"wall_s":1.0}
{"ts_id":"a","model_type":"k","n_obs":100,"ok":true,"wall_s":1.0,"phase":"replay"}
)";
    auto p = profile_from_lines(lines);
    const model_cost& m = p.models.at("m");
    CHECK(m.n_replay == 6);
    CHECK(m.n_beside == 2);
    CHECK(m.beside_slowdown.value() == doctest::Approx(1.25));
    CHECK(m.median_wall_s.value() == doctest::Approx(5.5));  // the replays are no sample
    CHECK_FALSE(p.models.at("k").beside_slowdown.has_value());
    // Written and read back; absent (not null) for the model without one.
    const std::string text = write_profile(p);
    CHECK(text.find("\"beside_slowdown\":1.25,\"n_beside\":2") != std::string::npos);
    auto back = parse_profile_text(text, "t");
    CHECK(back.models.at("m").beside_slowdown.value() == doctest::Approx(1.25));
    CHECK(back.models.at("m").n_beside == 2);
    CHECK_FALSE(back.models.at("k").beside_slowdown.has_value());
}

TEST_CASE("a replay's worker peak stands on the memory curve at the longest series its worker had run") {
    // Cells peak at 1000 bytes (n_obs 100) and 3000 (1000). A replay of the short cell in a
    // worker that had run the long one reads 9000: a class of short series never runs that
    // history, so the peak stands at 1000, not at 100. A replay of the short cell in a worker
    // that ran nothing longer (worker_max_n_obs 100) stands at 100; one without the field
    // (an older record) at its own length.
    const std::string head =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"process_rss_bytes":1000}
{"ts_id":"b","model_type":"m","n_obs":1000,"ok":true,"wall_s":10.0,"process_rss_bytes":3000}
)";
    auto at = [](const compute_profile& p, std::uint64_t n) { return curve_rss_at(p.models.at("m").wall_curve, n).value(); };
    auto p = profile_from_lines(head + R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"process_rss_bytes":1200,"worker_peak_bytes":9000,"worker_max_n_obs":1000,"phase":"replay"}
)");
    CHECK(at(p, 100) == 1000);
    CHECK(at(p, 1000) == 9000);
    CHECK(p.models.at("m").max_replay_rss_bytes.value() == 9000);
    p = profile_from_lines(head + R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"worker_peak_bytes":2000,"worker_max_n_obs":100,"phase":"replay"}
)");
    CHECK(at(p, 100) == 2000);
    CHECK(at(p, 1000) == 3000);
    p = profile_from_lines(head + R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"worker_peak_bytes":9000,"phase":"replay"}
)");
    CHECK(at(p, 100) == 9000);
}

TEST_CASE("a failed replay run counts as a failed fit: an OOM kill in it raises the slot's floor") {
    // Killed at a 4000-byte limit: floor max(ceil(4000 x 1.2), 4000 + 100 MiB) = 4000 + 104857600.
    const std::string lines =
        R"({"ts_id":"a","model_type":"m","n_obs":100,"ok":true,"wall_s":1.0,"process_rss_bytes":1000}
{"ts_id":"a","model_type":"m","n_obs":100,"ok":false,"error":"worker died mid-cell: killed by SIGKILL","signal":"SIGKILL","memory_limit_bytes":4000,"oom_killed":true,"phase":"replay"}
)";
    auto p = profile_from_lines(lines);
    CHECK(p.models.at("m").n_fits == 2);
    CHECK(p.models.at("m").n_oom_killed == 1);
    CHECK(p.models.at("m").n_replay == 0);
    CHECK(p.families.at("m").slot_rss_bytes.value() == 4000 + 104857600);
}

TEST_CASE("a fit's phase other than sample, warmup or replay is refused, naming the field") {
    line_reader in(string_source(R"({"ts_id":"a","model_type":"m","ok":true,"phase":"warm"})" "\n", "t"));
    CHECK_THROWS_WITH_AS(for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { read_fit(o); }),
                         doctest::Contains("field 'phase': expected sample, warmup, replay or superseded, found \"warm\""),
                         std::exception);
}

TEST_CASE("a model goes to the family most of its fits name, whatever the fits' order or the names' sort") {
    // ets: 3 fits under "stat", 1 under "a_first" (sorts first) → "stat", with a warning.
    std::vector<measured_fit> fits = {fit("a", "ets", "a_first", true, 1.0, 1.0, 100),
                                      fit("b", "ets", "stat", true, 2.0, 2.0, 100),
                                      fit("c", "ets", "stat", true, 3.0, 3.0, 100),
                                      fit("d", "ets", "stat", false, std::nullopt, std::nullopt, std::nullopt)};
    for (int order = 0; order < 2; ++order) {
        if (order == 1) std::reverse(fits.begin(), fits.end());
        auto p = build_profile(fits, {1.25, 1.1});
        CHECK(p.models.at("ets").family == "stat");
        CHECK(p.families.count("a_first") == 0);
        REQUIRE(p.provenance.warnings.size() == 1);
        CHECK(p.provenance.warnings[0] ==
              "model 'ets' appears under families 'a_first' (1 fit), 'stat' (3 fits); counted under 'stat', the family "
              "most of its fits name: give each model one family");
    }
}

TEST_CASE("a fit record without a family does not move its model out of the family the others name") {
    // "ets" sorts before "stat": under the old rule the fallback family "ets" won.
    auto p = profile_from_lines(
        R"({"ts_id":"a","model_type":"ets","family":"stat","ok":true,"wall_s":1.0})" "\n"
        R"({"ts_id":"b","model_type":"ets","ok":true,"wall_s":2.0})" "\n"
        R"({"ts_id":"c","model_type":"theta","ok":true,"wall_s":2.0})" "\n");
    CHECK(p.models.at("ets").family == "stat");
    CHECK(p.models.at("theta").family == "theta");  // no fit names one: its own name, silently
    CHECK(p.families.count("ets") == 0);
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0] == "model 'ets': 1 of its fits name no family; counted under 'stat', the family "
                                      "the others name: give each model one family");
}

TEST_CASE("two families named by as many fits of one model are refused with each count") {
    std::vector<measured_fit> fits = {fit("a", "ets", "stat", true, 1.0, 1.0, 100),
                                      fit("b", "ets", "ml", true, 2.0, 2.0, 100),
                                      fit("c", "other", "ml", true, 2.0, 2.0, 100)};
    try {
        build_profile(fits, {1.25, 1.1});
        FAIL("a tie was not refused");
    } catch (const prof::error& e) {
        CHECK(e.code() == exit_code::data_err);
        CHECK(std::string(e.what()) == "model 'ets' appears under families 'ml' (1 fit), 'stat' (1 fit): no family "
                                       "has the most fits, so none can be chosen; give each model one family");
    }
}

TEST_CASE("merged builders count each family's fits as one builder would") {
    // Builder 1: ets under stat once; builder 2: ets under ml once, under stat once → stat 2, ml 1.
    profile_builder a({1.25, 1.1}), b({1.25, 1.1});
    a.add(fit("a", "ets", "stat", true, 1.0, 1.0, 100));
    b.add(fit("b", "ets", "ml", true, 1.0, 1.0, 100));
    b.add(fit("c", "ets", "stat", true, 1.0, 1.0, 100));
    b.merge(std::move(a));
    auto p = b.finish({});
    CHECK(p.models.at("ets").family == "stat");
    CHECK(b.models_without_family().empty());
}

TEST_CASE("a model's rss_method is the one its ok fits name, mixed when they differ, and survives a read") {
    auto a = fit("a", "m", "f", true, 1.0, 1.0, 10), b = fit("b", "m", "f", true, 1.0, 1.0, 10);
    auto failed = fit("c", "m", "f", false, std::nullopt, std::nullopt, std::nullopt);
    a.rss_method = "cgroup-v2";
    failed.rss_method = "rusage";  // a failed fit read nothing that sizes the model
    auto p = build_profile({a, b, failed}, {1.25, 1.1});
    CHECK(p.models.at("m").rss_method == std::optional<std::string>("cgroup-v2"));
    const std::string text = write_profile(p);
    CHECK(text.find("\"max_effective_cores\":1,\"rss_method\":\"cgroup-v2\",") != std::string::npos);
    CHECK(parse_profile_text(text, "p.json").models.at("m").rss_method == std::optional<std::string>("cgroup-v2"));
    b.rss_method = "proc";
    CHECK(build_profile({a, b}, {1.25, 1.1}).models.at("m").rss_method == std::optional<std::string>("mixed"));
    profile_builder x({1.25, 1.1}), y({1.25, 1.1});
    x.add(a);
    y.add(b);
    x.merge(std::move(y));
    CHECK(x.finish({}).models.at("m").rss_method == std::optional<std::string>("mixed"));
    // No fit names one: absent from the record, null on read.
    a.rss_method.reset();
    b.rss_method.reset();
    const std::string none = write_profile(build_profile({a, b}, {1.25, 1.1}));
    CHECK(none.find("rss_method") == std::string::npos);
    CHECK_FALSE(parse_profile_text(none, "p.json").models.at("m").rss_method.has_value());
}
