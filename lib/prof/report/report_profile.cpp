// prof-report's profile section: per model the fits and the cost and memory curves against
// series length over the panel's length distribution; per family the slot against its models'
// peaks.
#include "prof/core/units.hpp"
#include "prof/profile/curve.hpp"
#include "prof/report/page.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace prof::report {

namespace {

// The model chart's geometry: three panels over one x axis.
constexpr int chart_w = 760, left = 80, right_edge = 744;
constexpr double wall_top = 26, wall_bottom = 196, mem_top = 226, mem_bottom = 356, len_top = 384, len_bottom = 434;
constexpr int chart_h = 470;

struct model_input {
    std::string name;
    const model_cost* cost = nullptr;  // null: fits only
    std::vector<const measured_fit*> fits;
    const sample_view* sample = nullptr;
};

// The lengths the chart spans: the curve's ranges, the fits' lengths and the panel's.
std::optional<std::pair<double, double>> length_domain(const model_input& in) {
    double lo = INFINITY, hi = 0;
    auto take = [&](double v) {
        if (v > 0) { lo = std::min(lo, v); hi = std::max(hi, v); }
    };
    if (in.cost)
        for (const auto& p : in.cost->wall_curve) { take(double(p.n_obs_min)); take(double(p.n_obs_max)); }
    for (const auto* f : in.fits)
        if (f->n_obs) take(double(*f->n_obs));
    if (in.sample) { take(double(in.sample->n_obs_min)); take(double(in.sample->n_obs_max)); }
    if (!(hi > 0)) return std::nullopt;
    return std::make_pair(lo, hi);
}

// The curve sampled every 2 pixels across the x axis, cut where `measured` changes.
template <class At>
void draw_sampled(svg& g, const scale& x, const scale& y, At value_at, double measured_lo, double measured_hi,
                  std::string_view cls) {
    std::vector<std::pair<double, double>> run;
    bool run_measured = true;
    auto flush = [&]() {
        g.path(run, run_measured ? std::string(cls) : std::string(cls) + " ext");
    };
    for (double px = x.px0; px <= x.px1 + 0.01; px += 2) {
        double n = std::max(1.0, std::round(x.value(px)));
        auto v = value_at(static_cast<std::uint64_t>(n));
        if (!v) continue;
        bool m = n >= measured_lo && n <= measured_hi;
        std::pair<double, double> pt{px, std::max(y.at(*v), y.px1 - 6)};
        if (!run.empty() && m != run_measured) {
            run.push_back(pt);
            flush();
            run = {run.back()};
        }
        run_measured = m;
        run.push_back(pt);
    }
    flush();
}

std::string fit_title(const measured_fit& f, std::string_view what) {
    std::string s = fmt::format("{} (n_obs {}): {}", f.ts_id, f.n_obs.value_or(0), what);
    if (!f.ok) s += " — failed: " + f.error.value_or("no error text");
    if (contended(f)) s += fmt::format(" — contended (cpu_pressure {:.2f})", f.cpu_pressure.value_or(0));
    return s;
}

void wall_panel(svg& g, const scale& x, const model_input& in) {
    double top = 0;
    for (const auto* f : in.fits) top = std::max(top, f->wall_s.value_or(0));
    const std::vector<curve_point>* curve = in.cost && !in.cost->wall_curve.empty() ? &in.cost->wall_curve : nullptr;
    if (curve)
        for (double px = x.px0; px <= x.px1; px += 8) top = std::max(top, curve_wall_at(*curve, std::uint64_t(std::max(1.0, std::round(x.value(px))))));
    scale y = zero_based(top, wall_bottom, wall_top);
    std::vector<std::string> labels;
    auto at = ticks(y);
    for (double v : at) labels.push_back(seconds_label(v));
    g.y_axis(y, at, labels, left, right_edge);
    g.text(left, wall_top - 10, "wall seconds per fit", "t");
    if (curve) {
        draw_sampled(g, x, y, [&](std::uint64_t n) { return std::optional<double>(curve_wall_at(*curve, n)); },
                     double(curve->front().n_obs), double(curve->back().n_obs), "wall");
        for (const auto& p : *curve)
            g.circle(x.at(double(p.n_obs)), y.at(p.wall_s), 4.5, "cpt",
                     fmt::format("curve point n_obs {} ({}–{}), {} fits: median wall {}", p.n_obs, p.n_obs_min, p.n_obs_max,
                                 p.n_fits, human_seconds(p.wall_s)));
    }
    for (const auto* f : in.fits) {
        double px = x.at(double(*f->n_obs));
        double w = f->wall_s.value_or(0);
        double py = w > 0 ? y.at(w) : wall_bottom;
        std::string t = fit_title(*f, w > 0 ? "wall " + human_seconds(w) : "no wall reading");
        if (!f->ok) g.cross(px, py, 4.5, "fail", t);
        else g.circle(px, py, 2.8, "fit", t);
        if (contended(*f)) g.circle(px, py, 6.5, "cont", t);
    }
}

void memory_panel(svg& g, const scale& x, const model_input& in) {
    double top = 0;
    for (const auto* f : in.fits) top = std::max(top, double(f->process_rss_bytes.value_or(0)));
    const std::vector<curve_point>* curve = in.cost && !in.cost->wall_curve.empty() ? &in.cost->wall_curve : nullptr;
    bool has_curve = curve && curve_rss_at(*curve, 1).has_value();
    if (has_curve)
        for (double px = x.px0; px <= x.px1; px += 8)
            top = std::max(top, double(curve_rss_at(*curve, std::uint64_t(std::max(1.0, std::round(x.value(px))))).value_or(0)));
    if (in.cost) top = std::max({top, double(in.cost->max_process_rss_bytes.value_or(0)), double(in.cost->max_replay_rss_bytes.value_or(0))});
    scale y{0, byte_axis_top(top), mem_bottom, mem_top, false};
    std::vector<std::string> labels;
    auto at = byte_ticks(y.hi);
    for (double v : at) labels.push_back(bytes_label(v));
    g.y_axis(y, at, labels, left, right_edge);
    g.text(left, mem_top - 10, "process RSS per fit", "t");
    if (in.cost && in.cost->max_replay_rss_bytes) {
        double py = y.at(double(*in.cost->max_replay_rss_bytes));
        g.line(left, py, right_edge, py, "replay ext");
        g.text(right_edge - 4, py - 4, "replayed worker peak " + human_bytes(double(*in.cost->max_replay_rss_bytes)), "r");
    }
    if (has_curve) {
        draw_sampled(g, x, y, [&](std::uint64_t n) {
            auto b = curve_rss_at(*curve, n);
            return b ? std::optional<double>(double(*b)) : std::nullopt;
        }, 0, double(curve->back().n_obs_max), "mem");
        for (const auto& p : *curve)
            g.circle(x.at(double(p.n_obs)), y.at(double(*p.max_process_rss_bytes)), 4.5, "mpt",
                     fmt::format("curve point n_obs {} ({}–{}), {} fits: peak {}", p.n_obs, p.n_obs_min, p.n_obs_max,
                                 p.n_fits, human_bytes(double(*p.max_process_rss_bytes))));
    } else if (in.cost && in.cost->max_process_rss_bytes) {
        double py = y.at(double(*in.cost->max_process_rss_bytes));
        g.line(left, py, right_edge, py, "mem");
    }
    for (const auto* f : in.fits) {
        double px = x.at(double(*f->n_obs));
        bool oom = !f->ok && f->oom_killed.value_or(false) && f->memory_limit_bytes;
        auto b = oom ? f->memory_limit_bytes : f->process_rss_bytes;
        double py = b && *b ? y.at(double(*b)) : mem_bottom;
        std::string t = fit_title(*f, b ? (oom ? "OOM-killed at limit " : "process RSS ") + human_bytes(double(*b)) : "no memory reading");
        if (!f->ok) g.cross(px, py, 4.5, "fail", t);
        else g.circle(px, py, 2.8, "fit", t);
    }
}

void lengths_panel(svg& g, const scale& x, const sample_view& s) {
    std::uint64_t most = 1;
    for (const auto& b : s.lengths) most = std::max(most, b.n_series);
    g.text(left, len_top - 8, fmt::format("the panel's series by length ({} series, sample record)", s.n_series), "t");
    for (const auto& b : s.lengths) {
        double x0 = x.at(double(b.n_obs_min)) - 1.5, x1 = x.at(double(b.n_obs_max)) + 1.5;
        double h = std::max(3.0, (len_bottom - len_top) * double(b.n_series) / double(most));
        if (x1 - x0 < 4) { x0 -= 0.5; x1 += 0.5; }
        std::string t = b.n_obs_min == b.n_obs_max ? fmt::format("{} series of length {}", b.n_series, b.n_obs_min)
                                                   : fmt::format("{} series of length {}–{}", b.n_series, b.n_obs_min, b.n_obs_max);
        g.rect(x0, len_bottom - h, x1 - x0, h, "len", t);
    }
    g.text(left - 4, len_top + 8, fmt::format("{}", most), "yl");
    g.text(left - 4, len_bottom, "0", "yl");
}

std::string model_figure(const model_input& in) {
    auto dom = length_domain(in);
    if (!dom) return "<p class=\"null\">No fit of this model carried n_obs: there is no length axis to draw.</p>\n";
    scale x = length_scale(dom->first, dom->second, left + 8, right_edge - 8);
    svg g(chart_w, in.sample ? chart_h : chart_h - int(len_bottom - mem_bottom), "wall seconds and process RSS of " + in.name + " against series length");
    wall_panel(g, x, in);
    memory_panel(g, x, in);
    if (in.sample) lengths_panel(g, x, *in.sample);
    std::vector<std::string> labels;
    auto at = ticks(x);
    for (double v : at) labels.push_back(count_label(v));
    double axis_y = in.sample ? len_bottom : mem_bottom;
    g.x_axis(x, at, labels, axis_y);
    g.text((left + right_edge) / 2.0, axis_y + 30, x.log ? "series length n_obs (log scale)" : "series length n_obs", "m");
    return g.finish();
}

std::string model_caption(const model_input& in) {
    std::size_t failed = 0, cont = 0;
    for (const auto* f : in.fits) { failed += !f->ok; cont += contended(*f); }
    std::string o = "<figcaption class=\"legend\">";
    if (!in.fits.empty()) o += fmt::format("<span class=\"sw sw-fit\"></span>{} sample fits", in.fits.size());
    if (in.cost && !in.cost->wall_curve.empty())
        o += "<span class=\"sw sw-wall\"></span>cost curve and its points (medians) <span class=\"sw sw-mem\"></span>memory "
             "curve and its points (peaks); dashed: extrapolated, as prof-plan prices it";
    if (failed) o += fmt::format("<span class=\"sw sw-fail\"></span>{} failed", failed);
    if (cont) o += fmt::format("<span class=\"sw sw-cont\"></span>{} contended (cpu_pressure ≥ 0.1)", cont);
    if (in.sample) o += "<span class=\"sw sw-len\"></span>series per length";
    if (in.fits.empty()) o += " — no fit records given: pipe fits.jsonl in too to see each fit";
    return o + "</figcaption>\n";
}

std::string models_table(const compute_profile& p, std::size_t index) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, m] : p.models)
        rows.push_back({fmt::format("<a href=\"#p{}-{}\">{}</a>", index, esc(name), esc(name)), esc(m.family),
                        fmt::format("{} / {}", m.n_ok, m.n_fits), html_seconds(m.median_wall_s), html_seconds(m.median_cpu_s),
                        html_bytes(m.max_process_rss_bytes), html_bytes(m.max_peak_rss_bytes), html_number(m.max_effective_cores),
                        html_count(m.intraop_threads), std::to_string(m.n_oom_killed), html_seconds(m.cold_start_s),
                        esc(m.memory_basis.value_or("—")), html_count(m.max_n_obs)});
    return html_table({{"model"}, {"family", true}, {"fits ok / all"}, {"median wall"}, {"median CPU"}, {"max process RSS"},
                       {"max marginal RSS"}, {"max eff. cores"}, {"threads"}, {"OOM kills"}, {"cold start"},
                       {"memory basis", true}, {"longest n_obs"}},
                      rows);
}

// A family's slot against its models' peaks: a bar per model (its largest process RSS), the
// replayed worker peak, the OOM floor and the sized slot.
std::string family_figure(const family_cost& fam, const compute_profile& p) {
    double top = double(fam.slot_rss_bytes.value_or(0));
    for (const auto& m : fam.models) {
        auto it = p.models.find(m);
        if (it == p.models.end()) continue;
        top = std::max({top, double(it->second.max_process_rss_bytes.value_or(0)), double(it->second.max_replay_rss_bytes.value_or(0))});
    }
    top = std::max(top, double(fam.oom_floor_bytes.value_or(0)));
    if (!(top > 0)) return "<p class=\"null\">No memory reading: nothing to draw.</p>\n";
    constexpr int w = 860, l = 130, r = 700, row = 26;
    int h = 52 + row * int(fam.models.size());
    svg g(w, h, "slot memory of family " + fam.family + " against its models' peaks");
    scale x{0, byte_axis_top(top), double(l), double(r), false};
    double bottom = 20 + row * double(fam.models.size());
    std::vector<std::string> labels;
    auto at = byte_ticks(x.hi);
    for (double v : at) {
        labels.push_back(bytes_label(v));
        g.line(x.at(v), 14, x.at(v), bottom, "grid");
    }
    double y = 20;
    for (const auto& m : fam.models) {
        auto it = p.models.find(m);
        g.text(l - 8, y + 15, m, "yl");
        if (it != p.models.end() && it->second.max_process_rss_bytes) {
            double b = double(*it->second.max_process_rss_bytes);
            g.rect(l, y + 4, x.at(b) - l, row - 8, "peak", fmt::format("{}: largest process RSS {}", m, human_bytes(b)));
        }
        if (it != p.models.end() && it->second.max_replay_rss_bytes) {
            double b = double(*it->second.max_replay_rss_bytes);
            g.line(x.at(b), y + 1, x.at(b), y + row - 1, "replay");
        }
        y += row;
    }
    if (fam.oom_floor_bytes) g.line(x.at(double(*fam.oom_floor_bytes)), 12, x.at(double(*fam.oom_floor_bytes)), bottom + 2, "floor");
    if (fam.slot_rss_bytes) {
        double px = x.at(double(*fam.slot_rss_bytes));
        g.line(px, 10, px, bottom + 2, "slot");
        g.text(px + 4, 10, "slot " + human_bytes(double(*fam.slot_rss_bytes)));
    }
    g.x_axis(x, at, labels, bottom + 2);
    return g.finish();
}

std::string families_table(const compute_profile& p) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, f] : p.families)
        rows.push_back({esc(name), esc(joined(f.models)), fmt::format("{} / {}", f.n_ok, f.n_fits), html_bytes(f.max_process_rss_bytes),
                        html_bytes(f.max_replay_rss_bytes), html_bytes(f.oom_floor_bytes), esc(f.memory_basis.value_or("—")),
                        "<b>" + html_bytes(f.slot_rss_bytes) + "</b>", "<b>" + html_count(f.slot_cores) + "</b>",
                        html_number(f.max_effective_cores), html_bytes(f.slot_gpu_bytes), html_seconds(f.planning_wall_s_per_cell),
                        html_seconds(f.planning_wall_s_per_series)});
    return html_table({{"family"}, {"models", true}, {"fits ok / all"}, {"max process RSS"}, {"replayed peak"}, {"OOM floor"},
                       {"memory basis", true}, {"slot memory"}, {"slot cores"}, {"max eff. cores"}, {"slot GPU"},
                       {"wall per cell"}, {"wall per series"}},
                      rows);
}

std::string profile_summary(const compute_profile& p) {
    std::string o = fmt::format("<p>{} fit records, {} ok, {} failed, over {} series; memory margin {}, time margin {}.</p>\n",
                                p.n_measurements, p.n_ok, p.n_failed, p.n_sample_series, p.memory_margin, p.time_margin);
    if (!p.dropped_models.empty())
        o += "<ul class=\"warnings\"><li class=\"warn\">dropped (no usable measurement): " + esc(joined(p.dropped_models)) + "</li></ul>\n";
    if (!p.first_error_by_model.empty()) {
        o += "<table>\n<tr><th>model</th><th class=\"l\">first error (its failed fit with the smallest ts_id)</th></tr>\n";
        for (const auto& [m, e] : p.first_error_by_model)
            o += fmt::format("<tr><td>{}</td><td class=\"l\"><code>{}</code></td></tr>\n", esc(m), esc(e));
        o += "</table>\n";
    }
    return o;
}

// The sample fits of `model` among the input's fits.
std::vector<const measured_fit*> sample_fits(const report_inputs& in, const std::string& model) {
    std::vector<const measured_fit*> out;
    for (const auto& f : in.fits)
        if (f.record.model_type == model && f.record.phase == fit_phase_sample && f.record.n_obs && *f.record.n_obs) out.push_back(&f.record);
    return out;
}

// The profile's length distribution: its own copy of the sample record, else the input's.
std::optional<sample_view> sample_of(const compute_profile& p, const report_inputs& in) {
    if (p.sample) return read_sample_view(*p.sample, "the profile's sample");
    return in.sample;
}

}  // namespace

std::string profile_section(const placed<compute_profile>& pp, std::size_t index, const report_inputs& in) {
    const compute_profile& p = pp.record;
    std::string o = section_head("profile", "Cost profile", index, esc(pp.where) + ", " + basis_badge(p.provenance.basis));
    o += profile_summary(p);
    o += "<h3>Models (raw, no margin)</h3>\n" + models_table(p, index);
    auto sample = sample_of(p, in);
    for (const auto& [name, m] : p.models) {
        model_input mi{name, &m, sample_fits(in, name), sample ? &*sample : nullptr};
        o += fmt::format("<figure id=\"p{}-{}\">\n<h3>{} <small>({})</small></h3>\n", index, esc(name), esc(name), esc(m.family));
        o += model_figure(mi) + model_caption(mi) + "</figure>\n";
    }
    o += "<h3>Families: the slot against its models' peaks</h3>\n" + families_table(p);
    for (const auto& [name, f] : p.families) {
        o += fmt::format("<figure>\n<h3>{}</h3>\n", esc(name)) + family_figure(f, p);
        o += "<figcaption class=\"legend\"><span class=\"sw sw-mem\"></span>largest process RSS of each model "
             "<span class=\"sw\" style=\"background:#111827\"></span>replayed worker peak "
             "<span class=\"sw sw-slot\"></span>slot (the larger × memory margin, at least the OOM floor) "
             "<span class=\"sw sw-fail\"></span>OOM floor</figcaption>\n</figure>\n";
    }
    return o + "</section>\n";
}

std::string fits_only_section(const report_inputs& in) {
    std::map<std::string, std::string> models;  // model → family
    for (const auto& f : in.fits) models.emplace(f.record.model_type, f.record.family);
    std::string o = "<section id=\"fits\">\n<h2>Fits</h2>\n<p>Fit records without a profile: the points as measured, "
                    "no curve (prof-aggregate folds them into one).</p>\n";
    const sample_view* sample = in.sample ? &*in.sample : nullptr;
    for (const auto& [name, family] : models) {
        model_input mi{name, nullptr, sample_fits(in, name), sample};
        o += fmt::format("<figure>\n<h3>{} <small>({})</small></h3>\n", esc(name), esc(family));
        o += model_figure(mi) + model_caption(mi) + "</figure>\n";
    }
    return o + "</section>\n";
}

}  // namespace prof::report
