// prof-diff's arithmetic: two profiles compared row by row, the gate, and both renderings.
#include "prof/profile/diff.hpp"

#include "prof/profile/bootstrap.hpp"

#include "prof/profile/curve.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_out.hpp"
#include "prof/profile/sample.hpp"
#include "prof/records/schema.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace prof {
namespace {

enum class gate_kind { none, slower, bigger };

// An axis and the gate that can fail it. It is shown in the unit its name implies, as a record
// field's is (unit_of_name: bytes, seconds, else a plain number).
struct axis_spec {
    const char* name;
    gate_kind gate = gate_kind::none;
    // A GPU axis: 0 is a measurement (NVML saw no device memory in use), as prof-aggregate and
    // prof-plan read it, not an absence; only null is "not measured".
    bool zero_measured = false;
};

std::optional<double> as_double(const std::optional<std::uint64_t>& u) {
    if (!u) return std::nullopt;
    return static_cast<double>(*u);
}

// Equal within the relative precision of a shortest round-trip double: two profiles written
// from the same evidence compare "same", not "up" by one unit in the last place.
// A ratio that overflowed (1e308 over 0.1) is infinite and equal to nothing finite: the
// relative test alone would call it equal to every number (inf <= 1e-12 x inf).
bool nearly_equal(double a, double b) {
    if (!std::isfinite(a) || !std::isfinite(b)) return a == b;
    return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

axis_change compare_axis(const axis_spec& spec, std::optional<double> o, std::optional<double> n) {
    axis_change a;
    a.axis = spec.name;
    auto usable = [&](const std::optional<double>& v) {
        return v && std::isfinite(*v) && (*v > 0 || (spec.zero_measured && *v == 0));
    };
    if (usable(o)) a.old_value = o;
    if (usable(n)) a.new_value = n;
    if (a.old_value && a.new_value && *a.old_value == 0) {  // no ratio from a measured none
        a.change = *a.new_value == 0 ? "same" : "up";
        if (*a.new_value == 0) a.ratio = 1.0;
    } else if (a.old_value && a.new_value) {
        a.ratio = *a.new_value / *a.old_value;
        if (nearly_equal(*a.old_value, *a.new_value)) {
            a.change = "same";
            a.ratio = 1.0;
        } else {
            a.change = *a.new_value > *a.old_value ? "up" : "down";
        }
    } else if (a.old_value) {
        a.change = "lost";
    } else if (a.new_value) {
        a.change = "gained";
    } else {
        a.change = "none";
    }
    return a;
}

const axis_spec model_axes[] = {
    {"median_wall_s", gate_kind::slower},
    {"curve_wall_s_per_series", gate_kind::slower},
    {"median_cpu_s"},
    {"max_process_rss_bytes", gate_kind::bigger},
    {"max_peak_rss_bytes"},
    {"max_peak_gpu_bytes", gate_kind::bigger, true},
    {"slot_cores", gate_kind::bigger},       // snapped from max_effective_cores
    {"oom_floor_bytes", gate_kind::bigger},  // the memory its OOM kills prove it needs
    {"n_oom_killed"},
};

// A family's sized slot follows from its models', which are gated: none of its axes is.
const axis_spec family_axes[] = {{"slot_cores"}, {"slot_rss_bytes"}, {"slot_gpu_bytes", gate_kind::none, true}, {"planning_wall_s_per_cell"},
                                 {"planning_wall_s_per_series"}};

// The lengths both sides are priced over: a sample record's panel lengths (NEW's, else OLD's),
// else the lengths a side measured (its models' curve points, weighted by their fits).
std::optional<length_distribution> common_lengths(const compute_profile& o, const compute_profile& n,
                                                  std::string& source) {
    for (const auto* p : {&n, &o}) {
        if (!p->sample) continue;
        try {
            auto d = sample_lengths(*p->sample);
            if (!d.bins.empty()) {
                source = p == &n ? "new sample" : "old sample";
                return d;
            }
        } catch (const field_error&) {
        }
    }
    for (const auto* p : {&n, &o}) {
        std::map<std::uint64_t, double> fits_at;
        for (const auto& [name, m] : p->models)
            for (const auto& pt : m.wall_curve) fits_at[pt.n_obs] += static_cast<double>(pt.n_fits);
        if (fits_at.empty()) continue;
        length_distribution d;
        for (const auto& [n_obs, count] : fits_at) d.bins.push_back({n_obs, n_obs, n_obs, count});
        source = p == &n ? "new measured lengths" : "old measured lengths";
        return d;
    }
    return std::nullopt;
}

std::vector<std::optional<double>> model_values(const model_cost* m, const std::optional<length_distribution>& lengths) {
    if (!m) return std::vector<std::optional<double>>(std::size(model_axes));
    std::optional<double> cores, curve;
    if (m->max_effective_cores) cores = static_cast<double>(snap_cores(*m->max_effective_cores));
    if (lengths && !m->wall_curve.empty() && lengths->series() > 0)
        curve = predict_model_work(m->wall_curve, *lengths).total_wall_s / lengths->series();
    std::optional<double> oom_floor;
    if (m->oom_limit_bytes) oom_floor = static_cast<double>(oom_floor_bytes(*m->oom_limit_bytes));
    return {m->median_wall_s, curve, m->median_cpu_s, as_double(m->max_process_rss_bytes), as_double(m->max_peak_rss_bytes),
            as_double(m->max_peak_gpu_bytes), cores, oom_floor,
            m->n_oom_killed ? std::optional<double>(static_cast<double>(m->n_oom_killed)) : std::nullopt};
}

std::vector<std::optional<double>> family_values(const family_cost* f) {
    if (!f) return std::vector<std::optional<double>>(std::size(family_axes));
    return {as_double(f->slot_cores), as_double(f->slot_rss_bytes), as_double(f->slot_gpu_bytes),
            f->planning_wall_s_per_cell, f->planning_wall_s_per_series};
}

std::string shown(const axis_spec& spec, const std::optional<double>& v) {
    if (!v) return "-";
    const std::string_view unit = unit_of_name(spec.name);
    if (unit == "bytes") return human_bytes(*v);
    if (unit == "s") return human_seconds(*v);
    return format_double(*v);
}

const axis_spec& spec_of(const std::string& axis) {
    for (const auto& s : model_axes)
        if (axis == s.name) return s;
    for (const auto& s : family_axes)
        if (axis == s.name) return s;
    throw std::logic_error("unknown diff axis " + axis);
}

template <class Map, class Values, std::size_t N>
std::vector<row_diff> diff_rows(const Map& old_rows, const Map& new_rows, const axis_spec (&axes)[N], Values values,
                                bool models) {
    std::set<std::string> names;
    for (const auto& [k, v] : old_rows) names.insert(k);
    for (const auto& [k, v] : new_rows) names.insert(k);
    std::vector<row_diff> out;
    for (const auto& name : names) {
        auto oi = old_rows.find(name);
        auto ni = new_rows.find(name);
        const auto* o = oi == old_rows.end() ? nullptr : &oi->second;
        const auto* n = ni == new_rows.end() ? nullptr : &ni->second;
        row_diff r;
        r.name = name;
        r.presence = o && n ? "both" : n ? "added" : "removed";
        if (models) r.family = n ? n->family : o->family;
        r.old_n_ok = o ? o->n_ok : 0;
        r.new_n_ok = n ? n->n_ok : 0;
        auto ov = values(o), nv = values(n);
        for (std::size_t i = 0; i < N; ++i) r.axes.push_back(compare_axis(axes[i], ov[i], nv[i]));
        out.push_back(std::move(r));
    }
    return out;
}

std::string percent(double ratio) {
    if (!std::isfinite(ratio)) return "more than x1e308";  // the ratio overflowed a double
    return fmt::format("{:+.1f} %", (ratio - 1.0) * 100.0);
}

// A model's time axis over gate.resamples resamples of its readings (median_wall_s: each
// resample's median; curve_wall_s_per_series: its curve priced over the common lengths, per
// series), the middle gate.confidence of them. Null without readings, resamples or lengths.
std::optional<std::pair<double, double>> time_interval(const model_cost* m, const std::string& axis,
                                                       const std::optional<length_distribution>& lengths,
                                                       const diff_gate& gate) {
    if (!m || m->readings.empty() || gate.resamples == 0) return std::nullopt;
    const bool curve = axis == "curve_wall_s_per_series";
    if (curve && (!lengths || lengths->series() <= 0)) return std::nullopt;
    std::vector<double> values;
    for (const auto& r : bootstrap_model(m->readings, gate.resamples, gate.seed, m->model_type)) {
        if (!curve) values.push_back(r.median_wall_s);
        else if (!r.curve.empty()) values.push_back(predict_model_work(r.curve, *lengths).total_wall_s / lengths->series());
    }
    if (values.empty()) return std::nullopt;
    return std::pair(quantile(values, (1 - gate.confidence) / 2), quantile(values, (1 + gate.confidence) / 2));
}

// Each model row's time axes get each side's interval.
void fill_intervals(profile_diff& d, const compute_profile& old_profile, const compute_profile& new_profile,
                    const std::optional<length_distribution>& lengths) {
    auto model_in = [](const compute_profile& p, const std::string& name) {
        auto it = p.models.find(name);
        return it == p.models.end() ? nullptr : &it->second;
    };
    for (auto& r : d.models)
        for (auto& a : r.axes) {
            if (a.axis != "median_wall_s" && a.axis != "curve_wall_s_per_series") continue;
            if (auto i = time_interval(model_in(old_profile, r.name), a.axis, lengths, d.gate)) {
                a.old_low = i->first;
                a.old_high = i->second;
            }
            if (auto i = time_interval(model_in(new_profile, r.name), a.axis, lengths, d.gate)) {
                a.new_low = i->first;
                a.new_high = i->second;
            }
        }
}

// "P10 to P90" for an 0.8 confidence (as prof-plan names its intervals).
std::string interval_name(double confidence) {
    return fmt::format("P{} to P{}", std::lround(50 * (1 - confidence)), std::lround(50 * (1 + confidence)));
}

}  // namespace

compute_profile read_single_profile(const std::string& path) {
    auto profile = read_one_profile(
        path, "each side of a diff is one profile (pick one with jq, or name run:ID with --registry)");
    if (!profile)
        throw error(exit_code::data_err,
                    fmt::format("{}: no profile record (each side of a diff is one profile)", path == "-" ? "<stdin>" : path));
    return std::move(*profile);
}

double parse_gate_ratio(const std::string& text, const std::string& flag) {
    std::string_view s = text;
    bool pct = !s.empty() && s.back() == '%';
    if (pct) s.remove_suffix(1);
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
        throw usage_error(fmt::format("{}: expected a ratio >= 0 such as 0.2 or 20%, found \"{}\"", flag, text));
    // "20" is far more often 20 % than a 21-fold slowdown: above 1 the percent sign is required.
    if (!pct && v > 1)
        throw usage_error(fmt::format("{}: \"{}\" would allow {} times the old value; write {}% for that (or {} for "
                                      "{} %)",
                                      flag, text, format_double(1 + v), format_double(v * 100), format_double(v / 100),
                                      text));
    return pct ? v / 100.0 : v;
}

double parse_confidence(const std::string& text, const std::string& flag) {
    const bool pct = !text.empty() && text.back() == '%';
    double v = parse_double_flag(pct ? std::string_view(text).substr(0, text.size() - 1) : std::string_view(text), flag);
    if (pct) v /= 100;
    if (!(v > 0 && v < 1)) throw usage_error(fmt::format("{}: '{}' is not a share in (0, 1) (80% or 0.8)", flag, text));
    return v;
}

namespace {

// Readings taken by methods that cover different things (a cgroup's whole tree against the
// fitting process alone) differ by the method, not by the model: said per model.
void warn_method_changes(profile_diff& d, const compute_profile& old_profile, const compute_profile& new_profile) {
    for (const auto& r : d.models) {
        const auto oi = old_profile.models.find(r.name), ni = new_profile.models.find(r.name);
        const model_cost* o = oi == old_profile.models.end() ? nullptr : &oi->second;
        const model_cost* n = ni == new_profile.models.end() ? nullptr : &ni->second;
        if (!o || !n || (!o->rss_method && !n->rss_method)) continue;
        const std::string oc = reading_coverage(o->rss_method), nc = reading_coverage(n->rss_method);
        if (oc == nc && o->rss_method != std::optional<std::string>("mixed")) continue;
        auto by = [](const std::optional<std::string>& m, const std::string& c) {
            return m ? fmt::format("by {} ({})", *m, c) : std::string("by a method not recorded");
        };
        d.warnings.push_back(fmt::format(
            "{}: memory and CPU were read differently: {} {}, {} {}: its changes in max_process_rss_bytes, "
            "median_cpu_s and max_effective_cores may be the method's, not the model's; compare readings taken "
            "the same way",
            r.name, d.old_label, by(o->rss_method, oc), d.new_label, by(n->rss_method, nc)));
    }
}

}  // namespace

namespace {

// The gate of one model axis: a regression sentence or a warning added to `d`.
void gate_axis(profile_diff& d, const std::string& model, axis_change& a) {
    const axis_spec& spec = spec_of(a.axis);
    const std::optional<double> limit = spec.gate == gate_kind::slower ? d.gate.max_slower
                                        : spec.gate == gate_kind::bigger ? d.gate.max_bigger
                                                                         : std::nullopt;
    if (!limit) return;
    const char* what = spec.gate == gate_kind::slower ? "slower" : "bigger";
    auto fail = [&](std::string sentence) {
        a.regression = true;
        d.regressions.push_back(std::move(sentence));
    };
    if (a.change == "lost") {
        fail(fmt::format("{}: {} was {} in {} and is not measured in {}", model, a.axis, shown(spec, a.old_value),
                         d.old_label, d.new_label));
    } else if (a.change == "gained" && a.axis == "oom_floor_bytes") {
        // Killed for memory now, never before: the old slot is too small.
        fail(fmt::format("{}: killed for memory in {} (its kills need at least {}), never in {}", model, d.new_label,
                         shown(spec, a.new_value), d.old_label));
    } else if (a.change == "up" && !a.ratio) {
        fail(fmt::format("{}: {} {} -> {} (from none measured), {} than any ratio allows", model, a.axis,
                         shown(spec, a.old_value), shown(spec, a.new_value), what));
    } else if (a.ratio && *a.ratio > 1.0 + *limit && !nearly_equal(*a.ratio, 1.0 + *limit)) {
        const std::string past = fmt::format("{}: {} {} -> {} ({})", model, a.axis, shown(spec, a.old_value),
                                             shown(spec, a.new_value), percent(*a.ratio));
        if (spec.gate != gate_kind::slower) {
            fail(fmt::format("{}, {} than the {} allowed", past, what, percent(1.0 + *limit)));
            return;
        }
        const bool intervals = a.old_high && a.new_low;
        const std::string spread =
            intervals ? fmt::format("{} of their resampled fits: old {} to {}, new {} to {}", interval_name(d.gate.confidence),
                                    shown(spec, a.old_low), shown(spec, a.old_high), shown(spec, a.new_low),
                                    shown(spec, a.new_high))
                      : std::string();
        if (intervals && *a.new_low <= *a.old_high) {
            d.warnings.push_back(fmt::format("{} is past the {} allowed but within the samples' noise ({}, "
                                             "overlapping): not counted",
                                             past, percent(1.0 + *limit), spread));
            return;
        }
        fail(fmt::format("{}, {} than the {} allowed{}", past, what, percent(1.0 + *limit),
                         intervals ? " and outside the samples' noise (" + spread + ")" : std::string()));
        if (!intervals) {
            const char* side = !a.old_high && !a.new_low ? "either side" : !a.old_high ? "the old side" : "the new side";
            std::string note = fmt::format("{}: its time axes were gated on their ratio alone: no interval on {} (no "
                                           "readings of its fits to resample: an older profile, a harvest, or "
                                           "--resamples 0)",
                                           model, side);
            if (std::find(d.warnings.begin(), d.warnings.end(), note) == d.warnings.end()) d.warnings.push_back(note);
        }
    }
}

}  // namespace

profile_diff diff_profiles(const compute_profile& old_profile, const compute_profile& new_profile,
                           const diff_gate& gate, std::string old_label, std::string new_label) {
    for (const auto& r : {gate.max_slower, gate.max_bigger})
        if (r && (!std::isfinite(*r) || *r < 0)) throw usage_error("a gate ratio must be finite and >= 0");
    if (!(gate.confidence > 0 && gate.confidence < 1)) throw usage_error("--confidence must be a share in (0, 1) (80% or 0.8)");
    if (gate.resamples > max_diff_resamples)
        throw usage_error(fmt::format("--resamples must be 0 (no intervals) to {}, not {}", max_diff_resamples, gate.resamples));
    profile_diff d;
    d.old_label = std::move(old_label);
    d.new_label = std::move(new_label);
    d.old_provenance = old_profile.provenance;
    d.new_provenance = new_profile.provenance;
    d.gate = gate;
    auto lengths = common_lengths(old_profile, new_profile, d.lengths_source);
    d.models = diff_rows(old_profile.models, new_profile.models, model_axes,
                         [&](const model_cost* m) { return model_values(m, lengths); }, true);
    d.families = diff_rows(old_profile.families, new_profile.families, family_axes,
                           [](const family_cost* f) { return family_values(f); }, false);
    fill_intervals(d, old_profile, new_profile, lengths);
    // A model dropped (no usable fit) in NEW but measured in OLD shows as "removed" with every
    // axis lost: the gate below counts it.
    for (auto& r : d.models)
        for (auto& a : r.axes) gate_axis(d, r.name, a);
    warn_method_changes(d, old_profile, new_profile);
    if (!nearly_equal(old_profile.memory_margin, new_profile.memory_margin) ||
        !nearly_equal(old_profile.time_margin, new_profile.time_margin))
        d.warnings.push_back(fmt::format(
            "the margins differ (memory x{} -> x{}, time x{} -> x{}): family slot values move with them; the "
            "gate reads the raw model values only",
            format_double(old_profile.memory_margin), format_double(new_profile.memory_margin),
            format_double(old_profile.time_margin), format_double(new_profile.time_margin)));
    return d;
}

std::string format_diff_table(const profile_diff& d) {
    auto side = [](const std::string& label, const profile_provenance& pv) {
        return fmt::format("{} (basis {}, source {}{})", label, pv.basis, pv.source,
                           pv.measured_at ? ", measured " + *pv.measured_at : std::string());
    };
    std::string out = "old: " + side(d.old_label, d.old_provenance) + "\n";
    out += "new: " + side(d.new_label, d.new_provenance) + "\n";
    if (!d.lengths_source.empty()) out += "curve_wall_s_per_series priced over the " + d.lengths_source + "\n";
    bool any_interval = false;
    for (const auto& r : d.models)
        for (const auto& a : r.axes)
            any_interval = any_interval || (a.change != "same" && a.change != "none" && (a.old_high || a.new_high));
    if (any_interval)
        out += fmt::format("time intervals: {} of {} resamples of each side's fits (seed {})\n",
                           interval_name(d.gate.confidence), d.gate.resamples, d.gate.seed);
    out += fmt::format("{:<26} {:<26} {:>11} {:>11} {:>9}  {}\n", "MODEL / FAMILY", "axis", "old", "new", "change", "");
    auto rows = [&](const std::vector<row_diff>& rs, bool models) {
        for (const auto& r : rs) {
            std::string name = models ? fmt::format("{} ({})", r.name, r.family) : "family " + r.name;
            if (r.presence != "both") out += fmt::format("{:<26} {}\n", name, r.presence == "added" ? "only in new" : "only in old");
            bool any = false;
            for (const auto& a : r.axes) {
                if (a.change == "same" || a.change == "none") continue;
                any = true;
                const axis_spec& spec = spec_of(a.axis);
                std::string change = a.ratio ? percent(*a.ratio) : a.change;
                out += fmt::format("{:<26} {:<26} {:>11} {:>11} {:>9}  {}\n", name, a.axis, shown(spec, a.old_value),
                                   shown(spec, a.new_value), change, a.regression ? "REGRESSION" : "");
                auto span = [&](const std::optional<double>& lo, const std::optional<double>& hi) {
                    return hi ? shown(spec, lo) + " to " + shown(spec, hi) : std::string("none");
                };
                if (a.old_high || a.new_high)
                    out += fmt::format("{:<26}   {}: old {}, new {}\n", name, interval_name(d.gate.confidence),
                                       span(a.old_low, a.old_high), span(a.new_low, a.new_high));
            }
            if (!any && r.presence == "both") out += fmt::format("{:<26} (no change)\n", name);
        }
    };
    rows(d.models, true);
    rows(d.families, false);
    // Rows end where their last column does (the verdict column is empty on most).
    for (std::size_t pos; (pos = out.find(" \n")) != std::string::npos;) {
        std::size_t b = pos;
        while (b > 0 && out[b - 1] == ' ') --b;
        out.erase(b, pos + 1 - b);
    }
    for (const auto& w : d.warnings) out += "warning: " + w + "\n";
    if (!d.gate.max_slower && !d.gate.max_bigger) {
        out += "gate: none (--max-slower / --max-bigger set one)\n";
    } else if (d.passed()) {
        out += "gate: passed\n";
    } else {
        out += fmt::format("gate: FAILED, {} regression(s)\n", d.regressions.size());
        for (const auto& r : d.regressions) out += "  " + r + "\n";
    }
    return out;
}

}  // namespace prof
