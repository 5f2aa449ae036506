// make_plan, the layouts of slots into scheduler units, whole-cell scheduling and the plan record
// (see plan.hpp).
#include "prof/plan/plan.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/measure/sample.hpp"
#include "prof/io/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace prof {

namespace {

std::string bytes_text(std::uint64_t b) { return fmt::format("{} ({} bytes)", human_bytes(double(b)), b); }

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
    std::string out;
    for (const auto& s : v) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

constexpr std::uint64_t mib = 1ULL << 20;

std::uint64_t mib_up(std::uint64_t bytes) { return bytes / mib + (bytes % mib ? 1 : 0); }

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return a / b + (a % b ? 1 : 0); }

// YARN's normalization of a container's memory: up to a multiple of the minimum allocation
// (DefaultResourceCalculator.normalize: roundUp(max(asked, minimum), step), step = minimum).
std::uint64_t yarn_normalized_bytes(std::uint64_t bytes, std::uint64_t min_allocation) {
    return div_up(std::max(bytes, min_allocation), min_allocation) * min_allocation;
}

// What one node holds of a family's slots on each axis, before any layout.
struct node_axes {
    std::uint64_t by_cores = 0, by_memory = 0;
    std::optional<std::uint64_t> by_gpus;      // gpus × per_device
    std::optional<std::uint64_t> per_device;   // floor(device memory / slot_gpu_bytes)
    std::uint64_t slots() const { return std::min({by_cores, by_memory, by_gpus.value_or(UINT64_MAX)}); }
    std::string limit() const {
        std::uint64_t s = slots();
        if (by_cores == s) return "cores";
        if (by_memory == s) return "memory";
        return "gpus";
    }
};

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

// One size class's cells on a number of nodes: the makespan arithmetic of schedule_makespan.
struct class_schedule {
    std::uint64_t cells = 0;
    double work_s = 0, longest_s = 0;
    std::uint64_t per_item = 1;           // cells in one work item
    std::uint64_t slots_per_runner = 1;
    std::uint64_t runners_per_node = 1;   // Ray tasks or Spark task slots; k8s pods
    std::uint64_t reserved_runners = 0;   // runners the Spark driver displaces on its node
    double start_s = 0;                   // k8s: each item's pod start
    double rate = 0;                      // k8s: pods created per second (0 = unbounded)
    std::uint64_t items() const { return div_up(cells, per_item); }
    std::uint64_t runners(std::uint64_t nodes) const {
        const std::uint64_t all = runners_per_node * nodes;
        return all - std::min(all, reserved_runners);
    }
    // Nodes enough to run every work item at once: more buy nothing.
    std::uint64_t enough_nodes() const { return std::max<std::uint64_t>(1, div_up(items() + reserved_runners, runners_per_node)); }
    double makespan(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        if (r == 0) return std::numeric_limits<double>::infinity();
        const double t = schedule_makespan(cells, work_s, longest_s, per_item, slots_per_runner, r, start_s);
        if (rate <= 0) return t;
        const double item_s = static_cast<double>(div_up(per_item, slots_per_runner)) * longest_s;
        return rate_limited_makespan(t, items(), r, item_s, start_s, rate);
    }
    // Rounds of whole cells every slot runs at most: ceil(items / runners) × rounds per item.
    std::uint64_t waves(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        return r == 0 ? 0 : div_up(items(), r) * div_up(per_item, slots_per_runner);
    }
    double lower_bound(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        if (r == 0) return std::numeric_limits<double>::infinity();
        // A pod's time is its start plus its cells spread over its slots.
        const double pod_time = work_s / static_cast<double>(slots_per_runner) + static_cast<double>(items()) * start_s;
        double t = std::max(pod_time / static_cast<double>(r), longest_s + start_s);
        if (rate > 0) t = std::max(t, static_cast<double>(items() - 1) / rate + start_s);
        return t;
    }
};

// One family's cells: its size classes one after another on the same nodes, so every measure
// is the classes' sum (one class: that class's own).
struct family_schedule {
    std::vector<class_schedule> classes;
    double start_s = 0, rate = 0;  // k8s: every class's pod start and pod creation rate
    std::uint64_t enough_nodes() const {
        std::uint64_t n = 1;
        for (const auto& c : classes) n = std::max(n, c.enough_nodes());
        return n;
    }
    double makespan(std::uint64_t nodes) const {
        double t = 0;
        for (const auto& c : classes) t += c.makespan(nodes);
        return t;
    }
    std::uint64_t waves(std::uint64_t nodes) const {
        std::uint64_t w = 0;
        for (const auto& c : classes) w += c.waves(nodes);
        return w;
    }
    double lower_bound(std::uint64_t nodes) const {
        double t = 0;
        for (const auto& c : classes) t += c.lower_bound(nodes);
        return t;
    }
};

// t within the deadline d, with a relative tolerance of 1e-12, so 3 × (1/3)-style rounding noise
// never buys a whole extra node (the same tolerance the profile applies to bytes).
bool within(double t, double d) { return t <= d * (1 + 1e-12); }

// The fewest nodes in [1, enough] whose makespan is within the deadline, or `enough` when none
// is (makespan(n) does not grow with n, so a bisection finds it).
template <class Makespan>
std::uint64_t fewest_nodes(std::uint64_t enough, double deadline_s, const Makespan& makespan) {
    if (!within(makespan(enough), deadline_s)) return enough;
    std::uint64_t lo = 1, hi = enough;
    while (lo < hi) {
        std::uint64_t mid = lo + (hi - lo) / 2;
        if (within(makespan(mid), deadline_s)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void fill_schedule(family_plan& f, const family_schedule& sc) {
    // The one size's slots (the Spark driver's node runs fewer executors).
    const std::uint64_t units = f.layout.units_per_node * f.nodes;
    f.slots = (units - std::min(units, f.layout.reserved_units)) * f.layout.slots_per_unit;
    family_layout& L = f.layout;
    if (L.retry_items && L.retry_units_per_node && sc.classes.size() == 1) {  // the retry tier: one-size Jobs
        const class_schedule& one = sc.classes.front();
        const double item_s = static_cast<double>(div_up(one.per_item, one.slots_per_runner)) * one.longest_s + one.start_s;
        L.retry_makespan_s = static_cast<double>(div_up(*L.retry_items, *L.retry_units_per_node * f.nodes)) * item_s;
    }
    f.waves = sc.waves(f.nodes);
    f.makespan_s = sc.makespan(f.nodes);
    f.makespan_lower_s = sc.lower_bound(f.nodes);
    for (std::size_t k = 0; k < f.size_classes.size() && k < sc.classes.size(); ++k) {
        size_class& c = f.size_classes[k];
        c.slots = sc.classes[k].runners(f.nodes) * sc.classes[k].slots_per_runner;
        c.waves = sc.classes[k].waves(f.nodes);
        c.makespan_s = sc.classes[k].makespan(f.nodes);
    }
}

}  // namespace

double schedule_makespan(std::uint64_t cells, double work_s, double longest_s, std::uint64_t cells_per_item,
                         std::uint64_t slots_per_runner, std::uint64_t runners, double start_s) {
    if (cells == 0 || runners == 0 || cells_per_item == 0 || slots_per_runner == 0) return 0;
    const double items = static_cast<double>(div_up(cells, cells_per_item));
    const double items_per_runner = static_cast<double>(div_up(div_up(cells, cells_per_item), runners));
    const double rounds = static_cast<double>(div_up(cells_per_item, slots_per_runner));
    // Every item pays its start once: it lasts at most rounds × longest_s + start_s, and the
    // items' durations sum to at most work_s + items × start_s.
    work_s += items * start_s;
    const double by_waves = items_per_runner * (rounds * longest_s + start_s);
    // Graham's bound over work items: a free runner takes the next pending item (an Indexed Job
    // hands pending indexes to free pods), an item lasts at most D = rounds × longest_s, and the
    // items' durations sum to at most work_s (an item lasts no longer than its cells in a row),
    // so the makespan is at most Σ/runners + (1 − 1/runners) × D <= (work_s − D)/runners + D.
    const double item_s = rounds * longest_s + start_s;
    const double graham = std::max(0.0, work_s - item_s) / static_cast<double>(runners) + item_s;
    return std::min(by_waves, graham);
}

double rate_limited_makespan(double without_rate_s, std::uint64_t items, std::uint64_t pods, double item_s, double start_s,
                             double rate) {
    if (items == 0 || rate <= 0) return without_rate_s;
    // Index j is created no earlier than j / rate: the first round of pods starts over
    // (pods - 1) / rate, which delays every later round by at most as much; and once the rate
    // binds, a pod is free whenever the next index is created, so the last one ends at most
    // start_s + item_s after its creation.
    const double first_round = static_cast<double>(std::min(items, pods) - 1) / rate;
    return std::max(without_rate_s + first_round, static_cast<double>(items - 1) / rate + start_s + item_s);
}

std::uint64_t failed_items_allowance(std::uint64_t items, std::uint64_t cells_per_item, double share) {
    if (items == 0) return 0;
    share = std::clamp(share, 0.0, 1.0);
    const double q = 1 - std::pow(1 - share, static_cast<double>(std::max<std::uint64_t>(1, cells_per_item)));
    const double n = static_cast<double>(items);
    const double allowance = std::ceil(n * q + 4 * std::sqrt(n * q * (1 - q)) + 10);
    return allowance >= n ? items : static_cast<std::uint64_t>(allowance);
}

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

std::vector<std::size_t> choose_size_classes(const std::vector<length_cost>& bins, std::uint64_t max_classes) {
    const std::size_t n = bins.size();
    if (n == 0) return {};
    const std::size_t kmax = static_cast<std::size_t>(std::clamp<std::uint64_t>(max_classes, 1, n));
    std::vector<double> work(n + 1, 0);  // work[b]: the work of bins [0, b)
    for (std::size_t i = 0; i < n; ++i) work[i + 1] = work[i] + bins[i].work_s;
    auto cost = [&](std::size_t a, std::size_t b) { return static_cast<double>(bins[b - 1].slot_rss_bytes) * (work[b] - work[a]); };
    constexpr double none = std::numeric_limits<double>::infinity();
    // best[k][b]: the least cost of bins [0, b) in exactly k classes; from[k][b] the last one's start.
    std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(n + 1, none));
    std::vector<std::vector<std::size_t>> from(kmax + 1, std::vector<std::size_t>(n + 1, 0));
    best[0][0] = 0;
    for (std::size_t k = 1; k <= kmax; ++k)
        for (std::size_t b = k; b <= n; ++b)
            for (std::size_t a = k - 1; a < b; ++a) {
                if (best[k - 1][a] == none) continue;
                const double v = best[k - 1][a] + cost(a, b);
                if (v < best[k][b]) {
                    best[k][b] = v;
                    from[k][b] = a;
                }
            }
    double least = none;
    for (std::size_t k = 1; k <= kmax; ++k) least = std::min(least, best[k][n]);
    std::size_t k = 1;
    while (k < kmax && !(best[k][n] <= least + 0.01 * best[1][n])) ++k;
    std::vector<std::size_t> ends;
    for (std::size_t b = n; k > 0; --k) {
        ends.push_back(b);
        b = from[k][b];
    }
    std::reverse(ends.begin(), ends.end());
    return ends;
}

std::string layout_for_target(const std::string& target, const std::string& layout) {
    std::string own = target == "spark" ? "spark" : (target == "k8s" || target == "k8s-job") ? "k8s" : target == "ray" ? "ray" : "";
    if (own.empty()) return layout.empty() ? "ray" : layout;
    if (!layout.empty() && layout != own)
        throw usage_error(fmt::format("--target {} lays the slots out for {}, not --layout {}", target, own, layout));
    return own;
}

void set_target(plan_request& rq, const std::string& target, const std::string& layout) {
    rq.layout = layout_for_target(target, layout);
    rq.cold_start_per_process = target == "k8s-job";
}

cold_start_cost cold_start_work(const std::vector<model_in_family>& models, std::uint64_t cells,
                                std::uint64_t processes, double time_margin) {
    cold_start_cost out;
    if (models.empty() || cells == 0) return out;
    double sum = 0;
    for (const auto& m : models) {
        const double cold = m.cost && m.cost->cold_start_s ? *m.cost->cold_start_s : 0.0;
        sum += cold;
        out.longest_extra_s = std::max(out.longest_extra_s, cold * time_margin);
    }
    const double starts = static_cast<double>(std::min(processes, cells));
    out.work_s = starts * sum / static_cast<double>(models.size()) * time_margin;
    return out;
}

void add_model_specs(plan_request& rq, const std::vector<std::string>& specs) {
    for (const auto& m : specs) {
        auto spec = parse_model_spec(m, "--models");
        rq.models.push_back(spec.model_type);
        if (m.find(':') != std::string::npos) rq.model_families[spec.model_type] = spec.family;
    }
}

unmeasured_policy parse_unmeasured_policy(const std::string& text) {
    if (text == "fail") return unmeasured_policy::fail;
    if (text == "defaults") return unmeasured_policy::defaults;
    if (text == "skip") return unmeasured_policy::skip;
    throw usage_error(fmt::format("--on-unmeasured: expected defaults, skip or fail, got '{}'", text));
}

run_lengths lengths_for_run(const compute_profile* profile, const plan_request& rq, std::uint64_t series) {
    run_lengths r;
    const double n = static_cast<double>(series);
    if (rq.panel) {
        r.lengths = scale_distribution(*rq.panel, n);
        r.source = "panel";
    } else if (profile && profile->sample) {
        try {
            r.lengths = scale_distribution(sample_lengths(*profile->sample), n);
        } catch (const field_error& e) {
            throw error(exit_code::data_err, fmt::format("the profile's sample record: {}", e.what()));
        }
        r.source = "sample";
    } else if (profile && (profile->harvest || profile->provenance.source == "harvest")) {
        r.from_fits = true;
        r.source = "harvest";
    }
    if (r.lengths && r.lengths->bins.empty()) r.lengths.reset();
    return r;
}

family_work predict_family_work(const std::vector<model_in_family>& models, const run_lengths& lengths,
                                std::uint64_t series, double time_margin, double default_wall_s) {
    family_work fw;
    const double n = static_cast<double>(series);
    std::set<std::string> rules;
    // Measured walls are summed first, then margined, so a family priced by medians has
    // exactly series × the profile's planning_wall_s_per_series.
    double measured = 0, defaulted = 0;
    auto longest = [&](double cell, const std::string& model, std::optional<std::uint64_t> at) {
        if (cell > fw.longest_cell_s) {
            fw.longest_cell_s = cell;
            fw.longest_model = model;
            fw.longest_n_obs = at;
        }
    };
    for (const auto& m : models) {
        const model_cost* c = m.cost;
        if (!c || !c->median_wall_s) {
            defaulted += n * default_wall_s;
            longest(default_wall_s, m.name, std::nullopt);
            rules.insert("default");
            continue;
        }
        std::optional<length_distribution> own;
        const length_distribution* d = lengths.lengths ? &*lengths.lengths : nullptr;
        if (!d && lengths.from_fits && !c->wall_curve.empty()) {
            length_distribution fits;
            for (const auto& pt : c->wall_curve)
                fits.bins.push_back({pt.n_obs, pt.n_obs_min, pt.n_obs_max, static_cast<double>(pt.n_fits)});
            own = scale_distribution(fits, n);
            d = &*own;
        }
        if (c->wall_curve.empty() || !d) {
            measured += n * *c->median_wall_s;
            longest(*c->median_wall_s * time_margin, m.name, std::nullopt);
            rules.insert("median");
            continue;
        }
        model_work w = predict_model_work(c->wall_curve, *d);
        measured += w.total_wall_s;
        longest(w.longest_cell_s * time_margin, m.name, w.longest_n_obs);
        rules.insert("curve");
        const curve_point& last = c->wall_curve.back();
        if (w.above_measured)
            fw.warnings.push_back(fmt::format(
                "model '{}': the run holds series of n_obs {}, longer than any measured ({}): their time is "
                "extrapolated (at least in proportion to n_obs); measure a longer series before trusting it",
                m.name, d->max_n_obs(), last.n_obs_max));
        if (w.below_measured)
            fw.warnings.push_back(fmt::format(
                "model '{}': the run holds series of n_obs {}, shorter than any measured ({}): priced as the "
                "shortest measured",
                m.name, d->min_n_obs(), c->wall_curve.front().n_obs_min));
    }
    constexpr double biggest = std::numeric_limits<double>::max();
    double work = measured * time_margin + defaulted;
    fw.work_s = std::isfinite(work) ? work : biggest;
    fw.estimator = rules.size() == 1 ? *rules.begin() : rules.empty() ? "default" : "mixed";
    return fw;
}

void check_run_size(bool series_given, std::uint64_t series, bool panel_given) {
    if (series_given && series == 0)
        throw usage_error("--series must be a positive integer (leave it out to take --panel's usable series)");
    if (series == 0 && !panel_given) throw usage_error("give --series N, or --panel FILE (the run's series)");
}

void check_plan_goal(const std::optional<double>& deadline_s, const std::optional<std::uint64_t>& nodes) {
    if (!deadline_s && !nodes) throw usage_error("give --deadline (to get a node count) or --nodes (to get a makespan)");
    if (deadline_s && nodes)
        throw usage_error("give exactly one of --deadline (to get a node count) and --nodes (to get a makespan)");
    if (deadline_s && !(std::isfinite(*deadline_s) && *deadline_s > 0))
        throw usage_error("--deadline must be a positive duration");
    if (nodes && *nodes == 0) throw usage_error("--nodes must be a positive integer");
}

namespace {

// ---- make_plan, step 1: validate ---------------------------------------------------------

constexpr std::uint64_t max_node_gpus = 1024;

void validate_request(const plan_request& rq) {
    if (rq.series == 0 && !rq.panel) throw usage_error("--series must be a positive integer (or give --panel)");
    if (rq.panel && rq.panel->bins.empty()) throw usage_error("--panel: the panel holds no usable series");
    if (rq.node.cores == 0) throw usage_error("--node-cores must be a positive integer");
    if (rq.node.memory_bytes == 0) throw usage_error("--node-memory must be more than 0 bytes");
    if (rq.node.gpus > 0 && (!rq.node.gpu_memory_bytes || *rq.node.gpu_memory_bytes == 0))
        throw usage_error("--node-gpus needs --node-gpu-memory (the memory of one device)");
    if (rq.node.gpus == 0 && rq.node.gpu_memory_bytes)
        throw usage_error("--node-gpu-memory needs --node-gpus (devices per node)");
    // No node holds more (the largest, an NVL72 rack, is 72): a bigger count is a typo, and the
    // slot arithmetic stays far from 64-bit overflow.
    if (rq.node.gpus > max_node_gpus)
        throw usage_error(fmt::format("--node-gpus must be at most {}, not {}", max_node_gpus, rq.node.gpus));
    check_plan_goal(rq.deadline_s, rq.nodes);
    if (rq.defaults.cores == 0) throw usage_error("--default-cores must be a positive integer");
    if (rq.defaults.memory_bytes == 0) throw usage_error("--default-memory must be more than 0 bytes");
    if (!(std::isfinite(rq.defaults.wall_s) && rq.defaults.wall_s > 0))
        throw usage_error("--default-wall must be a positive duration");
    if (rq.defaults.gpu_memory_bytes && *rq.defaults.gpu_memory_bytes == 0)
        throw usage_error("--default-gpu-memory must be more than 0 bytes");
    if (std::find(std::begin(plan_layouts), std::end(plan_layouts), rq.layout) == std::end(plan_layouts))
        throw usage_error(fmt::format("--layout must be ray, spark or k8s, not '{}'", rq.layout));
    if (rq.limits.max_container_memory_bytes && *rq.limits.max_container_memory_bytes == 0)
        throw usage_error("--max-container-memory must be more than 0 bytes");
    if (rq.limits.max_pods_per_node == 0) throw usage_error("--max-pods-per-node must be a positive integer");
    if (!(rq.slack.headroom >= 0 && rq.slack.headroom < 1))
        throw usage_error("--headroom must be a share of the deadline in [0, 1) (0.1 = 10%)");
    if (!(std::isfinite(rq.slack.pod_start_s) && rq.slack.pod_start_s >= 0))
        throw usage_error("--pod-start must be a duration of 0 or more");
    if (!(std::isfinite(rq.slack.job_pod_rate) && rq.slack.job_pod_rate > 0))
        throw usage_error("--job-pod-rate must be a positive number of pods per second");
    if (rq.limits.spark_cluster != "yarn" && rq.limits.spark_cluster != "k8s" && rq.limits.spark_cluster != "standalone")
        throw usage_error(fmt::format("--spark-cluster must be yarn, k8s or standalone, not '{}'", rq.limits.spark_cluster));
    if (rq.limits.yarn_min_allocation_bytes == 0) throw usage_error("--yarn-min-allocation must be more than 0 bytes");
    if (rq.limits.yarn_max_vcores == 0) throw usage_error("--yarn-max-vcores must be a positive integer");
    if (rq.size_classes == 0 || rq.size_classes > max_size_classes)
        throw usage_error(fmt::format("--size-classes must be 1 (one size) to {}, not {}", max_size_classes, rq.size_classes));
}

// What every step of make_plan reads: the request, the profile (null: none on the input) and
// what follows from them.
struct plan_context {
    const compute_profile* profile;
    const plan_request& rq;
    bool empty_profile;   // no profile, or one with no model at all: every axis assumed
    std::string basis;    // the profile's provenance.basis ("assumed" without one)
    margins margin;       // the profile's (the defaults without one)
    std::uint64_t series = 0;
    run_lengths lengths;
};

// ---- make_plan, step 2: group the run's models by family ----------------------------------

struct run_model {
    std::string name, family;
    const model_cost* cost = nullptr;  // null: sized from the defaults
    std::optional<std::uint64_t> oom_floor;
};
using family_groups = std::map<std::string, std::vector<run_model>>;

// The run's models: --models, else every model of the profile, its dropped ones included.
// "no profile on stdin" or "no profile in FILE": how the static-config case's messages begin.
std::string no_profile(const plan_request& rq) {
    return rq.profile_input == "-" ? std::string("no profile on stdin") : fmt::format("no profile in {}", rq.profile_input);
}

// The models a pre-pass of this run sampled, with their families: its sample record's
// `models`. Empty when the profile carries none.
std::map<std::string, std::string> sampled_models(const compute_profile& profile) {
    std::map<std::string, std::string> out;
    const json_value* models = profile.sample ? profile.sample->find("models") : nullptr;
    if (!models || models->t != json_value::type::array) return out;
    for (const auto& m : models->arr) {
        const json_value* name = m.find("model_type");
        const json_value* family = m.find("family");
        if (!name || name->t != json_value::type::string || name->s.empty())
            throw error(exit_code::data_err, "the profile's sample record: field 'models[]': expected {\"model_type\":NAME,...}");
        out[name->s] = family && family->t == json_value::type::string ? family->s : name->s;
    }
    return out;
}

// The run's models: --models; else, for a measured profile, the models its pre-pass sampled
// (the sample record), or every model it holds, its dropped ones included. A reference profile
// (another run's evidence, or the baseline) says nothing of this run's models: refused.
std::set<std::string> run_model_names(const plan_context& cx) {
    std::set<std::string> names(cx.rq.models.begin(), cx.rq.models.end());
    if (names.empty() && cx.profile && !cx.empty_profile && cx.profile->provenance.basis == "reference")
        throw error(exit_code::data_err,
                    fmt::format("the profile is reference evidence (source '{}': another run, or the baseline), which "
                                "does not say which models this run fits; name them: prof-plan --models "
                                "NAME[:FAMILY],... (models the evidence lacks then follow --on-unmeasured)",
                                cx.profile->provenance.source));
    if (names.empty() && cx.profile && cx.profile->provenance.basis == "measured")
        for (const auto& [name, family] : sampled_models(*cx.profile)) names.insert(name);
    if (names.empty() && cx.profile) {
        for (const auto& [name, m] : cx.profile->models) names.insert(name);
        names.insert(cx.profile->dropped_models.begin(), cx.profile->dropped_models.end());
    }
    if (names.empty())
        throw usage_error(cx.profile ? "the profile has no models: name the run's models with --models"
                                     : no_profile(cx.rq) + ": name the run's models with --models to plan from the defaults");
    for (const auto& n : names)
        if (n.empty()) throw usage_error("--models: a model name is empty");
    return names;
}

// A model's family: the profile's, else the declared one (a dropped model's in the profile, or
// --models NAME:FAMILY), else a family of the model's own name. A declaration the profile
// contradicts is a warning.
run_model place_model(const std::string& name, const plan_context& cx, plan_record& p) {
    run_model rm{name, name, nullptr, std::nullopt};
    auto declared = cx.rq.model_families.find(name);
    if (declared != cx.rq.model_families.end()) rm.family = declared->second;
    if (!cx.profile) return rm;
    if (declared == cx.rq.model_families.end() && cx.rq.models.empty() && cx.profile->provenance.basis == "measured") {
        const auto sampled = sampled_models(*cx.profile);  // the pre-pass declared it there
        if (auto it = sampled.find(name); it != sampled.end()) rm.family = it->second;
    }
    auto contradicts = [&](const std::string& family, std::string_view how) {
        if (declared != cx.rq.model_families.end() && declared->second != family)
            p.warnings.push_back(fmt::format("--models {}:{}: the profile {} '{}' in family '{}'; planned there", name,
                                             declared->second, how, name, family));
        rm.family = family;
    };
    if (auto it = cx.profile->models.find(name); it != cx.profile->models.end()) {
        const model_cost* c = &it->second;
        contradicts(c->family, "measured");
        if (c->oom_limit_bytes) rm.oom_floor = oom_floor_bytes(*c->oom_limit_bytes);
        if (c->n_ok > 0) rm.cost = c;
    } else if (auto df = cx.profile->dropped_model_families.find(name); df != cx.profile->dropped_model_families.end()) {
        contradicts(df->second, "dropped");
    }
    return rm;
}

// "model 'm' (family 'f') has no ok fit in the profile (first error: ...)".
std::string unmeasured_text(const run_model& rm, const compute_profile& profile) {
    auto err = profile.first_error_by_model.find(rm.name);
    const bool known = profile.models.count(rm.name) ||
                       std::binary_search(profile.dropped_models.begin(), profile.dropped_models.end(), rm.name);
    return fmt::format("model '{}' (family '{}') {}{}", rm.name, rm.family,
                       known ? "has no ok fit in the profile" : "is not in the profile",
                       err != profile.first_error_by_model.end() ? " (first error: " + err->second + ")" : "");
}

family_groups group_models(const std::set<std::string>& names, const plan_context& cx, plan_record& p) {
    family_groups by_family;
    std::vector<std::string> unmeasured;  // under --on-unmeasured fail
    for (const auto& name : names) {
        run_model rm = place_model(name, cx, p);
        if (!rm.cost && !cx.empty_profile) {
            std::string what = unmeasured_text(rm, *cx.profile);
            if (cx.rq.on_unmeasured == unmeasured_policy::fail) {
                unmeasured.push_back(std::move(what));
                continue;
            }
            if (cx.rq.on_unmeasured == unmeasured_policy::skip) {
                p.run.skipped_models.push_back(name);
                p.warnings.push_back(what + ": left out of the plan (--on-unmeasured skip)");
                continue;
            }
            p.warnings.push_back(what + ": sized from the defaults (assumed, --on-unmeasured defaults); measure it "
                                        "before trusting the plan");
        }
        by_family[rm.family].push_back(rm);
    }
    if (!unmeasured.empty()) {
        std::string msg = unmeasured.front();
        if (unmeasured.size() > 1) msg += fmt::format(" (and {} more model(s) like it)", unmeasured.size() - 1);
        throw error(exit_code::data_err,
                    msg + "; no plan: choose --on-unmeasured defaults (size it from the --default-* values, assumed), "
                          "--on-unmeasured skip (plan the run without it), or measure it (--on-unmeasured fail, the "
                          "default, stops here)");
    }
    if (by_family.empty()) throw error(exit_code::data_err, "every model of the run was skipped (--on-unmeasured skip): nothing to plan");
    return by_family;
}

// ---- make_plan, step 3: size each family's slot, lay it out, price its work ---------------

// What sizing a family's slot learned besides the slot, for the warnings after scheduling.
struct family_evidence {
    bool any_cost = false;
    std::vector<std::string> no_cores, no_rss, no_wall;  // measured models that took a default
    std::vector<std::string> caps;     // "model cap" per model, for the mixed-caps warning
    std::vector<std::string> failing;  // "model (k of n fits failed)" for the failure warning
    bool threads_common = true;
    std::vector<model_in_family> work_models;
    std::uint64_t fits = 0, failed = 0, oom = 0;  // the profile's fits of the family's models: all,
                                                  // failed, killed for memory
};

// A model whose sampled fits often failed (other than memory kills, which the slot's OOM floor
// answers) will fail that share of the run's cells, and the plan prices them as if they ran:
// a quarter or more is worth a warning.
std::optional<std::string> failing_share(const run_model& rm) {
    const model_cost* c = rm.cost;
    if (!c || c->n_fits == 0) return std::nullopt;
    std::uint64_t failed = c->n_fits - c->n_ok;
    failed -= std::min(failed, c->n_oom_killed);
    if (4 * failed < c->n_fits) return std::nullopt;
    return fmt::format("{} ({} of {} sampled fits failed)", rm.name, failed, c->n_fits);
}

// One model's slot from its measured maxima (size_slot), the --default-* values where it has
// none; a measured GPU peak of 0 is "measured none": the slot asks no GPU.
// The model's memory at n_obs on its memory curve (curve_rss_at), when the curve holds every
// reading the model's maximum counts; null otherwise (an older profile, a reading without a
// length): such a model is sized from its maximum at every length.
std::optional<std::uint64_t> memory_curve_at(const model_cost& c, std::uint64_t n_obs) {
    if (!c.max_process_rss_bytes) return std::nullopt;
    std::uint64_t top = 0;
    for (const auto& pt : c.wall_curve) top = std::max(top, pt.max_process_rss_bytes.value_or(0));
    if (top < *c.max_process_rss_bytes) return std::nullopt;
    return curve_rss_at(c.wall_curve, n_obs);
}

// One model's slot; with `n_obs`, its memory is the memory curve's at that length where the
// model has one (memory_curve_at), for the size class whose longest series has n_obs.
slot_size model_slot(const run_model& rm, const plan_context& cx, std::optional<std::uint64_t> n_obs = std::nullopt) {
    const model_cost* c = rm.cost;
    slot_evidence e;
    if (c) {
        e.max_effective_cores = c->max_effective_cores;
        e.max_process_rss_bytes = slot_memory_evidence(*c);  // a replayed worker peak when larger
        e.max_peak_gpu_bytes = c->max_peak_gpu_bytes;
        if (n_obs)
            if (auto at = memory_curve_at(*c, *n_obs)) e.max_process_rss_bytes = at;
    }
    e.oom_floor_bytes = rm.oom_floor;
    const plan_defaults& d = cx.rq.defaults;
    slot_size s = size_slot(e, cx.margin.memory(), {d.cores, d.memory_bytes, d.gpu_memory_bytes});
    if (s.gpu_bytes == std::uint64_t{0}) s.gpu_bytes.reset();
    return s;
}

void add_model(family_plan& f, family_evidence& ev, const run_model& rm, const plan_context& cx) {
    const model_cost* c = rm.cost;
    if (auto share = failing_share(rm)) ev.failing.push_back(*share);
    f.models.push_back(rm.name);
    ev.work_models.push_back({rm.name, c});
    if (c) ev.any_cost = true;
    if (c) f.n_ok += c->n_ok;
    if (c) {
        ev.fits += c->n_fits;
        ev.failed += c->n_fits - std::min(c->n_fits, c->n_ok);
        ev.oom += c->n_oom_killed;
    }
    else if (!cx.empty_profile) f.unmeasured_models.push_back(rm.name);

    const slot_size s = model_slot(rm, cx);
    f.slot_cores = std::max(f.slot_cores, *s.cores);
    if (c && !c->max_effective_cores) ev.no_cores.push_back(rm.name);
    f.slot_rss_bytes = std::max(f.slot_rss_bytes, *s.rss_bytes);
    if (c && !c->max_process_rss_bytes) ev.no_rss.push_back(rm.name);
    if (rm.oom_floor) {
        if (!f.oom_floor_bytes || *rm.oom_floor > *f.oom_floor_bytes) f.oom_floor_bytes = rm.oom_floor;
        f.warnings.push_back(fmt::format(
            "model '{}': {} fit(s) killed for memory, the largest limit {}: its memory is at least {} "
            "(the OOM bump: x{} or +{}, whichever is larger)",
            rm.name, cx.profile->models.at(rm.name).n_oom_killed,
            bytes_text(*cx.profile->models.at(rm.name).oom_limit_bytes), bytes_text(*rm.oom_floor),
            format_double(oom_bump_ratio), human_bytes(double(oom_min_bump_bytes))));
    }
    if (s.gpu_bytes && (!f.slot_gpu_bytes || *s.gpu_bytes > *f.slot_gpu_bytes)) f.slot_gpu_bytes = s.gpu_bytes;
    if (c && !c->median_wall_s) ev.no_wall.push_back(rm.name);
    // Memory was measured on the lengths the fits had: a longer series may need more.
    if (c && cx.lengths.lengths && c->max_n_obs && cx.lengths.lengths->max_n_obs() > *c->max_n_obs)
        f.warnings.push_back(fmt::format(
            "model '{}': the run's longest series has n_obs {}, its longest measured fit {}: its memory "
            "and time were not measured at that length; measure the longest series",
            rm.name, cx.lengths.lengths->max_n_obs(), *c->max_n_obs));
    std::optional<std::uint64_t> t = c ? c->intraop_threads : std::nullopt;
    ev.caps.push_back(fmt::format("{} {}", rm.name, t ? std::to_string(*t) : std::string("none")));
    if (f.models.size() == 1) f.intraop_threads = t;
    else if (t != f.intraop_threads) ev.threads_common = false;
}

// The family's slot (the max over its models on each axis) and where each axis came from.
family_evidence size_family_slot(family_plan& f, const std::vector<run_model>& models, const plan_context& cx) {
    family_evidence ev;
    bool all_cores = true, all_rss = true, all_gpu = true, all_wall = true;
    for (const run_model& rm : models) {
        add_model(f, ev, rm, cx);
        all_cores = all_cores && rm.cost && rm.cost->max_effective_cores;
        all_rss = all_rss && rm.cost && rm.cost->max_process_rss_bytes;
        all_gpu = all_gpu && rm.cost && rm.cost->max_peak_gpu_bytes;
        all_wall = all_wall && rm.cost && rm.cost->median_wall_s;
    }
    if (!ev.threads_common) f.intraop_threads.reset();
    f.basis.cores = all_cores ? cx.basis : "assumed";
    f.basis.memory = all_rss ? cx.basis : "assumed";
    f.basis.gpu = all_gpu ? cx.basis : "assumed";
    f.basis.wall = all_wall ? cx.basis : "assumed";
    return ev;
}

// The node's slots on each axis; throws when one slot does not fit one node.
node_axes fit_node(const std::string& fname, family_plan& f, const plan_context& cx) {
    const node_shape& node = cx.rq.node;
    node_axes ax;
    ax.by_cores = node.cores / f.slot_cores;
    if (ax.by_cores == 0)
        slot_too_large(fname, f.basis.cores,
                       fmt::format("one slot needs {} cores but a node has {} (--node-cores)", f.slot_cores, node.cores));
    ax.by_memory = node.memory_bytes / f.slot_rss_bytes;
    if (ax.by_memory == 0)
        slot_too_large(fname, f.oom_floor_bytes ? cx.basis : f.basis.memory,
                       fmt::format("one slot needs {} of memory but a node has {} (--node-memory)",
                                   bytes_text(f.slot_rss_bytes), bytes_text(node.memory_bytes)));
    if (f.slot_gpu_bytes) {
        if (node.gpus == 0)
            slot_too_large(fname, f.basis.gpu,
                           fmt::format("one slot needs {} of GPU memory but the node has no GPU (--node-gpus)",
                                       bytes_text(*f.slot_gpu_bytes)));
        const std::uint64_t per_device = *node.gpu_memory_bytes / *f.slot_gpu_bytes;
        if (per_device == 0)
            slot_too_large(fname, f.basis.gpu,
                           fmt::format("one slot needs {} of GPU memory but one device has {} (--node-gpu-memory)",
                                       bytes_text(*f.slot_gpu_bytes), bytes_text(*node.gpu_memory_bytes)));
        f.gpu_fraction = 1.0 / static_cast<double>(per_device);
        // Spread the node's slots over every device: Spark and Ray both fill the first devices
        // up to the per-task share before using the next, so a share sized by memory alone puts
        // the node's slots on the fewest devices and leaves the rest idle.
        const std::uint64_t spread = div_up(std::min(ax.by_cores, ax.by_memory), node.gpus);
        ax.per_device = std::min(per_device, spread);
        std::uint64_t by_gpus = 0;
        ax.by_gpus = __builtin_mul_overflow(node.gpus, *ax.per_device, &by_gpus) ? UINT64_MAX : by_gpus;
    }
    return ax;
}

void lay_out(const std::string& fname, family_plan& f, const plan_context& cx) {
    const node_axes ax = fit_node(fname, f, cx);
    if (cx.rq.layout == "spark") layout_spark(fname, f, ax, cx.rq);
    else if (cx.rq.layout == "k8s") layout_k8s(fname, f, ax, cx.rq);
    else layout_ray(f, ax, cx.rq);
    f.slots_per_node = f.layout.slots_per_unit * f.layout.units_per_node;
}

// k8s: the retry tier for OOM-killed indexes, pods of the same slots with memory bumped as an
// OOM kill proves (oom_floor_bytes of the pod's limit); none when such a pod fits no node or
// passes --max-container-memory, with a warning.
void plan_retry_tier(family_plan& f, const plan_request& rq) {
    family_layout& L = f.layout;
    const std::uint64_t mem = mib_up(oom_floor_bytes(L.unit_memory_bytes)) * mib;
    std::uint64_t pods = std::min({rq.node.memory_bytes / mem, rq.node.cores / L.unit_cores, rq.limits.max_pods_per_node});
    if (L.unit_gpus) pods = std::min(pods, rq.node.gpus);
    if (pods == 0 || (rq.limits.max_container_memory_bytes && mem > *rq.limits.max_container_memory_bytes)) {
        f.warnings.push_back(fmt::format(
            "no retry tier for OOM-killed indexes: a pod of {} at the next size ({}) fits no node or passes "
            "--max-container-memory; an index killed for memory stays failed",
            L.slots_per_unit == 1 ? std::string("one slot") : fmt::format("{} slots", L.slots_per_unit),
            bytes_text(mem)));
        return;
    }
    L.retry_unit_memory_bytes = mem;
    L.retry_units_per_node = pods;
}

// The models priced by the median, and why: no curve, or no lengths to run a curve over.
struct median_priced {
    std::vector<std::string> no_curve, no_lengths;
};

// The family's work and its work items: one cell, or on k8s one Job index of slots_per_unit
// cells per round, with as many rounds as keep the indexes within an Indexed Job's completions.
family_schedule price_family(family_plan& f, const family_evidence& ev, const plan_context& cx, median_priced& mp) {
    f.cells = cx.series * f.models.size();
    family_work fw = predict_family_work(ev.work_models, cx.lengths, cx.series, cx.margin.time(), cx.rq.defaults.wall_s);
    f.work_s = fw.work_s;
    f.longest_cell_s = fw.longest_cell_s;
    f.longest_cell_model = fw.longest_model;
    f.longest_cell_n_obs = fw.longest_n_obs;
    f.wall_estimator = fw.estimator;
    for (const auto& m : ev.work_models)
        if (m.cost && m.cost->median_wall_s &&
            (m.cost->wall_curve.empty() || (!cx.lengths.lengths && !cx.lengths.from_fits)))
            (m.cost->wall_curve.empty() ? mp.no_curve : mp.no_lengths).push_back(m.name);
    f.warnings.insert(f.warnings.end(), fw.warnings.begin(), fw.warnings.end());
    std::uint64_t per_item = 1, per_runner = 1, runners = f.slots_per_node;
    class_schedule sched{f.cells, f.work_s, f.longest_cell_s, per_item, per_runner, runners};
    sched.reserved_runners = f.layout.reserved_units * f.layout.slots_per_unit;
    if (ev.fits > 0) f.failure_share = static_cast<double>(ev.failed) / static_cast<double>(ev.fits);
    if (cx.rq.layout == "k8s") {
        per_runner = f.layout.slots_per_unit;
        runners = f.layout.units_per_node;
        per_item = per_runner * std::max<std::uint64_t>(1, div_up(div_up(f.cells, per_runner), k8s_max_indexed_completions));
        sched = class_schedule{f.cells, f.work_s, f.longest_cell_s, per_item, per_runner, runners};
        sched.start_s = cx.rq.slack.pod_start_s;
        sched.rate = cx.rq.slack.job_pod_rate;
        f.layout.unit_start_s = cx.rq.slack.pod_start_s;
    }
    f.layout.cells_per_item = per_item;
    f.layout.work_items = div_up(f.cells, per_item);
    if (cx.rq.cold_start_per_process) {
        const cold_start_cost cold =
            cold_start_work(ev.work_models, f.cells, f.layout.work_items * per_runner, cx.margin.time());
        f.cold_start_work_s = cold.work_s;
        f.work_s += cold.work_s;
        f.longest_cell_s += cold.longest_extra_s;
        sched.work_s = f.work_s;
        sched.longest_s = f.longest_cell_s;
    }
    if (cx.rq.layout == "k8s") {
        f.max_failed_items = failed_items_allowance(f.layout.work_items, per_item, f.failure_share);
        plan_retry_tier(f, cx.rq);
        if (f.layout.retry_unit_memory_bytes) {
            const double oom_share = ev.fits ? static_cast<double>(ev.oom) / static_cast<double>(ev.fits) : 0.0;
            const double q = 1 - std::pow(1 - std::min(1.0, oom_share), static_cast<double>(per_item));
            f.layout.retry_items = static_cast<std::uint64_t>(std::ceil(static_cast<double>(f.layout.work_items) * q - 1e-9));
        }
    }
    return family_schedule{{sched}, sched.start_s, sched.rate};
}

// ---- make_plan, step 3b: size classes ----------------------------------------------------

// The slot memory of a class whose longest series has n_obs: the largest of its models' (each
// on its memory curve, OOM floor and defaults as model_slot gives them).
std::uint64_t class_rss_at(const std::vector<run_model>& models, const plan_context& cx, std::uint64_t n_obs) {
    std::uint64_t out = 0;
    for (const run_model& rm : models) out = std::max(out, *model_slot(rm, cx, n_obs).rss_bytes);
    return out;
}

// The one size of a family never below its memory curve at the run's longest series (which
// grows past the measured lengths, curve.hpp): the slot any cell of the run fits.
void raise_to_memory_curve(family_plan& f, const std::vector<run_model>& models, const plan_context& cx) {
    if (cx.lengths.lengths) f.slot_rss_bytes = std::max(f.slot_rss_bytes, class_rss_at(models, cx, cx.lengths.lengths->max_n_obs()));
}

// One bin of the run's lengths for the family: its work (predict_family_work's rules: the
// curve at the bin's n_obs, else the median, margined; the default wall unmargined) and the
// longest cell in it.
struct bin_cost {
    double work_s = 0, longest_s = 0;
};
bin_cost family_bin_cost(const std::vector<model_in_family>& models, const length_bin& b, const plan_context& cx) {
    const double tm = cx.margin.time();
    double measured = 0, defaulted = 0, longest = 0;
    for (const auto& m : models) {
        const model_cost* c = m.cost;
        if (!c || !c->median_wall_s) {
            defaulted += b.n_series * cx.rq.defaults.wall_s;
            longest = std::max(longest, cx.rq.defaults.wall_s);
        } else if (c->wall_curve.empty()) {
            measured += b.n_series * *c->median_wall_s;
            longest = std::max(longest, *c->median_wall_s * tm);
        } else {
            measured += b.n_series * curve_wall_at(c->wall_curve, b.n_obs);
            longest = std::max(longest, std::max(curve_wall_at(c->wall_curve, b.n_obs), curve_wall_at(c->wall_curve, b.n_obs_max)) * tm);
        }
    }
    return {measured * tm + defaulted, longest};
}

// A class's work items and schedule from its laid-out slot (price_family's rule for k8s).
class_schedule schedule_class(family_layout& L, std::uint64_t slots_per_node, std::uint64_t cells, double work_s,
                              double longest_s, const plan_context& cx) {
    std::uint64_t per_item = 1, per_runner = 1, runners = slots_per_node;
    class_schedule sched{cells, work_s, longest_s, per_item, per_runner, runners};
    sched.reserved_runners = L.reserved_units * L.slots_per_unit;
    if (cx.rq.layout == "k8s") {
        per_runner = L.slots_per_unit;
        runners = L.units_per_node;
        per_item = per_runner * std::max<std::uint64_t>(1, div_up(div_up(cells, per_runner), k8s_max_indexed_completions));
        sched = class_schedule{cells, work_s, longest_s, per_item, per_runner, runners};
        sched.start_s = cx.rq.slack.pod_start_s;
        sched.rate = cx.rq.slack.job_pod_rate;
        L.unit_start_s = cx.rq.slack.pod_start_s;
    }
    L.cells_per_item = per_item;
    L.work_items = div_up(cells, per_item);
    return sched;
}

double gib_hours(std::uint64_t bytes, double seconds) {
    return static_cast<double>(bytes) / static_cast<double>(1ULL << 30) * seconds / 3600.0;
}

// The family's size classes (choose_size_classes over the run's length bins, each class's slot
// from the memory curve at its longest series, laid out as the family is) and their schedules.
// One class, the family's own slot, when the run's lengths are unknown, --size-classes is 1, or
// more classes would not save.
void split_size_classes(const std::string& fname, family_plan& f, const std::vector<run_model>& models,
                        const family_evidence& ev, const plan_context& cx, family_schedule& sched) {
    size_class one;
    one.cells = f.cells;
    one.slot_cores = f.slot_cores;
    one.slot_rss_bytes = f.slot_rss_bytes;
    one.slots_per_node = f.slots_per_node;
    one.layout = f.layout;
    one.work_s = f.work_s;
    one.longest_cell_s = f.longest_cell_s;
    f.one_size_slot_gib_hours = gib_hours(f.slot_rss_bytes, f.work_s);
    one.slot_gib_hours = f.one_size_slot_gib_hours;
    f.size_classes.assign(1, one);
    f.slot_gib_hours = f.one_size_slot_gib_hours;
    f.size_class_saving = 0;
    if (!cx.lengths.lengths) return;
    const auto& bins = cx.lengths.lengths->bins;
    f.size_classes[0].n_obs_min = bins.front().n_obs_min;
    f.size_classes[0].n_obs_max = cx.lengths.lengths->max_n_obs();
    if (cx.rq.size_classes <= 1) return;
    std::vector<length_cost> lc;
    std::vector<bin_cost> bc;
    for (const auto& b : bins) {
        bc.push_back(family_bin_cost(ev.work_models, b, cx));
        lc.push_back({bc.back().work_s, class_rss_at(models, cx, b.n_obs_max)});
    }
    std::vector<std::size_t> ends = choose_size_classes(lc, cx.rq.size_classes);
    // Classes cut at whole series: a class whose share of a scaled run rounds to no series is
    // merged into the next (its memory is below that one's), the last into the one before.
    const double scale = static_cast<double>(cx.series) / cx.lengths.lengths->series();
    auto series_through = [&](std::size_t end) {
        if (end == bins.size()) return cx.series;
        double n = 0;
        for (std::size_t i = 0; i < end; ++i) n += bins[i].n_series;
        return std::min<std::uint64_t>(cx.series, static_cast<std::uint64_t>(std::llround(n * scale)));
    };
    std::vector<std::size_t> kept;
    for (std::size_t k = 0; k < ends.size(); ++k) {
        const std::uint64_t before = kept.empty() ? 0 : series_through(kept.back());
        if (series_through(ends[k]) > before || k + 1 == ends.size()) kept.push_back(ends[k]);
    }
    while (kept.size() > 1 && series_through(kept[kept.size() - 1]) == series_through(kept[kept.size() - 2]))
        kept.erase(kept.end() - 2);
    if (kept.size() < 2) return;
    std::vector<size_class> classes;
    std::vector<class_schedule> parts;
    const std::uint64_t n_models = f.models.size();
    std::size_t begin = 0;
    for (std::size_t end : kept) {
        size_class c;
        c.n_obs_min = bins[begin].n_obs_min;
        c.n_obs_max = bins[end - 1].n_obs_max;
        const std::uint64_t s0 = begin == 0 ? 0 : series_through(begin);
        c.first_cell = s0 * n_models;
        c.cells = (series_through(end) - s0) * n_models;
        c.slot_cores = f.slot_cores;
        c.slot_rss_bytes = class_rss_at(models, cx, *c.n_obs_max);
        for (std::size_t i = begin; i < end; ++i) {
            c.work_s += bc[i].work_s;
            c.longest_cell_s = std::max(c.longest_cell_s, bc[i].longest_s);
        }
        family_plan laid = f;
        laid.slot_rss_bytes = c.slot_rss_bytes;
        lay_out(fname, laid, cx);
        parts.push_back(schedule_class(laid.layout, laid.slots_per_node, c.cells, c.work_s, c.longest_cell_s, cx));
        if (cx.rq.layout == "k8s") plan_retry_tier(laid, cx.rq);  // the class's own retry size
        c.layout = laid.layout;
        c.slots_per_node = laid.slots_per_node;
        c.slot_gib_hours = gib_hours(c.slot_rss_bytes, c.work_s);
        classes.push_back(std::move(c));
        begin = end;
    }
    double total = 0;
    for (const auto& c : classes) total += c.slot_gib_hours;
    f.size_classes = std::move(classes);
    f.slot_gib_hours = total;
    f.size_class_saving = f.one_size_slot_gib_hours > 0 ? 1.0 - total / f.one_size_slot_gib_hours : 0.0;
    sched.classes = std::move(parts);
}

// ---- make_plan, step 4: schedule -----------------------------------------------------------

// The goal's node count: with a deadline the fewest nodes in [1, enough] whose makespan meets
// it (enough when none does), with --nodes the given count but never more than `enough`.
// The deadline the makespans are held to: --deadline less --headroom's share.
double planned_deadline(const plan_request& rq) { return *rq.deadline_s * (1 - rq.slack.headroom); }

// "the deadline 10.0 min less 10% headroom (9.0 min)", or the deadline alone without headroom.
std::string deadline_text(const plan_request& rq) {
    if (rq.slack.headroom == 0) return "the deadline " + human_seconds(*rq.deadline_s);
    return fmt::format("the deadline {} less {}% headroom ({})", human_seconds(*rq.deadline_s),
                       format_double(rq.slack.headroom * 100), human_seconds(planned_deadline(rq)));
}

template <class Makespan>
std::uint64_t nodes_for_goal(const plan_request& rq, std::uint64_t enough, const Makespan& makespan) {
    if (rq.deadline_s) return fewest_nodes(enough, planned_deadline(rq), makespan);
    return std::min(*rq.nodes, enough);
}

void schedule_family(family_plan& f, const family_schedule& sched, const plan_request& rq) {
    f.nodes = nodes_for_goal(rq, sched.enough_nodes(), [&](std::uint64_t n) { return sched.makespan(n); });
    if (rq.deadline_s) {
        f.meets_deadline = within(sched.makespan(f.nodes), planned_deadline(rq));
        if (!*f.meets_deadline)
            f.warnings.push_back(fmt::format(
                "cannot meet {}: one cell of model '{}' takes {} (planned); {} node(s) run every cell at once "
                "and take {}; raise --deadline{}",
                deadline_text(rq), f.longest_cell_model, human_seconds(f.longest_cell_s), f.nodes,
                human_seconds(sched.makespan(f.nodes)),
                sched.start_s > 0 || sched.rate > 0
                    ? fmt::format(" (each Job index also pays --pod-start {}, and the controller creates {} pod(s)/s)",
                                  human_seconds(sched.start_s), format_double(sched.rate))
                    : std::string()));
    } else if (f.nodes < *rq.nodes) {
        f.warnings.push_back(fmt::format("only {} of the {} node(s) get work: {} run all {} cells in one wave",
                                         f.nodes, *rq.nodes, f.nodes, f.cells));
    }
    fill_schedule(f, sched);
    f.low_confidence = f.n_ok < rq.min_fits;
}

// Warnings the operator can act on; a family with no evidence at all is already said to be
// assumed (plan-wide), so it gets none of the per-axis ones.
void advise_family(family_plan& f, const family_evidence& ev, const plan_request& rq) {
    if (!ev.any_cost) return;
    auto axis_warn = [&](const std::vector<std::string>& ms, std::string_view axis, std::string_view dflt) {
        if (!ms.empty())
            f.warnings.push_back(fmt::format("no usable {} for model(s) {}: they take {} (assumed)", axis, join(ms), dflt));
    };
    axis_warn(ev.no_cores, "core count", "--default-cores");
    axis_warn(ev.no_rss, "memory", "--default-memory");
    axis_warn(ev.no_wall, "wall time", "--default-wall");
    if (f.low_confidence)
        f.warnings.push_back(fmt::format(
            "low confidence: {} ok fit(s), fewer than --min-fits {}; measure more series before trusting this family",
            f.n_ok, rq.min_fits));
    if (!ev.failing.empty())
        f.warnings.push_back(fmt::format(
            "model(s) {}: about that share of their cells in this run will fail too, and is priced as if it "
            "ran; see first_error_by_model in the profile and fix or drop them (--models)",
            join(ev.failing)));
    if (!ev.threads_common)
        f.warnings.push_back(fmt::format(
            "its models ran under different thread caps ({}): the renderings set no thread-pool variables; "
            "measure them under one cap (prof-measure --threads) or plan them apart (--models)",
            join(ev.caps)));
    else if (!f.intraop_threads)
        f.warnings.push_back(
            "the profile records no common thread cap for these fits: run production as they were measured "
            "(the renderings set no thread-pool variables)");
}

void warn_median_priced(median_priced& mp, plan_record& p) {
    std::sort(mp.no_lengths.begin(), mp.no_lengths.end());
    std::sort(mp.no_curve.begin(), mp.no_curve.end());
    if (!mp.no_lengths.empty())
        p.warnings.push_back(fmt::format(
            "the run's series lengths are unknown (no --panel, and the profile carries no sample record): the work of "
            "{} is series x the median cell, which misses a long tail; give --panel FILE",
            join(mp.no_lengths)));
    if (!mp.no_curve.empty())
        p.warnings.push_back(fmt::format(
            "no cost curve in n_obs for {} (the profile has none: its fits had no n_obs): work is series x the "
            "median cell, which misses a long tail",
            join(mp.no_curve)));
}

// Totals: the families one after another on the same nodes. With a deadline that the sum
// meets, each family is deployed on as many of the totals' nodes as its cells can use, so the
// renderings run the schedule the sum priced.
void schedule_totals(plan_record& p, const std::map<std::string, family_schedule>& schedules, const plan_request& rq) {
    std::uint64_t enough = 1;
    for (const auto& [name, f] : p.families) {
        p.totals.cells += f.cells;
        p.totals.work_s += f.work_s;
        enough = std::max(enough, schedules.at(name).enough_nodes());
        p.totals.longest_cell_s = std::max(p.totals.longest_cell_s, f.longest_cell_s);
    }
    auto total_makespan = [&](std::uint64_t n) {
        double t = 0;
        for (const auto& [name, sc] : schedules) t += sc.makespan(std::min(n, sc.enough_nodes()));
        return t;
    };
    p.totals.nodes = nodes_for_goal(rq, enough, total_makespan);
    if (rq.deadline_s) {
        p.totals.meets_deadline = within(total_makespan(p.totals.nodes), planned_deadline(rq));
        if (*p.totals.meets_deadline && p.families.size() > 1) {
            for (auto& [name, f] : p.families) {
                const family_schedule& sc = schedules.at(name);
                f.nodes = std::min(p.totals.nodes, sc.enough_nodes());
                fill_schedule(f, sc);
                f.meets_deadline = within(f.makespan_s, planned_deadline(rq));
            }
        }
        if (!*p.totals.meets_deadline && p.families.size() > 1) {
            std::uint64_t apart = 0;
            for (const auto& [name, f] : p.families) apart += f.nodes;
            p.warnings.push_back(fmt::format(
                "the families one after another cannot meet {}: on {} node(s), every cell of each family "
                "at once, they take {}; run them side by side on separate nodes (each family's own node count, {} in "
                "all) or raise --deadline",
                deadline_text(rq), p.totals.nodes, human_seconds(total_makespan(p.totals.nodes)), apart));
        }
    }
    p.totals.makespan_s = total_makespan(p.totals.nodes);
    for (const auto& [name, sc] : schedules)
        p.totals.makespan_lower_s += sc.lower_bound(std::min(p.totals.nodes, sc.enough_nodes()));
}

// --strict: no assumed axis, and every deadline met.
void check_strict(const plan_record& p, const plan_request& rq) {
    std::vector<std::string> assumed;
    for (const auto& [name, f] : p.families) {
        std::vector<std::string> axes;
        if (f.basis.cores == "assumed") axes.push_back("cores");
        if (f.basis.memory == "assumed") axes.push_back("memory");
        if (f.basis.gpu == "assumed" && f.slot_gpu_bytes) axes.push_back("gpu");
        if (f.basis.wall == "assumed") axes.push_back("wall");
        if (!axes.empty()) assumed.push_back(fmt::format("family '{}' ({})", name, join(axes)));
    }
    const std::string& basis = p.provenance.basis;
    if (basis == "assumed" && assumed.empty()) assumed.push_back(fmt::format("the profile (basis {})", basis));
    if (!assumed.empty())
        throw error(exit_code::data_err,
                    fmt::format("--strict: assumed axes in {}: measure them, or plan without --strict", join(assumed)));
    for (const auto& [name, f] : p.families)
        if (f.meets_deadline == false)
            for (const auto& w : f.warnings)
                if (w.rfind("cannot meet", 0) == 0)
                    throw error(exit_code::data_err, fmt::format("--strict: family '{}' {}", name, w));
    if (p.totals.meets_deadline == false)
        throw error(exit_code::data_err,
                    fmt::format("--strict: the families one after another on {} node(s) take {}, past {}: no plan "
                                "meets it; raise --deadline or plan the families apart (--models)",
                                p.totals.nodes, human_seconds(p.totals.makespan_s), deadline_text(rq)));
}

// A plan that misses its deadline is no plan (exit 65) unless --allow-missed-deadline.
void check_deadline(const plan_record& p, const plan_request& rq) {
    if (rq.allow_missed_deadline) return;
    const std::string how = "; or write it anyway with --allow-missed-deadline";
    for (const auto& [name, f] : p.families)
        if (f.meets_deadline == false)
            for (const auto& w : f.warnings)
                if (w.rfind("cannot meet", 0) == 0)
                    throw error(exit_code::data_err, fmt::format("family '{}' {}{}", name, w, how));
    if (p.totals.meets_deadline == false)
        throw error(exit_code::data_err,
                    fmt::format("the families one after another on {} node(s) take {}, past {}: no plan meets it; "
                                "raise --deadline or plan the families apart (--models){}",
                                p.totals.nodes, human_seconds(p.totals.makespan_s), deadline_text(rq), how));
}

// The record's run, provenance and plan-wide opening warning, before any family.
plan_record start_plan(const plan_context& cx) {
    const plan_request& rq = cx.rq;
    plan_record p;
    p.node = rq.node;
    p.run.series = cx.series;
    p.run.deadline_s = rq.deadline_s;
    p.run.nodes = rq.nodes;
    p.run.min_fits = rq.min_fits;
    p.run.layout = rq.layout;
    p.run.limits = rq.limits;
    p.run.slack = rq.slack;
    if (rq.deadline_s) p.run.planned_deadline_s = planned_deadline(rq);
    p.run.size_classes = rq.size_classes;
    if (cx.profile) {
        p.provenance = cx.profile->provenance;
    } else {
        p.provenance.basis = "assumed";
        p.provenance.source = "none";
    }
    return p;
}

}  // namespace

plan_record make_plan(const compute_profile* profile, const plan_request& rq) {
    validate_request(rq);
    if (rq.strict && !profile)
        throw error(exit_code::data_err,
                    fmt::format("--strict: {}: nothing measured to plan from",
                                rq.profile_input == "-" ? std::string("no profile on the input") : no_profile(rq)));
    plan_context cx{profile, rq,
                    // An assumed profile with no models says "we had nothing": the same as no profile.
                    !profile || (profile->models.empty() && profile->dropped_models.empty()),
                    profile ? profile->provenance.basis : std::string("assumed"),
                    profile ? margins::of_record(profile->memory_margin, profile->time_margin) : margins(),
                    rq.series ? rq.series : static_cast<std::uint64_t>(std::llround(rq.panel->series())),
                    {}};
    plan_record p = start_plan(cx);
    const std::set<std::string> names = run_model_names(cx);
    if (cx.empty_profile)
        p.warnings.push_back(profile ? fmt::format("the profile (basis {}) holds no model: planning from the defaults, every axis assumed",
                                                   cx.basis)
                                     : no_profile(rq) + ": planning from the defaults, every axis assumed");
    family_groups by_family = group_models(names, cx, p);
    for (const auto& [fam, models] : by_family)
        for (const auto& m : models) p.run.models.push_back(m.name);
    std::sort(p.run.models.begin(), p.run.models.end());
    if (cx.series > UINT64_MAX / p.run.models.size())
        throw usage_error(fmt::format("--series {} x {} models overflows a cell count", cx.series, p.run.models.size()));
    cx.lengths = lengths_for_run(profile, rq, cx.series);
    p.run.length_source = cx.lengths.source;
    if (cx.lengths.lengths) p.run.max_n_obs = cx.lengths.lengths->max_n_obs();

    std::map<std::string, family_schedule> schedules;
    median_priced mp;
    for (const auto& [fname, models] : by_family) {
        family_plan f;
        const family_evidence ev = size_family_slot(f, models, cx);
        raise_to_memory_curve(f, models, cx);
        lay_out(fname, f, cx);
        family_schedule sched = price_family(f, ev, cx, mp);
        split_size_classes(fname, f, models, ev, cx, sched);
        schedule_family(f, sched, rq);
        advise_family(f, ev, rq);
        schedules.emplace(fname, sched);
        p.families.emplace(fname, std::move(f));
    }
    warn_median_priced(mp, p);
    schedule_totals(p, schedules, rq);
    if (rq.strict) check_strict(p, rq);
    check_deadline(p, rq);
    return p;
}

}  // namespace prof
