// prof-diff's arithmetic: axis changes, the gate's rules, ratio parsing.
#include "prof/profile/diff.hpp"
#include "prof/core/errors.hpp"
#include "prof/profile/test_support.hpp"

#include <doctest/doctest.h>

namespace {

// ets (family statistical) over 8 ok fits, under the default margins.
prof::compute_profile one_model(double wall, std::uint64_t rss, double cores) {
    auto p = prof::test::profile_of({prof::test::model_of("ets", "statistical",
                                                          {.n_ok = 8, .max_effective_cores = cores,
                                                           .max_process_rss_bytes = rss, .median_wall_s = wall,
                                                           .median_cpu_s = wall})},
                                    prof::default_memory_margin, prof::default_time_margin);
    p.families["statistical"].family = "statistical";
    prof::recompute_derived(p);
    return p;
}

const prof::axis_change& axis(const prof::row_diff& r, const std::string& name) {
    for (const auto& a : r.axes)
        if (a.axis == name) return a;
    FAIL("no axis " << name);
    return r.axes.front();
}

}  // namespace

TEST_CASE("a model 25 percent slower fails a 20 percent gate and passes a 30 percent one") {
    auto old_p = one_model(0.1, 100'000'000, 1.0), new_p = one_model(0.125, 100'000'000, 1.0);
    auto d = prof::diff_profiles(old_p, new_p, {0.2, std::nullopt}, "a", "b");
    REQUIRE(d.models.size() == 1);
    const auto& w = axis(d.models[0], "median_wall_s");
    CHECK(w.change == "up");
    CHECK(*w.ratio == doctest::Approx(1.25));  // 0.125 / 0.1
    CHECK(w.regression);
    REQUIRE(d.regressions.size() == 1);
    CHECK(d.regressions[0] == "ets: median_wall_s 100.00 ms -> 125.00 ms (+25.0 %), slower than the +20.0 % allowed");
    CHECK_FALSE(d.passed());
    CHECK(prof::diff_profiles(old_p, new_p, {0.3, std::nullopt}, "a", "b").passed());
}

TEST_CASE("exactly the allowed growth passes the gate") {
    // 0.1 -> 0.12 is +20 % within rounding: not more than 20 %.
    auto d = prof::diff_profiles(one_model(0.1, 1, 1.0), one_model(0.12, 1, 1.0), {0.2, std::nullopt}, "a", "b");
    CHECK(d.passed());
}

TEST_CASE("a regression whose ratio overflows a double (1e308 s over 0.1 s) fails the gate") {
    // 1e308 / 0.1 = inf: before, nearly_equal(inf, 1.2) held and the gate passed it.
    auto d = prof::diff_profiles(one_model(0.1, 1, 1.0), one_model(1e308, 1, 1.0), {0.2, std::nullopt}, "a", "b");
    CHECK(axis(d.models[0], "median_wall_s").regression);
    CHECK_FALSE(d.passed());
    REQUIRE_FALSE(d.regressions.empty());
    CHECK(d.regressions[0].find("(more than x1e308)") != std::string::npos);
    CHECK_FALSE(prof::diff_profiles(one_model(0.1, 1, 1.0), one_model(1e307, 1, 1.0), {0.2, std::nullopt}, "a", "b").passed());
}

TEST_CASE("memory and cores are gated by max_bigger, wall time is not") {
    // RSS 100 MB -> 115 MB (+15 %), cores 1.0 -> 1.9 snaps 1 -> 2 (+100 %), wall 3x slower.
    auto d = prof::diff_profiles(one_model(0.1, 100'000'000, 1.0), one_model(0.3, 115'000'000, 1.9),
                                 {std::nullopt, 0.1}, "a", "b");
    CHECK(axis(d.models[0], "max_process_rss_bytes").regression);
    CHECK(axis(d.models[0], "slot_cores").regression);
    CHECK_FALSE(axis(d.models[0], "median_wall_s").regression);
    CHECK(d.regressions.size() == 2);
}

TEST_CASE("a model measured before and unmeasured now fails every gate on its gated axes") {
    prof::compute_profile empty;
    auto d = prof::diff_profiles(one_model(0.1, 100, 1.0), empty, {0.5, 0.5}, "a", "b");
    REQUIRE(d.models.size() == 1);
    CHECK(d.models[0].presence == "removed");
    CHECK(axis(d.models[0], "median_wall_s").change == "lost");
    // slower: median_wall_s; bigger: process RSS and cores (GPU was never measured).
    CHECK(d.regressions.size() == 3);
}

TEST_CASE("without a gate nothing is a regression and a model only in new is added") {
    prof::compute_profile empty;
    auto d = prof::diff_profiles(empty, one_model(0.1, 100, 1.0), {}, "a", "b");
    CHECK(d.models[0].presence == "added");
    CHECK(axis(d.models[0], "median_wall_s").change == "gained");
    CHECK(d.passed());
}

TEST_CASE("the same profile on both sides is unchanged on every axis") {
    auto p = one_model(0.1, 100'000'000, 1.2);
    auto d = prof::diff_profiles(p, p, {0.0, 0.0}, "a", "a");
    for (const auto& a : d.models[0].axes) CHECK((a.change == "same" || a.change == "none"));
    CHECK(d.passed());
}

TEST_CASE("different margins are a warning, and the gate ignores them") {
    auto old_p = one_model(0.1, 100, 1.0), new_p = old_p;
    new_p.time_margin = 1.5;
    prof::recompute_derived(new_p);
    auto d = prof::diff_profiles(old_p, new_p, {0.0, 0.0}, "a", "b");
    CHECK(d.passed());
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0].find("x1.1 -> x1.5") != std::string::npos);
    REQUIRE(d.families.size() == 1);
    const auto& per_series = axis(d.families[0], "planning_wall_s_per_series");
    REQUIRE(per_series.ratio);
    CHECK(*per_series.ratio == doctest::Approx(1.5 / 1.1));  // 0.1 x 1.5 over 0.1 x 1.1
}

TEST_CASE("a gate ratio is a fraction or a percentage, never negative or not a number") {
    CHECK(prof::parse_gate_ratio("0.2", "--max-slower") == doctest::Approx(0.2));
    CHECK(prof::parse_gate_ratio("20%", "--max-slower") == doctest::Approx(0.2));
    CHECK(prof::parse_gate_ratio("0", "--max-slower") == 0.0);
    CHECK_THROWS_WITH_AS(prof::parse_gate_ratio("-1", "--max-bigger"),
                         "--max-bigger: expected a ratio >= 0 such as 0.2 or 20%, found \"-1\"", prof::usage_error);
    CHECK_THROWS_AS(prof::parse_gate_ratio("inf", "--max-bigger"), prof::usage_error);
    CHECK_THROWS_AS(prof::parse_gate_ratio("%", "--max-bigger"), prof::usage_error);
    CHECK_THROWS_AS(prof::parse_gate_ratio("20 %", "--max-bigger"), prof::usage_error);
}

namespace {

prof::compute_profile from_fits(double long_series_wall) {
    std::vector<prof::measured_fit> fits;
    auto add = [&](const char* ts, std::uint64_t n_obs, double wall) {
        fits.push_back(prof::test::fit_of(ts, "ets", "statistical", {.n_obs = n_obs, .wall_s = wall, .cpu_s = wall}));
    };
    add("a", 10, 0.01);
    add("b", 10, 0.01);
    add("c", 10, 0.01);
    add("d", 1000, long_series_wall);
    auto p = prof::build_profile(fits, {1.25, 1.1});
    // Without readings (an older profile): the ratio rule alone. With them, one long fit a side
    // is within the noise (the noise rule has its own test).
    for (auto& [name, m] : p.models) m.readings.clear();
    return p;
}

}  // namespace

TEST_CASE("a model slower on its long series only is caught by the curve, not by the median") {
    // Medians: (0.01 + 0.01) / 2 = 0.01 on both sides. Over the measured lengths (three of 10,
    // one of 1000): old (3 x 0.01 + 0.1) / 4 = 0.0325 s, new (3 x 0.01 + 0.3) / 4 = 0.0825 s.
    auto d = prof::diff_profiles(from_fits(0.1), from_fits(0.3), {0.2, std::nullopt}, "a", "b");
    CHECK(d.lengths_source == "new measured lengths");
    REQUIRE(d.models.size() == 1);
    CHECK(axis(d.models[0], "median_wall_s").change == "same");
    const auto& c = axis(d.models[0], "curve_wall_s_per_series");
    REQUIRE(c.old_value);
    CHECK(*c.old_value == doctest::Approx(0.0325));
    CHECK(*c.new_value == doctest::Approx(0.0825));
    CHECK(c.regression);
    CHECK(d.regressions.size() == 1);
}

TEST_CASE("a bare gate ratio above 1 is refused: it is most often a percentage without its sign") {
    CHECK_THROWS_WITH_AS(prof::parse_gate_ratio("20", "--max-slower"),
                         "--max-slower: \"20\" would allow 21 times the old value; write 2000% for that (or 0.2 for 20 %)",
                         prof::usage_error);
    CHECK(prof::parse_gate_ratio("1", "--max-slower") == 1.0);
    CHECK(prof::parse_gate_ratio("300%", "--max-slower") == doctest::Approx(3.0));
}

TEST_CASE("a GPU peak of 0 is measured: 0 -> 5 GiB is up and fails any bigger gate; 0 -> 0 is same; null is none") {
    auto gpu = [](std::optional<std::uint64_t> bytes) {
        auto p = one_model(0.1, 100'000'000, 1.0);
        p.models["ets"].max_peak_gpu_bytes = bytes;
        prof::recompute_derived(p);
        return p;
    };
    const std::uint64_t five_gib = 5ull << 30;
    auto d = prof::diff_profiles(gpu(0), gpu(five_gib), {std::nullopt, 10.0}, "a", "b");
    const auto& g = axis(d.models[0], "max_peak_gpu_bytes");
    CHECK(g.change == "up");
    CHECK(*g.old_value == 0);
    CHECK_FALSE(g.ratio);
    CHECK(g.regression);
    REQUIRE(d.regressions.size() == 1);
    CHECK(d.regressions[0] == "ets: max_peak_gpu_bytes 0 B -> 5.00 GiB (from none measured), bigger than any ratio allows");
    CHECK_FALSE(d.passed());
    // 1 B -> 5 GiB failed before; 0 B -> 5 GiB now fails alike.
    CHECK_FALSE(prof::diff_profiles(gpu(1), gpu(five_gib), {std::nullopt, 10.0}, "a", "b").passed());
    auto same = prof::diff_profiles(gpu(0), gpu(0), {std::nullopt, 0.1}, "a", "b");
    CHECK(axis(same.models[0], "max_peak_gpu_bytes").change == "same");
    CHECK(same.passed());
    CHECK(axis(prof::diff_profiles(gpu(std::nullopt), gpu(std::nullopt), {}, "a", "b").models[0], "max_peak_gpu_bytes")
              .change == "none");
    auto gained = prof::diff_profiles(gpu(std::nullopt), gpu(0), {std::nullopt, 0.1}, "a", "b");
    CHECK(axis(gained.models[0], "max_peak_gpu_bytes").change == "gained");
    CHECK(gained.passed());
    auto down = prof::diff_profiles(gpu(five_gib), gpu(0), {std::nullopt, 0.1}, "a", "b");
    CHECK(axis(down.models[0], "max_peak_gpu_bytes").change == "down");
    CHECK(*axis(down.models[0], "max_peak_gpu_bytes").ratio == 0);
}

TEST_CASE("a slower median inside both samples' noise is a warning; outside it, a regression") {
    // OLD's fits 0.05 to 0.2 s (median 0.1), NEW's 0.0625 to 0.25 s (median 0.125): +25 %, past a
    // 20 % gate, but each sample's resampled medians span the other's: noise.
    auto with_readings = [](double scale) {
        auto p = one_model(0.1 * scale, 100'000'000, 1.0);
        auto& m = p.models.at("ets");
        m.model_type = "ets";
        for (double w : {0.05, 0.06, 0.08, 0.1, 0.1, 0.14, 0.18, 0.2}) m.readings.push_back({100, w * scale, std::nullopt, false});
        return p;
    };
    auto d = prof::diff_profiles(with_readings(1), with_readings(1.25), {0.2, std::nullopt}, "a", "b");
    CHECK(d.passed());
    CHECK_FALSE(axis(d.models[0], "median_wall_s").regression);
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0].find("within the samples' noise") != std::string::npos);
    // Three times slower: NEW's P10 is above OLD's P90.
    auto far = prof::diff_profiles(with_readings(1), with_readings(3), {0.2, std::nullopt}, "a", "b");
    CHECK_FALSE(far.passed());
    CHECK(axis(far.models[0], "median_wall_s").regression);
    // Without readings on one side the ratio rule stands alone.
    auto bare = with_readings(1.25);
    bare.models.at("ets").readings.clear();
    CHECK_FALSE(prof::diff_profiles(with_readings(1), bare, {0.2, std::nullopt}, "a", "b").passed());
}

TEST_CASE("readings taken by methods that cover different things are a warning per model, the gate unchanged") {
    // A pre-pass read by a cgroup (the whole tree) against a harvest of prof_record rows (the
    // fitting process only): memory -9 %, CPU and cores -62 %.
    auto old_p = one_model(1.0, 110'000'000, 2.6), new_p = one_model(1.0, 100'000'000, 1.0);
    old_p.models["ets"].rss_method = "cgroup-v2";
    new_p.models["ets"].rss_method = "proc";
    auto d = prof::diff_profiles(old_p, new_p, {0.2, 0.2}, "prepass.json", "run:r1");
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0] ==
          "ets: memory and CPU were read differently: prepass.json by cgroup-v2 (the fit's whole process tree), run:r1 "
          "by proc (the fitting process only): its changes in max_process_rss_bytes, median_cpu_s and "
          "max_effective_cores may be the method's, not the model's; compare readings taken the same way");
    CHECK(d.passed());
    // cgroup-v1 and cgroup-v2 cover the same: no warning; a side that does not say is warned of.
    new_p.models["ets"].rss_method = "cgroup-v1";
    CHECK(prof::diff_profiles(old_p, new_p, {}, "a", "b").warnings.empty());
    new_p.models["ets"].rss_method.reset();
    auto u = prof::diff_profiles(old_p, new_p, {}, "a", "b");
    REQUIRE(u.warnings.size() == 1);
    CHECK(u.warnings[0].find("b by a method not recorded") != std::string::npos);
    // Neither side says: nothing to compare.
    old_p.models["ets"].rss_method.reset();
    CHECK(prof::diff_profiles(old_p, new_p, {}, "a", "b").warnings.empty());
}

namespace {

// ets with these readings at 100 observations and their median as median_wall_s.
prof::compute_profile with_walls(double median, std::initializer_list<double> walls) {
    auto p = one_model(median, 100'000'000, 1.0);
    auto& m = p.models.at("ets");
    m.model_type = "ets";
    for (double w : walls) m.readings.push_back({100, w, std::nullopt, false});
    return p;
}

}  // namespace

TEST_CASE("a 1.3 ratio inside overlapping intervals passes a 20 percent gate with a note; a clean 2x fails") {
    // OLD: five fits of 1.0 s and three of 1.3 s, median 1.0 s; NEW: three and five, median 1.3 s:
    // +30 %, past 20 %. A resample of OLD has the median 1.0 when it draws 1.0 at least 5 times
    // in 8 (p = 5/8): P = 0.778, so OLD's P10 is 1.0 s; its median is 1.15 s or more with
    // P(at most 4 of 1.0) = 0.222 > 0.1, so OLD's P90 is at least 1.15 s (and at most 1.3 s,
    // the largest fit). NEW mirrors it: P90 1.3 s, P10 at most 1.15 s: the intervals overlap.
    auto old_p = with_walls(1.0, {1.0, 1.0, 1.0, 1.0, 1.0, 1.3, 1.3, 1.3});
    auto new_p = with_walls(1.3, {1.0, 1.0, 1.0, 1.3, 1.3, 1.3, 1.3, 1.3});
    auto d = prof::diff_profiles(old_p, new_p, {0.2, std::nullopt}, "old", "new");
    const auto& w = axis(d.models[0], "median_wall_s");
    CHECK(*w.ratio == doctest::Approx(1.3));
    CHECK(*w.old_low == 1.0);
    CHECK(*w.old_high >= 1.15);
    CHECK(*w.old_high <= 1.3);
    CHECK(*w.new_low >= 1.0);
    CHECK(*w.new_low <= 1.15);
    CHECK(*w.new_high == 1.3);
    CHECK_FALSE(w.regression);
    CHECK(d.passed());
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0].rfind("ets: median_wall_s 1.00 s -> 1.30 s (+30.0 %) is past the +20.0 % allowed but within the "
                              "samples' noise (P10 to P90 of their resampled fits: old 1.00 s to ",
                              0) == 0);
    // A real 2x: OLD's fits 0.9 to 1.2 s, NEW's twice those. Every resampled median lies between
    // its sample's smallest and largest fit, so OLD's P90 <= 1.2 s < 1.8 s <= NEW's P10.
    auto slow = prof::diff_profiles(with_walls(1.0, {0.9, 0.95, 1.0, 1.0, 1.0, 1.05, 1.1, 1.2}),
                                    with_walls(2.0, {1.8, 1.9, 2.0, 2.0, 2.0, 2.1, 2.2, 2.4}), {0.2, std::nullopt},
                                    "old", "new");
    const auto& s = axis(slow.models[0], "median_wall_s");
    CHECK(*s.old_high <= 1.2);
    CHECK(*s.new_low >= 1.8);
    CHECK(s.regression);
    REQUIRE(slow.regressions.size() == 1);
    CHECK(slow.regressions[0].find("slower than the +20.0 % allowed and outside the samples' noise (P10 to P90") !=
          std::string::npos);
    CHECK(slow.warnings.empty());
}

TEST_CASE("without intervals (no readings, or --resamples 0) the ratio rule decides, said in one note per model") {
    auto old_p = with_walls(1.0, {1.0, 1.0, 1.0, 1.0, 1.0, 1.3, 1.3, 1.3});
    auto new_p = with_walls(1.3, {1.0, 1.0, 1.0, 1.3, 1.3, 1.3, 1.3, 1.3});
    prof::diff_gate none{0.2, std::nullopt};
    none.resamples = 0;
    auto d = prof::diff_profiles(old_p, new_p, none, "old", "new");
    CHECK_FALSE(axis(d.models[0], "median_wall_s").old_high);
    CHECK_FALSE(d.passed());
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0] ==
          "ets: its time axes were gated on their ratio alone: no interval on either side (no readings of its fits to "
          "resample: an older profile, a harvest, or --resamples 0)");
    new_p.models.at("ets").readings.clear();
    auto one_side = prof::diff_profiles(old_p, new_p, {0.2, std::nullopt}, "old", "new");
    CHECK_FALSE(one_side.passed());
    REQUIRE(one_side.warnings.size() == 1);
    CHECK(one_side.warnings[0].find("no interval on the new side") != std::string::npos);
}

TEST_CASE("the intervals' confidence is a share in (0, 1) and the resamples at most 10000") {
    CHECK(prof::parse_confidence("80%", "--confidence") == doctest::Approx(0.8));
    CHECK(prof::parse_confidence("0.5", "--confidence") == 0.5);
    CHECK_THROWS_WITH_AS(prof::parse_confidence("100%", "--confidence"),
                         "--confidence: '100%' is not a share in (0, 1) (80% or 0.8)", prof::usage_error);
    CHECK_THROWS_AS(prof::parse_confidence("0", "--confidence"), prof::usage_error);
    auto p = one_model(1.0, 1, 1.0);
    prof::diff_gate g;
    g.resamples = 10001;
    CHECK_THROWS_WITH_AS(prof::diff_profiles(p, p, g, "a", "b"), "--resamples must be 0 (no intervals) to 10000, not 10001",
                         prof::usage_error);
}
