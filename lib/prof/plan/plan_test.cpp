// Unit tests of make_plan and the renderings: hand-computed plans.
#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_out.hpp"
#include "prof/plan/plan.hpp"
#include "prof/test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace {

constexpr std::uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;

prof::model_cost model(std::string name, std::string family, std::uint64_t n_ok, std::optional<double> eff,
                       std::optional<std::uint64_t> rss, std::optional<std::uint64_t> gpu, std::optional<double> wall,
                       std::optional<std::uint64_t> threads = 1) {
    return prof::test::model_of(std::move(name), std::move(family),
                                {.n_ok = n_ok, .max_effective_cores = eff, .max_process_rss_bytes = rss,
                                 .max_peak_gpu_bytes = gpu, .median_wall_s = wall, .intraop_threads = threads});
}

// Margins 1.25 (memory and time) are exact in binary, so the expected values below are exact.
prof::compute_profile profile_of(std::vector<prof::model_cost> models) {
    return prof::test::profile_of(std::move(models), 1.25, 1.25);
}

// The schedulers' bare arithmetic, which the hand computations below follow: no headroom, no
// pod start, no controller rate, no YARN rounding or driver; a missed deadline is written (the
// defaults have tests of their own).
prof::plan_request bare_request() {
    prof::plan_request rq;
    rq.slack.headroom = 0;
    rq.slack.pod_start_s = 0;
    rq.slack.job_pod_rate = 1e12;
    rq.limits.spark_cluster = "standalone";
    rq.allow_missed_deadline = true;
    return rq;
}

prof::plan_request cpu_request() {
    prof::plan_request rq = bare_request();
    rq.series = 1000;
    rq.node.cores = 16;
    rq.node.memory_bytes = 64 * GiB;
    rq.deadline_s = 60;
    return rq;
}

// 100 series on 3 nodes of 24 cores, 256 GiB and two 16 GiB devices.
prof::plan_request gpu_request() {
    prof::plan_request rq = bare_request();
    rq.series = 100;
    rq.node = {24, 256 * GiB, 2, 16 * GiB};
    rq.nodes = 3;
    return rq;
}

// Two statistical models: theta 1 core (1.0000005 snaps to 1), 100 MiB, 0.25 s; arima 1.9 → 2
// cores, 200 MiB, 0.5 s.
prof::compute_profile statistical() {
    return profile_of({model("theta", "statistical", 5, 1.0000005, 100 * MiB, std::nullopt, 0.25),
                       model("arima", "statistical", 5, 1.9, 200 * MiB, std::nullopt, 0.5)});
}

std::string error_text(const std::function<void()>& fn, int* code = nullptr) {
    try {
        fn();
    } catch (const prof::error& e) {
        if (code) *code = static_cast<int>(e.code());
        return e.what();
    }
    return "(no error)";
}

}  // namespace

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
    prof::plan_request rq = bare_request();
    rq.series = 10;
    rq.node = {64, 512 * GiB, 4, 16 * GiB};
    rq.nodes = 1;
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

TEST_CASE("a null GPU axis asks a GPU only when --default-gpu-memory is given") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.node.gpus = 1;
    rq.node.gpu_memory_bytes = 16 * GiB;
    CHECK(!prof::make_plan(&p, rq).families.at("statistical").slot_gpu_bytes);
    rq.defaults.gpu_memory_bytes = 5 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.slot_gpu_bytes == 5 * GiB);
    CHECK(f.gpu_fraction == doctest::Approx(1.0 / 3));
    CHECK(f.slots_per_node == 3);                 // 1 device × floor(16 / 5)
    CHECK(f.basis.gpu == "assumed");
}

TEST_CASE("a model the profile lacks stops the plan by default, naming it and the three choices") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.models = {"theta", "prophet"};
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code) ==
          "model 'prophet' (family 'prophet') is not in the profile; no plan: choose --on-unmeasured defaults (size "
          "it from the --default-* values, assumed), --on-unmeasured skip (plan the run without it), or measure it "
          "(--on-unmeasured fail, the default, stops here)");
    CHECK(code == 65);
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
    auto rq = cpu_request();
    rq.series = 10;
    rq.deadline_s = 0.01;
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
          R"("pod_start_s":0,"job_pod_rate":1000000000000,"size_classes":4},)"
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
          R"("size_classes":[{"n_obs_min":null,"n_obs_max":null,"first_cell":0,"cells":4,"slot_cores":1,)"
          R"("slot_rss_bytes":131072000,"slots_per_node":16,"layout":{"unit":"task","slots_per_unit":1,)"
          R"("units_per_node":16,"unit_cores":1,"unit_memory_bytes":131072000,"unit_gpus":null,)"
          R"("slots_per_device":null,"heap_bytes":null,"overhead_bytes":null,"cells_per_item":1,"work_items":4,)"
          R"("reserved_units":0,"container_bytes":null,"unit_start_s":0,"retry_unit_memory_bytes":null,)"
          R"("retry_units_per_node":null,"retry_items":null,"retry_makespan_s":null,)"
          R"("limited_by":"cores"},"work_s":1.25,"longest_cell_s":0.3125,"slots":16,"waves":1,"makespan_s":0.3125,)"
          R"("slot_gib_hours":4.238552517361111e-05}],"one_size_slot_gib_hours":4.238552517361111e-05,)"
          R"("slot_gib_hours":4.238552517361111e-05,"size_class_saving":0,)"
          R"("basis":{"cores":"measured","memory":"measured","gpu":"assumed","wall":"measured"},"n_ok":5,)"
          R"("failure_share":0,"max_failed_items":0,)"
          R"("low_confidence":false,"warnings":["the profile records no common thread cap for these fits: run )"
          R"x(production as they were measured (the renderings set no thread-pool variables)"]}},)x"
          R"("totals":{"cells":4,"work_s":1.25,"nodes":1,"longest_cell_s":0.3125,"makespan_s":0.3125,)"
          R"("makespan_lower_s":0.3125,"meets_deadline":true},"warnings":["no cost curve in n_obs for )"
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
    auto rq = cpu_request();
    rq.series = 100;
    rq.deadline_s = 3600;
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

namespace {
prof::plan_request spark_request() {
    auto rq = cpu_request();
    rq.layout = "spark";
    return rq;
}
}  // namespace

TEST_CASE("spark: executors of every slot, an instance count, partitions per cell, the thread cap in executorEnv") {
    auto p = statistical();
    auto plan = prof::make_plan(&p, spark_request());
    const auto& f = plan.families.at("statistical");
    // 8 slots: heap 1024 MiB, base 384 MiB, 8 × 250 MiB = 2000 MiB Python: 3408 MiB per executor.
    CHECK(f.layout.slots_per_unit == 8);
    CHECK(f.layout.units_per_node == 1);
    CHECK(f.layout.unit_memory_bytes == 3408 * MiB);
    CHECK(f.nodes == 2);
    auto s = prof::render_spark(plan);
    CHECK(s.find("\nspark.executor.instances                         2\n") != std::string::npos);
    CHECK(s.find("\nspark.dynamicAllocation.enabled                  false\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.cores                             16\n") != std::string::npos);  // 8 slots × 2
    CHECK(s.find("\nspark.task.cpus                                  2\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.memory                            1024m\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.memoryOverhead                    2384m\n") != std::string::npos);  // 384 + 8 × 250
    CHECK(s.find("\nspark.default.parallelism                        2000\n") != std::string::npos);
    CHECK(s.find("sc.parallelize(range(2000), 2000)") != std::string::npos);
    CHECK(s.find("\nspark.task.maxFailures                           4\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.pyspark.memory") == std::string::npos);  // never an address-space limit
    CHECK(s.find("\nspark.executorEnv.OMP_NUM_THREADS                1\n") != std::string::npos);
    CHECK(s.find("resource.gpu") == std::string::npos);
    prof::render_options o;
    o.spark_allocation = "dynamic";
    auto d = prof::render_spark(plan, o);
    CHECK(d.find("\nspark.dynamicAllocation.enabled                  true\n"
                 "spark.dynamicAllocation.shuffleTracking.enabled  true\n"
                 "spark.dynamicAllocation.minExecutors             0\n"
                 "spark.dynamicAllocation.initialExecutors         2\n"
                 "spark.dynamicAllocation.maxExecutors             2\n") != std::string::npos);
    CHECK(d.find("spark.executor.instances") == std::string::npos);
    CHECK_THROWS_AS(prof::render_spark(prof::make_plan(&p, cpu_request())), prof::usage_error);
}

TEST_CASE("spark: an executor whose JVM leaves too little room runs fewer slots, and the node count follows") {
    // 512 MiB slots on a 2 GiB node: 4 by memory, but 2048 − 1024 − 384 = 640 MiB holds 1.
    auto p = profile_of({model("m", "f", 5, 1.0, 512 * MiB * 4 / 5, std::nullopt, 1.0)});
    auto rq = spark_request();
    rq.node.memory_bytes = 2 * GiB;
    rq.series = 480;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.slots_per_node == 1);
    CHECK(f.layout.limited_by == "executor memory");
    // 480 cells of 1.25 s on one slot per node within 60 s: 48 cells per slot, 10 nodes.
    CHECK(f.nodes == 10);
    auto s = prof::render_spark(plan);
    CHECK(s.find("\nspark.executor.cores                             1\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.memoryOverhead                    896m\n") != std::string::npos);  // 384 + 512
    CHECK(s.find("\nspark.executor.instances                         10\n") != std::string::npos);
}

TEST_CASE("spark: the heap grows with the tasks of a 192-core executor") {
    auto p = profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 1.0)});
    auto rq = spark_request();
    rq.node.cores = 192;
    rq.node.memory_bytes = 768 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& L = plan.families.at("f").layout;
    CHECK(L.slots_per_unit == 192);
    CHECK(L.heap_bytes == 12288 * MiB);                        // 64 MiB × 192
    CHECK(L.overhead_bytes == (1229 + 192 * 125) * MiB);      // ceil(12288 / 10) + 192 × 125 MiB
}

TEST_CASE("spark: --max-container-memory splits a node into executors, or refuses naming the limit") {
    auto p = profile_of({model("big", "f", 5, 1.0, 20 * GiB, std::nullopt, 1.0)});  // 25 GiB slots
    auto rq = spark_request();
    auto plan = prof::make_plan(&p, rq);
    // 64 GiB node: 2 slots; one executor of 2 × 25 GiB + 1408 MiB = 52608 MiB.
    CHECK(plan.families.at("f").layout.unit_memory_bytes == 52608 * MiB);
    CHECK(plan.families.at("f").layout.units_per_node == 1);
    rq.limits.max_container_memory_bytes = 32 * GiB;
    plan = prof::make_plan(&p, rq);
    // 1 slot per executor (26 GiB + 1408 MiB = 27008 MiB), 2 executors per node.
    CHECK(plan.families.at("f").layout.slots_per_unit == 1);
    CHECK(plan.families.at("f").layout.units_per_node == 2);
    CHECK(plan.families.at("f").layout.unit_memory_bytes == 27008 * MiB);
    CHECK(plan.families.at("f").layout.limited_by == "memory");
    rq.limits.max_container_memory_bytes = 8 * GiB;  // YARN's default maximum allocation
    int code = 0;
    std::string msg = error_text([&] { prof::make_plan(&p, rq); }, &code);
    CHECK(code == 65);
    CHECK(msg == "spark: family 'f': one executor of one task slot asks 26.38 GiB (28319940608 bytes) (JVM heap and "
                 "overhead 1.38 GiB + the slot's 25.00 GiB), more than --max-container-memory 8.00 GiB: no executor "
                 "fits; raise the cluster's maximum container (YARN yarn.scheduler.maximum-allocation-mb)");
}

TEST_CASE("spark GPU lines: devices per executor, discovery script, vendor, the task's share") {
    auto p = profile_of({model("nbeats", "neural", 4, 3.45, 2 * GiB, 3 * GiB, 2.0, 2)});
    auto rq = gpu_request();
    rq.layout = "spark";
    auto plan = prof::make_plan(&p, rq);
    auto s = prof::render_spark(plan);
    // 6 slots by cores, 4 per device by memory, spread over both devices: 3 per device, in two
    // executors of one device each (one executor of both would do too: more executors spread).
    CHECK(plan.families.at("neural").layout.units_per_node == 2);
    CHECK(s.find("\nspark.executor.resource.gpu.amount               1\n") != std::string::npos);
    CHECK(s.find("\nspark.executor.resource.gpu.discoveryScript      /opt/spark/examples/src/main/scripts/"
                 "getGpusResources.sh\n# the discovery script above is a placeholder") != std::string::npos);
    CHECK(s.find("\nspark.executor.resource.gpu.vendor               nvidia.com\n") != std::string::npos);
    CHECK(plan.families.at("neural").layout.slots_per_device == 3u);
    CHECK(s.find("\nspark.task.resource.gpu.amount                   0.3333333333333333\n") != std::string::npos);
    CHECK(s.find("yarn.io/gpu") != std::string::npos);
    prof::render_options o;
    o.gpu_discovery_script = "/etc/spark/gpus.sh";
    CHECK(prof::render_spark(plan, o).find("gpu.discoveryScript      /etc/spark/gpus.sh\nspark.executor.resource.gpu.vendor") !=
          std::string::npos);
}

TEST_CASE("k8s: GPU pods hold whole devices, and the makespan counts the slots the pods run") {
    // 14 cores, 4 GPUs of 16 GiB, 1-core slots of 4 GiB GPU memory: 14 slots by cores, 4 per device.
    auto p = profile_of({model("nbeats", "neural", 4, 1.0, 1 * GiB, 3 * GiB + 200 * MiB, 2.0, 2)});
    prof::plan_request rq = bare_request();
    rq.series = 100;
    rq.node = {14, 128 * GiB, 4, 16 * GiB};
    rq.deadline_s = 600;
    rq.layout = "k8s";
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("neural");
    // Pods of k slots, one device each: k = 3 gives 4 pods × 3 = 12 (k = 4 gives 3 × 4 = 12 too).
    CHECK(f.layout.slots_per_unit == 3);
    CHECK(f.layout.units_per_node == 4);
    CHECK(f.slots_per_node == 12);
    CHECK(f.layout.limited_by == "gpus");
    // 100 cells of 2.5 s in items of 3: 34 items; 600 s allows 240 rounds: 1 node.
    CHECK(f.layout.work_items == 34);
    CHECK(f.nodes == 1);
    CHECK(f.makespan_s == doctest::Approx(22.5));  // ceil(34 / 4) = 9 items per pod × 2.5 s
    auto k = prof::render_k8s(plan);
    CHECK(k.find("each pod holds one whole GPU and runs 3 slots") != std::string::npos);
    CHECK(k.find("resources:\n  requests:\n    cpu: \"3\"\n    memory: \"3840Mi\"\n    nvidia.com/gpu: \"1\"\n"
                 "  limits:\n    memory: \"3840Mi\"\n    nvidia.com/gpu: \"1\"\n") != std::string::npos);
    CHECK(k.find("- name: OMP_NUM_THREADS\n  value: \"2\"\n") != std::string::npos);
    prof::render_options o;
    o.cpu_limit = true;
    CHECK(prof::render_k8s(plan, o).find("  limits:\n    cpu: \"3\"\n") != std::string::npos);
}

TEST_CASE("k8s: a 192-core node packs two slots per pod under kubelet's 110 pods") {
    auto p = profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 1.0)});
    auto rq = cpu_request();
    rq.layout = "k8s";
    rq.node.cores = 192;
    rq.node.memory_bytes = 768 * GiB;
    auto plan = prof::make_plan(&p, rq);
    const auto& L = plan.families.at("f").layout;
    CHECK(L.slots_per_unit == 2);
    CHECK(L.units_per_node == 96);
    CHECK(plan.families.at("f").slots_per_node == 192);
    rq.limits.max_pods_per_node = 50;
    auto plan2 = prof::make_plan(&p, rq);
    CHECK(plan2.families.at("f").layout.slots_per_unit == 4);  // 48 pods × 4 = 192
    CHECK(plan2.families.at("f").layout.units_per_node == 48);
}

TEST_CASE("k8s-job: an Indexed Job per family with completions, parallelism and the deadline") {
    auto p = statistical();
    auto rq = cpu_request();
    rq.layout = "k8s";
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("statistical");
    CHECK(f.layout.work_items == 2000);
    auto j = prof::render_k8s_job(plan);
    CHECK(j.find("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: prof-statistical\n") != std::string::npos);
    CHECK(j.find("  completionMode: Indexed\n  completions: 2000\n  parallelism: 16\n  backoffLimitPerIndex: 1\n"
                 "  maxFailedIndexes: 10\n") != std::string::npos);
    CHECK(j.find("        values: [3, 137]\n  activeDeadlineSeconds: 60\n  ttlSecondsAfterFinished: 86400\n") !=
          std::string::npos);
    CHECK(j.find("        resources:\n          requests:\n            cpu: \"2\"\n            memory: \"250Mi\"\n"
                 "          limits:\n            memory: \"250Mi\"\n") != std::string::npos);
    CHECK(j.find("        - name: PROF_CELLS_PER_INDEX\n          value: \"1\"\n") != std::string::npos);
    CHECK(j.find("image: \"REPLACE-WITH-YOUR-WORKER-IMAGE\"") != std::string::npos);
}

TEST_CASE("k8s-job: more cells than an Indexed Job's completions run in rounds per index") {
    auto p = profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 0.08)});  // 0.1 s cells
    auto rq = cpu_request();
    rq.layout = "k8s";
    rq.series = 250000;
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.layout.cells_per_item == 3);          // ceil(250000 / 100000)
    CHECK(f.layout.work_items == 83334);
    CHECK(f.layout.work_items <= prof::k8s_max_indexed_completions);
}

TEST_CASE("ray: num_gpus rounded to Ray's 0.0001, a note on memory, per family the options of a remote task") {
    auto p = profile_of({model("theta", "statistical", 5, 1.0, 100 * MiB, std::nullopt, 0.25, std::nullopt),
                         model("nbeats", "neural", 5, 2.0, 1 * GiB, 2 * GiB, 1.0, std::nullopt)});
    prof::plan_request rq = cpu_request();
    rq.node.gpus = 1;
    rq.node.gpu_memory_bytes = 16 * GiB;
    auto plan = prof::make_plan(&p, rq);
    // 2.5 GiB of GPU memory per slot: 6 per 16 GiB device; 1/6 → 0.1666, 10000 / 1666 = 6.
    CHECK(plan.families.at("neural").layout.unit_gpus == 0.1666);
    CHECK(plan.families.at("neural").layout.slots_per_device == 6);
    auto r = prof::render_ray(plan);
    CHECK(r.find("# ray: memory is a scheduling reservation, not a limit") != std::string::npos);
    CHECK(r.substr(r.rfind('\n') + 1) ==
          R"({"neural":{"num_cpus":2,"memory":1342177280,"num_gpus":0.1666,"max_calls":0,"runtime_env":{"env_vars":{}}},)"
          R"("statistical":{"num_cpus":1,"memory":131072000,"num_gpus":0,"runtime_env":{"env_vars":{}}}})");
}

TEST_CASE("ray: when rounding down would pack one slot too many on a device, num_gpus rounds up") {
    // 150 slots per device: 10000 / 150 = 66 units would fit 151; 67 units fit 149.
    auto p = profile_of({model("tiny", "f", 5, 1.0, 10 * MiB, 100 * MiB, 1.0)});
    prof::plan_request rq = cpu_request();
    rq.node = {512, 64 * GiB, 1, 150 * 125 * MiB};
    auto plan = prof::make_plan(&p, rq);
    CHECK(plan.families.at("f").layout.unit_gpus == 0.0067);
    CHECK(plan.families.at("f").layout.slots_per_device == 149);
    CHECK(plan.families.at("f").slots_per_node == 149);
}

namespace {
// ets on a sample of 12, 203 and 2284 observations: 0.006, 0.049 and 0.292 s (margin 1.25).
prof::compute_profile curved() {
    auto m = model("ets", "statistical", 8, 1.0, 100 * MiB, std::nullopt, 0.006);
    m.max_n_obs = 2284;
    m.wall_curve = {{12, 12, 12, 6, 0.006, 0.006, std::nullopt}, {203, 203, 203, 1, 0.049, 0.049, std::nullopt},
                    {2284, 2284, 2284, 1, 0.292, 0.292, std::nullopt}};
    return profile_of({m});
}
prof::length_distribution panel_of(std::vector<std::uint64_t> lengths) { return prof::distribution_of_lengths(lengths); }
}  // namespace

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
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(nullptr, rq); }, &code) ==
          "--strict: no profile on the input: nothing measured to plan from");
    CHECK(code == 65);
    auto p = profile_of({model("theta", "statistical", 5, std::nullopt, 100 * MiB, std::nullopt, 0.25)});
    rq.models.clear();
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code) ==
          "--strict: assumed axes in family 'statistical' (cores): measure them, or plan without --strict");
    CHECK(code == 65);
    auto measured = statistical();  // every axis measured
    CHECK_NOTHROW(prof::make_plan(&measured, rq));
}

TEST_CASE("--strict refuses a family that cannot meet its deadline, naming why") {
    // One 125 s cell against a 60 s deadline: no node count meets it.
    auto p = profile_of({model("slow", "f", 5, 1.0, 1 * GiB, std::nullopt, 100.0)});
    auto rq = cpu_request();
    rq.strict = true;
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code) ==
          "--strict: family 'f' cannot meet the deadline 60.00 s: one cell of model 'slow' takes 2.1 min (planned); "
          "63 node(s) run every cell at once and take 2.1 min; raise --deadline");
    CHECK(code == 65);
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
    auto rq = cpu_request();
    rq.series = 160;
    rq.deadline_s = 400;
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
    CHECK(error_text([&] { prof::make_plan(&p, cpu_request()); }, &code) ==
          "the profile is reference evidence (source 'baseline': another run, or the baseline), which does not say "
          "which models this run fits; name them: prof-plan --models NAME[:FAMILY],... (models the evidence lacks "
          "then follow --on-unmeasured)");
    CHECK(code == 65);
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

TEST_CASE("size classes: the partition of least slot memory x time, with the fewest classes within 1 %") {
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
}  // namespace

TEST_CASE("size classes: a family's cells by length get their own slot memory from the memory curve") {
    // Panel {12, 12, 203, 2284}, one model; work per length (before the 1.25 margin) 2 × 0.006,
    // 0.049, 0.292; slot memory at each length's class end 125, 250, 500 MiB (× 1.25).
    // One size: 500 × 0.353 = 176.5 MiB·s; cut after 203: 250 × 0.061 + 500 × 0.292 = 161.25;
    // three classes 125 × 0.012 + 250 × 0.049 + 146 = 159.75, within 1 % of 176.5 of the two: two.
    auto p = curved_memory();
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 12, 203, 2284});
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
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 12, 203, 2284});
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
    auto rq = cpu_request();
    rq.series = 0;
    rq.panel = panel_of({12, 12, 203, 2284});
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

namespace {
// m: 1 core, 100 MiB, 48 s measured (60 s with the 1.25 margin): equal cells.
prof::compute_profile one_minute_cells() { return profile_of({model("m", "f", 5, 1.0, 100 * MiB, std::nullopt, 48.0)}); }
}  // namespace

TEST_CASE("the default headroom holds the makespan to 90% of the deadline, and buys the node that needs") {
    auto p = one_minute_cells();
    auto rq = cpu_request();
    rq.series = 320;
    rq.deadline_s = 600;
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
    prof::plan_request rq;
    rq.series = 10;
    rq.node = {16, 64 * GiB, 0, std::nullopt};
    rq.deadline_s = 50;
    int code = 0;
    CHECK(error_text([&] { prof::make_plan(&p, rq); }, &code) ==
          "family 'f' cannot meet the deadline 50.00 s less 10% headroom (45.00 s): one cell of model 'm' takes 60.00 s "
          "(planned); 1 node(s) run every cell at once and take 60.00 s; raise --deadline; or write it anyway with "
          "--allow-missed-deadline");
    CHECK(code == 65);
    rq.allow_missed_deadline = true;
    CHECK(prof::make_plan(&p, rq).families.at("f").meets_deadline == false);
}

TEST_CASE("k8s: every Job index pays the pod start, and the controller's rate bounds short cells") {
    auto p = one_minute_cells();
    prof::plan_request rq;  // the defaults: 10% headroom, 10 s pod start, 20 pods/s
    rq.series = 320;
    rq.node = {16, 64 * GiB, 0, std::nullopt};
    rq.deadline_s = 600;
    rq.layout = "k8s";
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
    auto rq = cpu_request();
    rq.layout = "k8s";
    rq.series = 10000;
    rq.deadline_s = 3600;
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
    prof::plan_request rq;
    rq.series = 1000;
    rq.node = {16, 64 * GiB, 0, std::nullopt};
    rq.nodes = 4;
    rq.layout = "spark";
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
    prof::plan_request rq;
    rq.series = 100;
    rq.node = {16, 56 * GiB, 0, std::nullopt};
    rq.nodes = 2;
    rq.layout = "spark";
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
    prof::plan_request rq = bare_request();
    rq.series = 1000;
    rq.node = {96, 1024 * GiB, 8, 81559 * MiB};
    rq.nodes = 1;
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

TEST_CASE("k8s-job prices a cold start per process, k8s keeps its workers warm and does not") {
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
    prof::set_target(rq, "k8s", "");
    auto pods = prof::make_plan(&p, rq);
    CHECK_FALSE(pods.families.at("statistical").cold_start_work_s.has_value());
    CHECK(pods.families.at("statistical").work_s == doctest::Approx(937.5));
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
