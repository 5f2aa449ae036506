// Unit tests of the layouts and renderings per scheduler: Spark executors, Kubernetes pods and
// Jobs, Ray tasks.
#include "prof/plan/plan_test_support.hpp"

#include <doctest/doctest.h>

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
    auto rq = request_of({.series = 100,
                          .node = prof::node_shape{14, 128 * GiB, 4, 16 * GiB},
                          .layout = "k8s",
                          .deadline_s = 600},
                         bare_request());
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
    auto rq = request_of({.series = 250000, .layout = "k8s"}, cpu_request());
    auto plan = prof::make_plan(&p, rq);
    const auto& f = plan.families.at("f");
    CHECK(f.layout.cells_per_item == 3);          // ceil(250000 / 100000)
    CHECK(f.layout.work_items == 83334);
    CHECK(f.layout.work_items <= prof::k8s_max_indexed_completions);
}

TEST_CASE("ray: num_gpus rounded to Ray's 0.0001, a note on memory, per family the options of a remote task") {
    // theta measured on the GPU host, using none (0); a null peak would take a whole device.
    auto p = profile_of({model("theta", "statistical", 5, 1.0, 100 * MiB, 0, 0.25, std::nullopt),
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
