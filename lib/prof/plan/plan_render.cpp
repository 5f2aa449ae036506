// The scheduler renderings of a plan record: Spark properties, Ray task options, Kubernetes
// container resources or an Indexed Job, and the table for people. Every count, size and
// concurrency comes from the record's layout; nothing is recomputed here.
#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/plan/interval.hpp"
#include "prof/plan/plan.hpp"
#include "prof/measure/spawn.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <fmt/ranges.h>

namespace prof {

namespace {

constexpr std::uint64_t mib = 1ULL << 20;

// The pool variables prof-measure sets when it caps a fit's threads, sorted: production gets
// the same cap its slot was measured under.
std::vector<std::string> pool_variables() {
    std::vector<std::string> v = thread_pool_variables();
    std::sort(v.begin(), v.end());
    return v;
}

std::string json_quoted(std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
}

std::string family_header(const std::string& name, const family_plan& f) {
    std::string models;
    for (const auto& m : f.models) models += (models.empty() ? "" : ", ") + m;
    return fmt::format("family '{}' (models {}); basis: cores {}, memory {}, gpu {}, wall {}{}", name, models,
                       f.basis.cores, f.basis.memory, f.basis.gpu, f.basis.wall,
                       f.low_confidence ? fmt::format("; LOW CONFIDENCE ({} ok fits)", f.n_ok) : "");
}

std::string count_or_deadline(const plan_record& p) {
    if (p.run.deadline_s) return fmt::format("deadline {}", human_seconds(*p.run.deadline_s));
    return fmt::format("{} node(s) given", *p.run.nodes);
}

// The schedule line every rendering carries: waves of whole cells and the makespan bounds.
std::string schedule_comment(const plan_record& p, const family_plan& f) {
    std::string met;
    const bool alone = p.families.size() > 1;
    if (f.meets_deadline)
        met = *f.meets_deadline ? (alone ? "; meets the deadline by itself (the run: see the totals)" : "; meets the deadline")
                                : "; DOES NOT MEET THE DEADLINE";
    const std::string cold = f.cold_start_work_s && *f.cold_start_work_s > 0
                                 ? fmt::format("; {} of cold starts in the work and the makespan (a fresh worker's "
                                               "first cell of each model)",
                                               human_seconds(*f.cold_start_work_s))
                                 : std::string();
    return fmt::format("# schedule: {} cells of up to {} in {} wave(s) over {} slot(s) on {} node(s) ({}); "
                       "makespan <= {}, >= {}{}{}\n",
                       f.cells, human_seconds(f.longest_cell_s), f.waves, f.slots, f.nodes, count_or_deadline(p),
                       human_seconds(f.makespan_s), human_seconds(f.makespan_lower_s), cold, met);
}

// The run's verdict, for a plan of several families: the totals run them one after another on
// the same nodes, and a family that meets the deadline by itself says nothing of the run.
std::string totals_comment(const plan_record& p) {
    if (p.families.size() < 2) return "";
    const plan_totals& t = p.totals;
    std::string met;
    if (t.meets_deadline)
        met = *t.meets_deadline ? "; meets the deadline"
                                : fmt::format("; THE RUN DOES NOT MEET THE DEADLINE {}: run the families side by side on "
                                              "separate nodes (each family's own node count) or raise --deadline",
                                              human_seconds(*p.run.deadline_s));
    return fmt::format("# totals: {} families one after another on the same {} node(s) ({}): {} cells; makespan <= {}, "
                       ">= {}{}\n",
                       p.families.size(), t.nodes, count_or_deadline(p), t.cells, human_seconds(t.makespan_s),
                       human_seconds(t.makespan_lower_s), met);
}

void require_layout(const plan_record& p, std::string_view layout, std::string_view target) {
    if (p.run.layout != layout)
        throw usage_error(fmt::format("--target {} renders the {} layout, but the plan was laid out for {}", target,
                                      layout, p.run.layout));
}

// A family as one rendering block: the family itself, or one of its size classes as a family
// of the class's numbers (slot memory, layout, cells, work, schedule on the family's nodes).
struct family_view {
    family_plan f;
    std::string label;         // "" for the family itself; ", size class 2 of 3 (n_obs ...)"
    std::size_t index = 0;     // the class's index, from 0
    const size_class* size = nullptr;  // null for the family itself
};

std::vector<family_view> class_views(const family_plan& f) {
    if (f.size_classes.size() < 2) return {family_view{f, "", 0, nullptr}};
    std::vector<family_view> out;
    for (std::size_t k = 0; k < f.size_classes.size(); ++k) {
        const size_class& c = f.size_classes[k];
        family_view v{f, "", k, &c};
        copy_slot_and_schedule(v.f, c);
        v.f.cold_start_work_s = c.cold_start_work_s;
        v.f.makespan_lower_s = c.slots ? std::max(c.work_s / static_cast<double>(c.slots), c.longest_cell_s) : 0;
        v.f.meets_deadline.reset();  // the deadline is the family's: its classes one after another
        if (c.layout.unit == "pod") v.f.max_failed_items = failed_items_allowance(c.layout.work_items, c.layout.cells_per_item, f.failure_share);
        v.label = fmt::format(", size class {} of {} (n_obs {} to {}: cells {} to {} in the run's length order)", k + 1,
                              f.size_classes.size(), c.n_obs_min.value_or(0), c.n_obs_max.value_or(0), c.first_cell,
                              c.first_cell + c.cells - 1);
        out.push_back(std::move(v));
    }
    return out;
}

std::size_t rendered_blocks(const plan_record& p) {
    std::size_t n = 0;
    for (const auto& [name, f] : p.families) n += std::max<std::size_t>(1, f.size_classes.size());
    return n;
}

// The line a family of several size classes opens with: how its cells reach their class, and
// what the classes save against one size.
std::string size_classes_comment(const std::string& name, const family_plan& f) {
    if (f.size_classes.size() < 2) return "";
    std::string bounds;
    for (const auto& c : f.size_classes)
        bounds += fmt::format("{}{}-{}: {} ({} cells from {})", bounds.empty() ? "" : "; ", c.n_obs_min.value_or(0),
                              c.n_obs_max.value_or(0), human_bytes(double(c.slot_rss_bytes)), c.cells, c.first_cell);
    return fmt::format("# size classes: family '{}' runs as {} classes by series length, one after another on its {} "
                       "node(s): order the family's cells by length (series by (n_obs, ts_id), each series' models in "
                       "the order {}), and a cell goes to the class whose n_obs range holds its series ({}); slot memory "
                       "x time {:.4g} GiB-h against {:.4g} GiB-h at one size of {}: {:.1f}% saved\n",
                       name, f.size_classes.size(), f.nodes, fmt::join(f.models, ", "), bounds, f.slot_gib_hours,
                       f.one_size_slot_gib_hours, human_bytes(double(f.slot_rss_bytes)), 100.0 * f.size_class_saving);
}

}  // namespace

namespace {

// What one executor asks and why, and on YARN what the cluster grants and what the driver takes.
std::string spark_container_comment(const plan_record& p, const family_plan& f) {
    const family_layout& L = f.layout;
    const std::uint64_t heap_mib = L.heap_bytes.value_or(0) / mib;
    const std::uint64_t python_mib = (L.slots_per_unit * f.slot_rss_bytes + mib - 1) / mib;
    const std::uint64_t base_mib = spark_executor_base_overhead_bytes(L.heap_bytes.value_or(0)) / mib;
    const std::uint64_t rounding_mib = L.overhead_bytes.value_or(0) / mib - base_mib - python_mib;
    std::string out = fmt::format(
        "# executor container {} MiB: heap {} MiB = max(1024 MiB, 64 MiB x {} tasks); memoryOverhead = {} MiB base "
        "(max(384 MiB, 10% of the heap)) + {} MiB for the {} slots' Python workers{}; pyspark.memory is left unset on "
        "purpose: PySpark would make it an address-space limit (RLIMIT_AS) per worker, and the slots are sized from "
        "resident memory, which address space exceeds\n",
        L.unit_memory_bytes / mib, heap_mib, L.slots_per_unit, base_mib, python_mib, L.slots_per_unit,
        rounding_mib ? fmt::format(" + {} MiB to YARN's next multiple of {} MiB", rounding_mib,
                                   p.run.limits.yarn_min_allocation_bytes / mib)
                     : std::string());
    if (p.run.limits.spark_cluster == "yarn")
        out += fmt::format("# YARN grants containers in multiples of yarn.scheduler.minimum-allocation-mb ({} MiB) and "
                           "refuses one above yarn.scheduler.maximum-allocation-vcores ({}): the executor asks exactly a "
                           "multiple, and {} core(s) at most\n",
                           p.run.limits.yarn_min_allocation_bytes / mib, p.run.limits.yarn_max_vcores,
                           p.run.limits.yarn_max_vcores);
    if (p.run.limits.spark_cluster != "standalone")
        out += fmt::format("# the driver's container (cluster deploy mode: {} on one node) displaces {} executor(s) "
                           "there: {} executor(s) in all\n",
                           p.run.limits.spark_cluster == "yarn" ? "YARN's ApplicationMaster, 1 core and 2048 MiB"
                                                                : "a driver pod, 1 core and 1408 MiB",
                           L.reserved_units, L.units_per_node * f.nodes - L.reserved_units);
    return out;
}

// The partitioning contract: a dense cell index, one cell per partition, by position.
std::string spark_partition_comment(const family_plan& f) {
    return fmt::format(
        "# partitions: one cell per task, by a dense cell index: partition i holds cell i alone, for i in 0..{}. In "
        "PySpark, cells = sc.parallelize(range({}), {}) (a range is sliced by position, one element per slice), then "
        "cells.map(run_cell).collect(), where run_cell(i) fits cell i; or key an RDD by the index and "
        "partitionBy({}, lambda i: i). Never spread cells with a DataFrame repartition or groupBy on a key: Spark's "
        "hash partitioning, pmod(murmur3(key, 42), {}), leaves about a third of the partitions empty and gives other "
        "tasks several cells\n",
        f.cells - 1, f.cells, f.cells, f.cells, f.cells);
}

}  // namespace

// Spark: units_per_node executors per node of slots_per_unit task slots each. An executor asks
// the node for spark.executor.memory (JVM heap) + memoryOverhead, and the slots' Python memory
// goes in memoryOverhead (Spark's documented home for Python workers' memory when pyspark.memory
// is unset), not in pyspark.memory: PySpark turns pyspark.memory into an address-space limit
// (RLIMIT_AS) of pyspark.memory / executor cores per worker, and the slots are sized from
// resident memory, which address space exceeds (a Python worker maps far more than it touches).
// Static allocation needs spark.executor.instances (its default is 2); dynamic
// allocation is off unless enabled, and needs shuffle tracking or an external shuffle service.
namespace {
constexpr std::string_view no_thread_cap_recorded = "no thread cap recorded in the profile";
std::string no_thread_cap_reason(const family_plan& f);
}  // namespace

std::string render_spark(const plan_record& p, const render_options& o) {
    require_layout(p, "spark", "spark");
    std::string out = totals_comment(p);
    if (rendered_blocks(p) > 1)
        out += fmt::format("# {} {} below, one block each: run each as its own Spark application with its "
                           "block as its spark-defaults.conf (one file holding them all keeps only the last "
                           "block's keys)\n",
                           rendered_blocks(p), p.families.size() > 1 ? "families and size classes" : "size classes");
    bool first = true;
    for (const auto& [name, fam] : p.families)
    for (const family_view& view : class_views(fam)) {
        const family_plan& f = view.f;
        const family_layout& L = f.layout;
        out += (first ? "" : "\n") + (view.index == 0 ? size_classes_comment(name, fam) : std::string());
        first = false;
        const std::uint64_t executors = L.units_per_node * f.nodes - L.reserved_units;
        const std::uint64_t heap_mib = L.heap_bytes.value_or(0) / mib;
        const std::uint64_t overhead_mib = L.overhead_bytes.value_or(0) / mib;
        out += "# prof-plan: spark-defaults.conf for " + family_header(name, f) + view.label + "\n";
        out += fmt::format("# layout: {} executor(s) per node ({} cores, {} allocatable), each {} task slot(s) of {} "
                           "core(s) and {}; {} executor(s) on {} node(s); slots per node limited by {}\n",
                           L.units_per_node, p.node.cores, human_bytes(double(p.node.memory_bytes)), L.slots_per_unit,
                           f.slot_cores, human_bytes(double(f.slot_rss_bytes)), executors, f.nodes, L.limited_by);
        out += schedule_comment(p, f);
        out += spark_container_comment(p, f);
        auto line = [&](std::string_view k, const std::string& v) { out += fmt::format("{:<48} {}\n", k, v); };
        if (o.spark_allocation == "dynamic") {
            out += "# dynamic allocation: executors follow the task backlog, at most the plan's count; shuffle tracking "
                   "keeps executors holding shuffle data (no external shuffle service needed)\n";
            line("spark.dynamicAllocation.enabled", "true");
            line("spark.dynamicAllocation.shuffleTracking.enabled", "true");
            line("spark.dynamicAllocation.minExecutors", "0");
            line("spark.dynamicAllocation.initialExecutors", std::to_string(executors));
            line("spark.dynamicAllocation.maxExecutors", std::to_string(executors));
        } else {
            line("spark.executor.instances", std::to_string(executors));
            line("spark.dynamicAllocation.enabled", "false");
        }
        if (p.run.limits.spark_cluster != "standalone") line("spark.submit.deployMode", "cluster");
        line("spark.executor.cores", std::to_string(L.unit_cores));
        line("spark.task.cpus", std::to_string(f.slot_cores));
        line("spark.executor.memory", fmt::format("{}m", heap_mib));
        line("spark.executor.memoryOverhead", fmt::format("{}m", overhead_mib));
        out += spark_partition_comment(f);
        line("spark.default.parallelism", std::to_string(f.cells));
        out += "# a task fails only when its executor or worker dies: the cell function catches its fit's own error and "
               "returns it as the cell's result (a fit that fails on its data fails on every attempt, and the "
               "maxFailures-th failure of one task aborts the whole job)\n";
        line("spark.task.maxFailures", "4");
        if (L.unit_gpus) {
            line("spark.executor.resource.gpu.amount", fmt::format("{}", static_cast<std::uint64_t>(*L.unit_gpus)));
            line("spark.executor.resource.gpu.discoveryScript",
                 o.gpu_discovery_script ? *o.gpu_discovery_script : std::string(spark_gpu_discovery_placeholder));
            if (!o.gpu_discovery_script)
                out += "# the discovery script above is a placeholder (Spark's example script in its distribution); "
                       "give the path on your executors with --spark-gpu-discovery-script\n";
            line("spark.executor.resource.gpu.vendor", "nvidia.com");
            line("spark.task.resource.gpu.amount", format_double(spark_task_gpu_amount(*L.slots_per_device)));
            out += "# YARN: Spark asks YARN for the yarn.io/gpu resource type, which the NodeManagers must offer "
                   "(GPU scheduling enabled, yarn.io/gpu in resource-types.xml)\n";
        }
        if (p.run.limits.spark_cluster == "yarn")
            out += "# YARN: the CapacityScheduler's default resource calculator places containers by memory alone; set "
                   "yarn.scheduler.capacity.resource-calculator to "
                   "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator so executors' cores count too\n";
        if (f.intraop_threads) {
            for (const auto& v : pool_variables())
                line("spark.executorEnv." + v, std::to_string(*f.intraop_threads));
        } else {
            const std::string why = no_thread_cap_reason(f);
            out += "# " + (why == no_thread_cap_recorded ? std::string("no thread cap recorded") : why) +
                   ": PySpark sets OMP_NUM_THREADS to spark.task.cpus in each Python worker "
                   "when it is unset; other pools (OpenBLAS, MKL) take every core they see\n";
        }
    }
    return out;
}

// Ray: comment lines (per family the concurrency the plan counts on, then what `memory` does),
// then one JSON line: per family the options of a remote task, `f.options(**opts[family])`; a
// family of several size classes maps to a list of its classes in length order instead, each
// {n_obs_min, n_obs_max, first_cell, cells, options}: a cell of length n takes the options of
// the class whose range holds n. Ray's `memory` is in bytes; num_gpus is a multiple of
// 0.0001; env_vars values are strings.
std::string render_ray(const plan_record& p) {
    require_layout(p, "ray", "ray");
    std::string out = totals_comment(p);
    for (const auto& [name, fam] : p.families) {
        out += size_classes_comment(name, fam);
        for (const family_view& view : class_views(fam)) {
            const family_plan& f = view.f;
            out += fmt::format("# ray: family '{}'{}: {} task(s) at once on {} node(s) of {} cores, {}{}\n", name, view.label,
                               f.slots, f.nodes, p.node.cores, human_bytes(double(p.node.memory_bytes)),
                               f.layout.unit_gpus ? fmt::format(", {} per GPU", *f.layout.slots_per_device) : "");
            out += schedule_comment(p, f);
        }
    }
    if (rendered_blocks(p) > p.families.size())
        out += "# ray: a family of several size classes maps to a list of classes, not to options: pick the class of "
               "each cell by its series length, then task.options(**cls[\"options\"]), one class after another\n";
    out += "# ray: memory is a scheduling reservation, not a limit: Ray starts a task only where the node's memory "
           "resource has room for it, but does not stop a task that grows past it (the memory monitor kills "
           "workers only when the whole node passes its usage threshold)\n";
    for (const auto& [name, f] : p.families)
        if (f.layout.unit_gpus)
            out += fmt::format("# ray: family '{}': num_gpus {} lets at most {} tasks share a device, so the node's "
                               "tasks spread over all {} GPUs; max_calls 0 (no limit) reuses each worker, where Ray's "
                               "default for a GPU task (1) would start a fresh worker process for every cell\n",
                               name, format_double(*f.layout.unit_gpus), *f.layout.slots_per_device, p.node.gpus);
    auto options = [](json_writer& w, const family_plan& f) {
        w.begin_object();
        w.field("num_cpus", f.layout.unit_cores);
        w.field("memory", f.layout.unit_memory_bytes);
        if (f.layout.unit_gpus) {
            w.field("num_gpus", *f.layout.unit_gpus);
            w.field("max_calls", 0);
        } else {
            w.field("num_gpus", 0);
        }
        w.key("runtime_env");
        w.begin_object();
        w.key("env_vars");
        w.begin_object();
        if (f.intraop_threads)
            for (const auto& v : pool_variables()) w.field(v, std::to_string(*f.intraop_threads));
        w.end_object();
        w.end_object();
        w.end_object();
    };
    json_writer w;
    w.begin_object();
    for (const auto& [name, fam] : p.families) {
        w.key(name);
        const std::vector<family_view> views = class_views(fam);
        if (!views.front().size) {
            options(w, views.front().f);
            continue;
        }
        w.begin_array();
        for (const family_view& view : views) {
            w.begin_object();
            w.field("n_obs_min", view.size->n_obs_min);
            w.field("n_obs_max", view.size->n_obs_max);
            w.field("first_cell", view.size->first_cell);
            w.field("cells", view.size->cells);
            w.key("options");
            options(w, view.f);
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
    out += w.take();
    return out;
}

namespace {

// A pod's container `resources`, indented by `pad`: requests for cpu, memory and whole devices;
// limits for memory and devices (a device is only ever a limit, and must equal its request),
// and for cpu only when a thread cap is recorded and asked for: a CPU limit brings CFS
// throttling, worst for uncapped pools.
std::string resources_block(const family_plan& f, const render_options& o, const std::string& pad) {
    const std::string cpu = json_quoted(std::to_string(f.layout.unit_cores));
    const std::string mem = json_quoted(fmt::format("{}Mi", f.layout.unit_memory_bytes / mib));
    std::string out;
    out += pad + "resources:\n";
    out += pad + "  requests:\n";
    out += pad + "    cpu: " + cpu + "\n";
    out += pad + "    memory: " + mem + "\n";
    if (f.layout.unit_gpus) out += pad + "    nvidia.com/gpu: \"1\"\n";
    out += pad + "  limits:\n";
    if (o.cpu_limit && f.intraop_threads) out += pad + "    cpu: " + cpu + "\n";
    out += pad + "    memory: " + mem + "\n";
    if (f.layout.unit_gpus) out += pad + "    nvidia.com/gpu: \"1\"\n";
    return out;
}

// A thread cap above the slot's cores under a CPU limit: each of the pod's workers runs more
// threads than its share of the limit, and CFS throttles them.
std::optional<std::string> cpu_limit_conflict(const family_plan& f, const render_options& o) {
    if (!(o.cpu_limit && f.intraop_threads && *f.intraop_threads > f.slot_cores)) return std::nullopt;
    return fmt::format("thread cap {} is above the {} core(s) of a slot under --cpu-limit (limits.cpu \"{}\" for {} "
                       "slot(s) per pod): CFS throttles the pool; measure the fits under a cap of at most {} "
                       "(prof-measure --threads) or drop --cpu-limit",
                       *f.intraop_threads, f.slot_cores, f.layout.unit_cores, f.layout.slots_per_unit, f.slot_cores);
}

// Why a family sets no thread-pool variables: its models' caps differ, or a model's fits ran
// under several caps, the largest none (the plan's warnings name them), or none was recorded.
std::string no_thread_cap_reason(const family_plan& f) {
    // Each warning's opening words, where its list of caps ends, and what the reason adds.
    struct kind {
        std::string_view opening, list_end, tail;
    };
    static constexpr kind kinds[] = {
        {"its models ran under different thread caps (", ")", "): no thread-pool variables set"},
        {"its fits ran under different thread caps (", "): ", "), the largest no cap: no thread-pool variables set"},
    };
    for (const kind& k : kinds)
        for (const auto& w : f.warnings)
            if (w.rfind(k.opening, 0) == 0) {
                const auto end = w.find(k.list_end, k.opening.size());
                return std::string(k.opening) + w.substr(k.opening.size(), end - k.opening.size()) + std::string(k.tail);
            }
    return std::string(no_thread_cap_recorded);
}

// The thread-cap variables as `env` list entries, indented by `pad`.
std::string thread_env(const family_plan& f, const std::string& pad) {
    std::string out;
    if (f.intraop_threads)
        for (const auto& v : pool_variables())
            out += fmt::format("{}- name: {}\n{}  value: \"{}\"\n", pad, v, pad, *f.intraop_threads);
    return out;
}

std::string k8s_layout_comment(const plan_record& p, const family_plan& f) {
    const family_layout& L = f.layout;
    std::string out;
    if (L.unit_gpus && L.slots_per_unit > 1)
        out += fmt::format("# gpu_fraction {}: Kubernetes cannot request part of a device, so each pod holds one "
                           "whole GPU and runs {} slots (start {} worker processes per pod)\n",
                           format_double(*f.gpu_fraction), L.slots_per_unit, L.slots_per_unit);
    else if (L.slots_per_unit > 1)
        out += fmt::format("# {} slots per pod (start {} worker processes per pod): one slot per pod would need {} pods "
                           "on a node, more than --max-pods-per-node {}\n",
                           L.slots_per_unit, L.slots_per_unit, f.slots_per_node, p.run.limits.max_pods_per_node);
    out += fmt::format("# layout: {} pod(s) per node ({} cores, {} allocatable), {} in parallel on {} node(s); slots "
                       "per node limited by {}\n",
                       L.units_per_node, p.node.cores, human_bytes(double(p.node.memory_bytes)),
                       L.units_per_node * f.nodes, f.nodes, L.limited_by);
    out += schedule_comment(p, f);
    return out;
}

// A Job name from a family: a DNS label ("prof-" + the family in lower case, every other byte
// '-'), short enough that the controller's pod names and labels stay within 63 characters.
std::string job_name(const std::string& family, std::set<std::string>& taken) {
    std::string n = "prof-";
    for (unsigned char c : family) n += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
    if (n.size() > 40) n.resize(40);
    while (n.back() == '-') n.pop_back();
    std::string name = n;
    for (int i = 2; !taken.insert(name).second; ++i) name = fmt::format("{}-{}", n, i);
    return name;
}

}  // namespace

// Kubernetes: per family one YAML document holding a container's `resources` and `env`, to
// paste into a pod template (--target k8s-job writes a whole Job).
std::string render_k8s(const plan_record& p, const render_options& o) {
    require_layout(p, "k8s", "k8s");
    std::string out = totals_comment(p);
    for (const auto& [name, fam] : p.families)
    for (const family_view& view : class_views(fam)) {
        const family_plan& f = view.f;
        out += "---\n";
        if (view.index == 0) out += size_classes_comment(name, fam);
        out += "# prof-plan: Kubernetes container resources for " + family_header(name, f) + view.label + "\n";
        out += k8s_layout_comment(p, f);
        out += resources_block(f, o, "");
        if (auto w = cpu_limit_conflict(f, o)) out += "# WARNING: " + *w + "\n";
        if (f.intraop_threads) out += "env:\n" + thread_env(f, "");
        else out += "env: []  # " + no_thread_cap_reason(f) + "\n";
    }
    return out;
}

namespace {

// "1,3-5,7": sorted indexes written as a Job's status.failedIndexes writes them.
std::string index_ranges(const std::vector<std::uint64_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
        i = j + 1;
    }
    return out;
}

// The Job's failure handling: per-index retries, the failed indexes it tolerates, and which pod
// failures skip the retry (a fit's own failure, an OOM kill) or do not count (a disruption).
std::string failure_policy_block(std::uint64_t max_failed) {
    std::string out;
    out += "  backoffLimitPerIndex: 1\n";
    out += fmt::format("  maxFailedIndexes: {}\n", max_failed);
    out += "  podFailurePolicy:\n";
    out += "    rules:\n";
    out += "    - action: Ignore\n";
    out += "      onPodConditions:\n";
    out += "      - type: DisruptionTarget\n";
    out += "    - action: FailIndex\n";
    out += "      onExitCodes:\n";
    out += "        containerName: worker\n";
    out += "        operator: In\n";
    out += fmt::format("        values: [{}, 137]\n", k8s_fit_failed_exit);
    return out;
}

// KEY=VALUE → ("KEY", "VALUE"); KEY[=VALUE]:EFFECT → key, value (empty: Exists), effect.
std::pair<std::string, std::string> split_at(const std::string& s, char c) {
    const auto at = s.find(c);
    if (at == std::string::npos) return {s, ""};
    return {s.substr(0, at), s.substr(at + 1)};
}

// The pod spec's placement: nodeSelector and tolerations, indented for a Job's template.
std::string placement_block(const family_plan& f, const render_options& o) {
    std::string out;
    if (!o.node_selector.empty()) {
        out += "      nodeSelector:\n";
        for (const auto& kv : o.node_selector) {
            auto [k, v] = split_at(kv, '=');
            out += fmt::format("        {}: {}\n", json_quoted(k), json_quoted(v));
        }
    }
    std::vector<std::string> tolerations = o.tolerations;
    if (tolerations.empty() && f.layout.unit_gpus) tolerations.push_back("nvidia.com/gpu:NoSchedule");
    if (!tolerations.empty()) {
        out += "      tolerations:\n";
        for (const auto& t : tolerations) {
            const auto colon = t.rfind(':');
            const std::string kv = t.substr(0, colon), effect = t.substr(colon + 1);
            auto [k, v] = split_at(kv, '=');
            out += fmt::format("      - key: {}\n", json_quoted(k));
            if (v.empty()) out += "        operator: Exists\n";
            else out += fmt::format("        operator: Equal\n        value: {}\n", json_quoted(v));
            out += fmt::format("        effect: {}\n", effect);
        }
    }
    return out;
}

// One Indexed Job document: the spec, the failure policy, placement, the worker's env and
// resources. `memory_bytes` is the pod's memory (the layout's, or the retry tier's); `indexes`
// (the retry tier) maps the Job's index j to the j-th of the original Job's failed indexes.
struct job_shape {
    std::string name;
    std::uint64_t completions = 0, parallelism = 0, max_failed = 0, memory_bytes = 0;
    std::optional<std::string> indexes;
};

// A Job's activeDeadlineSeconds, whole seconds rounded up: the run's deadline for a family's
// one Job; for a class's Job (the family's class Jobs applied one after another) the deadline's
// share that is the class's share of the family's makespan, so each class keeps the headroom
// the family keeps and the classes' deadlines sum to the run's (plus at most a second each).
std::uint64_t job_deadline_seconds(const plan_record& p, const std::string& family, std::size_t cls_index, bool is_class) {
    double d = *p.run.deadline_s;
    if (is_class) {
        const auto& cl = p.families.at(family).size_classes;
        double sum = 0;
        for (const auto& c : cl) sum += c.makespan_s;
        d = sum > 0 ? d * cl[cls_index].makespan_s / sum : d / static_cast<double>(cl.size());
    }
    return static_cast<std::uint64_t>(std::max(1.0, std::ceil(d - 1e-9)));
}

// `cls`: the size class this Job runs (its index from 0 in `cls_index`), or null for the family.
std::string job_document(const plan_record& p, const std::string& family, const family_plan& f, const job_shape& j,
                         const render_options& o, const size_class* cls = nullptr, std::size_t cls_index = 0) {
    const family_layout& L = f.layout;
    std::string out;
    out += "apiVersion: batch/v1\n";
    out += "kind: Job\n";
    out += "metadata:\n";
    out += "  name: " + j.name + "\n";
    out += "  labels:\n";
    out += "    app.kubernetes.io/managed-by: prof-plan\n";
    out += "spec:\n";
    out += "  completionMode: Indexed\n";
    out += fmt::format("  completions: {}\n", j.completions);
    out += fmt::format("  parallelism: {}\n", j.parallelism);
    out += failure_policy_block(j.max_failed);
    if (p.run.deadline_s && !j.indexes)
        out += fmt::format("  activeDeadlineSeconds: {}\n", job_deadline_seconds(p, family, cls_index, cls != nullptr));
    out += fmt::format("  ttlSecondsAfterFinished: {}\n", o.ttl_seconds);
    out += "  template:\n";
    out += "    spec:\n";
    out += "      restartPolicy: Never\n";
    out += placement_block(f, o);
    out += "      containers:\n";
    out += "      - name: worker\n";
    out += "        image: " + json_quoted(o.image.empty() ? std::string(k8s_image_placeholder) : o.image) + "\n";
    out += "        env:\n";
    auto env = [&](std::string_view k, const std::string& v) {
        out += fmt::format("        - name: {}\n          value: {}\n", k, json_quoted(v));
    };
    env("PROF_FAMILY", family);
    env("PROF_CELLS", std::to_string(f.cells));
    if (cls) {
        env("PROF_SIZE_CLASS", std::to_string(cls_index + 1));
        env("PROF_N_OBS_MIN", std::to_string(cls->n_obs_min.value_or(0)));
        env("PROF_N_OBS_MAX", std::to_string(cls->n_obs_max.value_or(0)));
        env("PROF_FIRST_CELL", std::to_string(cls->first_cell));
    }
    env("PROF_CELLS_PER_INDEX", std::to_string(L.cells_per_item));
    env("PROF_SLOTS_PER_POD", std::to_string(L.slots_per_unit));
    env("PROF_FIT_FAILED_EXIT", std::to_string(k8s_fit_failed_exit));
    if (j.indexes) env("PROF_INDEXES", *j.indexes);
    out += thread_env(f, "        ");
    family_plan sized = f;
    sized.layout.unit_memory_bytes = j.memory_bytes;
    out += resources_block(sized, o, "        ");
    return out;
}

// The comments that say how the Job fails and what to do with the indexes it gives up on.
std::string failure_comment(const family_plan& f, const std::string& name, const family_view& view) {
    const family_layout& L = f.layout;
    std::string out;
    out += fmt::format(
        "# failures: the worker writes a failed fit as the cell's result and exits {} (PROF_FIT_FAILED_EXIT) once its "
        "index is done, which fails the index at once, as an OOM kill (137) does: retrying either at the same size "
        "fails again; a pod disrupted by a drain, eviction or preemption (DisruptionTarget) is retried without "
        "counting; any other failure is retried once (backoffLimitPerIndex 1). The Job stops after {} failed "
        "indexes (maxFailedIndexes: a failure share of {} in the profile's fits, {} expected failed of {} indexes, "
        "plus 4 standard deviations and 10); without a policy its backoffLimit of 6 would end it at the 7th failed "
        "pod\n",
        k8s_fit_failed_exit, f.max_failed_items, format_double(f.failure_share),
        format_double(std::round(static_cast<double>(L.work_items) *
                                 (1 - std::pow(1 - f.failure_share, static_cast<double>(L.cells_per_item))) * 10) / 10),
        L.work_items);
    if (L.retry_unit_memory_bytes)
        out += fmt::format(
            "# retry tier: indexes killed for memory run again at {} MiB per pod ({} pod(s) per node): list them while "
            "the pods exist, kubectl get pods -l batch.kubernetes.io/job-name={} -o json | jq -r '[.items[] | "
            "select(any(.status.containerStatuses[]?; .state.terminated.reason == \"OOMKilled\")) | "
            ".metadata.annotations[\"batch.kubernetes.io/job-completion-index\"]] | unique | join(\",\")', (or take "
            "every failed index, kubectl get job {} -o jsonpath='{{.status.failedIndexes}}'), then rerun this prof-plan "
            "command with --retry-indexes LIST{} and apply the Job it writes; at the profile's OOM-kill share about {} "
            "index(es), which the retry Job runs in {} after this one\n",
            *L.retry_unit_memory_bytes / mib, *L.retry_units_per_node, name, name,
            view.size ? fmt::format(" --retry-class {}", view.index + 1) : std::string(), L.retry_items.value_or(0),
            human_seconds(L.retry_makespan_s.value_or(0)));
    return out;
}

}  // namespace

namespace {

// The retry tier: one Job over the given failed indexes of the plan's one family (of its size
// class --retry-class, when it runs as several), its pods at the retry size (an OOM kill proved
// the first size too small).
std::string render_k8s_retry_job(const plan_record& p, const render_options& o) {
    if (p.families.size() != 1)
        throw usage_error(fmt::format("--retry-indexes: the plan holds {} families; plan the family whose Job failed "
                                      "(--models)", p.families.size()));
    const auto& [name, fam] = *p.families.begin();
    const std::vector<family_view> views = class_views(fam);
    if (views.size() > 1 && !o.retry_class)
        throw usage_error(fmt::format("--retry-indexes: family '{}' runs as {} size classes, one Job each (prof-...-c1 "
                                      "to -c{}): name the class whose Job failed with --retry-class N",
                                      name, views.size(), views.size()));
    if (o.retry_class && *o.retry_class > views.size())
        throw usage_error(fmt::format("--retry-class: family '{}' runs as {} size class(es), not {}", name,
                                      views.size(), *o.retry_class));
    const family_view& view = views[views.size() > 1 ? *o.retry_class - 1 : 0];
    const family_plan& f = view.f;
    const family_layout& L = f.layout;
    const std::vector<std::uint64_t>& idx = *o.retry_indexes;
    if (idx.back() >= L.work_items)
        throw usage_error(fmt::format("--retry-indexes: index {} is past the Job's {} indexes", idx.back(), L.work_items));
    if (!L.retry_unit_memory_bytes)
        throw error(exit_code::data_err,
                    fmt::format("--retry-indexes: family '{}' has no retry tier: a pod at the next size fits no node "
                                "or passes --max-container-memory",
                                name));
    std::set<std::string> taken;
    const std::string jname =
        job_name(view.size ? fmt::format("{}-c{}", name, view.index + 1) : name, taken) + "-retry";
    const std::uint64_t n = idx.size();
    std::string out = "---\n";
    out += "# prof-plan: Kubernetes Indexed Job, retry tier, for " + family_header(name, f) + view.label + "\n";
    out += fmt::format("# {} failed index(es) of the family's Job at {} MiB per pod (was {} MiB: the OOM bump, x{} or "
                       "+{}, whichever is larger), {} pod(s) per node on {} node(s); index j of this Job runs the "
                       "original index that is the j-th of PROF_INDEXES\n",
                       n, *L.retry_unit_memory_bytes / mib, L.unit_memory_bytes / mib, format_double(oom_bump_ratio),
                       human_bytes(double(oom_min_bump_bytes)), *L.retry_units_per_node, f.nodes);
    out += job_document(p, name, f,
                        job_shape{jname, n, std::min<std::uint64_t>(n, *L.retry_units_per_node * f.nodes), n,
                                  *L.retry_unit_memory_bytes, index_ranges(idx)},
                        o, view.size, view.index);
    return out;
}

}  // namespace

// Kubernetes: per family an Indexed Job (batch/v1). completions = the family's work items,
// parallelism = pods per node × nodes; index i runs the cells i × cells_per_item … of the
// family's cells (PROF_CELLS_PER_INDEX, slots_per_unit at a time); activeDeadlineSeconds is the
// deadline, whole seconds rounded up (the plan holds the makespan to the deadline less its
// headroom). With --retry-indexes, the retry tier's Job for those indexes of the one family.
std::string render_k8s_job(const plan_record& p, const render_options& o) {
    require_layout(p, "k8s", "k8s-job");
    if (o.retry_indexes) return render_k8s_retry_job(p, o);
    std::string out = totals_comment(p);
    if (p.families.size() > 1 && p.run.deadline_s)
        out += fmt::format("# the Jobs are meant to be applied together on the {} node(s) of the totals: their pods share "
                           "the nodes and the plan prices them as the families one after another; every Job's "
                           "activeDeadlineSeconds is the run's deadline (a size class's Job, its share of it), counted from when "
                           "they are applied{}\n",
                           p.totals.nodes,
                           p.totals.meets_deadline == false
                               ? fmt::format(", so together they would be stopped at {} before the last cells finish",
                                             human_seconds(*p.run.deadline_s))
                               : std::string());
    std::set<std::string> taken;
    for (const auto& [name, fam] : p.families)
    for (const family_view& view : class_views(fam)) {
        const family_plan& f = view.f;
        const family_layout& L = f.layout;
        const std::string jname = job_name(view.size ? fmt::format("{}-c{}", name, view.index + 1) : name, taken);
        out += "---\n";
        if (view.index == 0 && view.size)
            out += size_classes_comment(name, fam) +
                   "# apply the family's class Jobs one after another (each when the one before completes), as the "
                   "plan prices them; each Job's index i takes cells i x PROF_CELLS_PER_INDEX ... of its class's "
                   "cells, PROF_FIRST_CELL onwards in the run's length order\n";
        out += "# prof-plan: Kubernetes Indexed Job for " + family_header(name, f) + view.label + "\n";
        out += k8s_layout_comment(p, f);
        out += fmt::format("# each index runs {} of the family's cells, in the run's order, {} at a time: index i "
                           "takes cells i x {} up to (i + 1) x {} - 1 (JOB_COMPLETION_INDEX)\n",
                           L.cells_per_item, L.slots_per_unit, L.cells_per_item, L.cells_per_item);
        out += fmt::format("# pod start: every index pays {} (--pod-start) before its first cell, and the controller "
                           "creates at most {} pod(s)/s (--job-pod-rate): both are in the makespan\n",
                           human_seconds(L.unit_start_s), format_double(p.run.slack.job_pod_rate));
        if (f.longest_cell_s * static_cast<double>(L.cells_per_item / L.slots_per_unit) < L.unit_start_s)
            out += fmt::format("# an index's cells last at most {}, less than its pod's start: for short cells run a "
                               "worker pool (--target k8s) instead\n",
                               human_seconds(f.longest_cell_s * static_cast<double>(L.cells_per_item / L.slots_per_unit)));
        if (p.run.deadline_s && view.size)
            out += fmt::format("# activeDeadlineSeconds {} s is this class's share of the deadline {}, its makespan's "
                               "share of the family's classes one after another ({} of {}): Kubernetes fails the Job "
                               "and stops its pods when it passes; the class's makespan keeps {}% of it free "
                               "(--headroom)\n",
                               job_deadline_seconds(p, name, view.index, true), human_seconds(*p.run.deadline_s),
                               human_seconds(view.size->makespan_s), human_seconds(fam.makespan_s),
                               format_double(p.run.slack.headroom * 100));
        else if (p.run.deadline_s)
            out += fmt::format("# activeDeadlineSeconds is the deadline itself: Kubernetes fails the Job and stops its "
                               "pods when it passes; the plan's makespan keeps {}% of it free (--headroom)\n",
                               format_double(p.run.slack.headroom * 100));
        out += failure_comment(f, jname, view);
        if (o.image.empty())
            out += fmt::format("# the image is a placeholder: give your worker's with --k8s-image\n");
        if (o.cpu_limit && !f.intraop_threads)
            out += "# no CPU limit although --cpu-limit was given: the fits recorded no thread cap, and an uncapped "
                   "pool under a CPU limit is throttled\n";
        if (auto w = cpu_limit_conflict(f, o)) out += "# WARNING: " + *w + "\n";
        if (L.unit_gpus && o.tolerations.empty())
            out += "# GPU pods tolerate the nvidia.com/gpu:NoSchedule taint GPU nodes commonly carry; give "
                   "--k8s-node-selector (e.g. nvidia.com/gpu.present=true) to keep them there and --k8s-toleration "
                   "for your taints\n";
        out += job_document(p, name, f,
                            job_shape{jname, L.work_items, L.units_per_node * f.nodes, f.max_failed_items,
                                      L.unit_memory_bytes, std::nullopt},
                            o, view.size, view.index);
    }
    return out;
}


// "work 1.0 s / 2.0 s / 3.0 s; longest cell ...; makespan ...": an interval's three values of each.
static std::string intervals_text(const plan_interval& work, const plan_interval& longest, const plan_interval& makespan) {
    auto three = [](const plan_interval& i) {
        return fmt::format("{} / {} / {}", human_seconds(i.low_s), human_seconds(i.p50_s), human_seconds(i.high_s));
    };
    return fmt::format("work {}; longest cell {}; makespan {}", three(work), three(longest), three(makespan));
}

std::string render_plan_table(const plan_record& p) {
    std::string out;
    const long lo = std::lround(50 * (1 - p.run.confidence)), hi = std::lround(50 * (1 + p.run.confidence));
    const std::string quantiles = fmt::format("P{}/P50/P{} of {} resampled run(s)", lo, hi, p.run.resamples);
    out += fmt::format("plan: basis {} (source {}), {} series x {} model(s); node {} cores, {}{}; {}; layout {}\n",
                       p.provenance.basis, p.provenance.source, p.run.series, p.run.models.size(), p.node.cores,
                       human_bytes(double(p.node.memory_bytes)),
                       p.node.gpus ? fmt::format(", {} x {} GPU", p.node.gpus,
                                                 human_bytes(double(p.node.gpu_memory_bytes.value_or(0))))
                                   : std::string(", no GPU"),
                       count_or_deadline(p), p.run.layout);
    out += fmt::format("{:<20} {:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>10} {:>6} {:>6} {:>10} {:<8} {}\n", "FAMILY",
                       "cores", "memory", "gpu_mem", "gpu_frac", "threads", "slots", "cells", "nodes", "waves",
                       "makespan", "basis", "confidence");
    for (const auto& [name, f] : p.families) {
        auto initial = [](const std::string& b) { return b.empty() ? std::string("?") : b.substr(0, 1); };
        out += fmt::format("{:<20} {:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>10} {:>6} {:>6} {:>10} {:<8} {}\n", name,
                           f.slot_cores, human_bytes(double(f.slot_rss_bytes)),
                           f.slot_gpu_bytes ? human_bytes(double(*f.slot_gpu_bytes)) : std::string("-"),
                           f.gpu_fraction ? fmt::format("{:.3g}", *f.gpu_fraction) : std::string("-"),
                           f.intraop_threads ? std::to_string(*f.intraop_threads) : std::string("-"),
                           f.slots_per_node, f.cells, f.nodes, f.waves, human_seconds(f.makespan_s),
                           initial(f.basis.cores) + initial(f.basis.memory) + initial(f.basis.gpu) +
                               initial(f.basis.wall),
                           f.low_confidence ? fmt::format("LOW ({} ok fits)", f.n_ok) : fmt::format("{} ok fits", f.n_ok));
    }
    out += "(per slot: cores, memory, gpu memory; slots per node under the layout; makespan of whole cells, at most; "
           "basis per axis cores/memory/gpu/wall: m measured, r reference, a assumed)\n";
    out += fmt::format("totals: {} cells, {} of work; {} node(s) running the families one after another; makespan "
                       "<= {}, >= {}{}\n",
                       p.totals.cells, human_seconds(p.totals.work_s), p.totals.nodes, human_seconds(p.totals.makespan_s),
                       human_seconds(p.totals.makespan_lower_s),
                       p.totals.meets_deadline ? (*p.totals.meets_deadline ? "; meets the deadline"
                                                                           : "; DOES NOT MEET THE DEADLINE")
                                               : "");
    out += fmt::format("intervals of the totals ({}): {}; nodes held to makespan {}\n", quantiles,
                       intervals_text(p.totals.work_interval, p.totals.longest_cell_interval, p.totals.makespan_interval),
                       human_seconds(p.totals.makespan_bound_s));
    for (const auto& [name, f] : p.families) {
        out += fmt::format("intervals of {} ({}; resampled: {}): {}\n", name, quantiles,
                           f.resampled_models.empty() ? std::string("none") : fmt::format("{}", fmt::join(f.resampled_models, ", ")),
                           intervals_text(f.work_interval, f.longest_cell_interval, f.makespan_interval));
        out += fmt::format("work of {}: {} priced by the {} rule{}{}; longest cell {} ({}{})\n", name,
                           human_seconds(f.work_s), f.wall_estimator,
                           f.beside_slowdown ? fmt::format(", walls x up to {:.2f} beside a neighbour on the node",
                                                           *f.beside_slowdown)
                                             : std::string(),
                           f.cold_start_work_s && *f.cold_start_work_s > 0
                               ? fmt::format(", {} of it cold starts", human_seconds(*f.cold_start_work_s))
                               : std::string(),
                           human_seconds(f.longest_cell_s), f.longest_cell_model,
                           f.longest_cell_n_obs ? fmt::format(", n_obs {}", *f.longest_cell_n_obs) : std::string());
        if (f.size_classes.size() > 1) {
            out += fmt::format("size classes of {} (one after another; a cell goes to the class holding its series' "
                               "n_obs): slot memory x time {:.4g} GiB-h against {:.4g} GiB-h at one size: {:.1f}% saved\n",
                               name, f.slot_gib_hours, f.one_size_slot_gib_hours, 100.0 * f.size_class_saving);
            for (std::size_t k = 0; k < f.size_classes.size(); ++k) {
                const size_class& c = f.size_classes[k];
                out += fmt::format("  class {}: n_obs {} to {}, cells {} to {}, slot {}, {} slot(s) per node, work {}, "
                                   "longest cell {}, {} wave(s), makespan <= {}\n",
                                   k + 1, c.n_obs_min.value_or(0), c.n_obs_max.value_or(0), c.first_cell,
                                   c.first_cell + c.cells - 1, human_bytes(double(c.slot_rss_bytes)), c.slots_per_node,
                                   human_seconds(c.work_s), human_seconds(c.longest_cell_s), c.waves,
                                   human_seconds(c.makespan_s));
            }
        }
        if (!f.unmeasured_models.empty())
            out += fmt::format("unmeasured in {} (no ok fit; sized from the defaults): {}\n", name,
                               fmt::join(f.unmeasured_models, ", "));
    }
    if (!p.run.skipped_models.empty())
        out += fmt::format("skipped (no ok fit, --on-unmeasured skip): {}\n", fmt::join(p.run.skipped_models, ", "));
    return out + plan_detail::render_sample_widths(p);
}

std::vector<std::string> family_and_render_warnings(const plan_record& p, const std::string& target,
                                                    const render_options& o) {
    std::vector<std::string> out;
    for (const auto& [name, f] : p.families)
        for (const auto& w : f.warnings) out.push_back(fmt::format("family '{}': {}", name, w));
    for (auto& w : render_warnings(p, target, o)) out.push_back(std::move(w));
    return out;
}

std::vector<std::string> render_warnings(const plan_record& p, const std::string& target, const render_options& o) {
    std::vector<std::string> out;
    if (target != "k8s" && target != "k8s-job") return out;
    for (const auto& [name, f] : p.families)
        if (auto w = cpu_limit_conflict(f, o)) out.push_back(fmt::format("family '{}': {}", name, *w));
    return out;
}

std::string render_plan(const plan_record& p, const std::string& target, const render_options& o) {
    if (target == "json") return write_plan(p);
    if (target == "ray") return render_ray(p);
    if (target == "spark") return render_spark(p, o);
    if (target == "k8s") return render_k8s(p, o);
    if (target == "k8s-job") return render_k8s_job(p, o);
    if (target == "table") return render_plan_table(p);
    throw usage_error(fmt::format("--target must be json, spark, ray, k8s, k8s-job or table, not '{}'", target));
}

}  // namespace prof
