// make_plan and the plan record (see plan.hpp; the rules are issue 7 "Arithmetic").
#include "prof/plan.hpp"

#include "prof/errors.hpp"
#include "prof/json_out.hpp"
#include "prof/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace prof {

namespace {

// ceil(x) with a relative tolerance of 1e-12, so 3 × (1/3)-style rounding noise never buys a
// whole extra node (the same tolerance SPEC §2 applies to bytes).
std::uint64_t ceil_tolerant(double x) {
    if (!(x > 0)) return 0;
    double r = std::nearbyint(x);
    if (std::fabs(x - r) <= 1e-12 * x) return static_cast<std::uint64_t>(r);
    return static_cast<std::uint64_t>(std::ceil(x));
}

std::string bytes_text(std::uint64_t b) { return fmt::format("{} ({} bytes)", human_bytes(double(b)), b); }

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
    std::string out;
    for (const auto& s : v) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

// One model of the run as the plan sees it: the profile's model cost, or nothing.
struct run_model {
    std::string name, family;
    const model_cost* cost = nullptr;  // null: not in the profile (or dropped there)
};

// Throws the right error for a slot axis that does not fit one node: a default is a flag the
// operator gave (64), a measured or reference value is what the data says (65).
[[noreturn]] void slot_too_large(const std::string& family, const std::string& basis, const std::string& what) {
    std::string msg = fmt::format("family '{}': {}", family, what);
    if (basis == "assumed") throw usage_error(msg);
    throw error(exit_code::data_err, msg + ": no slot fits one node; plan on larger nodes");
}

}  // namespace

std::uint64_t nodes_for_deadline(double work_s, std::uint64_t slots_per_node, double deadline_s) {
    return std::max<std::uint64_t>(1, ceil_tolerant(work_s / (static_cast<double>(slots_per_node) * deadline_s)));
}

plan_record make_plan(const compute_profile* profile, const plan_request& rq) {
    if (rq.series == 0) throw usage_error("--series must be a positive integer");
    if (rq.node.cores == 0) throw usage_error("--node-cores must be a positive integer");
    if (rq.node.memory_bytes == 0) throw usage_error("--node-memory must be more than 0 bytes");
    if (rq.node.gpus > 0 && (!rq.node.gpu_memory_bytes || *rq.node.gpu_memory_bytes == 0))
        throw usage_error("--node-gpus needs --node-gpu-memory (the memory of one device)");
    if (rq.node.gpus == 0 && rq.node.gpu_memory_bytes)
        throw usage_error("--node-gpu-memory needs --node-gpus (devices per node)");
    if (rq.deadline_s.has_value() == rq.nodes.has_value())
        throw usage_error("give exactly one of --deadline (to get a node count) and --nodes (to get a makespan)");
    if (rq.deadline_s && !(std::isfinite(*rq.deadline_s) && *rq.deadline_s > 0))
        throw usage_error("--deadline must be a positive duration");
    if (rq.nodes && *rq.nodes == 0) throw usage_error("--nodes must be a positive integer");
    if (rq.defaults.cores == 0) throw usage_error("--default-cores must be a positive integer");
    if (rq.defaults.memory_bytes == 0) throw usage_error("--default-memory must be more than 0 bytes");
    if (!(std::isfinite(rq.defaults.wall_s) && rq.defaults.wall_s > 0))
        throw usage_error("--default-wall must be a positive duration");
    if (rq.defaults.gpu_memory_bytes && *rq.defaults.gpu_memory_bytes == 0)
        throw usage_error("--default-gpu-memory must be more than 0 bytes");

    plan_record p;
    p.node = rq.node;
    p.run.series = rq.series;
    p.run.deadline_s = rq.deadline_s;
    p.run.nodes = rq.nodes;
    p.run.min_fits = rq.min_fits;

    // An assumed profile with no models says "we had nothing": the same as no profile.
    bool empty_profile = !profile || (profile->models.empty() && profile->dropped_models.empty());
    if (profile) {
        p.provenance = profile->provenance;
    } else {
        p.provenance = profile_provenance{};
        p.provenance.basis = "assumed";
        p.provenance.source = "none";
    }
    const std::string& basis = p.provenance.basis;

    std::set<std::string> names(rq.models.begin(), rq.models.end());
    if (names.empty() && profile) {
        for (const auto& [name, m] : profile->models) names.insert(name);
        names.insert(profile->dropped_models.begin(), profile->dropped_models.end());
    }
    if (names.empty())
        throw usage_error(profile ? "the profile has no models: name the run's models with --models"
                                  : "no profile on stdin: name the run's models with --models to plan from the defaults");
    for (const auto& n : names)
        if (n.empty()) throw usage_error("--models: a model name is empty");
    p.run.models.assign(names.begin(), names.end());
    if (rq.series > UINT64_MAX / names.size())
        throw usage_error(fmt::format("--series {} x {} models overflows a cell count", rq.series, names.size()));

    if (empty_profile) {
        p.warnings.push_back(profile ? fmt::format("the profile (basis {}) holds no model: planning from the defaults, every axis assumed",
                                                   basis)
                                     : "no profile on stdin: planning from the defaults, every axis assumed");
    }

    // Group the run's models by family. A model the profile lacks has no known family: it forms
    // one of its own name (as a cell's family defaults to its model_type).
    std::map<std::string, std::vector<run_model>> by_family;
    for (const auto& name : names) {
        run_model rm{name, name, nullptr};
        if (profile) {
            if (auto it = profile->models.find(name); it != profile->models.end()) {
                rm.cost = &it->second;
                rm.family = it->second.family;
            } else if (!empty_profile) {
                bool dropped = std::binary_search(profile->dropped_models.begin(), profile->dropped_models.end(), name);
                auto err = profile->first_error_by_model.find(name);
                if (dropped)
                    p.warnings.push_back(fmt::format(
                        "model '{}' has no usable measurement in the profile{}: sized from the defaults (assumed)", name,
                        err != profile->first_error_by_model.end() ? " (first error: " + err->second + ")" : ""));
                else
                    p.warnings.push_back(fmt::format(
                        "model '{}' is not in the profile: sized from the defaults (assumed); measure it before trusting the plan",
                        name));
            }
        }
        by_family[rm.family].push_back(rm);
    }

    const double mem_margin = profile ? profile->memory_margin : default_memory_margin;
    const double time_margin = profile ? profile->time_margin : default_time_margin;
    const plan_defaults& d = rq.defaults;

    for (auto& [fname, models] : by_family) {
        family_plan f;
        bool all_cores = true, all_rss = true, all_gpu = true, all_wall = true, any_cost = false;
        std::vector<std::string> no_cores, no_rss, no_wall;
        double measured_wall = 0, default_wall = 0, longest_cell = 0;
        std::string longest_model;
        bool threads_common = true;
        std::optional<std::uint64_t> threads;
        for (std::size_t i = 0; i < models.size(); ++i) {
            const run_model& rm = models[i];
            const model_cost* c = rm.cost;
            f.models.push_back(rm.name);
            if (c) any_cost = true;
            if (c) f.n_ok += c->n_ok;

            std::uint64_t cores = d.cores;
            if (c && c->max_effective_cores) cores = snap_cores(*c->max_effective_cores);
            else { all_cores = false; if (c) no_cores.push_back(rm.name); }
            f.slot_cores = std::max(f.slot_cores, cores);

            std::uint64_t rss = d.memory_bytes;
            if (c && c->max_process_rss_bytes) rss = scale_bytes_up(*c->max_process_rss_bytes, mem_margin);
            else { all_rss = false; if (c) no_rss.push_back(rm.name); }
            f.slot_rss_bytes = std::max(f.slot_rss_bytes, rss);

            std::optional<std::uint64_t> gpu = d.gpu_memory_bytes;
            if (c && c->max_peak_gpu_bytes) gpu = scale_bytes_up(*c->max_peak_gpu_bytes, mem_margin);
            else all_gpu = false;
            if (gpu && (!f.slot_gpu_bytes || *gpu > *f.slot_gpu_bytes)) f.slot_gpu_bytes = gpu;

            // Measured walls are summed first, then margined, so a fully measured family's
            // work is exactly series × the profile's planning_wall_s_per_series.
            double cell_wall;
            if (c && c->median_wall_s) {
                measured_wall += *c->median_wall_s;
                cell_wall = *c->median_wall_s * time_margin;
            } else {
                all_wall = false;
                if (c) no_wall.push_back(rm.name);
                default_wall += d.wall_s;
                cell_wall = d.wall_s;
            }
            if (cell_wall > longest_cell) {
                longest_cell = cell_wall;
                longest_model = rm.name;
            }

            std::optional<std::uint64_t> t = c ? c->intraop_threads : std::nullopt;
            if (i == 0) threads = t;
            else if (t != threads) threads_common = false;
        }
        f.intraop_threads = threads_common ? threads : std::nullopt;
        f.basis.cores = all_cores ? basis : "assumed";
        f.basis.memory = all_rss ? basis : "assumed";
        f.basis.gpu = all_gpu ? basis : "assumed";
        f.basis.wall = all_wall ? basis : "assumed";

        // Slots per node: the tightest of cores, memory and devices.
        const std::uint64_t by_cores = rq.node.cores / f.slot_cores;
        if (by_cores == 0)
            slot_too_large(fname, f.basis.cores,
                           fmt::format("one slot needs {} cores but a node has {} (--node-cores)", f.slot_cores,
                                       rq.node.cores));
        const std::uint64_t by_memory = rq.node.memory_bytes / f.slot_rss_bytes;
        if (by_memory == 0)
            slot_too_large(fname, f.basis.memory,
                           fmt::format("one slot needs {} of memory but a node has {} (--node-memory)",
                                       bytes_text(f.slot_rss_bytes), bytes_text(rq.node.memory_bytes)));
        f.slots_per_node = std::min(by_cores, by_memory);
        if (f.slot_gpu_bytes) {
            if (rq.node.gpus == 0)
                slot_too_large(fname, f.basis.gpu,
                               fmt::format("one slot needs {} of GPU memory but the node has no GPU (--node-gpus)",
                                           bytes_text(*f.slot_gpu_bytes)));
            const std::uint64_t per_device = *rq.node.gpu_memory_bytes / *f.slot_gpu_bytes;
            if (per_device == 0)
                slot_too_large(fname, f.basis.gpu,
                               fmt::format("one slot needs {} of GPU memory but one device has {} (--node-gpu-memory)",
                                           bytes_text(*f.slot_gpu_bytes), bytes_text(*rq.node.gpu_memory_bytes)));
            f.gpu_fraction = 1.0 / static_cast<double>(per_device);
            f.slots_per_node = std::min(f.slots_per_node, rq.node.gpus * per_device);
        }

        f.cells = rq.series * models.size();
        f.work_s = static_cast<double>(rq.series) * (measured_wall * time_margin + default_wall);
        const double slots = static_cast<double>(f.slots_per_node);
        if (rq.deadline_s) {
            f.nodes = nodes_for_deadline(f.work_s, f.slots_per_node, *rq.deadline_s);
            if (longest_cell > *rq.deadline_s)
                f.warnings.push_back(fmt::format(
                    "one cell of model '{}' takes {} (planned), longer than the deadline {}: no node count meets it; "
                    "raise --deadline",
                    longest_model, human_seconds(longest_cell), human_seconds(*rq.deadline_s)));
        } else {
            f.nodes = *rq.nodes;
        }
        f.makespan_s = f.work_s / (slots * static_cast<double>(f.nodes));
        f.low_confidence = f.n_ok < rq.min_fits;

        // Warnings the operator can act on; a family with no evidence at all is already said
        // to be assumed (plan-wide), so it gets none of the per-axis ones.
        if (any_cost) {
            auto axis_warn = [&](const std::vector<std::string>& ms, std::string_view axis, std::string_view dflt) {
                if (!ms.empty())
                    f.warnings.push_back(fmt::format("no usable {} for model(s) {}: they take {} (assumed)", axis,
                                                     join(ms), dflt));
            };
            axis_warn(no_cores, "core count", "--default-cores");
            axis_warn(no_rss, "memory", "--default-memory");
            axis_warn(no_wall, "wall time", "--default-wall");
            if (f.low_confidence)
                f.warnings.push_back(fmt::format(
                    "low confidence: {} ok fit(s), fewer than --min-fits {}; measure more series before trusting this family",
                    f.n_ok, rq.min_fits));
            if (!f.intraop_threads)
                f.warnings.push_back(
                    "the profile records no common thread cap for these fits: run production as they were measured "
                    "(the renderings set no thread-pool variables)");
        }
        p.families.emplace(fname, std::move(f));
    }

    for (const auto& [name, f] : p.families) {
        p.totals.cells += f.cells;
        p.totals.work_s += f.work_s;
        p.totals.node_seconds += f.work_s / static_cast<double>(f.slots_per_node);
    }
    p.totals.nodes = rq.deadline_s ? std::max<std::uint64_t>(1, ceil_tolerant(p.totals.node_seconds / *rq.deadline_s))
                                   : *rq.nodes;
    p.totals.makespan_s = p.totals.node_seconds / static_cast<double>(p.totals.nodes);
    return p;
}

// ---- the plan record --------------------------------------------------------------------

std::string write_plan(const plan_record& p) {
    json_writer w;
    w.begin_object();
    w.field("kind", "plan");
    w.key("provenance");
    write_provenance(w, p.provenance);
    w.key("node");
    w.begin_object();
    w.field("cores", p.node.cores);
    w.field("memory_bytes", p.node.memory_bytes);
    w.field("gpus", p.node.gpus);
    w.field("gpu_memory_bytes", p.node.gpu_memory_bytes);
    w.end_object();
    w.key("run");
    w.begin_object();
    w.field("series", p.run.series);
    w.array_field("models", p.run.models);
    w.field("deadline_s", p.run.deadline_s);
    w.field("nodes", p.run.nodes);
    w.field("min_fits", p.run.min_fits);
    w.end_object();
    w.key("families");
    w.begin_object();
    for (const auto& [name, f] : p.families) {
        w.key(name);
        w.begin_object();
        w.array_field("models", f.models);
        w.field("slot_cores", f.slot_cores);
        w.field("slot_rss_bytes", f.slot_rss_bytes);
        w.field("slot_gpu_bytes", f.slot_gpu_bytes);
        w.field("gpu_fraction", f.gpu_fraction);
        w.field("intraop_threads", f.intraop_threads);
        w.field("slots_per_node", f.slots_per_node);
        w.field("cells", f.cells);
        w.field("work_s", f.work_s);
        w.field("nodes", f.nodes);
        w.field("makespan_s", f.makespan_s);
        w.key("basis");
        w.begin_object();
        w.field("cores", f.basis.cores);
        w.field("memory", f.basis.memory);
        w.field("gpu", f.basis.gpu);
        w.field("wall", f.basis.wall);
        w.end_object();
        w.field("n_ok", f.n_ok);
        w.field("low_confidence", f.low_confidence);
        w.array_field("warnings", f.warnings);
        w.end_object();
    }
    w.end_object();
    w.key("totals");
    w.begin_object();
    w.field("cells", p.totals.cells);
    w.field("work_s", p.totals.work_s);
    w.field("node_seconds", p.totals.node_seconds);
    w.field("nodes", p.totals.nodes);
    w.field("makespan_s", p.totals.makespan_s);
    w.field("makespan_is_lower_bound", true);
    w.end_object();
    w.array_field("warnings", p.warnings);
    w.end_object();
    return w.take();
}

}  // namespace prof
