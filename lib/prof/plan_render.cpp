// The scheduler renderings of a plan record (issue 7 "Targets"): Spark properties, Ray task
// options, Kubernetes container resources, and the table for people.
#include "prof/errors.hpp"
#include "prof/json_out.hpp"
#include "prof/plan.hpp"
#include "prof/spawn.hpp"
#include "prof/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace prof {

namespace {

constexpr std::uint64_t mib = 1ULL << 20;

std::uint64_t mib_up(std::uint64_t bytes) { return bytes / mib + (bytes % mib ? 1 : 0); }

// The pool variables prof-measure sets when it caps a fit's threads, sorted: production gets
// the same cap its slot was measured under.
std::vector<std::string> pool_variables() {
    std::vector<std::string> v = thread_pool_variables();
    std::sort(v.begin(), v.end());
    return v;
}

// Slots one device holds: the inverse of gpu_fraction (an exact integer by construction).
std::uint64_t slots_per_device(double gpu_fraction) { return static_cast<std::uint64_t>(std::llround(1.0 / gpu_fraction)); }

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

}  // namespace

// Spark: one executor per node holding every slot the node fits. The executor asks the node
// for spark.executor.memory (JVM heap) + memoryOverhead, and the slots' Python memory goes in
// memoryOverhead (Spark's documented home for Python workers' memory when pyspark.memory is
// unset), not in pyspark.memory: PySpark turns pyspark.memory into an address-space limit
// (RLIMIT_AS) of pyspark.memory / executor cores per worker (SPARK-25004), and the slots are
// sized from resident memory, which address space exceeds (importing statsmodels maps ~210 MB
// for ~141 MB resident: a 194 MiB RLIMIT_AS made the demo's own fits fail at import). When the
// heap and base overhead leave too little room for every slot, the executor runs fewer slots
// and the rendering says so (and counts executors for that number).
std::string render_spark(const plan_record& p) {
    const std::uint64_t jvm = spark_executor_heap_bytes + spark_executor_overhead_bytes;
    std::string out;
    bool first = true;
    for (const auto& [name, f] : p.families) {
        if (!first) out += "\n";
        first = false;
        std::uint64_t slots = f.slots_per_node;
        while (slots > 0 && mib_up(slots * f.slot_rss_bytes) * mib + jvm > p.node.memory_bytes) --slots;
        if (slots == 0)
            throw error(exit_code::data_err,
                        fmt::format("spark: family '{}': one slot's {} plus the executor JVM's {} do not fit a node's {}",
                                    name, human_bytes(double(f.slot_rss_bytes)), human_bytes(double(jvm)),
                                    human_bytes(double(p.node.memory_bytes))));
        std::uint64_t executors =
            p.run.deadline_s ? nodes_for_deadline(f.work_s, slots, *p.run.deadline_s) : *p.run.nodes;
        double makespan = f.work_s / (double(slots) * double(executors));
        out += "# prof-plan: spark-defaults.conf for " + family_header(name, f) + "\n";
        out += fmt::format("# layout: one executor per node ({} cores, {}): {} task slot(s) of {} core(s) and {} each; "
                           "{} executor(s) for {}; makespan >= {} (a lower bound)\n",
                           p.node.cores, human_bytes(double(p.node.memory_bytes)), slots, f.slot_cores,
                           human_bytes(double(f.slot_rss_bytes)), executors, count_or_deadline(p),
                           human_seconds(makespan));
        if (slots < f.slots_per_node)
            out += fmt::format("# {} slots per executor, not {}: the JVM heap and overhead ({}) take the rest of the node\n",
                               slots, f.slots_per_node, human_bytes(double(jvm)));
        std::uint64_t python_mib = mib_up(slots * f.slot_rss_bytes);
        out += fmt::format("# memoryOverhead = {} MiB base + {} MiB for the {} slots' Python workers; pyspark.memory is left "
                           "unset on purpose: PySpark would make it an address-space limit (RLIMIT_AS) per worker, "
                           "and the slots are sized from resident memory, which address space exceeds\n",
                           spark_executor_overhead_bytes / mib, python_mib, slots);
        auto line = [&](std::string_view k, const std::string& v) { out += fmt::format("{:<48} {}\n", k, v); };
        line("spark.executor.cores", std::to_string(slots * f.slot_cores));
        line("spark.task.cpus", std::to_string(f.slot_cores));
        line("spark.executor.memory", fmt::format("{}m", spark_executor_heap_bytes / mib));
        line("spark.executor.memoryOverhead", fmt::format("{}m", spark_executor_overhead_bytes / mib + python_mib));
        if (f.gpu_fraction) {
            std::uint64_t per_dev = slots_per_device(*f.gpu_fraction);
            std::uint64_t devices = std::min(p.node.gpus, (slots + per_dev - 1) / per_dev);
            line("spark.executor.resource.gpu.amount", std::to_string(devices));
            line("spark.task.resource.gpu.amount", format_double(*f.gpu_fraction));
        }
        line("spark.dynamicAllocation.maxExecutors", std::to_string(executors));
        if (f.intraop_threads) {
            for (const auto& v : pool_variables())
                line("spark.executorEnv." + v, std::to_string(*f.intraop_threads));
        } else {
            out += "# no thread cap recorded: PySpark sets OMP_NUM_THREADS from the executor's cores when it is unset\n";
        }
    }
    return out;
}

// Ray: per family the options of a remote task, `f.options(**opts[family])`. Ray's `memory`
// is in bytes; num_gpus may be a fraction; env_vars values are strings.
std::string render_ray(const plan_record& p) {
    json_writer w;
    w.begin_object();
    for (const auto& [name, f] : p.families) {
        w.key(name);
        w.begin_object();
        w.field("num_cpus", f.slot_cores);
        w.field("memory", f.slot_rss_bytes);
        if (f.gpu_fraction) w.field("num_gpus", *f.gpu_fraction);
        else w.field("num_gpus", 0);
        w.key("runtime_env");
        w.begin_object();
        w.key("env_vars");
        w.begin_object();
        if (f.intraop_threads)
            for (const auto& v : pool_variables()) w.field(v, std::to_string(*f.intraop_threads));
        w.end_object();
        w.end_object();
        w.end_object();
    }
    w.end_object();
    return w.take();
}

// Kubernetes: per family one YAML document holding a container's `resources` (requests =
// limits: Guaranteed QoS, an honest OOM line) and `env`. Memory is rounded up to whole MiB.
// Kubernetes cannot request part of a device, so a family with gpu_fraction < 1 gets pods that
// hold one whole device each and run 1/gpu_fraction slots.
std::string render_k8s(const plan_record& p) {
    std::string out;
    for (const auto& [name, f] : p.families) {
        std::uint64_t per_pod = f.gpu_fraction ? slots_per_device(*f.gpu_fraction) : 1;
        per_pod = std::min(per_pod, f.slots_per_node);
        std::uint64_t pods_per_node = f.slots_per_node / per_pod;
        out += "---\n";
        out += "# prof-plan: Kubernetes container resources for " + family_header(name, f) + "\n";
        if (per_pod > 1)
            out += fmt::format("# gpu_fraction {}: Kubernetes cannot request part of a device, so each pod holds one "
                               "whole GPU and runs {} slots (start {} worker processes per pod)\n",
                               format_double(*f.gpu_fraction), per_pod, per_pod);
        out += fmt::format("# {} pod(s) per node, {} in parallel on {} node(s) ({}); makespan >= {} (a lower bound)\n",
                           pods_per_node, pods_per_node * f.nodes, f.nodes, count_or_deadline(p),
                           human_seconds(f.makespan_s));
        std::string cpu = std::to_string(per_pod * f.slot_cores);
        std::string mem = fmt::format("{}Mi", mib_up(per_pod * f.slot_rss_bytes));
        auto block = [&](std::string_view key) {
            out += fmt::format("  {}:\n", key);
            out += fmt::format("    cpu: \"{}\"\n", cpu);
            out += fmt::format("    memory: \"{}\"\n", mem);
            if (f.gpu_fraction) out += "    nvidia.com/gpu: \"1\"\n";
        };
        out += "resources:\n";
        block("requests");
        block("limits");
        if (f.intraop_threads) {
            out += "env:\n";
            for (const auto& v : pool_variables())
                out += fmt::format("- name: {}\n  value: \"{}\"\n", v, *f.intraop_threads);
        } else {
            out += "env: []  # no thread cap recorded in the profile\n";
        }
    }
    return out;
}

std::string render_plan_table(const plan_record& p) {
    std::string out;
    out += fmt::format("plan: basis {} (source {}), {} series x {} model(s); node {} cores, {}{}; {}\n",
                       p.provenance.basis, p.provenance.source, p.run.series, p.run.models.size(), p.node.cores,
                       human_bytes(double(p.node.memory_bytes)),
                       p.node.gpus ? fmt::format(", {} x {} GPU", p.node.gpus,
                                                 human_bytes(double(p.node.gpu_memory_bytes.value_or(0))))
                                   : std::string(", no GPU"),
                       count_or_deadline(p));
    out += fmt::format("{:<20} {:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>10} {:>6} {:>11} {:<8} {}\n", "FAMILY", "cores",
                       "memory", "gpu_mem", "gpu_frac", "threads", "slots", "cells", "nodes", "makespan>=",
                       "basis", "confidence");
    for (const auto& [name, f] : p.families) {
        auto initial = [](const std::string& b) { return b.empty() ? std::string("?") : b.substr(0, 1); };
        out += fmt::format("{:<20} {:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>10} {:>6} {:>11} {:<8} {}\n", name,
                           f.slot_cores, human_bytes(double(f.slot_rss_bytes)),
                           f.slot_gpu_bytes ? human_bytes(double(*f.slot_gpu_bytes)) : std::string("-"),
                           f.gpu_fraction ? fmt::format("{:.3g}", *f.gpu_fraction) : std::string("-"),
                           f.intraop_threads ? std::to_string(*f.intraop_threads) : std::string("-"),
                           f.slots_per_node, f.cells, f.nodes, human_seconds(f.makespan_s),
                           initial(f.basis.cores) + initial(f.basis.memory) + initial(f.basis.gpu) +
                               initial(f.basis.wall),
                           f.low_confidence ? fmt::format("LOW ({} ok fits)", f.n_ok) : fmt::format("{} ok fits", f.n_ok));
    }
    out += "(per slot: cores, memory, gpu memory; slots per node; basis per axis cores/memory/gpu/wall: "
           "m measured, r reference, a assumed)\n";
    out += fmt::format("totals: {} cells, {} of work, {} node-seconds; {} node(s) running the families one after "
                       "another; makespan >= {} (a lower bound)\n",
                       p.totals.cells, human_seconds(p.totals.work_s), fmt::format("{:.1f}", p.totals.node_seconds),
                       p.totals.nodes, human_seconds(p.totals.makespan_s));
    for (const auto& [name, f] : p.families) {
        out += fmt::format("work of {}: {} priced by the {} rule; longest cell {} ({}{})\n", name,
                           human_seconds(f.work_s), f.wall_estimator, human_seconds(f.longest_cell_s),
                           f.longest_cell_model,
                           f.longest_cell_n_obs ? fmt::format(", n_obs {}", *f.longest_cell_n_obs) : std::string());
        if (!f.unmeasured_models.empty())
            out += fmt::format("unmeasured in {} (no ok fit; sized from the defaults): {}\n", name,
                               fmt::join(f.unmeasured_models, ", "));
    }
    if (!p.run.skipped_models.empty())
        out += fmt::format("skipped (no ok fit, --on-unmeasured skip): {}\n", fmt::join(p.run.skipped_models, ", "));
    return out;
}

}  // namespace prof
