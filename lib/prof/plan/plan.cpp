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

// Spark: executors of s task slots, each asking heap + base overhead + the slots' Python memory
// (whole MiB), inside the node and under --max-container-memory; as many executors per node as
// cores, memory and devices allow. The most slots per node wins; among equals, the fewest
// executors.
void layout_spark(const std::string& fname, family_plan& f, const node_axes& ax, const plan_request& rq) {
    const std::uint64_t generic = ax.slots();
    const std::uint64_t cap = std::min(rq.node.memory_bytes, rq.limits.max_container_memory_bytes.value_or(UINT64_MAX));
    auto container = [&](std::uint64_t s) {
        std::uint64_t heap = spark_executor_heap_bytes(s);
        return heap + spark_executor_base_overhead_bytes(heap) + mib_up(s * f.slot_rss_bytes) * mib;
    };
    std::uint64_t best_s = 0, best_e = 0;
    for (std::uint64_t s = generic; s >= 1; --s) {
        if (best_s * best_e == generic) break;  // no smaller executor beats every slot of the node
        const std::uint64_t c = container(s);
        if (c > cap) continue;
        std::uint64_t e = std::min(generic / s, rq.node.memory_bytes / c);
        if (ax.per_device) e = std::min(e, rq.node.gpus / div_up(s, *ax.per_device));
        if (e * s > best_e * best_s) {
            best_s = s;
            best_e = e;
        }
    }
    if (best_s == 0) {
        const bool by_limit = rq.limits.max_container_memory_bytes && *rq.limits.max_container_memory_bytes < rq.node.memory_bytes;
        throw error(exit_code::data_err,
                    fmt::format("spark: family '{}': one executor of one task slot asks {} (JVM heap and overhead {} + "
                                "the slot's {}), more than {} {}: no executor fits; {}",
                                fname, bytes_text(container(1)), human_bytes(double(container(1) - mib_up(f.slot_rss_bytes) * mib)),
                                human_bytes(double(f.slot_rss_bytes)),
                                by_limit ? "--max-container-memory" : "--node-memory", human_bytes(double(cap)),
                                by_limit ? "raise the cluster's maximum container (YARN yarn.scheduler.maximum-allocation-mb)"
                                         : "plan on larger nodes"));
    }
    family_layout& L = f.layout;
    L.unit = "executor";
    L.slots_per_unit = best_s;
    L.units_per_node = best_e;
    L.unit_cores = best_s * f.slot_cores;
    L.heap_bytes = spark_executor_heap_bytes(best_s);
    L.overhead_bytes = spark_executor_base_overhead_bytes(*L.heap_bytes) + mib_up(best_s * f.slot_rss_bytes) * mib;
    L.unit_memory_bytes = *L.heap_bytes + *L.overhead_bytes;
    if (ax.per_device) {
        L.slots_per_device = *ax.per_device;
        L.unit_gpus = static_cast<double>(div_up(best_s, *ax.per_device));
    }
    if (best_s * best_e == generic) L.limited_by = ax.limit();
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

// One family's cells on a number of nodes: the makespan arithmetic of schedule_makespan.
struct family_schedule {
    std::uint64_t cells = 0;
    double work_s = 0, longest_s = 0;
    std::uint64_t per_item = 1;           // cells in one work item
    std::uint64_t slots_per_runner = 1;
    std::uint64_t runners_per_node = 1;   // Ray tasks or Spark task slots; k8s pods
    // Nodes enough to run every work item at once: more buy nothing.
    std::uint64_t enough_nodes() const { return div_up(div_up(cells, per_item), runners_per_node); }
    double makespan(std::uint64_t nodes) const {
        return schedule_makespan(cells, work_s, longest_s, per_item, slots_per_runner, runners_per_node * nodes);
    }
    // Rounds of whole cells every slot runs at most: ceil(items / runners) × rounds per item.
    std::uint64_t waves(std::uint64_t nodes) const {
        return div_up(div_up(cells, per_item), runners_per_node * nodes) * div_up(per_item, slots_per_runner);
    }
    double lower_bound(std::uint64_t nodes) const {
        return std::max(work_s / static_cast<double>(runners_per_node * slots_per_runner * nodes), longest_s);
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
    f.slots = f.slots_per_node * f.nodes;
    f.waves = sc.waves(f.nodes);
    f.makespan_s = sc.makespan(f.nodes);
    f.makespan_lower_s = sc.lower_bound(f.nodes);
}

}  // namespace

double schedule_makespan(std::uint64_t cells, double work_s, double longest_s, std::uint64_t cells_per_item,
                         std::uint64_t slots_per_runner, std::uint64_t runners) {
    if (cells == 0 || runners == 0 || cells_per_item == 0 || slots_per_runner == 0) return 0;
    const double items_per_runner = static_cast<double>(div_up(div_up(cells, cells_per_item), runners));
    const double rounds = static_cast<double>(div_up(cells_per_item, slots_per_runner));
    const double by_waves = items_per_runner * rounds * longest_s;
    // Graham's bound over work items: a free runner takes the next pending item (an Indexed Job
    // hands pending indexes to free pods), an item lasts at most D = rounds × longest_s, and the
    // items' durations sum to at most work_s (an item lasts no longer than its cells in a row),
    // so the makespan is at most Σ/runners + (1 − 1/runners) × D <= (work_s − D)/runners + D.
    const double item_s = rounds * longest_s;
    const double graham = std::max(0.0, work_s - item_s) / static_cast<double>(runners) + item_s;
    return std::min(by_waves, graham);
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

void validate_request(const plan_request& rq) {
    if (rq.series == 0 && !rq.panel) throw usage_error("--series must be a positive integer (or give --panel)");
    if (rq.panel && rq.panel->bins.empty()) throw usage_error("--panel: the panel holds no usable series");
    if (rq.node.cores == 0) throw usage_error("--node-cores must be a positive integer");
    if (rq.node.memory_bytes == 0) throw usage_error("--node-memory must be more than 0 bytes");
    if (rq.node.gpus > 0 && (!rq.node.gpu_memory_bytes || *rq.node.gpu_memory_bytes == 0))
        throw usage_error("--node-gpus needs --node-gpu-memory (the memory of one device)");
    if (rq.node.gpus == 0 && rq.node.gpu_memory_bytes)
        throw usage_error("--node-gpu-memory needs --node-gpus (devices per node)");
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

std::set<std::string> run_model_names(const plan_context& cx) {
    std::set<std::string> names(cx.rq.models.begin(), cx.rq.models.end());
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
slot_size model_slot(const run_model& rm, const plan_context& cx) {
    const model_cost* c = rm.cost;
    slot_evidence e;
    if (c) {
        e.max_effective_cores = c->max_effective_cores;
        e.max_process_rss_bytes = slot_memory_evidence(*c);  // a replayed worker peak when larger
        e.max_peak_gpu_bytes = c->max_peak_gpu_bytes;
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
        ax.per_device = per_device;
        ax.by_gpus = node.gpus * per_device;
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
    if (cx.rq.layout == "k8s") {
        per_runner = f.layout.slots_per_unit;
        runners = f.layout.units_per_node;
        per_item = per_runner * std::max<std::uint64_t>(1, div_up(div_up(f.cells, per_runner), k8s_max_indexed_completions));
    }
    f.layout.cells_per_item = per_item;
    f.layout.work_items = div_up(f.cells, per_item);
    if (cx.rq.cold_start_per_process) {
        const cold_start_cost cold =
            cold_start_work(ev.work_models, f.cells, f.layout.work_items * per_runner, cx.margin.time());
        f.cold_start_work_s = cold.work_s;
        f.work_s += cold.work_s;
        f.longest_cell_s += cold.longest_extra_s;
    }
    return family_schedule{f.cells, f.work_s, f.longest_cell_s, per_item, per_runner, runners};
}

// ---- make_plan, step 4: schedule -----------------------------------------------------------

// The goal's node count: with a deadline the fewest nodes in [1, enough] whose makespan meets
// it (enough when none does), with --nodes the given count but never more than `enough`.
template <class Makespan>
std::uint64_t nodes_for_goal(const plan_request& rq, std::uint64_t enough, const Makespan& makespan) {
    if (rq.deadline_s) return fewest_nodes(enough, *rq.deadline_s, makespan);
    return std::min(*rq.nodes, enough);
}

void schedule_family(family_plan& f, const family_schedule& sched, const plan_request& rq) {
    f.nodes = nodes_for_goal(rq, sched.enough_nodes(), [&](std::uint64_t n) { return sched.makespan(n); });
    if (rq.deadline_s) {
        f.meets_deadline = within(sched.makespan(f.nodes), *rq.deadline_s);
        if (!*f.meets_deadline)
            f.warnings.push_back(fmt::format(
                "cannot meet the deadline {}: one cell of model '{}' takes {} (planned); {} node(s) run every cell "
                "at once and take {}; raise --deadline",
                human_seconds(*rq.deadline_s), f.longest_cell_model, human_seconds(f.longest_cell_s), f.nodes,
                human_seconds(sched.makespan(f.nodes))));
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
        p.totals.meets_deadline = within(total_makespan(p.totals.nodes), *rq.deadline_s);
        if (*p.totals.meets_deadline && p.families.size() > 1) {
            for (auto& [name, f] : p.families) {
                const family_schedule& sc = schedules.at(name);
                f.nodes = std::min(p.totals.nodes, sc.enough_nodes());
                fill_schedule(f, sc);
                f.meets_deadline = within(f.makespan_s, *rq.deadline_s);
            }
        }
        if (!*p.totals.meets_deadline && p.families.size() > 1) {
            std::uint64_t apart = 0;
            for (const auto& [name, f] : p.families) apart += f.nodes;
            p.warnings.push_back(fmt::format(
                "the families one after another cannot meet the deadline {}: on {} node(s), every cell of each family "
                "at once, they take {}; run them side by side on separate nodes (each family's own node count, {} in "
                "all) or raise --deadline",
                human_seconds(*rq.deadline_s), p.totals.nodes, human_seconds(total_makespan(p.totals.nodes)), apart));
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
                if (w.rfind("cannot meet the deadline", 0) == 0)
                    throw error(exit_code::data_err, fmt::format("--strict: family '{}' {}", name, w));
    if (p.totals.meets_deadline == false)
        throw error(exit_code::data_err,
                    fmt::format("--strict: the families one after another on {} node(s) take {}, past the deadline "
                                "{}: no plan meets it; raise --deadline or plan the families apart (--models)",
                                p.totals.nodes, human_seconds(p.totals.makespan_s), human_seconds(*rq.deadline_s)));
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
        lay_out(fname, f, cx);
        const family_schedule sched = price_family(f, ev, cx, mp);
        schedule_family(f, sched, rq);
        advise_family(f, ev, rq);
        schedules.emplace(fname, sched);
        p.families.emplace(fname, std::move(f));
    }
    warn_median_priced(mp, p);
    schedule_totals(p, schedules, rq);
    if (rq.strict) check_strict(p, rq);
    return p;
}

}  // namespace prof
