// The layouts of a family's slots into each scheduler's units (Ray tasks, Spark executors,
// Kubernetes pods) and the Spark executor arithmetic (see layout.hpp and plan.hpp).
#include "prof/plan/layout.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_out.hpp"
#include "prof/profile/sample.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace prof {
namespace plan_detail {

std::string bytes_text(std::uint64_t b) { return fmt::format("{} ({} bytes)", human_bytes(double(b)), b); }

// YARN's normalization of a container's memory: up to a multiple of the minimum allocation
// (DefaultResourceCalculator.normalize: roundUp(max(asked, minimum), step), step = minimum).
std::uint64_t yarn_normalized_bytes(std::uint64_t bytes, std::uint64_t min_allocation) {
    return div_up(std::max(bytes, min_allocation), min_allocation) * min_allocation;
}

// Ray keeps resource quantities in units of 0.0001: a task asking d units of a device's 10000
// fits floor(10000 / d) times. num_gpus is the fraction rounded down to that precision, unless
// rounding down would fit more slots on a device than its memory holds; then rounded up.
constexpr std::uint64_t ray_resource_units = 10000;
std::uint64_t ray_gpu_units(std::uint64_t per_device) {
    std::uint64_t d = std::max<std::uint64_t>(1, ray_resource_units / per_device);
    if (ray_resource_units / d > per_device) ++d;
    return d;
}

void layout_ray(family_plan& f, const node_axes& ax, const plan_request& rq) {
    family_layout& L = f.layout;
    L.unit = "task";
    L.slots_per_unit = 1;
    std::uint64_t slots = std::min(ax.by_cores, ax.by_memory);
    L.limited_by = ax.by_cores <= ax.by_memory ? "cores" : "memory";
    if (ax.per_device) {
        const std::uint64_t d = ray_gpu_units(*ax.per_device);
        L.slots_per_device = ray_resource_units / d;
        L.unit_gpus = static_cast<double>(d) / static_cast<double>(ray_resource_units);
        if (rq.node.gpus * *L.slots_per_device < slots) {
            slots = rq.node.gpus * *L.slots_per_device;
            L.limited_by = "gpus";
        }
    }
    L.units_per_node = slots;
    L.unit_cores = f.slot_cores;
    L.unit_memory_bytes = f.slot_rss_bytes;
}

// Throws the error for a slot that fits no executor: one executor of one slot asks `one` bytes.
[[noreturn]] void no_executor_fits(const std::string& fname, const family_plan& f, const plan_request& rq,
                                   std::uint64_t one, std::uint64_t cap) {
    const bool by_limit = rq.limits.max_container_memory_bytes && *rq.limits.max_container_memory_bytes < rq.node.memory_bytes;
    throw error(exit_code::data_err,
                fmt::format("spark: family '{}': one executor of one task slot asks {} (JVM heap and overhead {} + "
                            "the slot's {}), more than {} {}: no executor fits; {}",
                            fname, bytes_text(one), human_bytes(double(one - mib_up(f.slot_rss_bytes) * mib)),
                            human_bytes(double(f.slot_rss_bytes)),
                            by_limit ? "--max-container-memory" : "--node-memory", human_bytes(double(cap)),
                            by_limit ? "raise the cluster's maximum container (YARN yarn.scheduler.maximum-allocation-mb)"
                                     : "plan on larger nodes"));
}

// Spark: executors of s task slots, each asking heap + base overhead + the slots' Python memory
// (whole MiB; on YARN rounded up to the minimum allocation, at most yarn_max_vcores cores),
// inside the node and under --max-container-memory; as many executors per node as cores, memory
// and devices allow. The most slots per node wins; among equals, the fewest executors (a GPU
// family: the most). The driver's container, on yarn and k8s, displaces reserved_units.
void layout_spark(const std::string& fname, family_plan& f, const node_axes& ax, const plan_request& rq) {
    const std::uint64_t generic = ax.slots();
    const std::uint64_t cap = std::min(rq.node.memory_bytes, rq.limits.max_container_memory_bytes.value_or(UINT64_MAX));
    const bool yarn = rq.limits.spark_cluster == "yarn";
    auto asked = [&](std::uint64_t s) {
        std::uint64_t heap = spark_executor_heap_bytes(s);
        return heap + spark_executor_base_overhead_bytes(heap) + mib_up(s * f.slot_rss_bytes) * mib;
    };
    // What the cluster grants for an executor of s slots: YARN rounds it up to its step.
    auto container = [&](std::uint64_t s) {
        return yarn ? yarn_normalized_bytes(asked(s), rq.limits.yarn_min_allocation_bytes) : asked(s);
    };
    // YARN refuses a container asking more vcores than yarn.scheduler.maximum-allocation-vcores.
    const std::uint64_t max_slots = yarn ? rq.limits.yarn_max_vcores / f.slot_cores : generic;
    if (max_slots == 0)
        throw error(exit_code::data_err,
                    fmt::format("spark: family '{}': one task slot asks {} cores, more than YARN's "
                                "yarn.scheduler.maximum-allocation-vcores {} (--yarn-max-vcores): no executor fits; "
                                "raise it on the cluster and give it here",
                                fname, f.slot_cores, rq.limits.yarn_max_vcores));
    // Executors per node, with `mem` and `cores` of the node free (the driver's node has less).
    auto per_node = [&](std::uint64_t s, std::uint64_t mem, std::uint64_t cores) {
        std::uint64_t e = std::min(cores / (s * f.slot_cores), mem / container(s));
        e = std::min(e, (generic / s));
        if (ax.per_device) e = std::min(e, rq.node.gpus / div_up(s, *ax.per_device));
        return e;
    };
    std::uint64_t best_s = 0, best_e = 0;
    for (std::uint64_t s = std::min(generic, max_slots); s >= 1; --s) {
        if (best_s * best_e == generic && !ax.per_device) break;  // no smaller executor beats every slot
        const std::uint64_t c = container(s);
        if (c > cap) continue;
        std::uint64_t e = per_node(s, rq.node.memory_bytes, rq.node.cores);
        // Among equal slots, a GPU family takes more executors: each holds its own devices, so
        // more of the node's devices are busy and fewer tasks share each.
        if (e * s > best_e * best_s || (ax.per_device && e * s == best_e * best_s && e > best_e)) {
            best_s = s;
            best_e = e;
        }
    }
    if (best_s == 0) no_executor_fits(fname, f, rq, container(1), cap);
    family_layout& L = f.layout;
    L.unit = "executor";
    L.slots_per_unit = best_s;
    L.units_per_node = best_e;
    L.unit_cores = best_s * f.slot_cores;
    L.heap_bytes = spark_executor_heap_bytes(best_s);
    // On YARN the rounding goes into memoryOverhead: Spark then asks exactly what YARN grants,
    // and the slots' Python workers get the difference.
    L.overhead_bytes = container(best_s) - *L.heap_bytes;
    L.unit_memory_bytes = *L.heap_bytes + *L.overhead_bytes;
    if (yarn) L.container_bytes = L.unit_memory_bytes;
    // The driver's container (YARN's ApplicationMaster in cluster mode, or the driver pod)
    // takes its share of one node.
    const std::uint64_t driver = yarn ? yarn_normalized_bytes(spark_driver_memory_bytes, rq.limits.yarn_min_allocation_bytes)
                                      : spark_driver_memory_bytes;
    const std::uint64_t with_driver =
        rq.limits.spark_cluster == "standalone" ? best_e  // client mode: the driver runs where it is submitted
        : rq.node.memory_bytes < driver || rq.node.cores < spark_driver_cores
            ? 0
            : per_node(best_s, rq.node.memory_bytes - driver, rq.node.cores - spark_driver_cores);
    L.reserved_units = best_e - std::min(best_e, with_driver);
    if (ax.per_device) {
        L.slots_per_device = *ax.per_device;
        L.unit_gpus = static_cast<double>(div_up(best_s, *ax.per_device));
    }
    if (best_s * best_e == generic) L.limited_by = ax.limit();
    else if (best_s == max_slots && max_slots < generic) L.limited_by = "yarn-max-vcores";
    else if (container(generic) <= rq.node.memory_bytes && container(generic) > cap) L.limited_by = "max-container-memory";
    else L.limited_by = "executor memory";
}

// Kubernetes: pods of k slots, each asking k slots' cores and memory (whole MiB) and, for a GPU
// family, one whole device (k at most the slots one device holds); at most --max-pods-per-node
// pods and no pod above --max-container-memory. The most slots per node wins; among equals,
// the fewest slots per pod.
void layout_k8s(const std::string& fname, family_plan& f, const node_axes& ax, const plan_request& rq) {
    const std::uint64_t generic = ax.slots();
    const std::uint64_t kmax = ax.per_device ? std::min(*ax.per_device, generic) : generic;
    const std::uint64_t max_pods = rq.limits.max_pods_per_node;
    std::uint64_t best_k = 0, best_p = 0;
    for (std::uint64_t k = 1; k <= kmax; ++k) {
        const std::uint64_t pod_mem = mib_up(k * f.slot_rss_bytes) * mib;
        if (rq.limits.max_container_memory_bytes && pod_mem > *rq.limits.max_container_memory_bytes) break;
        std::uint64_t pods = std::min({generic / k, max_pods, rq.node.memory_bytes / pod_mem});
        if (ax.per_device) pods = std::min(pods, rq.node.gpus);
        if (pods * k > best_p * best_k) {
            best_k = k;
            best_p = pods;
        }
    }
    if (best_k == 0)
        throw error(exit_code::data_err,
                    fmt::format("k8s: family '{}': a pod of one slot asks {} of memory, more than --max-container-memory "
                                "{}: no pod fits; raise the namespace's LimitRange maximum",
                                fname, bytes_text(mib_up(f.slot_rss_bytes) * mib),
                                human_bytes(double(*rq.limits.max_container_memory_bytes))));
    family_layout& L = f.layout;
    L.unit = "pod";
    L.slots_per_unit = best_k;
    L.units_per_node = best_p;
    L.unit_cores = best_k * f.slot_cores;
    L.unit_memory_bytes = mib_up(best_k * f.slot_rss_bytes) * mib;
    if (ax.per_device) {
        L.slots_per_device = best_k;
        L.unit_gpus = 1.0;
    }
    if (best_k * best_p == generic) L.limited_by = ax.limit();
    else if (generic / best_k > max_pods && best_p == max_pods) L.limited_by = "max-pods-per-node";
    else if (ax.per_device && best_p == rq.node.gpus) L.limited_by = "gpus";
    else if (rq.node.memory_bytes / L.unit_memory_bytes == best_p) L.limited_by = "memory";
    else L.limited_by = "max-container-memory";
}

// Throws the right error for a slot axis that does not fit one node: a default is a flag the
// operator gave (64), a measured or reference value is what the data says (65).
[[noreturn]] void slot_too_large(const std::string& family, const std::string& basis, const std::string& what) {
    std::string msg = fmt::format("family '{}': {}", family, what);
    if (basis == "assumed") throw usage_error(msg);
    throw error(exit_code::data_err, msg + ": no slot fits one node; plan on larger nodes");
}


}  // namespace plan_detail

using namespace plan_detail;

double spark_task_gpu_amount(std::uint64_t tasks_per_device) {
    if (tasks_per_device <= 1) return 1.0;
    const double k = static_cast<double>(tasks_per_device);
    double x = 1.0 / k;
    while (x > 0 && (x > 1.0 / k || std::floor(1.0 / x) < k)) x = std::nextafter(x, 0.0);
    return x;
}

std::uint64_t spark_executor_heap_bytes(std::uint64_t tasks) { return std::max<std::uint64_t>(1024, 64 * tasks) * mib; }

std::uint64_t spark_executor_base_overhead_bytes(std::uint64_t heap_bytes) {
    return std::max<std::uint64_t>(384 * mib, mib_up(heap_bytes / 10) * mib);
}


}  // namespace prof
