// Unit tests of the schedulers' own rules: headroom, pod start and the Job controller's rate,
// failed indexes, YARN's containers, the Spark driver, GPU spread and cold starts.
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>

namespace {
// m: 1 core, 100 MiB, 48 s measured (60 s with the 1.25 margin): equal cells.
prof::compute_profile one_minute_cells() { return profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 48.0)}); }
}  // namespace

TEST_CASE("the default headroom holds the makespan to 90% of the deadline, and buys the node that needs") {
    auto p = one_minute_cells();
    auto rq = request_of({.series = 320, .deadline_s = 600}, cpu_request());
    // No headroom: 10 waves of 60 s on 32 slots, 2 nodes, exactly 600 s.
    CHECK(prof::make_plan(&p, rq).families.at("f").nodes == 2);
    rq.slack.headroom = 0.1;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(plan.run.planned_deadline_s == 540);
    // 540 s holds 9 waves: ceil(320 / 9) = 36 slots, 3 nodes of 16; then ceil(320 / 48) = 7 waves.
    CHECK(f.nodes == 3);
    CHECK(f.waves == 7);
    CHECK(f.makespan_s == 420);
}

TEST_CASE("a deadline no node count meets is exit 65 by default, naming the way to write it anyway") {
    auto p = one_minute_cells();
    auto rq = request_of({.series = 10, .node = cpu_node(16, 64 * GiB), .deadline_s = 50});
    CHECK(coded_error([&] { prof::make_plan(&p, rq); }) ==
          "65: family 'f' cannot meet the deadline 50.00 s less 10% headroom (45.00 s): one cell of model 'm' takes 60.00 s "
          "(planned); 1 node(s) run every cell at once and take 60.00 s; raise --deadline; or write it anyway with "
          "--allow-missed-deadline");
    rq.allow_missed_deadline = true;
    CHECK(prof::make_plan(&p, rq).families.at("f").meets_deadline == false);
}

TEST_CASE("k8s: every Job index pays the pod start, and the controller's rate bounds short cells") {
    auto p = one_minute_cells();
    // the defaults: 10% headroom, 10 s pod start, 20 pods/s
    auto rq = request_of(
        {.series = 320, .node = cpu_node(16, 64 * GiB), .layout = "k8s", .deadline_s = 600});
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    // An index lasts 70 s; 540 s holds 7 of them: ceil(320 / 7) = 46 pods, 3 nodes; 7 rounds = 490 s.
    CHECK(f.layout.unit_start_s == 10);
    CHECK(f.nodes == 3);
    CHECK(f.makespan_s == doctest::Approx(490 + 47.0 / 20));  // the 48 first pods are created over 2.35 s
    // 15000 cells of 0.25 s (0.2 s measured): the controller creates the last pod at 14999 / 20 s.
    auto q = profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 0.2)});
    rq.series = 15000;
    rq.deadline_s.reset();
    rq.nodes = 100;  // 1600 pods: 10 rounds of 10.25 s, but the rate binds
    auto short_cells = prof::make_plan(&q, rq).families.at("f");
    CHECK(short_cells.makespan_s == doctest::Approx(14999.0 / 20 + 10 + 0.25));
    CHECK(short_cells.makespan_lower_s == doctest::Approx(14999.0 / 20 + 10));
    CHECK(prof::rate_limited_makespan(100, 15000, 1600, 0.25, 10, 20) == doctest::Approx(749.95 + 10.25));
    CHECK(prof::rate_limited_makespan(900, 15000, 1600, 0.25, 10, 20) == doctest::Approx(900 + 1599.0 / 20));
}

TEST_CASE("k8s-job: the failed indexes a Job tolerates follow the profile's failure share") {
    // 10000 indexes of 1 cell, 1% failing: mean 100, sd sqrt(99) = 9.95: 100 + 39.8 + 10 = 149.8.
    CHECK(prof::failed_items_allowance(10000, 1, 0.01) == 150);
    CHECK(prof::failed_items_allowance(500, 1, 0) == 10);
    CHECK(prof::failed_items_allowance(5, 1, 0) == 5);  // never more than the indexes
    // 4 cells per index: q = 1 - 0.99^4 = 0.0394; 2500 indexes: 98.5 + 4 x 9.73 + 10 = 147.4.
    CHECK(prof::failed_items_allowance(2500, 4, 0.01) == 148);
    auto p = profile_of({model("m", "f", 99, 1.0, 100 * MiB, std::nullopt, 0.8)});
    p.models.at("m").n_fits = 100;  // 1 of 100 fits failed
    auto rq = request_of({.series = 10000, .layout = "k8s", .deadline_s = 3600}, cpu_request());
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.failure_share == 0.01);
    CHECK(f.max_failed_items == 150);
    CHECK(f.layout.retry_unit_memory_bytes == 225 * MiB);  // max(ceil(125 MiB x 1.2), 125 + 100 MiB)
    CHECK(f.layout.retry_units_per_node == 16);
    CHECK(f.layout.retry_items == 0u);  // no fit was killed for memory
    // 2 of 100 fits killed for memory: 2% of 10000 one-cell indexes, 200, run by the retry pods
    // (16 a node) on the family's nodes after its Job, each a 1 s cell and no pod start.
    p.models.at("m").n_ok = 98;
    p.models.at("m").n_oom_killed = 2;
    p.models.at("m").oom_limit_bytes = 100 * MiB;
    auto oom = prof::make_plan(&p, rq).families.at("f");
    CHECK(oom.layout.retry_items == 200u);
    CHECK(oom.layout.retry_makespan_s == static_cast<double>((200 + 16 * oom.nodes - 1) / (16 * oom.nodes)) * 1.0);
    auto j = prof::render_k8s_job(plan);
    CHECK(j.find("  maxFailedIndexes: 150\n  podFailurePolicy:\n    rules:\n    - action: Ignore\n      onPodConditions:\n"
                 "      - type: DisruptionTarget\n    - action: FailIndex\n") != std::string::npos);
    prof::render_options o;
    o.retry_indexes = prof::parse_index_list("7,1,3-5", "--retry-indexes");
    CHECK(*o.retry_indexes == std::vector<std::uint64_t>{1, 3, 4, 5, 7});
    auto r = prof::render_k8s_job(plan, o);
    CHECK(r.find("  name: prof-f-retry\n") != std::string::npos);
    CHECK(r.find("  completions: 5\n  parallelism: 5\n  backoffLimitPerIndex: 1\n  maxFailedIndexes: 5\n") != std::string::npos);
    CHECK(r.find("        - name: PROF_INDEXES\n          value: \"1,3-5,7\"\n") != std::string::npos);
    CHECK(r.find("memory: \"225Mi\"") != std::string::npos);
    CHECK(r.find("activeDeadlineSeconds") == std::string::npos);
    o.retry_indexes = std::vector<std::uint64_t>{10000};
    CHECK_THROWS_AS(prof::render_k8s_job(plan, o), prof::usage_error);
    CHECK_THROWS_AS(prof::parse_index_list("3-", "--retry-indexes"), prof::usage_error);
    CHECK_THROWS_AS(prof::parse_index_list("5-3", "--retry-indexes"), prof::usage_error);
}

TEST_CASE("spark on YARN: containers round up to the minimum allocation, and the node holds what YARN grants") {
    // 3.75 GiB slots of 1 core on 64 GiB, 16-core nodes under a 16 GiB container cap.
    auto p = profile_of({model("m", "f", 5, 1.0, 3 * GiB, std::nullopt, 48.0)});  // x 1.25 = 3840 MiB
    auto rq =
        request_of({.series = 1000, .node = cpu_node(16, 64 * GiB), .layout = "spark", .nodes = 4});
    rq.limits.max_container_memory_bytes = 16 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& L = plan.families.at("f").layout;
    // 4 slots: 1024 + 384 + 15360 = 16768 MiB > 16384. 3 slots: 12928 MiB, granted 13312: 4 of them,
    // 12 slots (unrounded, 5 executors and 15 slots would be planned and 4 would fit). 2 slots:
    // 1024 + 384 + 7680 = 9088 MiB, granted 9216: 7 of them, 14 slots, the most.
    CHECK(L.slots_per_unit == 2);
    CHECK(L.units_per_node == 7);
    CHECK(L.container_bytes == 9216 * MiB);
    CHECK(L.overhead_bytes == 8192 * MiB);
    // The ApplicationMaster (1408 MiB, granted 2048) leaves 63488 MiB: 6 executors on its node.
    CHECK(L.reserved_units == 1);
    CHECK(plan.families.at("f").slots == 54);  // 4 x 14 - 2
    auto s = prof::render_spark(plan);
    CHECK(s.find("\nspark.executor.memoryOverhead                    8192m\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.instances                         27\n") != std::string::npos);
    CHECK(s.find("\nspark.submit.deployMode                          cluster\n") != std::string::npos);
    // The default maximum-allocation-vcores of 4 splits a 16-core executor of 4-core slots.
    auto q = profile_of({model("m", "f", 5, 3.5, 1 * GiB, std::nullopt, 48.0)});
    rq.limits.max_container_memory_bytes.reset();
    auto plan2 = prof::make_plan(&q, rq);
    CHECK(plan2.families.at("f").layout.slots_per_unit == 1);
    CHECK(plan2.families.at("f").layout.unit_cores == 4);
    rq.limits.yarn_max_vcores = 3;
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(&q, rq); }, &code).find("more than YARN's "
                                                                   "yarn.scheduler.maximum-allocation-vcores 3") != std::string::npos);
    CHECK(code == 65);
}

TEST_CASE("spark: the driver's container displaces the executors it does not leave room for") {
    // 4 executors of 4 slots x 3 GiB (heap 1 GiB + 384 MiB + 12 GiB = 13696 MiB, granted 14336)
    // fill a 56 GiB node; the AM's 2048 MiB leaves 55296: 3 executors there.
    auto p = profile_of({model("m", "f", 5, 1.0, 2458 * MiB, std::nullopt, 48.0)});  // x 1.25 = 3072.5 MiB
    auto rq =
        request_of({.series = 100, .node = cpu_node(16, 56 * GiB), .layout = "spark", .nodes = 2});
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.layout.slots_per_unit == 4);
    CHECK(f.layout.units_per_node == 4);
    CHECK(f.layout.reserved_units == 1);
    CHECK(f.slots == 28);  // 2 nodes x 16 slots - 4
    CHECK(prof::render_spark(plan).find("\nspark.executor.instances                         7\n") != std::string::npos);
}

TEST_CASE("GPU slots spread over every device: 96 slots on 8 devices are 12 a device, not 39") {
    auto p = profile_of({model("nbeats", "neural", 5, 1.0, 1 * GiB, 1638 * MiB, 2.0, 1)});  // x 1.25 = 2047.5 MiB
    auto rq = request_of(
        {.series = 1000, .node = prof::node_shape{96, 1024 * GiB, 8, 81559 * MiB}, .nodes = 1},
        bare_request());
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("neural");
    CHECK(f.gpu_fraction == doctest::Approx(1.0 / 39));     // floor(81559 / 2048) = 39 by memory
    CHECK(f.layout.slots_per_device == 12u);                  // ceil(96 / 8)
    CHECK(f.layout.unit_gpus == doctest::Approx(0.0833));     // Ray: 833 units, 10000 / 833 = 12
    CHECK(f.slots_per_node == 96);
    rq.layout = "spark";
    auto s = prof::render_spark(prof::make_plan(&p, rq));
    CHECK(s.find("\nspark.task.resource.gpu.amount                   0.08333333333333333\n") != std::string::npos);
}

TEST_CASE("k8s-job prices a cold start per process, warm workers one per slot and model") {
    // theta's cold start 2 s, arima none (0). 1000 series x 2 models = 2000 cells, one cell per
    // Job index and process: 2000 starts x mean(2, 0) = 2000 s, x the time margin 1.25 = 2500 s.
    // The work without them: 1000 x (0.25 + 0.5) x 1.25 = 937.5 s; the longest cell 0.5 x 1.25
    // = 0.625 s grows by 2 x 1.25 = 2.5 s.
    auto p = statistical();
    p.models.at("theta").cold_start_s = 2.0;
    auto rq = cpu_request();
    rq.deadline_s.reset();
    rq.nodes = 1;
    prof::set_target(rq, "k8s-job", "");
    CHECK(rq.layout == "k8s");
    auto job = prof::make_plan(&p, rq);
    const auto& f = job.families.at("statistical");
    REQUIRE(f.cold_start_work_s);
    CHECK(*f.cold_start_work_s == doctest::Approx(2500.0));
    CHECK(f.work_s == doctest::Approx(937.5 + 2500.0));
    CHECK(f.longest_cell_s == doctest::Approx(0.625 + 2.5));
    // k8s (pods that stay up): each slot pays theta's 2.5 s once; its slots are fewer than
    // theta's 1000 cells, so slots x 2.5 s.
    prof::set_target(rq, "k8s", "");
    auto pods = prof::make_plan(&p, rq);
    const auto& g = pods.families.at("statistical");
    REQUIRE(g.cold_start_work_s);
    CHECK(*g.cold_start_work_s == doctest::Approx(static_cast<double>(g.slots) * 2.5));
    CHECK(g.work_s == doctest::Approx(937.5 + static_cast<double>(g.slots) * 2.5));
    CHECK(g.longest_cell_s == doctest::Approx(0.625));
}

TEST_CASE("warm workers: each slot pays each model's cold start once and starts its cells that much later") {
    // Ray, one node of 16 cores: the family's slot is arima's 2 cores, 8 slots. theta's cold
    // start 2 s, arima's 0.4 s, x 1.25: 2.5 s and 0.5 s. 1000 series: every slot runs both
    // models, so the work grows by 8 x (2.5 + 0.5) = 24 s, and each slot starts 3 s later
    // (250 waves: it runs both models).
    auto p = statistical();
    auto rq = cpu_request();
    rq.deadline_s.reset();
    rq.nodes = 1;
    prof::set_target(rq, "ray", "");
    const auto warm0 = prof::make_plan(&p, rq).families.at("statistical");
    CHECK_FALSE(warm0.cold_start_work_s.has_value());  // no model has a cold start
    p.models.at("theta").cold_start_s = 2.0;
    p.models.at("arima").cold_start_s = 0.4;
    const auto warm = prof::make_plan(&p, rq).families.at("statistical");
    REQUIRE(warm.slots == 8);
    REQUIRE(warm.cold_start_work_s);
    CHECK(*warm.cold_start_work_s == doctest::Approx(24.0));
    CHECK(warm.work_s == doctest::Approx(937.5 + 24.0));
    CHECK(warm.longest_cell_s == doctest::Approx(warm0.longest_cell_s));
    // Without: min(250 waves x 0.625, (937.5 - 0.625) / 8 + 0.625) = 117.734375 s; with: + 3 s.
    CHECK(warm0.makespan_s == doctest::Approx(117.734375));
    CHECK(warm.makespan_s == doctest::Approx(117.734375 + 3.0));
    // The lower bound: the slot of the longest cell pays at least the smallest cold start.
    CHECK(warm.makespan_lower_s == doctest::Approx(std::max(937.5 / 8, 0.625 + 0.5)));
    CHECK(warm.size_classes.at(0).cold_start_work_s == warm.cold_start_work_s);
    CHECK(warm.one_size_slot_gib_hours == doctest::Approx(250.0 / 1024 * warm.work_s / 3600));
    // 3 series: 6 cells on 8 slots, one wave. Each model's 3 cells land on 3 slots: 3 x 2.5 +
    // 3 x 0.5 = 9 s of work; a slot runs one cell, so the delay is the largest cold start, 2.5 s.
    rq.series = 3;
    const auto few0 = [&] {
        auto q = statistical();
        return prof::make_plan(&q, rq).families.at("statistical");
    }();
    const auto few = prof::make_plan(&p, rq).families.at("statistical");
    REQUIRE(few.waves == 1);
    CHECK(*few.cold_start_work_s == doctest::Approx(9.0));
    CHECK(few.work_s == doctest::Approx(few0.work_s + 9.0));
    CHECK(few.makespan_s == doctest::Approx(few0.makespan_s + 2.5));
}

TEST_CASE("warm cold starts: per model with the margin, largest first; none without any") {
    std::vector<prof::model_cost> costs = {model("a", "f", 5, 1.0, MiB, std::nullopt, 1.0),
                                           model("b", "f", 5, 1.0, MiB, std::nullopt, 1.0),
                                           model("c", "f", 5, 1.0, MiB, std::nullopt, 1.0)};
    costs[0].cold_start_s = 0.5;
    costs[2].cold_start_s = 3.0;
    std::vector<prof::model_in_family> ms = {{"a", &costs[0]}, {"b", &costs[1]}, {"c", &costs[2]}};
    CHECK(prof::warm_cold_starts(ms, 1.25) == std::vector<double>{3.75, 0.625, 0.0});
    costs[0].cold_start_s.reset();
    costs[2].cold_start_s.reset();
    CHECK(prof::warm_cold_starts(ms, 1.25).empty());
    costs[1].cold_start_s = 0.0;  // measured no cost: priced, as 0
    CHECK(prof::warm_cold_starts(ms, 1.25) == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("cold starts: one per process, never more than one per cell") {
    std::vector<prof::model_cost> costs = {model("a", "f", 5, 1.0, MiB, std::nullopt, 1.0),
                                           model("b", "f", 5, 1.0, MiB, std::nullopt, 1.0)};
    costs[0].cold_start_s = 3.0;
    costs[1].cold_start_s = 1.0;
    std::vector<prof::model_in_family> ms = {{"a", &costs[0]}, {"b", &costs[1]}};
    // 10 processes of 40 cells: 10 x mean(3, 1) = 20 s, x 1.1 = 22 s; longest extra 3 x 1.1.
    auto c = prof::cold_start_work(ms, 40, 10, 1.1);
    CHECK(c.work_s == doctest::Approx(22.0));
    CHECK(c.longest_extra_s == doctest::Approx(3.3));
    // 50 processes for 40 cells: 40 starts, 80 s x 1.1.
    CHECK(prof::cold_start_work(ms, 40, 50, 1.1).work_s == doctest::Approx(88.0));
}

TEST_CASE("a replayed worker peak above the cells' sizes the plan's slot") {
    // theta's cells peak at 100 MiB but its replay reached 300 MiB: 300 x 1.25 = 375 MiB, above
    // arima's 200 x 1.25 = 250 MiB.
    auto p = statistical();
    p.models.at("theta").max_replay_rss_bytes = 300 * MiB;
    auto plan = prof::make_plan(&p, cpu_request());
    CHECK(plan.families.at("statistical").slot_rss_bytes == 375 * MiB);
}
