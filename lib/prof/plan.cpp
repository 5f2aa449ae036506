// make_plan and the plan record (see plan.hpp; the rules are issue 7 "Arithmetic").
#include "prof/plan.hpp"

#include "prof/errors.hpp"
#include "prof/json_out.hpp"
#include "prof/sample.hpp"
#include "prof/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
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

plan_record make_plan(const compute_profile* profile, const plan_request& rq) {
    if (rq.series == 0 && !rq.panel) throw usage_error("--series must be a positive integer (or give --panel)");
    if (rq.panel && rq.panel->bins.empty()) throw usage_error("--panel: the panel holds no usable series");
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

    const std::uint64_t series =
        rq.series ? rq.series : static_cast<std::uint64_t>(std::llround(rq.panel->series()));
    plan_record p;
    p.node = rq.node;
    p.run.series = series;
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
    if (rq.strict && !profile) throw error(exit_code::data_err, "--strict: no profile on the input: nothing measured to plan from");
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

    if (empty_profile) {
        p.warnings.push_back(profile ? fmt::format("the profile (basis {}) holds no model: planning from the defaults, every axis assumed",
                                                   basis)
                                     : "no profile on stdin: planning from the defaults, every axis assumed");
    }

    // Group the run's models by family: the profile's, else the declared one (a dropped model's
    // in the profile, or --models NAME:FAMILY), else a family of the model's own name.
    struct run_model {
        std::string name, family;
        const model_cost* cost = nullptr;  // null: sized from the defaults
        std::optional<std::uint64_t> oom_floor;
    };
    std::map<std::string, std::vector<run_model>> by_family;
    std::vector<std::string> unmeasured;  // "name (family 'f'; first error: ...)"
    for (const auto& name : names) {
        run_model rm{name, name, nullptr, std::nullopt};
        auto declared = rq.model_families.find(name);
        if (declared != rq.model_families.end()) rm.family = declared->second;
        const model_cost* c = nullptr;
        if (profile) {
            if (auto it = profile->models.find(name); it != profile->models.end()) {
                c = &it->second;
                if (declared != rq.model_families.end() && declared->second != c->family)
                    p.warnings.push_back(fmt::format("--models {}:{}: the profile measured '{}' in family '{}'; planned there",
                                                     name, declared->second, name, c->family));
                rm.family = c->family;
            } else if (auto df = profile->dropped_model_families.find(name);
                       df != profile->dropped_model_families.end()) {
                rm.family = df->second;
            }
        }
        if (c && c->oom_limit_bytes) rm.oom_floor = oom_floor_bytes(*c->oom_limit_bytes);
        if (c && c->n_ok > 0) {
            rm.cost = c;
        } else if (!empty_profile) {
            auto err = profile->first_error_by_model.find(name);
            std::string what = c || std::binary_search(profile->dropped_models.begin(), profile->dropped_models.end(), name)
                                   ? "has no ok fit in the profile"
                                   : "is not in the profile";
            std::string first = err != profile->first_error_by_model.end() ? " (first error: " + err->second + ")" : "";
            if (rq.on_unmeasured == unmeasured_policy::fail) {
                unmeasured.push_back(fmt::format("model '{}' (family '{}') {}{}", name, rm.family, what, first));
                continue;
            }
            if (rq.on_unmeasured == unmeasured_policy::skip) {
                p.run.skipped_models.push_back(name);
                p.warnings.push_back(fmt::format("model '{}' (family '{}') {}{}: left out of the plan (--on-unmeasured skip)",
                                                 name, rm.family, what, first));
                continue;
            }
            p.warnings.push_back(fmt::format(
                "model '{}' (family '{}') {}{}: sized from the defaults (assumed, --on-unmeasured defaults); measure it "
                "before trusting the plan",
                name, rm.family, what, first));
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
    for (const auto& [fam, models] : by_family)
        for (const auto& m : models) p.run.models.push_back(m.name);
    std::sort(p.run.models.begin(), p.run.models.end());
    if (series > UINT64_MAX / p.run.models.size())
        throw usage_error(fmt::format("--series {} x {} models overflows a cell count", series, p.run.models.size()));

    const run_lengths lengths = lengths_for_run(profile, rq, series);
    p.run.length_source = lengths.source;
    if (lengths.lengths) p.run.max_n_obs = lengths.lengths->max_n_obs();
    std::vector<std::string> no_curve, no_lengths;  // models priced by the median, and why

    const double mem_margin = profile ? profile->memory_margin : default_memory_margin;
    const double time_margin = profile ? profile->time_margin : default_time_margin;
    const plan_defaults& d = rq.defaults;

    for (auto& [fname, models] : by_family) {
        family_plan f;
        bool all_cores = true, all_rss = true, all_gpu = true, all_wall = true, any_cost = false;
        std::vector<std::string> no_cores, no_rss, no_wall;
        std::vector<model_in_family> work_models;
        bool threads_common = true;
        std::optional<std::uint64_t> threads;
        for (std::size_t i = 0; i < models.size(); ++i) {
            const run_model& rm = models[i];
            const model_cost* c = rm.cost;
            f.models.push_back(rm.name);
            work_models.push_back({rm.name, c});
            if (c) any_cost = true;
            if (c) f.n_ok += c->n_ok;
            else if (!empty_profile) f.unmeasured_models.push_back(rm.name);

            std::uint64_t cores = d.cores;
            if (c && c->max_effective_cores) cores = snap_cores(*c->max_effective_cores);
            else { all_cores = false; if (c) no_cores.push_back(rm.name); }
            f.slot_cores = std::max(f.slot_cores, cores);

            std::uint64_t rss = d.memory_bytes;
            if (c && c->max_process_rss_bytes) rss = scale_bytes_up(*c->max_process_rss_bytes, mem_margin);
            else { all_rss = false; if (c) no_rss.push_back(rm.name); }
            if (rm.oom_floor) {
                rss = std::max(rss, *rm.oom_floor);
                if (!f.oom_floor_bytes || *rm.oom_floor > *f.oom_floor_bytes) f.oom_floor_bytes = rm.oom_floor;
                f.warnings.push_back(fmt::format(
                    "model '{}': {} fit(s) killed for memory, the largest limit {}: its memory is at least {} "
                    "(the OOM bump: x{} or +{}, whichever is larger)",
                    rm.name, profile->models.at(rm.name).n_oom_killed,
                    bytes_text(*profile->models.at(rm.name).oom_limit_bytes), bytes_text(*rm.oom_floor),
                    format_double(oom_bump_ratio), human_bytes(double(oom_min_bump_bytes))));
            }
            f.slot_rss_bytes = std::max(f.slot_rss_bytes, rss);

            std::optional<std::uint64_t> gpu = d.gpu_memory_bytes;
            if (c && c->max_peak_gpu_bytes) gpu = scale_bytes_up(*c->max_peak_gpu_bytes, mem_margin);
            else all_gpu = false;
            if (gpu && (!f.slot_gpu_bytes || *gpu > *f.slot_gpu_bytes)) f.slot_gpu_bytes = gpu;

            if (!(c && c->median_wall_s)) {
                all_wall = false;
                if (c) no_wall.push_back(rm.name);
            }
            // Memory was measured on the lengths the fits had: a longer series may need more.
            if (c && lengths.lengths && c->max_n_obs && lengths.lengths->max_n_obs() > *c->max_n_obs)
                f.warnings.push_back(fmt::format(
                    "model '{}': the run's longest series has n_obs {}, its longest measured fit {}: its memory "
                    "and time were not measured at that length; measure the longest series",
                    rm.name, lengths.lengths->max_n_obs(), *c->max_n_obs));

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
            slot_too_large(fname, f.oom_floor_bytes ? basis : f.basis.memory,
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

        f.cells = series * models.size();
        family_work fw = predict_family_work(work_models, lengths, series, time_margin, d.wall_s);
        f.work_s = fw.work_s;
        f.longest_cell_s = fw.longest_cell_s;
        f.longest_cell_model = fw.longest_model;
        f.longest_cell_n_obs = fw.longest_n_obs;
        f.wall_estimator = fw.estimator;
        for (const auto& m : work_models)
            if (m.cost && m.cost->median_wall_s && (m.cost->wall_curve.empty() || (!lengths.lengths && !lengths.from_fits)))
                (m.cost->wall_curve.empty() ? no_curve : no_lengths).push_back(m.name);
        f.warnings.insert(f.warnings.end(), fw.warnings.begin(), fw.warnings.end());
        const double slots = static_cast<double>(f.slots_per_node);
        if (rq.deadline_s) {
            f.nodes = nodes_for_deadline(f.work_s, f.slots_per_node, *rq.deadline_s);
            if (f.longest_cell_s > *rq.deadline_s)
                f.warnings.push_back(fmt::format(
                    "one cell of model '{}' takes {} (planned), longer than the deadline {}: no node count meets it; "
                    "raise --deadline",
                    f.longest_cell_model, human_seconds(f.longest_cell_s), human_seconds(*rq.deadline_s)));
        } else {
            f.nodes = *rq.nodes;
        }
        f.makespan_s = std::max(f.work_s / (slots * static_cast<double>(f.nodes)), f.longest_cell_s);
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
    std::sort(no_lengths.begin(), no_lengths.end());
    std::sort(no_curve.begin(), no_curve.end());
    if (!no_lengths.empty())
        p.warnings.push_back(fmt::format(
            "the run's series lengths are unknown (no --panel, and the profile carries no sample record): the work of "
            "{} is series x the median cell, which misses a long tail; give --panel FILE",
            join(no_lengths)));
    if (!no_curve.empty())
        p.warnings.push_back(fmt::format(
            "no cost curve in n_obs for {} (the profile has none: its fits had no n_obs): work is series x the "
            "median cell, which misses a long tail",
            join(no_curve)));

    for (const auto& [name, f] : p.families) {
        p.totals.cells += f.cells;
        p.totals.work_s += f.work_s;
        p.totals.node_seconds += f.work_s / static_cast<double>(f.slots_per_node);
        p.totals.longest_cell_s = std::max(p.totals.longest_cell_s, f.longest_cell_s);
    }
    p.totals.nodes = rq.deadline_s ? std::max<std::uint64_t>(1, ceil_tolerant(p.totals.node_seconds / *rq.deadline_s))
                                   : *rq.nodes;
    p.totals.makespan_s = std::max(p.totals.node_seconds / static_cast<double>(p.totals.nodes), p.totals.longest_cell_s);

    if (rq.strict) {
        std::vector<std::string> assumed;
        for (const auto& [name, f] : p.families) {
            std::vector<std::string> axes;
            if (f.basis.cores == "assumed") axes.push_back("cores");
            if (f.basis.memory == "assumed") axes.push_back("memory");
            if (f.basis.gpu == "assumed" && f.slot_gpu_bytes) axes.push_back("gpu");
            if (f.basis.wall == "assumed") axes.push_back("wall");
            if (!axes.empty()) assumed.push_back(fmt::format("family '{}' ({})", name, join(axes)));
        }
        if (basis == "assumed" && assumed.empty()) assumed.push_back(fmt::format("the profile (basis {})", basis));
        if (!assumed.empty())
            throw error(exit_code::data_err,
                        fmt::format("--strict: assumed axes in {}: measure them, or plan without --strict", join(assumed)));
    }
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
    w.array_field("skipped_models", p.run.skipped_models);
    w.field("length_source", p.run.length_source);
    w.field("max_n_obs", p.run.max_n_obs);
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
        w.field("longest_cell_s", f.longest_cell_s);
        w.field("longest_cell_model", f.longest_cell_model);
        w.field("longest_cell_n_obs", f.longest_cell_n_obs);
        w.field("wall_estimator", f.wall_estimator);
        w.field("oom_floor_bytes", f.oom_floor_bytes);
        w.array_field("unmeasured_models", f.unmeasured_models);
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
    w.field("longest_cell_s", p.totals.longest_cell_s);
    w.field("makespan_s", p.totals.makespan_s);
    w.field("makespan_is_lower_bound", true);
    w.end_object();
    w.array_field("warnings", p.warnings);
    w.end_object();
    return w.take();
}

}  // namespace prof
