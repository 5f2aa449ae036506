// The cost curve in n_obs, the length distribution and the work they predict, by hand.
#include "prof/profile/curve.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>

using namespace prof;

namespace {
std::vector<curve_point> curve_of(std::vector<std::pair<std::uint64_t, double>> walls) {
    std::vector<std::pair<std::uint64_t, double>> cpus = walls;
    return build_curve(walls, cpus);
}
}  // namespace

TEST_CASE("a curve has one point per distinct length, each the median of its fits") {
    auto c = curve_of({{100, 3.0}, {10, 1.0}, {10, 2.0}, {10, 9.0}, {100, 5.0}});
    REQUIRE(c.size() == 2);
    CHECK(c[0].n_obs == 10);
    CHECK(c[0].n_fits == 3);
    CHECK(c[0].wall_s == 2.0);   // median of 1, 2, 9
    CHECK(c[0].cpu_s == 2.0);
    CHECK(c[1].n_obs == 100);
    CHECK(c[1].wall_s == 4.0);   // mean of the two middle values 3 and 5
}

TEST_CASE("more distinct lengths than the bound are cut into equal-count bins, a length never split") {
    std::vector<std::pair<std::uint64_t, double>> walls;
    for (std::uint64_t n = 1; n <= 640; ++n) walls.push_back({n, double(n)});  // 640 lengths, one fit each
    std::vector<std::pair<std::uint64_t, double>> cpus;
    auto c = build_curve(walls, cpus);
    REQUIRE(c.size() == max_curve_points);   // 640 / 32 = 20 fits per bin
    CHECK(c[0].n_obs_min == 1);
    CHECK(c[0].n_obs_max == 20);
    CHECK(c[0].n_obs == 10);                 // the lower middle of 1..20
    CHECK(c[0].wall_s == 10.5);              // median of 1..20
    CHECK(!c[0].cpu_s);                      // no CPU reading
    CHECK(c[31].n_obs_max == 640);
    // 100 fits at length 5 among 40 other lengths: the run of 5s stays in one bin.
    walls.clear();
    for (int i = 0; i < 100; ++i) walls.push_back({5, 1.0});
    for (std::uint64_t n = 6; n < 46; ++n) walls.push_back({n, 2.0});
    c = build_curve(walls, cpus);
    CHECK(c.size() <= max_curve_points);
    CHECK(c[0].n_obs_min == 5);
    CHECK(c[0].n_obs_max == 5);
    CHECK(c[0].n_fits == 100);
}

TEST_CASE("the curve is linear between points, flat below the shortest, at least proportional above") {
    auto c = curve_of({{10, 1.0}, {110, 3.0}});
    CHECK(curve_wall_at(c, 60) == 2.0);      // halfway between 1 and 3
    CHECK(curve_wall_at(c, 1) == 1.0);       // the shortest's time
    // Above: log-log slope ln(3)/ln(11) = 0.458, clamped to 1: proportional, 3 × 220/110.
    CHECK(curve_wall_at(c, 220) == 6.0);
    // A steep last segment keeps its slope: (1, 1) → (2, 8) is n^3, so n = 4 → 64.
    auto steep = curve_of({{1, 1.0}, {2, 8.0}});
    CHECK(curve_wall_at(steep, 4) == doctest::Approx(64.0));
    // Steeper than n^3 is clamped to 3: (1, 1) → (2, 32) gives 32 × 2^3 = 256 at n = 4.
    auto steeper = curve_of({{1, 1.0}, {2, 32.0}});
    CHECK(curve_wall_at(steeper, 4) == doctest::Approx(256.0));
    // One point: proportional.
    auto one = curve_of({{100, 2.0}});
    CHECK(curve_wall_at(one, 250) == 5.0);
}

TEST_CASE("the curve never goes negative or non-finite, however far it is pushed") {
    auto steep = curve_of({{1, 1.0}, {2, 1e300}});
    double v = curve_wall_at(steep, std::numeric_limits<std::uint64_t>::max());
    CHECK(std::isfinite(v));
    CHECK(v == std::numeric_limits<double>::max());
    auto falling = curve_of({{10, 5.0}, {20, 1e-300}});
    CHECK(curve_wall_at(falling, 19) > 0);
    CHECK(curve_wall_at(falling, 1000) > 0);
}

TEST_CASE("a length distribution bins lengths, scales to a run and knows its extremes") {
    std::vector<std::uint64_t> lengths = {12, 12, 12, 203, 2284};
    auto d = distribution_of_lengths(lengths);
    REQUIRE(d.bins.size() == 3);
    CHECK(d.bins[0].n_obs == 12);
    CHECK(d.bins[0].n_series == 3);
    CHECK(d.series() == 5);
    CHECK(d.max_n_obs() == 2284);
    CHECK(d.min_n_obs() == 12);
    auto s = scale_distribution(d, 5000);
    CHECK(s.bins[0].n_series == 3000);   // 3 of 5 series, × 1000
    CHECK(s.bins[2].n_series == 1000);
    // 300 distinct lengths: 256 bins at most, each n_obs the rounded mean of its lengths.
    lengths.clear();
    for (std::uint64_t n = 1; n <= 300; ++n) lengths.push_back(n);
    d = distribution_of_lengths(lengths);
    CHECK(d.bins.size() == 150);             // ceil(300 / 256) = 2 lengths per bin
    CHECK(d.bins[0].n_obs == 2);             // mean of 1 and 2 = 1.5, rounded away from zero
    CHECK(d.series() == 300);
}

TEST_CASE("predicted work is the distribution summed over the curve, the longest cell at the longest series") {
    // The sample: 12 → 0.006 s, 203 → 0.049 s, 2284 → 0.292 s; a run of 10 × 12, 2 × 100, 1 × 5000.
    auto c = curve_of({{12, 0.006}, {203, 0.049}, {2284, 0.292}});
    std::vector<std::uint64_t> lengths(10, 12);
    lengths.insert(lengths.end(), {100, 100, 5000});
    auto w = predict_model_work(c, distribution_of_lengths(lengths));
    // 100: 0.006 + (88/191) × 0.043; 5000: 0.292 × 5000/2284 (last slope < 1, so proportional).
    double at100 = 0.006 + (100.0 - 12) / (203 - 12) * (0.049 - 0.006);
    double at5000 = 0.292 * 5000 / 2284;
    CHECK(w.total_wall_s == doctest::Approx(10 * 0.006 + 2 * at100 + at5000));
    CHECK(w.longest_cell_s == doctest::Approx(at5000));
    CHECK(w.longest_n_obs == 5000);
    CHECK(w.above_measured);
    CHECK(!w.below_measured);
}

TEST_CASE("lengths past 16 bits sort in more than one radix pass, stably") {
    // 200 fits over lengths 1..100 and 70000..70099 (two passes: the high bits differ), out of order.
    std::vector<std::pair<std::uint64_t, double>> walls, cpus;
    for (std::uint64_t i = 0; i < 100; ++i) {
        walls.push_back({70099 - i, 2.0});
        walls.push_back({100 - i, 1.0});
    }
    auto c = build_curve(walls, cpus);
    REQUIRE(c.size() == 29);  // ceil(200 / 32) = 7 fits per bin: 28 bins of 7 and one of 4
    for (std::size_t i = 1; i < c.size(); ++i) CHECK(c[i - 1].n_obs_max < c[i].n_obs_min);
    CHECK(c.front().n_obs_min == 1);
    CHECK(c.back().n_obs_max == 70099);
    CHECK(c.front().wall_s == 1.0);
    CHECK(c.back().wall_s == 2.0);
}

namespace {
bool same_points(const std::vector<curve_point>& a, const std::vector<curve_point>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k].n_obs != b[k].n_obs || a[k].n_obs_min != b[k].n_obs_min || a[k].n_obs_max != b[k].n_obs_max ||
            a[k].n_fits != b[k].n_fits || a[k].wall_s != b[k].wall_s || a[k].cpu_s != b[k].cpu_s)
            return false;
    return true;
}
}  // namespace

TEST_CASE("the curve built in place from a histogram is the sorted curve, point for point") {
    // Random models: few and many distinct lengths, runs of one length across a bin edge,
    // values without a length, CPU values at lengths no wall has (between bins, below the
    // first, past the last), and lengths past the histogram (the sorting fallback).
    std::uint64_t state = 12345;
    auto next = [&] { return state = state * 6364136223846793005u + 1442695040888963407u, state >> 33; };
    for (int model = 0; model < 300; ++model) {
        const std::uint64_t spread = std::uint64_t{1} << (next() % 14);
        const bool huge = model % 50 == 7;
        std::vector<double> wv, cv;
        std::vector<std::uint32_t> wn, cn;
        const std::size_t n = 1 + next() % 3000;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t len = next() % 10 == 0 ? 0 : static_cast<std::uint32_t>(1 + next() % spread);
            if (huge && i % 3 == 0) len = curve_histogram_lengths + static_cast<std::uint32_t>(next() % 1000);
            wv.push_back(0.001 * static_cast<double>(1 + next() % 5000));
            wn.push_back(len);
            if (next() % 4) {
                cv.push_back(0.001 * static_cast<double>(1 + next() % 5000));
                cn.push_back(next() % 5 == 0 ? static_cast<std::uint32_t>(next() % (2 * spread + 2)) : len);
            }
        }
        std::vector<std::pair<std::uint64_t, double>> walls, cpus;
        for (std::size_t i = 0; i < wv.size(); ++i)
            if (wn[i]) walls.emplace_back(wn[i], wv[i]);
        for (std::size_t i = 0; i < cv.size(); ++i)
            if (cn[i]) cpus.emplace_back(cn[i], cv[i]);
        auto sorted = build_curve(walls, cpus);
        auto in_place = build_curve_in_place(
            [&](auto fn) { for (std::size_t i = 0; i < wv.size(); ++i) fn(wv[i], wn[i]); },
            [&](auto fn) { for (std::size_t i = 0; i < cv.size(); ++i) fn(cv[i], cn[i]); });
        INFO("model " << model << ", " << n << " values, lengths up to " << spread);
        CHECK(same_points(sorted, in_place));
    }
}

TEST_CASE("each memory reading lands on the point holding its length, else the one above, else the last") {
    auto c = curve_of({{10, 1.0}, {20, 1.0}, {40, 1.0}});
    // 10 → point 0 (two readings: the larger kept); 15 lies between ranges → point 1 (20);
    // 50 is past the last → point 2; n_obs 0 (unknown) is left off.
    attach_memory(c, {{10, 100}, {10, 300}, {15, 250}, {20, 200}, {50, 900}, {0, 5000}});
    CHECK(c[0].max_process_rss_bytes == 300u);
    CHECK(c[1].max_process_rss_bytes == 250u);  // max(250 at 15, 200 at 20)
    CHECK(c[2].max_process_rss_bytes == 900u);
}

TEST_CASE("memory by length is the running peak up to the point reaching n, never below a shorter one") {
    auto c = curve_of({{10, 1.0}, {20, 1.0}, {40, 1.0}});
    attach_memory(c, {{10, 500}, {20, 300}, {40, 800}});
    CHECK(curve_rss_at(c, 5) == 500u);    // below the shortest: the shortest point's peak
    CHECK(curve_rss_at(c, 10) == 500u);
    CHECK(curve_rss_at(c, 20) == 500u);   // 300 measured at 20, but 500 at 10: never below
    CHECK(curve_rss_at(c, 21) == 800u);   // between 20 and 40: the point above
    CHECK(curve_rss_at(c, 40) == 800u);
}

TEST_CASE("memory past the longest point grows along the last chord, never below the largest peak") {
    auto c = curve_of({{100, 1.0}, {200, 1.0}});
    attach_memory(c, {{100, 1000}, {200, 2000}});
    // slope (2000 − 1000) / (200 − 100) = 10 bytes per observation: 2000 + 10 × 300 = 5000.
    CHECK(curve_rss_at(c, 500) == 5000u);
    // A falling last chord (3000 at 100, 2000 at 200) is clamped flat at the largest peak, 3000.
    auto f = curve_of({{100, 1.0}, {200, 1.0}});
    attach_memory(f, {{100, 3000}, {200, 2000}});
    CHECK(curve_rss_at(f, 10000) == 3000u);
    // One point: flat at its peak.
    auto one = curve_of({{100, 1.0}});
    attach_memory(one, {{100, 700}});
    CHECK(curve_rss_at(one, 100000) == 700u);
    // Saturates instead of wrapping.
    CHECK(curve_rss_at(c, std::numeric_limits<std::uint64_t>::max()) == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("a curve with a point without memory has no memory curve") {
    auto c = curve_of({{10, 1.0}, {20, 1.0}});
    CHECK(!curve_rss_at(c, 10));
    attach_memory(c, {{20, 100}});
    CHECK(!curve_rss_at(c, 20));          // point 0 has none
    CHECK(!curve_rss_at({}, 20));
}
