// Unit tests of size classes: the partition of lengths, each class's slot from the memory
// curve, and every rendering's class form.
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

TEST_CASE("size classes: the partition of least slot memory x time, with the fewest classes that earn their share") {
    using prof::choose_size_classes;
    // Memory 1, 1, 4, 4 over equal work: one size costs 4 × 40 = 160; cut after bin 2 costs
    // 1 × 20 + 4 × 20 = 100, and no third class does better.
    CHECK(choose_size_classes({{10, 1}, {10, 1}, {10, 4}, {10, 4}}, 4) == std::vector<std::size_t>{2, 4});
    // Memory 1, 2, 3, 4: one class 160; two 120 (cut after 2: 2 × 20 + 4 × 20); three 110 (cut
    // after 1 and 2: 10 + 20 + 80, the earlier boundary of the ties); four 100.
    const std::vector<prof::length_cost> rising{{10, 1}, {10, 2}, {10, 3}, {10, 4}};
    CHECK(choose_size_classes(rising, 1) == std::vector<std::size_t>{4});
    CHECK(choose_size_classes(rising, 2) == std::vector<std::size_t>{2, 4});
    CHECK(choose_size_classes(rising, 3) == std::vector<std::size_t>{1, 2, 4});
    CHECK(choose_size_classes(rising, 4) == std::vector<std::size_t>{1, 2, 3, 4});
    CHECK(choose_size_classes(rising, 16) == std::vector<std::size_t>{1, 2, 3, 4});  // at most one per bin
    // Flat memory: no class saves anything, so one.
    CHECK(choose_size_classes({{5, 7}, {9, 7}, {1, 7}}, 4) == std::vector<std::size_t>{3});
    CHECK(choose_size_classes({}, 4).empty());
}

TEST_CASE("size classes: a split that saves less than --min-class-saving stays one size") {
    using prof::choose_size_classes;
    // Memory 98, 100 over equal work: one size 100 × 20 = 2000; split 98 × 10 + 100 × 10 = 1980,
    // a 1 % saving. The 5 % default keeps one class; 0.5 % or 0 takes the split.
    const std::vector<prof::length_cost> flat{{10, 98}, {10, 100}};
    CHECK(choose_size_classes(flat, 4) == std::vector<std::size_t>{2});
    CHECK(choose_size_classes(flat, 4, 0.05) == std::vector<std::size_t>{2});
    CHECK(choose_size_classes(flat, 4, 0.005) == std::vector<std::size_t>{1, 2});
    CHECK(choose_size_classes(flat, 4, 0) == std::vector<std::size_t>{1, 2});
    // Memory 1, 2, 3, 4 (one class 160, two 120, three 110, four 100): at 5 % (8 of 160) two
    // classes are 20 above the best, three 10 above, four the best: four. At 10 % (16): three,
    // 10 above the best and 50 below one size. At 25 % (40): two, 20 above and 40 below. At
    // 30 % (48) two save 40 < 48: three (50 below). At 40 % (64): one class is 60 above the
    // best (within 64), so one.
    const std::vector<prof::length_cost> rising{{10, 1}, {10, 2}, {10, 3}, {10, 4}};
    CHECK(choose_size_classes(rising, 4, 0.05) == std::vector<std::size_t>{1, 2, 3, 4});
    CHECK(choose_size_classes(rising, 4, 0.10) == std::vector<std::size_t>{1, 2, 4});
    CHECK(choose_size_classes(rising, 4, 0.25) == std::vector<std::size_t>{2, 4});
    CHECK(choose_size_classes(rising, 4, 0.30) == std::vector<std::size_t>{1, 2, 4});
    CHECK(choose_size_classes(rising, 4, 0.40) == std::vector<std::size_t>{4});
    // A long series far heavier than the rest: one class 100 × 31 = 3100; cut after 3 bins
    // 1 × 30 + 100 × 1 = 130, a 96 % saving.
    const std::vector<prof::length_cost> step{{10, 1}, {10, 1}, {10, 1}, {1, 100}};
    CHECK(choose_size_classes(step, 4, 0.05) == std::vector<std::size_t>{3, 4});
}

namespace {
// ets with a memory curve: 100 MiB at n_obs 12, 200 MiB at 203, 400 MiB at 2284.
prof::compute_profile curved_memory() {
    auto p = curved();
    auto& c = p.models.at("ets");
    c.max_process_rss_bytes = 400 * MiB;
    c.wall_curve[0].max_process_rss_bytes = 100 * MiB;
    c.wall_curve[1].max_process_rss_bytes = 200 * MiB;
    c.wall_curve[2].max_process_rss_bytes = 400 * MiB;
    return p;
}

// cpu_request() over a panel of four series, 12, 12, 203 and 2284 observations long.
prof::plan_request four_series_request() {
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 12, 203, 2284});
    return rq;
}
}  // namespace

TEST_CASE("size classes: a family's cells by length get their own slot memory from the memory curve") {
    // Panel {12, 12, 203, 2284}, one model; work per length (before the 1.25 margin) 2 × 0.006,
    // 0.049, 0.292; slot memory at each length's class end 125, 250, 500 MiB (× 1.25).
    // One size: 500 × 0.353 = 176.5 MiB·s; cut after 203: 250 × 0.061 + 500 × 0.292 = 161.25;
    // three classes 125 × 0.012 + 250 × 0.049 + 146 = 159.75: two are within 5 % of 176.5 (8.8)
    // of the three and save 15.25, more than 8.8: two.
    auto p = curved_memory();
    auto rq = four_series_request();
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_rss_bytes == 500 * MiB);  // the one size
    REQUIRE(f.size_classes.size() == 2);
    const auto& a = f.size_classes[0];
    const auto& b = f.size_classes[1];
    CHECK(a.n_obs_min == 12u);
    CHECK(a.n_obs_max == 203u);
    CHECK(a.first_cell == 0);
    CHECK(a.cells == 3);
    CHECK(a.slot_rss_bytes == 250 * MiB);
    CHECK(a.work_s == doctest::Approx((2 * 0.006 + 0.049) * 1.25));
    CHECK(a.longest_cell_s == doctest::Approx(0.049 * 1.25));
    CHECK(b.n_obs_min == 2284u);
    CHECK(b.first_cell == 3);
    CHECK(b.cells == 1);
    CHECK(b.slot_rss_bytes == 500 * MiB);
    CHECK(f.size_class_saving == doctest::Approx(1 - 161.25 / 176.5));
    CHECK(f.one_size_slot_gib_hours == doctest::Approx(500.0 / 1024 * 0.353 * 1.25 / 3600));
    // Classes run one after another: the family's makespan is theirs summed (each one cell long here).
    CHECK(f.makespan_s == doctest::Approx(a.makespan_s + b.makespan_s));
    CHECK(a.makespan_s == doctest::Approx(0.049 * 1.25));
    // --size-classes 1: one size, today's plan.
    rq.size_classes = 1;
    auto one = prof::make_plan(&p, rq);
    const auto& g = one.families.at("statistical");
    REQUIRE(g.size_classes.size() == 1);
    CHECK(g.size_classes[0].slot_rss_bytes == 500 * MiB);
    CHECK(g.size_classes[0].cells == 4);
    CHECK(g.size_class_saving == 0);
    CHECK(g.makespan_s == doctest::Approx(0.292 * 1.25));
}

TEST_CASE("size classes: a run longer than the sample grows the one size along the memory curve") {
    // Past 2284: 400 MiB + (400 − 200) MiB / (2284 − 203) per observation × (4568 − 2284).
    auto p = curved_memory();
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 4568});
    rq.size_classes = 1;
    auto plan = prof::make_plan(&p, rq);
    const double grown = 400.0 * MiB + 200.0 * MiB / 2081 * 2284;
    const auto want = prof::scale_bytes_up(static_cast<std::uint64_t>(std::ceil(grown)), 1.25);
    CHECK(plan.families.at("statistical").slot_rss_bytes == want);
    CHECK(want > 500 * MiB);  // never below the largest measured peak × margin
}

TEST_CASE("size classes: a model without a memory curve keeps its maximum in every class") {
    auto p = curved();  // no memory on its curve: every class 125 MiB, so one class
    auto rq = four_series_request();
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    REQUIRE(f.size_classes.size() == 1);
    CHECK(f.size_classes[0].slot_rss_bytes == 125 * MiB);
    CHECK(f.size_classes[0].n_obs_min == 12u);
    CHECK(f.size_classes[0].n_obs_max == 2284u);
    // No lengths at all: one class, its range null.
    auto none = prof::make_plan(&p, cpu_request());
    CHECK(!none.families.at("statistical").size_classes[0].n_obs_min);
    rq.size_classes = 0;
    CHECK_THROWS_AS(prof::make_plan(&p, rq), prof::usage_error);
    rq.size_classes = 17;
    CHECK_THROWS_AS(prof::make_plan(&p, rq), prof::usage_error);
}

TEST_CASE("size classes in every rendering: a Job, a resource block, Spark block and Ray options per class") {
    auto p = curved_memory();
    auto rq = four_series_request();
    rq.layout = "k8s";
    auto plan = prof::make_plan(&p, rq);
    const std::string job = prof::render_k8s_job(plan);
    CHECK(job.find("name: prof-statistical-c1\n") != std::string::npos);
    CHECK(job.find("name: prof-statistical-c2\n") != std::string::npos);
    CHECK(job.find("- name: PROF_FIRST_CELL\n          value: \"3\"\n") != std::string::npos);
    CHECK(job.find("memory: \"250Mi\"") != std::string::npos);
    CHECK(job.find("memory: \"500Mi\"") != std::string::npos);
    const std::string k8s = prof::render_k8s(plan);
    CHECK(k8s.find("size class 2 of 2 (n_obs 2284 to 2284: cells 3 to 3") != std::string::npos);
    rq.layout = "ray";
    const std::string ray = prof::render_ray(prof::make_plan(&p, rq));
    const std::string line = ray.substr(ray.rfind('\n') + 1);
    auto j = prof::parse_json_text(line);
    const prof::json_value& classes = *j.find("statistical");
    REQUIRE(classes.t == prof::json_value::type::array);
    REQUIRE(classes.arr.size() == 2);
    CHECK(classes.arr[0].find("options")->find("memory")->i == std::int64_t(250 * MiB));
    CHECK(classes.arr[1].find("first_cell")->i == 3);
    rq.layout = "spark";
    const std::string spark = prof::render_spark(prof::make_plan(&p, rq));
    CHECK(spark.find("# 2 size classes below, one block each") != std::string::npos);
    CHECK(spark.find("size class 1 of 2") != std::string::npos);
}

TEST_CASE("size classes as k8s Jobs: each pays its own cold starts, takes its share of the deadline, has a retry Job") {
    auto p = curved_memory();
    p.models.at("ets").cold_start_s = 2.0;
    auto rq = four_series_request();  // deadline 60 s, no headroom, no pod start
    rq.layout = "k8s";
    rq.cold_start_per_process = true;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    REQUIRE(f.size_classes.size() == 2);
    const auto& a = f.size_classes[0];
    const auto& b = f.size_classes[1];
    // One pod per cell: class a starts 3 processes, b one, each 2 s × the 1.25 time margin.
    REQUIRE(a.cold_start_work_s);
    CHECK(*a.cold_start_work_s == doctest::Approx(3 * 2.0 * 1.25));
    CHECK(*b.cold_start_work_s == doctest::Approx(2.0 * 1.25));
    CHECK(a.work_s == doctest::Approx((2 * 0.006 + 0.049) * 1.25 + 7.5));
    CHECK(a.longest_cell_s == doctest::Approx(0.049 * 1.25 + 2.5));
    CHECK(b.longest_cell_s == doctest::Approx(0.292 * 1.25 + 2.5));
    CHECK(f.work_s == doctest::Approx(a.work_s + b.work_s));
    CHECK(*f.cold_start_work_s == doctest::Approx(10.0));
    CHECK(f.one_size_slot_gib_hours == doctest::Approx(500.0 / 1024 * f.work_s / 3600));
    CHECK(f.makespan_s == doctest::Approx(a.makespan_s + b.makespan_s));
    // Each class's Job: the deadline's share that its makespan is of the two, rounded up.
    CHECK(a.makespan_s == doctest::Approx(0.049 * 1.25 + 2.5));
    CHECK(b.makespan_s == doctest::Approx(0.292 * 1.25 + 2.5));
    const std::string job = prof::render_k8s_job(plan);
    const double share_a = 60 * a.makespan_s / (a.makespan_s + b.makespan_s);  // 28.3 s
    CHECK(job.find(fmt::format("activeDeadlineSeconds: {}\n", std::ceil(share_a))) != std::string::npos);
    CHECK(job.find(fmt::format("activeDeadlineSeconds: {}\n", std::ceil(60 - share_a))) != std::string::npos);
    CHECK(job.find("activeDeadlineSeconds: 60\n") == std::string::npos);
    CHECK(job.find("--retry-indexes LIST --retry-class 2 and apply") != std::string::npos);
    // Warm workers (one pool per class): each class's cells are fewer than its slots, so each
    // cell is its slot's first: the same cold starts as one pod per cell here (see the next case).
    rq.cold_start_per_process = false;
    auto warm = prof::make_plan(&p, rq);
    const auto& wa = warm.families.at("statistical").size_classes[0];
    REQUIRE(wa.cold_start_work_s);
    CHECK(*wa.cold_start_work_s == doctest::Approx(3 * 2.0 * 1.25));
    CHECK(wa.work_s == doctest::Approx((2 * 0.006 + 0.049) * 1.25 + 7.5));
    CHECK(wa.makespan_s == doctest::Approx(0.049 * 1.25 + 2.5));
    // The retry tier of a class's Job: --retry-class names it; without it, or past the classes, 64.
    prof::render_options o;
    o.retry_indexes = std::vector<std::uint64_t>{0};
    int code = 0;
    CHECK(error_text([&] { prof::render_k8s_job(plan, o); }, &code).find("--retry-class N") != std::string::npos);
    CHECK(code == 64);
    o.retry_class = 3;
    CHECK(error_text([&] { prof::render_k8s_job(plan, o); }, &code).find("runs as 2 size class(es), not 3") != std::string::npos);
    o.retry_class = 2;
    const std::string retry = prof::render_k8s_job(plan, o);
    CHECK(retry.find("name: prof-statistical-c2-retry\n") != std::string::npos);
    CHECK(retry.find("- name: PROF_SIZE_CLASS\n          value: \"2\"\n") != std::string::npos);
    CHECK(retry.find("- name: PROF_FIRST_CELL\n          value: \"3\"\n") != std::string::npos);
    CHECK(retry.find("- name: PROF_INDEXES\n          value: \"0\"\n") != std::string::npos);
    CHECK(retry.find("activeDeadlineSeconds") == std::string::npos);
    o.retry_indexes = std::vector<std::uint64_t>{1};  // class 2's Job has one index
    CHECK_THROWS_AS(prof::render_k8s_job(plan, o), prof::usage_error);
}

TEST_CASE("a plan with size classes read back by its schema writes the same bytes") {
    auto p = curved_memory();
    auto rq = four_series_request();
    auto plan = prof::make_plan(&p, rq);
    REQUIRE(plan.families.at("statistical").size_classes.size() > 1);
    const std::string text = prof::write_plan(plan);
    prof::plan_record back;
    prof::parse_object_text(text, [&](simdjson::ondemand::object& o) { back = prof::read_plan(o); });
    CHECK(back.run.slack.headroom != plan.run.slack.headroom);  // written from the request, not read back
    back.run.limits = plan.run.limits;
    back.run.slack = plan.run.slack;
    CHECK(prof::write_plan(back) == text);
    // A field of the wrong type is named with its path.
    std::string bad = text;
    bad.replace(bad.find("\"makespan_lower_s\":"), 19, "\"makespan_lower_s\":\"x\",\"ignored\":");
    CHECK_THROWS_WITH(prof::parse_object_text(bad, [](simdjson::ondemand::object& o) { prof::read_plan(o); }),
                      doctest::Contains("makespan_lower_s"));
}

TEST_CASE("size classes with warm workers: each class's slots pay the cold start, each class starts later") {
    // The four-series panel scaled to 400 series (200 of n_obs 12, 100 of 203, 100 of 2284) on
    // one Ray node of 16 one-core slots; ets's cold start 2 s x 1.25 = 2.5 s. Class a's 300
    // cells and class b's 100 both outnumber the 16 slots: each class adds 16 x 2.5 = 40 s of
    // work, and each class's slots start 2.5 s later (they run one model).
    auto p = curved_memory();
    auto rq = four_series_request();
    rq.series = 400;
    rq.deadline_s.reset();
    rq.nodes = 1;
    const auto none = prof::make_plan(&p, rq).families.at("statistical");
    p.models.at("ets").cold_start_s = 2.0;
    const auto f = prof::make_plan(&p, rq).families.at("statistical");
    REQUIRE(f.size_classes.size() == 2);
    REQUIRE(none.size_classes.size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
        const auto& c = f.size_classes[k];
        CHECK(c.slots == 16);
        REQUIRE(c.cold_start_work_s);
        CHECK(*c.cold_start_work_s == doctest::Approx(40.0));
        CHECK(c.work_s == doctest::Approx(none.size_classes[k].work_s + 40.0));
        CHECK(c.makespan_s == doctest::Approx(none.size_classes[k].makespan_s + 2.5));
        CHECK(c.slot_gib_hours == doctest::Approx(static_cast<double>(c.slot_rss_bytes) / GiB * c.work_s / 3600));
    }
    CHECK(*f.cold_start_work_s == doctest::Approx(80.0));
    CHECK(f.work_s == doctest::Approx(none.work_s + 80.0));
    CHECK(f.makespan_s == doctest::Approx(none.makespan_s + 5.0));
    CHECK(f.one_size_slot_gib_hours == doctest::Approx(500.0 / 1024 * f.work_s / 3600));
    CHECK(f.size_class_saving == doctest::Approx(1 - f.slot_gib_hours / f.one_size_slot_gib_hours));
}
