// Unit tests of the plan's intervals: quantiles, the seeded stream, the bootstrap of a model's
// fits, the resampled runs' schedules, and the nodes and deadline held to the high end.
#include "prof/plan/interval.hpp"
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>

namespace {

// A model "m" of family "f" (1 core, 100 MiB) whose fits are `walls`, every one at n_obs 100:
// its curve and median are the readings' own, as a profile builds them.
prof::compute_profile fits_at_100(const std::vector<double>& walls) {
    std::vector<prof::fit_reading> readings;
    std::vector<double> sorted = walls;
    for (double w : walls) readings.push_back({100, w, std::nullopt, false});
    std::sort(readings.begin(), readings.end());
    auto m = model("m", "f", walls.size(), 1.0, 100 * MiB, std::nullopt, prof::median(sorted));
    m.max_n_obs = 100;
    m.readings = readings;
    m.wall_curve = prof::curve_of_readings(readings);
    return profile_of({m});
}

// `series` series of length 100 on nodes of 16 cores: 1-core slots, 16 to a node.
prof::plan_request run_of(std::uint64_t series) {
    prof::plan_request rq = cpu_request();
    rq.series = series;
    rq.panel = panel_of({100});
    rq.resamples = 2000;
    return rq;
}

}  // namespace

TEST_CASE("quantiles are linear between order statistics, and an interval reads three of them") {
    std::vector<double> v{4, 1, 3, 2};
    CHECK(prof::quantile(v, 0.1) == doctest::Approx(1.3));
    CHECK(prof::quantile(v, 0.5) == doctest::Approx(2.5));
    CHECK(prof::quantile(v, 0.9) == doctest::Approx(3.7));
    CHECK(prof::quantile(v, 0) == 1);
    CHECK(prof::quantile(v, 1) == 4);
    std::vector<double> none;
    CHECK(prof::quantile(none, 0.5) == 0);
    const prof::plan_interval i = prof::interval_of({4, 1, 3, 2}, 0.8);
    CHECK(i.low_s == doctest::Approx(1.3));
    CHECK(i.p50_s == doctest::Approx(2.5));
    CHECK(i.high_s == doctest::Approx(3.7));
}

TEST_CASE("the resample stream is the same for a seed and stays below its bound") {
    prof::resample_stream a(7), b(7), c(8);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        const std::uint64_t x = a.next();
        CHECK(x == b.next());
        differs = differs || x != c.next();
        CHECK(a.below(3) < 3);
        b.below(3);
        c.below(3);
    }
    CHECK(differs);
    CHECK(prof::model_seed(1, "ets") != prof::model_seed(1, "theta"));
}

TEST_CASE("fits that are all equal give a zero-width interval at the plan's own values") {
    auto p = fits_at_100({2, 2, 2, 2});
    auto plan = prof::make_plan(&p, run_of(32));
    const auto& f = plan.families.at("f");
    CHECK(f.resampled_models == std::vector<std::string>{"m"});
    CHECK(f.work_s == doctest::Approx(32 * 2 * 1.25));
    CHECK(f.work_interval.low_s == doctest::Approx(f.work_s));
    CHECK(f.work_interval.high_s == doctest::Approx(f.work_s));
    CHECK(f.longest_cell_interval.low_s == doctest::Approx(2.5));
    CHECK(f.longest_cell_interval.high_s == doctest::Approx(2.5));
    CHECK(f.makespan_interval.low_s == doctest::Approx(f.makespan_s));
    CHECK(f.makespan_interval.high_s == doctest::Approx(f.makespan_s));
    CHECK(plan.totals.work_interval.high_s == doctest::Approx(f.work_s));
}

TEST_CASE("two fits, 1 s and 3 s: a resample's median is 1, 2 or 3 s with odds 1/4, 1/2, 1/4") {
    // So P10 lies among the 1 s draws, P50 among the 2 s ones and P90 among the 3 s ones: the
    // work of 10 cells is 10 x {1, 2, 3} x the 1.25 margin; on 10 slots (one wave) the makespan
    // is one cell.
    auto p = fits_at_100({1, 3});
    auto rq = run_of(10);
    rq.deadline_s.reset();
    rq.nodes = 1;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.work_s == doctest::Approx(25));  // the point: the median of both fits, 2 s
    CHECK(f.work_interval.low_s == doctest::Approx(12.5));
    CHECK(f.work_interval.p50_s == doctest::Approx(25));
    CHECK(f.work_interval.high_s == doctest::Approx(37.5));
    CHECK(f.makespan_interval.low_s == doctest::Approx(1.25));
    CHECK(f.makespan_interval.p50_s == doctest::Approx(2.5));
    CHECK(f.makespan_interval.high_s == doctest::Approx(3.75));
    CHECK(f.makespan_bound_s == doctest::Approx(3.75));
    // At 40% confidence (P30 to P70) both ends lie among the 2 s draws.
    rq.confidence = 0.4;
    auto narrow = prof::make_plan(&p, rq).families.at("f");
    CHECK(narrow.makespan_interval.low_s == doctest::Approx(2.5));
    CHECK(narrow.makespan_interval.high_s == doctest::Approx(2.5));
}

TEST_CASE("the nodes are chosen, and the deadline checked, on the interval's high end") {
    auto p = fits_at_100({1, 3});
    auto rq = run_of(32);
    rq.deadline_s = 5;
    // The point, 2.5 s a cell: 32 cells on 16 slots in 2 waves, 5 s: one node would do. The
    // high end, 3.75 s a cell: 2 waves take 7.5 s, so 2 nodes (one wave, 3.75 s).
    rq.resamples = 0;
    CHECK(prof::make_plan(&p, rq).families.at("f").nodes == 1);
    rq.resamples = 2000;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.nodes == 2);
    CHECK(plan.totals.nodes == 2);
    CHECK(f.meets_deadline == true);
    CHECK(f.makespan_bound_s == doctest::Approx(3.75));
    // A deadline of 3 s: one wave's high end, 3.75 s, is past it, though the point (2.5 s) is not.
    rq.deadline_s = 3;
    auto missed = prof::make_plan(&p, rq);
    CHECK(missed.families.at("f").meets_deadline == false);
    CHECK(missed.totals.meets_deadline == false);
}

TEST_CASE("the interval narrows as the sample grows: 16 fits against 4 of the same spread") {
    auto four = fits_at_100({1, 2, 3, 4});
    auto sixteen = fits_at_100({1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
    auto rq = run_of(100);
    auto a = prof::make_plan(&four, rq).families.at("f").work_interval;
    auto b = prof::make_plan(&sixteen, rq).families.at("f").work_interval;
    const double width4 = a.high_s - a.low_s, width16 = b.high_s - b.low_s;
    CHECK(width4 > 0);
    CHECK(width16 > 0);
    CHECK(width16 < 0.75 * width4);
}

TEST_CASE("a profile without readings, or --resamples 0, gives each interval as its point") {
    auto p = fits_at_100({1, 3});
    p.models.at("m").readings.clear();
    auto plan = prof::make_plan(&p, run_of(10));
    const auto& f = plan.families.at("f");
    CHECK(f.resampled_models.empty());
    CHECK(f.work_interval.low_s == f.work_s);
    CHECK(f.work_interval.high_s == f.work_s);
    CHECK(f.makespan_bound_s == f.makespan_s);
}

TEST_CASE("a resampled run is scheduled on the planned slots: waves of its own longest cell") {
    // 8 cells on 4 runners per node; the resample doubles the work and the longest cell.
    prof::plan_detail::class_schedule c{8, 8, 1, 1, 1, 4};
    prof::plan_detail::family_schedule sc{{c}, 0, 0};
    prof::plan_detail::family_resamples rs;
    rs.runs = {{{16, 2}}, {{8, 1}}};
    // 1 node: 2 waves of 2 s = 4 s (Graham's (16 - 2) / 4 + 2 = 5.5 s is larger); 2 nodes: one wave.
    CHECK(rs.makespan(sc, 0, 1) == doctest::Approx(4));
    CHECK(rs.makespan(sc, 0, 2) == doctest::Approx(2));
    CHECK(rs.makespan(sc, 1, 1) == doctest::Approx(2));
    CHECK(rs.works() == std::vector<double>{16, 8});
    CHECK(rs.longest_cells() == std::vector<double>{2, 1});
    CHECK(prof::plan_detail::makespan_bound(sc, rs, 1, 0.8) == doctest::Approx(3.8));  // P90 of {2, 4}: 2 + 0.9 x 2
}

TEST_CASE("warm cold starts move every resampled run by the same work and each slot's delay") {
    // 32 series of n_obs 100 on one node of 16 one-core slots; m's cold start 0.8 s x 1.25 =
    // 1 s. Every slot runs m (32 cells > 16 slots): 16 x 1 = 16 s more work in the plan and in
    // each resample (same seed: the same draws), and every makespan 1 s later.
    auto p = fits_at_100({1, 3, 2, 2, 5});
    auto rq = run_of(32);
    rq.deadline_s.reset();
    rq.nodes = 1;
    const auto none = prof::make_plan(&p, rq);
    p.models.at("m").cold_start_s = 0.8;
    const auto plan = prof::make_plan(&p, rq);
    const auto& f0 = none.families.at("f");
    const auto& f = plan.families.at("f");
    REQUIRE(f.slots == 16);
    REQUIRE(f.work_interval.high_s > f.work_interval.low_s);
    CHECK(*f.cold_start_work_s == doctest::Approx(16.0));
    CHECK(f.work_s == doctest::Approx(f0.work_s + 16));
    CHECK(f.work_interval.low_s == doctest::Approx(f0.work_interval.low_s + 16));
    CHECK(f.work_interval.p50_s == doctest::Approx(f0.work_interval.p50_s + 16));
    CHECK(f.work_interval.high_s == doctest::Approx(f0.work_interval.high_s + 16));
    CHECK(f.makespan_s == doctest::Approx(f0.makespan_s + 1));
    CHECK(f.makespan_interval.low_s == doctest::Approx(f0.makespan_interval.low_s + 1));
    CHECK(f.makespan_interval.high_s == doctest::Approx(f0.makespan_interval.high_s + 1));
    CHECK(f.makespan_bound_s == doctest::Approx(f0.makespan_bound_s + 1));
    CHECK(plan.totals.work_s == doctest::Approx(f.work_s));
    CHECK(plan.totals.work_interval.high_s == doctest::Approx(f.work_interval.high_s));
    CHECK(plan.totals.makespan_interval.high_s == doctest::Approx(f.makespan_interval.high_s));
}

TEST_CASE("--target-width gives each resampled model its work interval's width and the fits that reach a target") {
    // Fits of 1 s and 2 s, four each, all at n_obs 100; 100 series of length 100. A resample of 8
    // has the median 1 s when it draws 1 s five times or more (P = 93/256 = 0.363), 1.5 s at
    // four (70/256 = 0.273), 2 s at three or fewer (0.363): its P10 is 1 s, P50 1.5 s, P90 2 s.
    // Work = 100 x the median x the time margin, so the width is (2 - 1) / 1.5 = 2/3 whatever the
    // margin, and a 20 % target needs ceil(8 x (0.6667 / 0.2)^2) = ceil(88.9) = 89 fits.
    auto p = fits_at_100({1, 1, 1, 1, 2, 2, 2, 2});
    auto rq = run_of(100);
    rq.target_width = 0.2;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.target_width == 0.2);
    const auto& f = plan.families.at("f");
    REQUIRE(f.sample_widths.size() == 1);
    const auto& w = f.sample_widths[0];
    CHECK(w.model_type == "m");
    CHECK(w.n_fits == 8);
    CHECK(w.work_interval.high_s / w.work_interval.low_s == doctest::Approx(2.0));
    CHECK(w.work_interval.p50_s / w.work_interval.low_s == doctest::Approx(1.5));
    CHECK(w.width == doctest::Approx(2.0 / 3));
    CHECK(w.fits_needed == 89);
    CHECK_FALSE(w.narrow_enough);
    REQUIRE(!f.warnings.empty());
    CHECK(f.warnings.back() ==
          "m: its work interval is 66.7 % of its P50 wide at 8 fit(s), wider than --target-width 20.0 %: measure "
          "about 89 series (prof-sample --samples 89) to narrow it to the target");
    // On a run of 50 series no sample reaches it: said.
    auto small = run_of(50);
    small.target_width = 0.2;
    CHECK(prof::make_plan(&p, small).families.at("f").warnings.back().find(
              "to narrow it to the target (the run has 50 series: no sample narrows it, plan on the high end)") !=
          std::string::npos);
    // At a 70 % target it is narrow enough: ceil(8 x (0.6667 / 0.7)^2) = ceil(7.26) = 8 fits do.
    rq.target_width = 0.7;
    const auto wide = prof::make_plan(&p, rq).families.at("f");  // a copy: the plan is a temporary
    CHECK(wide.sample_widths[0].narrow_enough);
    CHECK(wide.sample_widths[0].fits_needed == 8);
    for (const auto& warning : wide.warnings) CHECK(warning.find("--target-width") == std::string::npos);
    // Without --target-width nothing is computed, and the record has neither field.
    rq.target_width.reset();
    const auto none = prof::make_plan(&p, rq);
    CHECK(none.families.at("f").sample_widths.empty());
    CHECK(prof::write_plan(none).find("target_width") == std::string::npos);
    CHECK(prof::write_plan(none).find("sample_widths") == std::string::npos);
    CHECK(prof::write_plan(plan).find("\"sample_widths\":[{\"model_type\":\"m\",\"n_fits\":8,") != std::string::npos);
}
