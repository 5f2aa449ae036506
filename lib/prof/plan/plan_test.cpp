// Unit tests of make_plan: hand-computed plans of slots, nodes, axes and refusals.
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("a CPU-only family with a deadline gets the hand-computed slot, slots per node and node count") {
    auto p = statistical();
    auto plan = prof::make_plan(&p, cpu_request());
    REQUIRE(plan.families.size() == 1);
    const auto& f = plan.families.at("statistical");
    CHECK(f.models == std::vector<std::string>{"arima", "theta"});
    CHECK(f.slot_cores == 2);                     // max(1, 2)
    CHECK(f.slot_rss_bytes == 250 * MiB);         // 200 MiB × 1.25
    CHECK(!f.slot_gpu_bytes);
    CHECK(!f.gpu_fraction);
    CHECK(f.intraop_threads == 1u);
    CHECK(f.slots_per_node == 8);                 // min(16/2, 64 GiB / 250 MiB = 262)
    CHECK(f.cells == 2000);                       // 1000 series × 2 models
    CHECK(f.work_s == 937.5);                     // 1000 × (0.25 + 0.5) × 1.25
    CHECK(f.longest_cell_s == 0.625);             // arima 0.5 × 1.25
    // 1 node (8 slots): min(250 waves × 0.625, (937.5 − 0.625) / 8 + 0.625 = 117.73) > 60;
    // 2 nodes (16 slots): min(125 × 0.625 = 78.125, 936.875 / 16 + 0.625 = 59.1796875) <= 60.
    CHECK(f.nodes == 2);
    CHECK(f.slots == 16);
    CHECK(f.waves == 125);                        // ceil(2000 / 16)
    CHECK(f.makespan_s == 59.1796875);
    CHECK(f.makespan_lower_s == 58.59375);        // max(937.5 / 16, 0.625)
    CHECK(f.meets_deadline == true);
    CHECK(f.layout.unit == "task");
    CHECK(f.layout.limited_by == "cores");
    CHECK(f.basis.cores == "measured");
    CHECK(f.basis.memory == "measured");
    CHECK(f.basis.gpu == "assumed");              // no GPU reading: no GPU asked
    CHECK(f.basis.wall == "measured");
    CHECK(f.n_ok == 10);
    CHECK(!f.low_confidence);
    CHECK(f.warnings.empty());
    CHECK(plan.totals.cells == 2000);
    CHECK(plan.totals.nodes == 2);                // ceil(117.1875 / 60)
    CHECK(plan.totals.makespan_s == 59.1796875);
    CHECK(plan.totals.meets_deadline == true);
    CHECK(f.wall_estimator == "median");          // the models have no curve in n_obs
    CHECK(f.longest_cell_model == "arima");
    REQUIRE(plan.warnings.size() == 1);
    CHECK(plan.warnings[0].find("no cost curve in n_obs for arima, theta") == 0);
}

TEST_CASE("a deadline met exactly does not buy an extra node through rounding noise") {
    // 0.1 s × 1.25 × 3 series = 0.375 s of work on 1 slot with a 0.125 s deadline: exactly 3.
    auto p = profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 0.1)});
    auto rq = cpu_request();
    rq.series = 3;
    rq.node.cores = 1;
    rq.deadline_s = 0.125;
    CHECK(prof::make_plan(&p, rq).families.at("f").nodes == 3);  // 3 cells of 0.125 s, one wave
}

TEST_CASE("a GPU family with a node count gets a device fraction and a makespan of whole cells") {
    // nbeats: 3.45 effective cores → 4; 2 GiB RSS → 2.5 GiB; 3 GiB GPU → 3.75 GiB; 2 s per cell.
    auto p = profile_of({model("nbeats", "neural", 4, 3.45, 2 * GiB, 3 * GiB, 2.0, 2)});
    auto rq = gpu_request();
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("neural");
    CHECK(f.slot_cores == 4);
    CHECK(f.slot_rss_bytes == 2560 * MiB);
    CHECK(f.slot_gpu_bytes == 3840 * MiB);
    CHECK(f.gpu_fraction == 0.25);                // 1 / floor(16 GiB / 3.75 GiB = 4.27)
    CHECK(f.slots_per_node == 6);                 // min(24/4 = 6, 256/2.5 = 102, 2 × 4 = 8)
    CHECK(f.basis.gpu == "measured");
    CHECK(f.intraop_threads == 2u);
    CHECK(f.work_s == 250);                       // 100 × 2 × 1.25
    CHECK(f.nodes == 3);
    // 100 equal cells of 2.5 s on 18 slots: ceil(100 / 18) = 6 waves = 15 s (Graham: 16.25 s).
    CHECK(f.waves == 6);
    CHECK(f.makespan_s == 15);
    CHECK(f.makespan_lower_s == doctest::Approx(250.0 / 18));
    CHECK(!f.meets_deadline);
    CHECK(plan.totals.nodes == 3);
    CHECK(plan.totals.makespan_s == 15);
    CHECK(plan.run.deadline_s == std::nullopt);
    CHECK(plan.run.nodes == 3u);
}

TEST_CASE("GPUs can be the tightest axis of slots per node") {
    auto p = profile_of({model("nbeats", "neural", 4, 1.0, 1 * GiB, 7 * GiB, 2.0)});  // 8.75 GiB on the device
    auto rq =
        request_of({.series = 10, .node = prof::node_shape{64, 512 * GiB, 4, 16 * GiB}, .nodes = 1},
                   bare_request());
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("neural");
    CHECK(f.gpu_fraction == 1.0);                 // floor(16 / 8.75) = 1 slot per device
    CHECK(f.slots_per_node == 4);                 // min(64, 409, 4 × 1)
}

TEST_CASE("an axis the profile leaves null takes the default and is marked assumed") {
    // theta has no RSS reading: it takes --default-memory 4 GiB, which then sizes the family.
    auto p = profile_of({model("theta", "statistical", 5, 1.0, std::nullopt, std::nullopt, 0.25),
                         model("arima", "statistical", 5, 1.0, 200 * MiB, std::nullopt, std::nullopt)});
    auto rq = cpu_request();
    rq.defaults.wall_s = 2;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_rss_bytes == 4 * GiB);
    CHECK(f.basis.memory == "assumed");
    CHECK(f.basis.cores == "measured");
    CHECK(f.basis.wall == "assumed");
    CHECK(f.slots_per_node == 16);                // min(16, 64 / 4)
    CHECK(f.work_s == 2312.5);                    // 1000 × (0.25 × 1.25 + 2 (default, no margin))
    REQUIRE(f.warnings.size() == 2);
    CHECK(f.warnings[0] == "no usable memory for model(s) theta: they take --default-memory (assumed)");
    CHECK(f.warnings[1] == "no usable wall time for model(s) arima: they take --default-wall (assumed)");
}

TEST_CASE("a null GPU axis asks no GPU on a node without GPUs: there is none to give") {
    auto p = statistical();
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("statistical");
    CHECK(!f.slot_gpu_bytes);
    CHECK(f.basis.gpu == "assumed");
    auto rq = cpu_request();
    rq.strict = true;
    rq.defaults.wall_s = 1;
    CHECK_NOTHROW(prof::make_plan(&p, rq));
}

TEST_CASE("a null GPU axis on a GPU node takes one whole device, says so, and --strict refuses it") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.node.gpus = 1;
    rq.node.gpu_memory_bytes = 16 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_gpu_bytes == 16 * GiB);
    CHECK(f.gpu_fraction == 1.0);
    CHECK(f.slots_per_node == 1);                 // 1 device × floor(16 / 16)
    CHECK(f.basis.gpu == "assumed");
    REQUIRE(!f.warnings.empty());
    CHECK(f.warnings[0] ==
          "no measured GPU peak for model(s) arima, theta (null: not measured, not \"needs none\"): on this GPU node "
          "they take one whole device per slot, 16.00 GiB (17179869184 bytes), assumed; measure them on a GPU host, or give "
          "--default-gpu-memory (0 if they use no GPU)");
    rq.strict = true;
    CHECK(coded_error([&] { prof::make_plan(&p, rq); }) ==
          "65: --strict: assumed axes in family 'statistical' (gpu): measure them, or plan without --strict");
}

TEST_CASE("--default-gpu-memory sizes a null GPU axis; 0 says it asks none, still assumed") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.node.gpus = 1;
    rq.node.gpu_memory_bytes = 16 * GiB;
    rq.defaults.gpu_memory_bytes = 5 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_gpu_bytes == 5 * GiB);
    CHECK(f.gpu_fraction == doctest::Approx(1.0 / 3));
    CHECK(f.slots_per_node == 3);                 // 1 device × floor(16 / 5)
    CHECK(f.basis.gpu == "assumed");
    rq.defaults.gpu_memory_bytes = 0;
    auto none = prof::make_plan(&p, rq);
    const auto& g = none.families.at("statistical");
    CHECK(!g.slot_gpu_bytes);
    CHECK(g.slots_per_node == 8);                 // cores alone: 16 / 2 (arima's 1.9 snaps to 2)
    CHECK(g.basis.gpu == "assumed");
    REQUIRE(!g.warnings.empty());
    CHECK(g.warnings[0].find("take no GPU (--default-gpu-memory 0), assumed") != std::string::npos);
    rq.strict = true;
    CHECK_THROWS(prof::make_plan(&p, rq));
}

TEST_CASE("a model the profile lacks stops the plan by default, naming it and the three choices") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.models = {"theta", "prophet"};
    CHECK(coded_error([&] { prof::make_plan(&p, rq); }) ==
          "65: model 'prophet' (family 'prophet') is not in the profile; no plan: choose --on-unmeasured defaults (size "
          "it from the --default-* values, assumed), --on-unmeasured skip (plan the run without it), or measure it "
          "(--on-unmeasured fail, the default, stops here)");
    rq.on_unmeasured = prof::unmeasured_policy::skip;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.families.size() == 1);
    CHECK(plan.run.models == std::vector<std::string>{"theta"});
    CHECK(plan.run.skipped_models == std::vector<std::string>{"prophet"});
}

TEST_CASE("with --on-unmeasured defaults a model the profile lacks forms its own family from the defaults") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.models = {"theta", "prophet"};
    rq.deadline_s.reset();
    rq.nodes = 1;
    rq.on_unmeasured = prof::unmeasured_policy::defaults;
    auto plan = prof::make_plan(&p, rq);
    REQUIRE(plan.families.size() == 2);
    const auto& s = plan.families.at("statistical");
    CHECK(s.models == std::vector<std::string>{"theta"});  // only the run's models count
    CHECK(s.slot_rss_bytes == 125 * MiB);
    CHECK(s.slot_cores == 1);
    CHECK(s.work_s == 312.5);                               // 1000 × 0.25 × 1.25
    const auto& x = plan.families.at("prophet");
    CHECK(x.slot_cores == 1);
    CHECK(x.slot_rss_bytes == 4 * GiB);
    CHECK(x.work_s == 60000);                               // 1000 × 60 s
    CHECK(x.basis.cores == "assumed");
    CHECK(x.basis.wall == "assumed");
    CHECK(x.low_confidence);
    CHECK(x.warnings.empty());
    CHECK(x.unmeasured_models == std::vector<std::string>{"prophet"});
    // 1000 cells of 60 s on one node's 16 slots: 63 waves, 63 min (divisible work: 62.5 min).
    CHECK(x.makespan_s == 63 * 60.0);
    REQUIRE(plan.warnings.size() == 2);
    CHECK(plan.warnings[0].find("model 'prophet' (family 'prophet') is not in the profile") == 0);
    CHECK(s.warnings.empty());
    CHECK(plan.totals.makespan_s == s.makespan_s + x.makespan_s);
}

TEST_CASE("a reference profile's axes say reference, and its provenance is carried") {
    auto p = statistical();
    p.provenance.basis = "reference";
    p.provenance.source = "baseline";
    p.provenance.baseline_version = "2026.11";
    auto rq = cpu_request();
    rq.models = {"arima", "theta"};
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.basis.cores == "reference");
    CHECK(f.basis.memory == "reference");
    CHECK(f.basis.wall == "reference");
    CHECK(f.basis.gpu == "assumed");
    CHECK(plan.provenance.source == "baseline");
    CHECK(prof::write_plan(plan).find(R"("baseline_version":"2026.11")") != std::string::npos);
}

TEST_CASE("a model the profile dropped takes the defaults in its declared family and its first error is quoted") {
    auto p = statistical();
    p.dropped_models = {"sarimax"};
    p.dropped_model_families["sarimax"] = "statistical";
    p.first_error_by_model["sarimax"] = "exit 1: LinAlgError";
    auto rq = cpu_request();
    CHECK(error_text([&] { prof::make_plan(&p, rq); }).find(
              "model 'sarimax' (family 'statistical') has no ok fit in the profile (first error: exit 1: LinAlgError); "
              "no plan: choose") == 0);
    rq.on_unmeasured = prof::unmeasured_policy::defaults;
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.run.models == std::vector<std::string>{"arima", "sarimax", "theta"});
    REQUIRE(plan.families.size() == 1);
    const auto& f = plan.families.at("statistical");
    CHECK(f.models == std::vector<std::string>{"arima", "sarimax", "theta"});
    CHECK(f.basis.memory == "assumed");
    CHECK(f.slot_rss_bytes == 4 * GiB);           // the default, above 250 MiB
    CHECK(f.work_s == 1000 * (0.75 * 1.25 + 60)); // measured walls margined, the default not
    CHECK(f.unmeasured_models == std::vector<std::string>{"sarimax"});
    REQUIRE(plan.warnings.size() == 2);
    CHECK(plan.warnings[0] == "model 'sarimax' (family 'statistical') has no ok fit in the profile (first error: "
                              "exit 1: LinAlgError): sized from the defaults (assumed, --on-unmeasured defaults); "
                              "measure it before trusting the plan");
}

TEST_CASE("a family measured on fewer than --min-fits ok fits is low-confidence and says so") {
    auto p = profile_of({model("theta", "statistical", 2, 1.0, 100 * MiB, std::nullopt, 0.25)});
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("statistical");
    CHECK(f.low_confidence);
    CHECK(f.n_ok == 2);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0] ==
          "low confidence: 2 ok fit(s), fewer than --min-fits 3; measure more series before trusting this family");
    auto rq = cpu_request();
    rq.min_fits = 2;
    CHECK(!prof::make_plan(&p, rq).families.at("statistical").low_confidence);
}

TEST_CASE("no profile is the static-config case: every axis assumed, one plan-wide line") {
    prof::plan_request rq = cpu_request();
    rq.series = 10;
    rq.models = {"b", "a"};
    rq.deadline_s.reset();
    rq.nodes = 2;
    auto plan = prof::make_plan(nullptr, rq);
    CHECK(plan.provenance.basis == "assumed");
    CHECK(plan.provenance.source == "none");
    CHECK(plan.run.models == std::vector<std::string>{"a", "b"});
    REQUIRE(plan.families.size() == 2);
    const auto& f = plan.families.at("a");
    CHECK(f.slot_cores == 1);
    CHECK(f.slot_rss_bytes == 4 * GiB);
    CHECK(f.slots_per_node == 16);
    CHECK(f.work_s == 600);
    // 10 cells of 60 s fit one node's 16 slots: the second node is not used.
    CHECK(f.nodes == 1);
    CHECK(f.makespan_s == 60);
    CHECK(f.basis.memory == "assumed");
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0] == "only 1 of the 2 node(s) get work: 1 run all 10 cells in one wave");
    CHECK(plan.totals.nodes == 1);
    REQUIRE(plan.warnings.size() == 1);
    CHECK(plan.warnings[0] == "no profile on stdin: planning from the defaults, every axis assumed");
    CHECK(error_text([&] { rq.models.clear(); prof::make_plan(nullptr, rq); }) ==
          "no profile on stdin: name the run's models with --models to plan from the defaults");
}

TEST_CASE("with no profile the messages name the file it was looked for in") {
    prof::plan_request rq = cpu_request();
    rq.series = 10;
    rq.models = {"a"};
    rq.profile_input = "fits/empty.jsonl";
    auto plan = prof::make_plan(nullptr, rq);
    REQUIRE(plan.warnings.size() == 1);
    CHECK(plan.warnings[0] == "no profile in fits/empty.jsonl: planning from the defaults, every axis assumed");
    rq.strict = true;
    CHECK(error_text([&] { prof::make_plan(nullptr, rq); }) ==
          "--strict: no profile in fits/empty.jsonl: nothing measured to plan from");
    rq.strict = false;
    rq.models.clear();
    CHECK(error_text([&] { prof::make_plan(nullptr, rq); }) ==
          "no profile in fits/empty.jsonl: name the run's models with --models to plan from the defaults");
}

TEST_CASE("a measured slot larger than a node is bad data (65) naming both numbers") {
    auto p = profile_of({model("big", "f", 5, 1.0, 80 * GiB, std::nullopt, 1.0)});
    int code = 0;
    std::string msg = error_text([&] { prof::make_plan(&p, cpu_request()); }, &code);
    CHECK(code == 65);
    CHECK(msg == "family 'f': one slot needs 100.00 GiB (107374182400 bytes) of memory but a node has 64.00 GiB "
                 "(68719476736 bytes) (--node-memory): no slot fits one node; plan on larger nodes");
    auto q = profile_of({model("wide", "f", 5, 20.0, 1 * GiB, std::nullopt, 1.0)});
    msg = error_text([&] { prof::make_plan(&q, cpu_request()); }, &code);
    CHECK(code == 65);
    CHECK(msg.find("one slot needs 20 cores but a node has 16") != std::string::npos);
}

TEST_CASE("a GPU slot larger than one device, or a GPU slot on a node without GPUs, is refused") {
    auto p = profile_of({model("nbeats", "neural", 5, 1.0, 1 * GiB, 20 * GiB, 1.0)});
    auto rq = cpu_request();
    int code = 0;
    std::string msg = error_text([&] { prof::make_plan(&p, rq); }, &code);
    CHECK(code == 65);
    CHECK(msg.find("the node has no GPU") != std::string::npos);
    rq.node.gpus = 8;
    rq.node.gpu_memory_bytes = 16 * GiB;
    msg = error_text([&] { prof::make_plan(&p, rq); }, &code);
    CHECK(code == 65);
    CHECK(msg == "family 'neural': one slot needs 25.00 GiB (26843545600 bytes) of GPU memory but one device has "
                 "16.00 GiB (17179869184 bytes) (--node-gpu-memory): no slot fits one node; plan on larger nodes");
}

TEST_CASE("a default larger than the node is a usage error (64)") {
    auto rq = cpu_request();
    rq.models = {"m"};
    rq.defaults.memory_bytes = 128 * GiB;
    int code = 0;
    std::string msg = error_text([&] { prof::make_plan(nullptr, rq); }, &code);
    CHECK(code == 64);
    CHECK(msg.find("family 'm': one slot needs 128.00 GiB") == 0);
}

TEST_CASE("bad requests are usage errors") {
    auto p = statistical();
    auto check = [&](prof::plan_request rq, std::string want) {
        int code = 0;
        CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code) == want);
        CHECK(code == 64);
    };
    auto rq = cpu_request();
    rq.nodes = 2;
    check(rq, "give exactly one of --deadline (to get a node count) and --nodes (to get a makespan)");
    rq = cpu_request();
    rq.series = 0;
    check(rq, "--series must be a positive integer (or give --panel)");
    rq = cpu_request();
    rq.node.gpus = 2;
    check(rq, "--node-gpus needs --node-gpu-memory (the memory of one device)");
    rq = cpu_request();
    rq.deadline_s = 0;
    check(rq, "--deadline must be a positive duration");
    rq = cpu_request();
    rq.series = UINT64_MAX / 2 + 1;
    check(rq, "--series 9223372036854775808 x 2 models overflows a cell count");
}

TEST_CASE("a deadline shorter than one cell cannot be met, and buys no more nodes than the cells need") {
    // 1000 cells of 125 s on 16 slots per node: 63 nodes run them all at once in 125 s > 60 s.
    auto p = profile_of({model("slow", "f", 5, 1.0, 1 * GiB, std::nullopt, 100.0)});
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("f");
    CHECK(f.nodes == 63);                         // ceil(1000 / 16)
    CHECK(f.waves == 1);
    CHECK(f.makespan_s == 125);
    CHECK(f.meets_deadline == false);
    CHECK(plan.totals.meets_deadline == false);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0] == "cannot meet the deadline 60.00 s: one cell of model 'slow' takes 2.1 min (planned); 63 "
                           "node(s) run every cell at once and take 2.1 min; raise --deadline");
    // 10 short cells (0.125 s) with a 10 ms deadline: one 16-slot node runs them all at once.
    auto q = profile_of({model("short", "f", 5, 1.0, 1 * GiB, std::nullopt, 0.1)});
    auto rq = request_of({.series = 10, .deadline_s = 0.01}, cpu_request());
    auto plan2 = prof::make_plan(&q, rq);
    CHECK(plan2.families.at("f").nodes == 1);
    CHECK(plan2.families.at("f").meets_deadline == false);
}

TEST_CASE("the plan record is byte-stable JSON in the documented key order") {
    auto p = profile_of({model("theta", "statistical", 5, 1.0, 100 * MiB, std::nullopt, 0.25, std::nullopt)});
    p.provenance.measured_at = "2026-11-29T15:00:00Z";
    auto rq = cpu_request();
    rq.series = 4;
    auto plan = prof::make_plan(&p, rq);
    CHECK(prof::write_plan(plan) ==
          R"({"kind":"plan","provenance":{"basis":"measured","source":"prepass","run_id":null,"baseline_version":null,)"
          R"("measured_at":"2026-11-29T15:00:00Z","signature":null,"warnings":[]},)"
          R"("node":{"cores":16,"memory_bytes":68719476736,"gpus":0,"gpu_memory_bytes":null},)"
          R"("run":{"series":4,"models":["theta"],"skipped_models":[],"length_source":"none","max_n_obs":null,)"
          R"("deadline_s":60,"nodes":null,"min_fits":3,"layout":"ray",)"
          R"("max_container_memory_bytes":null,"max_pods_per_node":110,"spark_cluster":"standalone",)"
          R"("yarn_min_allocation_bytes":1073741824,"yarn_max_vcores":4,"headroom":0,"planned_deadline_s":60,)"
          R"("pod_start_s":0,"job_pod_rate":1000000000000,"size_classes":4,"min_class_saving":0.05,)"
          R"("confidence":0.8,"resamples":200,"seed":1},)"
          R"("families":{"statistical":{"models":["theta"],"slot_cores":1,"slot_rss_bytes":131072000,)"
          R"("slot_gpu_bytes":null,"gpu_fraction":null,"intraop_threads":null,"slots_per_node":16,)"
          R"("layout":{"unit":"task","slots_per_unit":1,"units_per_node":16,"unit_cores":1,)"
          R"("unit_memory_bytes":131072000,"unit_gpus":null,"slots_per_device":null,"heap_bytes":null,)"
          R"("overhead_bytes":null,"cells_per_item":1,"work_items":4,"reserved_units":0,"container_bytes":null,)"
          R"("unit_start_s":0,"retry_unit_memory_bytes":null,"retry_units_per_node":null,"retry_items":null,)"
          R"("retry_makespan_s":null,"limited_by":"cores"},"cells":4,)"
          R"("work_s":1.25,"longest_cell_s":0.3125,"longest_cell_model":"theta","longest_cell_n_obs":null,)"
          R"("wall_estimator":"median","cold_start_work_s":null,"oom_floor_bytes":null,"unmeasured_models":[],)"
          R"("nodes":1,"slots":16,"waves":1,"makespan_s":0.3125,"makespan_lower_s":0.3125,"meets_deadline":true,)"
          R"("work_interval":{"low_s":1.25,"p50_s":1.25,"high_s":1.25},)"
          R"("longest_cell_interval":{"low_s":0.3125,"p50_s":0.3125,"high_s":0.3125},)"
          R"("makespan_interval":{"low_s":0.3125,"p50_s":0.3125,"high_s":0.3125},"makespan_bound_s":0.3125,)"
          R"("resampled_models":[],"cores_from_cap_models":[],)"
          R"("size_classes":[{"n_obs_min":null,"n_obs_max":null,"first_cell":0,"cells":4,"slot_cores":1,)"
          R"("slot_rss_bytes":131072000,"slots_per_node":16,"layout":{"unit":"task","slots_per_unit":1,)"
          R"("units_per_node":16,"unit_cores":1,"unit_memory_bytes":131072000,"unit_gpus":null,)"
          R"("slots_per_device":null,"heap_bytes":null,"overhead_bytes":null,"cells_per_item":1,"work_items":4,)"
          R"("reserved_units":0,"container_bytes":null,"unit_start_s":0,"retry_unit_memory_bytes":null,)"
          R"("retry_units_per_node":null,"retry_items":null,"retry_makespan_s":null,)"
          R"("limited_by":"cores"},"work_s":1.25,"longest_cell_s":0.3125,"cold_start_work_s":null,"slots":16,"waves":1,)" R"("makespan_s":0.3125,)"
          R"("slot_gib_hours":4.238552517361111e-05}],"one_size_slot_gib_hours":4.238552517361111e-05,)"
          R"("slot_gib_hours":4.238552517361111e-05,"size_class_saving":0,)"
          R"("basis":{"cores":"measured","memory":"measured","gpu":"assumed","wall":"measured"},"n_ok":5,)"
          R"("failure_share":0,"max_failed_items":0,)"
          R"("low_confidence":false,"warnings":["the profile records no common thread cap for these fits: run )"
          R"x(production as they were measured (the renderings set no thread-pool variables)"]}},)x"
          R"("totals":{"cells":4,"work_s":1.25,"nodes":1,"longest_cell_s":0.3125,"makespan_s":0.3125,)"
          R"("makespan_lower_s":0.3125,"meets_deadline":true,"work_interval":{"low_s":1.25,"p50_s":1.25,"high_s":1.25},)"
          R"("longest_cell_interval":{"low_s":0.3125,"p50_s":0.3125,"high_s":0.3125},)"
          R"("makespan_interval":{"low_s":0.3125,"p50_s":0.3125,"high_s":0.3125},"makespan_bound_s":0.3125},)"
          R"("warnings":["no cost curve in n_obs for )"
          R"(theta (the profile has none: its fits had no n_obs): work is series x the median cell, which )"
          R"(misses a long tail"]})");
}

TEST_CASE("whole cells: equal cells take waves, mixed cells take the smaller of waves and Graham's bound") {
    // 100 cells of 40 min on 80 slots: two waves, 80 min, not 100 × 40 / 80 = 50 min.
    CHECK(prof::schedule_makespan(100, 100 * 2400.0, 2400, 1, 1, 80) == 4800);
    // 10 cells of 1 s and 1 cell of 10 s on 4 runners: waves 3 × 10 = 30; Graham (20 − 10) / 4
    // + 10 = 12.5.
    CHECK(prof::schedule_makespan(11, 20, 10, 1, 1, 4) == 12.5);
    // Pods of 4 slots taking items of 4 cells: 10 cells → 3 items on 2 pods: 2 items × 1 round × 5 s.
    CHECK(prof::schedule_makespan(10, 50, 5, 4, 4, 2) == 10);
    // Items of 8 cells on pods of 4 slots: 2 rounds per item; 16 cells → 2 items on 1 pod: 2 × 2 × 5.
    CHECK(prof::schedule_makespan(16, 80, 5, 8, 4, 1) == 20);
}

TEST_CASE("100 cells of 40 min: nodes come from whole waves, never from divisible work") {
    auto p = profile_of({model("slow", "f", 5, 1.0, 1 * GiB, std::nullopt, 1920.0)});  // × 1.25 = 40 min
    auto rq = request_of({.series = 100, .deadline_s = 3600}, cpu_request());
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    // One wave fits 60 min: 100 slots, ceil(100 / 16) = 7 nodes (divisible work said 5).
    CHECK(f.nodes == 7);
    CHECK(f.waves == 1);
    CHECK(f.makespan_s == 2400);
    rq.deadline_s = 5400;  // 90 min: two waves, 50 slots, 4 nodes (64 slots), 80 min
    auto plan2 = prof::make_plan(&p, rq);
    CHECK(plan2.families.at("f").nodes == 4);
    CHECK(plan2.families.at("f").waves == 2);
    CHECK(plan2.families.at("f").makespan_s == 4800);
    // --nodes 4 gives the same makespan back.
    rq.deadline_s.reset();
    rq.nodes = 4;
    CHECK(prof::make_plan(&p, rq).families.at("f").makespan_s == 4800);
}

TEST_CASE("mixed thread caps are a warning naming the models") {
    auto p = profile_of({model("theta", "statistical", 5, 1.0, 100 * MiB, std::nullopt, 0.25, 1),
                         model("arima", "statistical", 5, 1.0, 100 * MiB, std::nullopt, 0.25, 2)});
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("statistical");
    CHECK(!f.intraop_threads);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0] == "its models ran under different thread caps (arima 2, theta 1): the renderings set no "
                           "thread-pool variables; measure them under one cap (prof-measure --threads) or plan them "
                           "apart (--models)");
}

TEST_CASE("a plan whose work overflows is refused naming the field, never written as null or the largest double") {
    auto rq = cpu_request();
    rq.models = {"m"};
    rq.series = UINT64_MAX;
    rq.defaults.wall_s = 1e300;                   // 1.8e19 cells × 1e300 s: past any double
    rq.deadline_s.reset();
    rq.nodes = 1;
    CHECK(coded_error([&] { prof::make_plan(nullptr, rq); }) ==
          "65: family 'm': field 'work_s' overflows (no finite number of seconds or GiB-hours holds it): no plan; check "
          "--series, --panel and the profile's times");
    rq.series = 1000;                             // the same plan at a sane size is written
    CHECK(prof::make_plan(nullptr, rq).totals.makespan_s > 0);
}

TEST_CASE("a busy host cannot snap a slot below its thread cap: every reading contended takes the cap") {
    // Measured under --threads 2, read 1.0 effective cores on a loaded host.
    auto m = model("ets", "statistical", 3, 1.0, 100 * MiB, std::nullopt, 1.0, 2);
    m.readings = {{100, 1.0, 1.0, true}, {200, 1.0, 1.0, true}, {300, 1.0, 1.0, true}};
    auto p = profile_of({m});
    auto rq = cpu_request();
    rq.series = 10;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_cores == 2);
    CHECK(f.cores_from_cap_models == std::vector<std::string>{"ets"});
    bool warned = false;
    for (const auto& w : f.warnings) warned = warned || w.find("busy host") != std::string::npos;
    CHECK(warned);
    // One uncontended reading saying 1 core: the readings stand (1 core), no warning.
    p.models.at("ets").readings[0].contended = false;
    auto idle = prof::make_plan(&p, rq).families.at("statistical");
    CHECK(idle.slot_cores == 1);
    CHECK(idle.cores_from_cap_models.empty());
    // Without readings (an older profile) nothing says the host was busy: the reading stands.
    p.models.at("ets").readings.clear();
    CHECK(prof::make_plan(&p, rq).families.at("statistical").slot_cores == 1);
}

TEST_CASE("a slot that shares its node prices each model's walls at its measured slowdown beside a neighbour") {
    // statistical on a 16-core node: slots of 2 cores share it. theta measured 1.5 x beside a
    // neighbour, arima 0.9 (noise: read as 1). Work 1000 x (0.25 x 1.5 + 0.5) x 1.25 = 1093.75
    // (937.5 without); the longest cell stays arima's 0.5 x 1.25.
    auto p = statistical();
    p.models.at("theta").beside_slowdown = 1.5;
    p.models.at("theta").n_beside = 6;
    p.models.at("arima").beside_slowdown = 0.9;
    auto plan = prof::make_plan(&p, cpu_request());
    const auto& f = plan.families.at("statistical");
    CHECK(f.work_s == 1093.75);
    CHECK(f.longest_cell_s == 0.625);
    CHECK(f.beside_slowdown.value() == 1.5);
    CHECK(plan.totals.work_s == 1093.75);
    // The profile itself is not changed: the plan priced a copy.
    CHECK(p.models.at("theta").median_wall_s.value() == 0.25);
    // A slot of the whole node has no neighbour: measured walls as they are, no field.
    auto rq = cpu_request();
    rq.node.cores = 2;
    auto whole = prof::make_plan(&p, rq);
    CHECK(whole.families.at("statistical").work_s == 937.5);
    CHECK_FALSE(whole.families.at("statistical").beside_slowdown.has_value());
    // Nor does a profile without a slowdown above 1.
    p.models.at("theta").beside_slowdown = 1.0;
    auto none = prof::make_plan(&p, cpu_request());
    CHECK(none.families.at("statistical").work_s == 937.5);
    CHECK_FALSE(none.families.at("statistical").beside_slowdown.has_value());
}
