// make_plan: validate the request (request.cpp), group the run's models by family, size and lay
// out each family's slot, split it into size classes, schedule it, and check the plan's goal
// (see plan.hpp).
#include "prof/plan/plan.hpp"

#include "prof/plan/interval.hpp"
#include "prof/plan/layout.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_out.hpp"
#include "prof/profile/sample.hpp"

#include <algorithm>
#include <deque>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace prof {

using namespace plan_detail;

namespace {

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
    std::vector<std::string> no_gpu;   // models with a null GPU axis, on a node with GPUs
    std::vector<std::string> caps;     // "model cap" per model, for the mixed-caps warning
    std::vector<std::string> fit_caps; // "model: caps" per model whose fits ran under several
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
// A null GPU peak is "not measured", never "needs none": on a node with GPUs it takes
// --default-gpu-memory, else one whole device (the share a scheduler that cannot split a
// device gives any GPU request, and the one that never undersizes); on a node without GPUs
// it asks none, as there is none to give (a fit that needs one cannot run there at all).
std::optional<std::uint64_t> unmeasured_gpu_bytes(const plan_request& rq) {
    if (rq.defaults.gpu_memory_bytes) return rq.defaults.gpu_memory_bytes;
    if (rq.node.gpus > 0) return rq.node.gpu_memory_bytes;
    return std::nullopt;
}

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

// A busy host reads a model's effective cores short: a model whose every reading is contended
// and which ran under a thread cap T is sized on max(its reading, T) cores (what it asks of an
// idle host), never snapped below its cap by the noise; with one uncontended reading its own
// readings stand. True when the cap raised the cores.
bool cores_from_cap(const model_cost& c) {
    if (c.readings.empty() || !c.intraop_threads) return false;
    for (const auto& r : c.readings)
        if (!r.contended) return false;
    return c.max_effective_cores && snap_cores(*c.max_effective_cores) < *c.intraop_threads;
}

// One model's slot; with `n_obs`, its memory is the memory curve's at that length where the
// model has one (memory_curve_at), for the size class whose longest series has n_obs.
slot_size model_slot(const run_model& rm, const plan_context& cx, std::optional<std::uint64_t> n_obs = std::nullopt) {
    const model_cost* c = rm.cost;
    slot_evidence e;
    if (c) {
        e.max_effective_cores = c->max_effective_cores;
        if (cores_from_cap(*c)) e.max_effective_cores = static_cast<double>(*c->intraop_threads);
        e.max_process_rss_bytes = slot_memory_evidence(*c);  // a replayed worker peak when larger
        e.max_peak_gpu_bytes = c->max_peak_gpu_bytes;
        if (n_obs)
            if (auto at = memory_curve_at(*c, *n_obs)) e.max_process_rss_bytes = at;
    }
    e.oom_floor_bytes = rm.oom_floor;
    const plan_defaults& d = cx.rq.defaults;
    slot_size s = size_slot(e, cx.margin.memory(), {d.cores, d.memory_bytes, unmeasured_gpu_bytes(cx.rq)});
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
    if (c && cores_from_cap(*c)) {
        f.cores_from_cap_models.push_back(rm.name);
        f.warnings.push_back(fmt::format(
            "model '{}': every reading was measured on a busy host and reads {} effective cores under its thread cap "
            "{}: its slot takes the cap's {} cores; measure it on an idle host to size it from its readings",
            rm.name, format_double(c->max_effective_cores.value_or(0)), *c->intraop_threads, *c->intraop_threads));
    }
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
    if (!(c && c->max_peak_gpu_bytes) && cx.rq.node.gpus > 0) ev.no_gpu.push_back(rm.name);
    if (c && !c->median_wall_s) ev.no_wall.push_back(rm.name);
    // Memory was measured on the lengths the fits had: a longer series may need more.
    if (c && cx.lengths.lengths && c->max_n_obs && cx.lengths.lengths->max_n_obs() > *c->max_n_obs)
        f.warnings.push_back(fmt::format(
            "model '{}': the run's longest series has n_obs {}, its longest measured fit {}: its memory "
            "and time were not measured at that length; measure the longest series",
            rm.name, cx.lengths.lengths->max_n_obs(), *c->max_n_obs));
    std::optional<std::uint64_t> t = c ? c->intraop_threads : std::nullopt;
    ev.caps.push_back(fmt::format("{} {}", rm.name, t ? std::to_string(*t) : std::string("none")));
    if (c && c->thread_caps.size() > 1) ev.fit_caps.push_back(rm.name + ": " + thread_caps_text(c->thread_caps));
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

// A slot with fewer cores than the node shares it with other slots (the family's own, other
// families', other tenants'), and a fit beside a neighbour runs slower than the fit measured
// alone: each model whose profile measured a beside_slowdown above 1 is priced on a copy of
// its cost with every wall (median, curve, readings) times it, which the work, the classes and
// the intervals all read; `copies` holds them. f.beside_slowdown is the largest applied.
void price_beside(family_plan& f, family_evidence& ev, const plan_context& cx, std::deque<model_cost>& copies) {
    if (f.slot_cores >= cx.rq.node.cores) return;
    for (auto& m : ev.work_models) {
        if (!m.cost || !m.cost->beside_slowdown || !(*m.cost->beside_slowdown > 1)) continue;
        const double k = *m.cost->beside_slowdown;
        model_cost& c = copies.emplace_back(*m.cost);
        if (c.median_wall_s) *c.median_wall_s *= k;
        for (auto& pt : c.wall_curve) pt.wall_s *= k;
        for (auto& r : c.readings) r.wall_s *= k;
        m.cost = &c;
        f.beside_slowdown = std::max(f.beside_slowdown.value_or(0), k);
    }
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

// The family as one class: its own slot for every cell, no saving.
void set_one_size(family_plan& f) {
    size_class one;
    // Its slots, waves and makespan are still 0 here: schedule_family sets them.
    copy_slot_and_schedule(one, f);
    f.one_size_slot_gib_hours = gib_hours(f.slot_rss_bytes, f.work_s);
    one.slot_gib_hours = f.one_size_slot_gib_hours;
    f.size_classes.assign(1, one);
    f.slot_gib_hours = f.one_size_slot_gib_hours;
    f.size_class_saving = 0;
}

// Each class is its own Job when every work item starts its processes afresh, so the class
// pays its own cold starts: price_family's rule over the class's work items on `laid`.
void add_class_cold_starts(size_class& c, const family_plan& laid, const family_evidence& ev, const plan_context& cx) {
    family_layout probe = laid.layout;
    schedule_class(probe, laid.slots_per_node, c.cells, c.work_s, c.longest_cell_s, cx);
    const cold_start_cost cold =
        cold_start_work(ev.work_models, c.cells, probe.work_items * probe.slots_per_unit, cx.margin.time());
    c.cold_start_work_s = cold.work_s;
    c.work_s += cold.work_s;
    c.longest_cell_s += cold.longest_extra_s;
}

// The family's work is then its classes' with their own cold starts; one size is priced on it.
void sum_class_cold_starts(family_plan& f, const std::vector<size_class>& classes) {
    double work = 0, cold = 0;
    for (const auto& c : classes) {
        work += c.work_s;
        cold += c.cold_start_work_s.value_or(0);
        f.longest_cell_s = std::max(f.longest_cell_s, c.longest_cell_s);
    }
    f.work_s = work;
    f.cold_start_work_s = cold;
    f.one_size_slot_gib_hours = gib_hours(f.slot_rss_bytes, f.work_s);
}

// The family's size classes (choose_size_classes over the run's length bins, each class's slot
// from the memory curve at its longest series, laid out as the family is) and their schedules.
// One class, the family's own slot, when the run's lengths are unknown, --size-classes is 1, or
// more classes would not save.
void split_size_classes(const std::string& fname, family_plan& f, const std::vector<run_model>& models,
                        const family_evidence& ev, const plan_context& cx, family_schedule& sched) {
    set_one_size(f);
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
    std::vector<std::size_t> ends = choose_size_classes(lc, cx.rq.size_classes, cx.rq.min_class_saving);
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
        if (cx.rq.cold_start_per_process) add_class_cold_starts(c, laid, ev, cx);
        parts.push_back(schedule_class(laid.layout, laid.slots_per_node, c.cells, c.work_s, c.longest_cell_s, cx));
        if (cx.rq.layout == "k8s") plan_retry_tier(laid, cx.rq);  // the class's own retry size
        c.layout = laid.layout;
        c.slots_per_node = laid.slots_per_node;
        c.slot_gib_hours = gib_hours(c.slot_rss_bytes, c.work_s);
        classes.push_back(std::move(c));
        begin = end;
    }
    if (cx.rq.cold_start_per_process) sum_class_cold_starts(f, classes);
    f.size_classes = std::move(classes);
    sum_slot_gib_hours(f);
    sched.classes = std::move(parts);
}

// ---- make_plan, step 4: schedule -----------------------------------------------------------

// The goal's node count: with a deadline the fewest nodes in [1, enough] whose makespan meets
// it (enough when none does), with --nodes the given count but never more than `enough`.
template <class Makespan>
std::uint64_t nodes_for_goal(const plan_request& rq, std::uint64_t enough, const Makespan& makespan) {
    if (rq.deadline_s) return fewest_nodes(enough, planned_deadline(rq), makespan);
    return std::min(*rq.nodes, enough);
}

// The nodes are chosen on the makespan's bound: the high end of its interval, never below the
// plan's own makespan.
void schedule_family(family_plan& f, const family_schedule& sched, const family_resamples& rs, const plan_request& rq) {
    auto bound = [&](std::uint64_t n) { return makespan_bound(sched, rs, n, rq.confidence); };
    f.nodes = nodes_for_goal(rq, sched.enough_nodes(), bound);
    if (rq.deadline_s) {
        f.meets_deadline = within(bound(f.nodes), planned_deadline(rq));
        if (!*f.meets_deadline)
            f.warnings.push_back(fmt::format(
                "cannot meet {}: one cell of model '{}' takes {} (planned); {} node(s) run every cell at once "
                "and take {}; raise --deadline{}",
                deadline_text(rq), f.longest_cell_model, human_seconds(f.longest_cell_s), f.nodes,
                human_seconds(bound(f.nodes)),
                sched.start_s > 0 || sched.rate > 0
                    ? fmt::format(" (each Job index also pays --pod-start {}, and the controller creates {} pod(s)/s)",
                                  human_seconds(sched.start_s), format_double(sched.rate))
                    : std::string()));
    } else if (f.nodes < *rq.nodes) {
        f.warnings.push_back(fmt::format("only {} of the {} node(s) get work: {} run all {} cells in one wave",
                                         f.nodes, *rq.nodes, f.nodes, f.cells));
    }
    fill_schedule(f, sched);
    fill_intervals(f, sched, rs, rq.confidence);
    f.low_confidence = f.n_ok < rq.min_fits;
}

// Warnings the operator can act on; a family with no evidence at all is already said to be
// assumed (plan-wide), so it gets none of the per-axis ones.
void advise_family(family_plan& f, const family_evidence& ev, const plan_request& rq) {
    // A null GPU axis on a GPU node is said even without any evidence when no --default-gpu-memory
    // chose its share: the plan-wide warning says every axis is assumed, not that each slot
    // then takes a whole device.
    if (!ev.no_gpu.empty() && (ev.any_cost || !rq.defaults.gpu_memory_bytes)) {
        const std::string share =
            rq.defaults.gpu_memory_bytes
                ? (*rq.defaults.gpu_memory_bytes == 0 ? std::string("no GPU (--default-gpu-memory 0)")
                                                      : fmt::format("--default-gpu-memory {}",
                                                                    bytes_text(*rq.defaults.gpu_memory_bytes)))
                : fmt::format("one whole device per slot, {}", bytes_text(*rq.node.gpu_memory_bytes));
        f.warnings.push_back(fmt::format(
            "no measured GPU peak for model(s) {} (null: not measured, not \"needs none\"): on this GPU node they "
            "take {}, assumed; measure them on a GPU host, or give --default-gpu-memory (0 if they use no GPU)",
            fmt::join(ev.no_gpu, ", "), share));
    }
    if (!ev.any_cost) return;
    auto axis_warn = [&](const std::vector<std::string>& ms, std::string_view axis, std::string_view dflt) {
        if (!ms.empty())
            f.warnings.push_back(fmt::format("no usable {} for model(s) {}: they take {} (assumed)", axis, fmt::join(ms, ", "), dflt));
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
            fmt::join(ev.failing, ", ")));
    if (!ev.threads_common)
        f.warnings.push_back(fmt::format(
            "its models ran under different thread caps ({}): the renderings set no thread-pool variables; "
            "measure them under one cap (prof-measure --threads) or plan them apart (--models)",
            fmt::join(ev.caps, ", ")));
    if (!ev.fit_caps.empty())
        f.warnings.push_back(fmt::format(
            "its fits ran under different thread caps ({}): each such model is sized under its largest cap, no cap "
            "counting as the largest, and the renderings set {}; measure them under one cap (prof-measure --threads)",
            fmt::join(ev.fit_caps, "; "),
            !ev.threads_common ? std::string("no thread-pool variables (its models' caps differ)")
            : f.intraop_threads ? fmt::format("the cap {}", *f.intraop_threads)
                                : std::string("no thread-pool variables")));
    else if (ev.threads_common && !f.intraop_threads)
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
            fmt::join(mp.no_lengths, ", ")));
    if (!mp.no_curve.empty())
        p.warnings.push_back(fmt::format(
            "no cost curve in n_obs for {} (the profile has none: its fits had no n_obs): work is series x the "
            "median cell, which misses a long tail",
            fmt::join(mp.no_curve, ", ")));
}

// Totals: the families one after another on the same nodes. With a deadline that the sum
// meets, each family is deployed on as many of the totals' nodes as its cells can use, so the
// renderings run the schedule the sum priced.
void schedule_totals(plan_record& p, const std::map<std::string, family_schedule>& schedules,
                     const std::map<std::string, family_resamples>& resamples, const plan_request& rq) {
    std::uint64_t enough = 1;
    for (const auto& [name, f] : p.families) {
        p.totals.cells += f.cells;
        enough = std::max(enough, schedules.at(name).enough_nodes());
        p.totals.longest_cell_s = std::max(p.totals.longest_cell_s, f.longest_cell_s);
    }
    auto total_makespan = [&](std::uint64_t n) {
        double t = 0;
        for (const auto& [name, sc] : schedules) t += sc.makespan(std::min(n, sc.enough_nodes()));
        return t;
    };
    auto total_bound = [&](std::uint64_t n) {
        return total_makespan_bound(total_makespan(n), schedules, resamples, n, rq.confidence);
    };
    p.totals.nodes = nodes_for_goal(rq, enough, total_bound);
    if (rq.deadline_s) {
        p.totals.meets_deadline = within(total_bound(p.totals.nodes), planned_deadline(rq));
        if (*p.totals.meets_deadline && p.families.size() > 1) {
            for (auto& [name, f] : p.families) {
                const family_schedule& sc = schedules.at(name);
                f.nodes = std::min(p.totals.nodes, sc.enough_nodes());
                fill_schedule(f, sc);
                fill_intervals(f, sc, resamples.at(name), rq.confidence);
                f.meets_deadline = within(f.makespan_bound_s, planned_deadline(rq));
            }
        }
        if (!*p.totals.meets_deadline && p.families.size() > 1) {
            std::uint64_t apart = 0;
            for (const auto& [name, f] : p.families) apart += f.nodes;
            p.warnings.push_back(fmt::format(
                "the families one after another cannot meet {}: on {} node(s), every cell of each family "
                "at once, they take {}; run them side by side on separate nodes (each family's own node count, {} in "
                "all) or raise --deadline",
                deadline_text(rq), p.totals.nodes, human_seconds(total_bound(p.totals.nodes)), apart));
        }
    }
    for (const auto& [name, f] : p.families) p.totals.work_s += f.work_s;  // warm cold starts on its nodes
    p.totals.makespan_s = total_makespan(p.totals.nodes);
    for (const auto& [name, sc] : schedules)
        p.totals.makespan_lower_s += sc.lower_bound(std::min(p.totals.nodes, sc.enough_nodes()));
    fill_total_intervals(p.totals, schedules, resamples, p, rq.confidence);
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
    p.run.min_class_saving = rq.min_class_saving;
    p.run.confidence = rq.confidence;
    p.run.resamples = rq.resamples;
    p.run.seed = rq.seed;
    p.run.target_width = rq.target_width;
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
    std::map<std::string, family_resamples> resamples;
    median_priced mp;
    for (const auto& [fname, models] : by_family) {
        family_plan f;
        family_evidence ev = size_family_slot(f, models, cx);
        std::deque<model_cost> beside_costs;  // what ev.work_models point to when price_beside scaled them
        price_beside(f, ev, cx, beside_costs);
        raise_to_memory_curve(f, models, cx);
        lay_out(fname, f, cx);
        family_schedule sched = price_family(f, ev, cx, mp);
        split_size_classes(fname, f, models, ev, cx, sched);
        sched.work_s = f.work_s;
        if (!rq.cold_start_per_process)
            for (auto& c : sched.classes) c.warm_cold_s = warm_cold_starts(ev.work_models, cx.margin.time());
        family_resamples rs = resample_family(f, ev.work_models, cx.lengths, cx.series, cx.margin.time(), rq);
        fill_sample_widths(f, ev.work_models, cx.lengths, cx.series, cx.margin.time(), rq);
        schedule_family(f, sched, rs, rq);
        advise_family(f, ev, rq);
        schedules.emplace(fname, sched);
        resamples.emplace(fname, std::move(rs));
        p.families.emplace(fname, std::move(f));
    }
    warn_median_priced(mp, p);
    schedule_totals(p, schedules, resamples, rq);
    check_finite(p);
    if (rq.strict) check_strict(p, rq);
    check_deadline(p, rq);
    return p;
}

}  // namespace prof
