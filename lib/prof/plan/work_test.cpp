// Unit tests of a whole run's plan: its lengths, work on the cost curve, families one after
// another, --strict and the plan's goal.
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("with --panel the work is the curve summed over the panel's lengths, the makespan at least the longest cell") {
    auto p = curved();
    auto rq = cpu_request();
    rq.series = 0;  // the panel's 4 series
    rq.panel = panel_of({12, 12, 107, 2284});
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    double at107 = 0.006 + (107.0 - 12) / (203 - 12) * (0.049 - 0.006);
    CHECK(plan.run.series == 4);
    CHECK(plan.run.length_source == "panel");
    CHECK(plan.run.max_n_obs == 2284u);
    CHECK(f.wall_estimator == "curve");
    CHECK(f.work_s == doctest::Approx((2 * 0.006 + at107 + 0.292) * 1.25));
    CHECK(f.longest_cell_s == doctest::Approx(0.292 * 1.25));
    CHECK(f.longest_cell_n_obs == 2284u);
    CHECK(f.makespan_s == doctest::Approx(0.292 * 1.25));  // one 0.365 s cell outlasts work / 16 slots
    // --series scales the panel's shape: 4000 series = 1000 × each of the 4.
    rq.series = 4000;
    auto scaled = prof::make_plan(&p, rq);
    CHECK(scaled.families.at("statistical").work_s == doctest::Approx(1000 * (2 * 0.006 + at107 + 0.292) * 1.25));
}

TEST_CASE("the whole-cell schedule runs on the curve's work and longest cell") {
    // 4000 series shaped like the panel {12, 12, 107, 2284}: work W = 1000 × the four cells,
    // the longest cell L = 0.292 × 1.25 = 0.365 s (n_obs 2284). On 16 slots Graham's bound
    // (W − L) / 16 + L (26.2 s) beats 250 waves × L (91.25 s); a 20 s deadline needs 2 nodes.
    auto p = curved();
    auto rq = cpu_request();
    rq.series = 4000;
    rq.panel = panel_of({12, 12, 107, 2284});
    rq.deadline_s = 20;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    const double W = f.work_s, L = 0.292 * 1.25;
    CHECK(f.longest_cell_s == doctest::Approx(L));
    CHECK(f.nodes == 2);
    CHECK(f.makespan_s == doctest::Approx((W - L) / 32 + L));
    CHECK(prof::schedule_makespan(4000, W, L, 1, 1, 16) == doctest::Approx((W - L) / 16 + L));
    CHECK((W - L) / 16 + L > 20);
}

TEST_CASE("a panel longer than any measured series is extrapolated and warned about, for time and memory") {
    auto p = curved();
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 4568});
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    // 4568 = 2 × 2284; the last segment's log-log slope is below 1, so proportional: 0.584 s.
    CHECK(f.longest_cell_s == doctest::Approx(0.584 * 1.25));
    CHECK(f.work_s == doctest::Approx((0.006 + 0.584) * 1.25));
    REQUIRE(f.warnings.size() == 2);
    CHECK(f.warnings[0] == "model 'ets': the run's longest series has n_obs 4568, its longest measured fit 2284: its "
                           "memory and time were not measured at that length; measure the longest series");
    CHECK(f.warnings[1].find("model 'ets': the run holds series of n_obs 4568, longer than any measured (2284)") == 0);
}

TEST_CASE("the profile's sample record gives the run's lengths when there is no --panel") {
    auto p = curved();
    p.sample = prof::parse_json_text(
        R"({"kind":"sample","lengths":[{"n_obs":12,"n_obs_min":12,"n_obs_max":12,"n_series":3},)"
        R"({"n_obs":2284,"n_obs_min":2284,"n_obs_max":2284,"n_series":1}]})");
    auto rq = cpu_request();
    rq.series = 400;  // 300 of length 12, 100 of 2284
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.length_source == "sample");
    CHECK(plan.families.at("statistical").work_s == doctest::Approx((300 * 0.006 + 100 * 0.292) * 1.25));
    CHECK(plan.warnings.empty());
}

TEST_CASE("a harvested profile prices each model over its own measured lengths") {
    auto p = curved();
    p.provenance.source = "harvest";
    auto rq = cpu_request();
    rq.series = 8;  // the curve's own 8 fits: 6 × 12, 1 × 203, 1 × 2284
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.length_source == "harvest");
    CHECK(plan.families.at("statistical").work_s == doctest::Approx((6 * 0.006 + 0.049 + 0.292) * 1.25));
}

TEST_CASE("an OOM kill raises the plan's slot above the limit it died at") {
    auto p = statistical();
    p.models.at("theta").n_oom_killed = 1;
    p.models.at("theta").oom_limit_bytes = 512 * MiB;
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("statistical");
    CHECK(f.oom_floor_bytes == 644245095u);  // ceil(512 MiB × 1.2), above 512 MiB + 100 MiB
    CHECK(f.slot_rss_bytes == 644245095u);   // above arima's 250 MiB
    CHECK(f.basis.memory == "measured");
    CHECK(f.warnings[0].find("model 'theta': 1 fit(s) killed for memory, the largest limit 512.00 MiB") == 0);
}

TEST_CASE("--strict refuses a plan with an assumed axis or no profile") {
    auto rq = cpu_request();
    rq.strict = true;
    rq.models = {"a"};
    CHECK(coded_error([&] { prof::make_plan(nullptr, rq); }) ==
          "65: --strict: no profile on the input: nothing measured to plan from");
    auto p = profile_of({model("theta", "statistical", 5, std::nullopt, 100 * MiB, std::nullopt, 0.25)});
    rq.models.clear();
    CHECK(coded_error([&] { prof::make_plan(&p, rq); }) ==
          "65: --strict: assumed axes in family 'statistical' (cores): measure them, or plan without --strict");
    auto measured = statistical();  // every axis measured
    CHECK_NOTHROW(prof::make_plan(&measured, rq));
}

TEST_CASE("--strict refuses a family that cannot meet its deadline, naming why") {
    // One 125 s cell against a 60 s deadline: no node count meets it.
    auto p = profile_of({model("slow", "f", 5, 1.0, 1 * GiB, std::nullopt, 100.0)});
    auto rq = cpu_request();
    rq.strict = true;
    CHECK(coded_error([&] { prof::make_plan(&p, rq); }) ==
          "65: --strict: family 'f' cannot meet the deadline 60.00 s: one cell of model 'slow' takes 2.1 min (planned); "
          "63 node(s) run every cell at once and take 2.1 min; raise --deadline");
    rq.deadline_s = 150;  // 125 s cells in one wave of 63 nodes, or 2 waves (250 s) on fewer: 63 nodes
    CHECK(prof::make_plan(&p, rq).families.at("f").nodes == 63);
}

TEST_CASE("k8s-job: Job names are DNS labels from the family, distinct when two families fold together") {
    auto p = profile_of({model("a", "Neural_Nets", 5, 1.0, 100 * MiB, std::nullopt, 1.0),
                         model("b", "neural.nets", 5, 1.0, 100 * MiB, std::nullopt, 1.0)});
    auto rq = cpu_request();
    rq.layout = "k8s";
    auto j = prof::render_k8s_job(prof::make_plan(&p, rq));
    // Families in map order: "Neural_Nets" < "neural.nets".
    CHECK(j.find("  name: prof-neural-nets\n") != std::string::npos);
    CHECK(j.find("  name: prof-neural-nets-2\n") != std::string::npos);
    CHECK(j.find("          value: \"Neural_Nets\"\n") != std::string::npos);  // PROF_FAMILY keeps the name
}

// Two families of 3 cells of 40 min each (2400 s with the 1.25 margin: 1920 s measured), one
// core per slot, on 80-core nodes: each family meets 60 min alone on 1 node, but one after
// another on the same nodes they take 2400 + 2400 = 4800 s > 3600 s, whatever the node count.
TEST_CASE("--strict refuses families that meet the deadline each but not one after another") {
    auto p = profile_of({model("a", "fa", 3, 1.0, 100 * MiB, std::nullopt, 1920),
                         model("b", "fb", 3, 1.0, 100 * MiB, std::nullopt, 1920)});
    auto rq = cpu_request();
    rq.series = 3;
    rq.node.cores = 80;
    rq.deadline_s = 3600;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.families.at("fa").meets_deadline == true);
    CHECK(plan.families.at("fb").meets_deadline == true);
    CHECK(plan.totals.nodes == 1);
    CHECK(plan.totals.makespan_s == 4800);
    CHECK(plan.totals.meets_deadline == false);
    for (const char* t : {"spark", "ray", "k8s", "k8s-job", "table"}) {
        rq.layout = prof::layout_for_target(t, "");
        auto q = prof::make_plan(&p, rq);
        CAPTURE(t);
        CHECK(prof::render_plan(q, t).find("DOES NOT MEET THE DEADLINE") != std::string::npos);
    }
    rq.layout = "ray";
    rq.strict = true;
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code).find("--strict: the families one after another on 1 "
                                                                     "node(s) take 80.0 min, past the deadline 60.0 min") == 0);
    CHECK(code == 65);
}

// fa: 160 cells of 30 s (24 s × 1.25), fb the same, 1 core each, 16-core nodes. Alone each
// meets 400 s on 1 node: 10 waves × 30 s = 300 s. One after another on 1 node: 600 s > 400 s;
// on 2 nodes 5 waves each, 150 + 150 = 300 s: the totals take 2 nodes and every family is
// deployed on them, so the renderings run what the sum priced.
TEST_CASE("families one after another get the nodes that make their summed makespans meet the deadline") {
    auto p = profile_of({model("a", "fa", 3, 1.0, 100 * MiB, std::nullopt, 24),
                         model("b", "fb", 3, 1.0, 100 * MiB, std::nullopt, 24)});
    auto rq = request_of({.series = 160, .deadline_s = 400}, cpu_request());
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.totals.nodes == 2);
    CHECK(plan.totals.makespan_s == 300);
    CHECK(plan.totals.meets_deadline == true);
    for (const auto& [name, f] : plan.families) {
        CAPTURE(name);
        CHECK(f.nodes == 2);
        CHECK(f.slots == 32);
        CHECK(f.waves == 5);
        CHECK(f.makespan_s == 150);
    }
}

// A CPU model measured at 0 GPU bytes on a GPU node is "measured none": its slot asks no GPU,
// even with --default-gpu-memory for the unmeasured GPU model beside it; 16 cores, 1 core per
// slot → 16 slots, not halved by a device share.
TEST_CASE("a measured 0 GPU bytes asks no GPU, even with a default GPU memory") {
    auto p = profile_of({model("c", "cpu", 3, 1.0, 100 * MiB, 0, 1.0), model("g", "gf", 3, 1.0, 100 * MiB, 80000000, 10.0)});
    auto rq = cpu_request();
    rq.series = 100;
    rq.deadline_s.reset();
    rq.nodes = 1;
    rq.node.gpus = 1;
    rq.node.gpu_memory_bytes = 16 * GiB;
    rq.defaults.gpu_memory_bytes = 2 * GiB;
    rq.models = {"c", "g", "newgpu"};
    rq.model_families = {{"newgpu", "gf"}};
    rq.on_unmeasured = prof::unmeasured_policy::defaults;
    auto plan = prof::make_plan(&p, rq);
    const auto& c = plan.families.at("cpu");
    CHECK_FALSE(c.slot_gpu_bytes.has_value());
    CHECK_FALSE(c.gpu_fraction.has_value());
    CHECK(c.basis.gpu == "measured");
    CHECK(c.slots_per_node == 16);
    CHECK(plan.families.at("gf").slot_gpu_bytes == 2 * GiB);  // max(80 MB × 1.25, the 2 GiB default)
}

// An Indexed Job hands pending indexes to free pods, so Graham's bound holds over indexes:
// 41 cells (40 of 1.1 s, one of 1375 s; work 1419 s), 2 cells per index (2 slots per pod, one
// round) on 2 pods: waves ceil(21 / 2) × 1375 = 15125 s, Graham (1419 − 1375) / 2 + 1375 =
// 1397 s. With 3 rounds per index (D = 3 × 1375 = 4125 s) the same work gives
// on 1 pod max(0, 1419 − 4125) / 1 + 4125 = 4125 s, below the 7 indexes × 4125 s of waves.
TEST_CASE("k8s: pods of several slots per index take the smaller of waves and Graham's bound over indexes") {
    CHECK(prof::schedule_makespan(41, 1419, 1375, 2, 2, 2) == 1397);
    CHECK(prof::schedule_makespan(41, 1419, 1375, 6, 2, 1) == 4125);
    CHECK(prof::schedule_makespan(8, 8, 1, 2, 2, 2) == 2);  // equal cells: waves, 2 × 1 s, Graham 4.5 s
}

// Spark 3.x: tasks per device = floor(1.0 / spark.task.resource.gpu.amount) in doubles. The
// nearest double to 1/93 gives 92 (1 / 0.010752688172043012 = 92.99999999999999); the amount
// written must read back to a double that gives exactly k, for every k a device may hold, and
// never exceed 1/k (so a scale-and-truncate rule also gives at least k).
TEST_CASE("spark: the task GPU amount, as written, gives exactly k tasks per device for every k to 512") {
    CHECK(std::floor(1.0 / (1.0 / 93)) == 92);  // the defect: the plain fraction loses one task
    for (std::uint64_t k = 1; k <= 512; ++k) {
        CAPTURE(k);
        const std::string text = prof::format_double(prof::spark_task_gpu_amount(k));
        const double read = std::strtod(text.c_str(), nullptr);
        CHECK(std::floor(1.0 / read) == static_cast<double>(k));
        CHECK(read <= 1.0 / static_cast<double>(k));
        CHECK(read > 1.0 / static_cast<double>(k + 1));
    }
    CHECK(prof::spark_task_gpu_amount(1) == 1.0);
    CHECK(prof::spark_task_gpu_amount(4) == 0.25);  // exact in binary: unchanged
}

TEST_CASE("a plan's goal is exactly one of a positive deadline and a positive node count") {
    prof::check_plan_goal(60.0, std::nullopt);
    prof::check_plan_goal(std::nullopt, std::uint64_t{3});
    CHECK_THROWS_WITH_AS(prof::check_plan_goal(std::nullopt, std::nullopt),
                         "give --deadline (to get a node count) or --nodes (to get a makespan)", prof::usage_error);
    CHECK_THROWS_WITH_AS(prof::check_plan_goal(60.0, std::uint64_t{3}),
                         "give exactly one of --deadline (to get a node count) and --nodes (to get a makespan)",
                         prof::usage_error);
    CHECK_THROWS_WITH_AS(prof::check_plan_goal(0.0, std::nullopt), "--deadline must be a positive duration",
                         prof::usage_error);
    CHECK_THROWS_WITH_AS(prof::check_plan_goal(std::nullopt, std::uint64_t{0}), "--nodes must be a positive integer",
                         prof::usage_error);
}

TEST_CASE("a reference profile without --models is refused (65): it does not say which models this run fits") {
    auto p = statistical();
    p.provenance.basis = "reference";
    p.provenance.source = "baseline";
    int code = 0;
    CHECK(coded_error([&] { prof::make_plan(&p, cpu_request()); }) ==
          "65: the profile is reference evidence (source 'baseline': another run, or the baseline), which does not say "
          "which models this run fits; name them: prof-plan --models NAME[:FAMILY],... (models the evidence lacks "
          "then follow --on-unmeasured)");
    // Named, a model the evidence lacks follows --on-unmeasured: fail by default, defaults on request.
    auto rq = cpu_request();
    rq.models = {"theta", "prophet"};
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code).find("model 'prophet' (family 'prophet') is not in the "
                                                                     "profile") == 0);
    rq.on_unmeasured = prof::unmeasured_policy::defaults;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.models == std::vector<std::string>{"prophet", "theta"});
}

TEST_CASE("a measured pre-pass plans the models its sample record names, in their declared families") {
    auto p = statistical();  // arima and theta measured
    p.sample = prof::parse_json_text(
        R"({"kind":"sample","lengths":[{"n_obs":12,"n_obs_min":12,"n_obs_max":12,"n_series":3}],)"
        R"("models":[{"model_type":"theta","family":"statistical"},{"model_type":"naive","family":"baseline"}]})");
    auto rq = cpu_request();
    rq.on_unmeasured = prof::unmeasured_policy::defaults;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.models == std::vector<std::string>{"naive", "theta"});  // arima was not sampled for this run
    CHECK(plan.families.count("baseline") == 1);                            // naive, unmeasured, in its declared family
    CHECK(plan.families.at("statistical").models == std::vector<std::string>{"theta"});
}
