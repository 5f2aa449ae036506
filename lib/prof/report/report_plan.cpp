// prof-report's plan section: the schedule against the deadline, the slots one node holds, and
// each family's size classes against its models' measured peaks.
#include "prof/core/units.hpp"
#include "prof/report/page.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prof::report {

namespace {

constexpr int sched_w = 860, sched_l = 150, sched_r = 740, lane = 34;

// The share of the deadline held back as headroom: 1 - planned_deadline_s / deadline_s (the
// plan writes both; headroom itself is written from the request and not read back).
double headroom_share(const plan_run& r) {
    return r.deadline_s && r.planned_deadline_s && *r.deadline_s > 0 ? 1 - *r.planned_deadline_s / *r.deadline_s : 0;
}

// The plan's interval of a makespan in words: "P10–P90 over 200 resampled runs: 1.2 s to 3.4 s
// (P50 2.0 s); nodes held to 3.4 s", or "" where the plan resampled nothing (--resamples 0, or no
// model with readings: every interval is its point).
std::string interval_words(const plan_run& run, const plan_interval& i, double bound_s) {
    if (run.resamples == 0 || (i.low_s == i.high_s && i.low_s == i.p50_s)) return "";
    const double lo = std::round((1 - run.confidence) / 2 * 100), hi = std::round((1 + run.confidence) / 2 * 100);
    return fmt::format("; P{:.0f}–P{:.0f} over {} resampled runs: {} to {} (P50 {}), held to {}", lo, hi, run.resamples,
                       html_seconds(i.low_s), html_seconds(i.high_s), html_seconds(i.p50_s), html_seconds(bound_s));
}

// A makespan interval drawn over a schedule bar: a whisker from low_s to high_s with end caps,
// the P50 a tick, each shifted by `start`.
void interval_whisker(svg& g, const scale& x, double start, double y, const plan_interval& i) {
    if (i.low_s == i.high_s) return;
    const double mid = y + lane / 2.0 - 3;
    g.line(x.at(start + i.low_s), mid, x.at(start + i.high_s), mid, "ivl");
    g.line(x.at(start + i.low_s), mid - 6, x.at(start + i.low_s), mid + 6, "ivl");
    g.line(x.at(start + i.high_s), mid - 6, x.at(start + i.high_s), mid + 6, "ivl");
    g.line(x.at(start + i.p50_s), mid - 4, x.at(start + i.p50_s), mid + 4, "ivl");
}

// The families one after another on the plan's nodes (prof-records(5), PLAN: totals), each bar
// dark up to its makespan_lower_s and light up to its makespan_s, cut at its size classes.
std::string schedule_figure(const plan_record& p) {
    // Wide enough for every bar, every interval (each family's from its own start) and the deadline.
    double end = std::max({p.totals.makespan_s, p.totals.makespan_interval.high_s, p.run.deadline_s.value_or(0), 1e-9});
    double from = 0;
    for (const auto& [name, f] : p.families) {
        end = std::max(end, from + std::max(f.makespan_s, f.makespan_interval.high_s));
        from += f.makespan_s;
    }
    scale x = zero_based(end, sched_l, sched_r);
    int rows = int(p.families.size()) + 1;
    int h = 40 + lane * rows + 34;
    svg g(sched_w, h, "schedule: the families one after another against the deadline");
    double bottom = 26 + lane * rows;
    std::vector<std::string> labels;
    auto at = ticks(x);
    for (double v : at) {
        labels.push_back(seconds_label(v));
        g.line(x.at(v), 20, x.at(v), bottom, "grid");
    }
    double start = 0, y = 26;
    for (const auto& [name, f] : p.families) {
        g.text(sched_l - 8, y + 14, name, "yl");
        g.text(sched_l - 8, y + 26, fmt::format("{} node(s) × {} slots", f.nodes, f.slots_per_node), "yl");
        double x0 = x.at(start);
        g.rect(x0, y + 4, x.at(start + f.makespan_s) - x0, lane - 10, "schedup",
               fmt::format("{}: at most {} ({} waves on {} slots)", name, human_seconds(f.makespan_s), f.waves, f.slots));
        g.rect(x0, y + 4, x.at(start + f.makespan_lower_s) - x0, lane - 10, "sched",
               fmt::format("{}: at least {} (work / slots, or the longest cell)", name, human_seconds(f.makespan_lower_s)));
        double c = start;
        for (std::size_t i = 0; i + 1 < f.size_classes.size(); ++i) {
            c += f.size_classes[i].makespan_s;
            g.line(x.at(c), y + 4, x.at(c), y + lane - 6, "sep");
        }
        interval_whisker(g, x, start, y, f.makespan_interval);
        g.text(x.at(start + std::max(f.makespan_s, f.makespan_interval.high_s)) + 4, y + 19, "≤ " + human_seconds(f.makespan_s));
        start += f.makespan_s;
        y += lane;
    }
    g.text(sched_l - 8, y + 18, "run", "yl");
    g.rect(x.at(0), y + 4, x.at(p.totals.makespan_s) - x.at(0), lane - 10, "schedup",
           "the run: at most " + human_seconds(p.totals.makespan_s));
    g.rect(x.at(0), y + 4, x.at(p.totals.makespan_lower_s) - x.at(0), lane - 10, "sched",
           "the run: at least " + human_seconds(p.totals.makespan_lower_s));
    interval_whisker(g, x, 0, y, p.totals.makespan_interval);
    g.text(x.at(std::max(p.totals.makespan_s, p.totals.makespan_interval.high_s)) + 4, y + 19,
           "≤ " + human_seconds(p.totals.makespan_s));
    if (p.run.planned_deadline_s) {
        g.line(x.at(*p.run.planned_deadline_s), 14, x.at(*p.run.planned_deadline_s), bottom, "pdl");
        g.text(x.at(*p.run.planned_deadline_s) - 3, 12, "planned " + seconds_label(*p.run.planned_deadline_s), "r");
    }
    if (p.run.deadline_s) {
        g.line(x.at(*p.run.deadline_s), 14, x.at(*p.run.deadline_s), bottom, "dl");
        g.text(x.at(*p.run.deadline_s) + 3, 12, "deadline " + seconds_label(*p.run.deadline_s));
    }
    g.x_axis(x, at, labels, bottom);
    g.text((sched_l + sched_r) / 2.0, bottom + 30, "seconds from the start of the run", "m");
    return g.finish();
}

// One node's cores and memory, filled by the layout's units (each split into its slots).
void node_rows(svg& g, const plan_record& p, const family_layout& l, double y, const std::string& label) {
    constexpr double x0 = 150, width = 560;
    g.text(x0 - 8, y + 13, label, "yl");
    g.rect(x0, y, width, 18, "idle", fmt::format("node: {} cores", p.node.cores));
    g.rect(x0, y + 22, width, 18, "idle", "node: " + human_bytes(double(p.node.memory_bytes)));
    double cw = width / double(std::max<std::uint64_t>(p.node.cores, 1));
    double mw = width / double(std::max<std::uint64_t>(p.node.memory_bytes, 1));
    // Memory: the units side by side (one block when each would be too narrow to see).
    double unit_w = double(l.unit_memory_bytes) * mw;
    if (unit_w >= 6) {
        for (std::uint64_t u = 0; u < l.units_per_node; ++u)
            g.rect(x0 + double(u) * unit_w, y + 22, unit_w, 18, "munit",
                   fmt::format("{} {}: {}", l.unit, u + 1, human_bytes(double(l.unit_memory_bytes))));
    } else {
        g.rect(x0, y + 22, std::max(unit_w * double(l.units_per_node), 2.0), 18, "munit",
               fmt::format("{} {}s × {}", l.units_per_node, l.unit, human_bytes(double(l.unit_memory_bytes))));
    }
    for (std::uint64_t u = 0; u < l.units_per_node; ++u) {
        double cx = x0 + double(u * l.unit_cores) * cw, w = double(l.unit_cores) * cw;
        g.rect(cx, y, w, 18, "unit", fmt::format("{} {}: {} cores, {} slot(s)", l.unit, u + 1, l.unit_cores, l.slots_per_unit));
        for (std::uint64_t s = 1; s < l.slots_per_unit; ++s) g.line(cx + w * double(s) / double(l.slots_per_unit), y + 2, cx + w * double(s) / double(l.slots_per_unit), y + 16, "slotdiv");
    }
    g.text(x0 + width + 6, y + 13, fmt::format("{} of {} cores", l.units_per_node * l.unit_cores, p.node.cores));
    g.text(x0 + width + 6, y + 35, fmt::format("{} of {}", human_bytes(double(l.units_per_node * l.unit_memory_bytes)),
                                               human_bytes(double(p.node.memory_bytes))));
}

std::string node_figure(const plan_record& p, const std::string& name, const family_plan& f) {
    bool classes = f.size_classes.size() > 1;
    int rows = 1 + (classes ? int(f.size_classes.size()) : 0);
    svg g(sched_w, 10 + 52 * rows, "slots per node of family " + name);
    node_rows(g, p, f.layout, 6, "one size");
    for (std::size_t i = 0; classes && i < f.size_classes.size(); ++i)
        node_rows(g, p, f.size_classes[i].layout, 6 + 52 * double(i + 1), fmt::format("class {}", i + 1));
    return g.finish();
}

// The family's size classes (their slot memory over their length ranges) over the measured
// memory of its models, with the one-size slot.
std::string classes_figure(const std::string& name, const family_plan& f, const std::vector<memory_point>& pts) {
    double lo = INFINITY, hi = 0, top = double(f.slot_rss_bytes);
    for (const auto& c : f.size_classes) {
        if (!c.n_obs_min || !c.n_obs_max) return {};
        lo = std::min(lo, double(*c.n_obs_min));
        hi = std::max(hi, double(*c.n_obs_max));
        top = std::max(top, double(c.slot_rss_bytes));
    }
    for (const auto& m : pts) {
        lo = std::min(lo, double(m.n_obs));
        hi = std::max(hi, double(m.n_obs));
        top = std::max(top, double(m.bytes));
    }
    if (!(hi > 0)) return {};
    constexpr double l = 80, r = 744, t = 16, b = 196;
    scale x = length_scale(lo, hi, l + 8, r - 8);
    scale y{0, byte_axis_top(top), b, t, false};
    svg g(sched_w, 236, "size classes of family " + name + " against measured memory");
    std::vector<std::string> labels;
    auto at = byte_ticks(y.hi);
    for (double v : at) labels.push_back(bytes_label(v));
    g.y_axis(y, at, labels, l, r);
    for (std::size_t i = 0; i < f.size_classes.size(); ++i) {
        const auto& c = f.size_classes[i];
        double x0 = x.at(double(*c.n_obs_min)) - 2, x1 = x.at(double(*c.n_obs_max)) + 2;
        g.rect(x0, y.at(double(c.slot_rss_bytes)), x1 - x0, b - y.at(double(c.slot_rss_bytes)), "cls",
               fmt::format("class {}: n_obs {}–{}, {} cells, slot {}", i + 1, *c.n_obs_min, *c.n_obs_max, c.cells,
                           human_bytes(double(c.slot_rss_bytes))));
    }
    double one = y.at(double(f.slot_rss_bytes));
    g.line(l, one, r, one, "onesize");
    g.text(r - 4, one - 4, "one size " + human_bytes(double(f.slot_rss_bytes)), "r");
    for (const auto& m : pts) {
        if (m.failed) g.cross(x.at(double(m.n_obs)), y.at(double(m.bytes)), 4.5, "fail", m.title);
        else g.circle(x.at(double(m.n_obs)), y.at(double(m.bytes)), 3, "peak", m.title);
    }
    labels.clear();
    at = ticks(x);
    for (double v : at) labels.push_back(count_label(v));
    g.x_axis(x, at, labels, b);
    g.text((l + r) / 2, b + 32, x.log ? "series length n_obs (log scale)" : "series length n_obs", "m");
    return g.finish();
}

std::string family_table(const family_plan& f) {
    std::string o = "<table>\n<tr><th>class</th><th>n_obs</th><th>cells</th><th>slot memory</th><th>slot cores</th>"
                    "<th>slots / node</th><th>slots</th><th>waves</th><th>work</th><th>longest cell</th><th>makespan ≤</th></tr>\n";
    auto range = [](const std::optional<std::uint64_t>& a, const std::optional<std::uint64_t>& b) {
        return a && b ? fmt::format("{}–{}", *a, *b) : std::string("—");
    };
    for (std::size_t i = 0; i < f.size_classes.size(); ++i) {
        const auto& c = f.size_classes[i];
        o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                         "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         i + 1, range(c.n_obs_min, c.n_obs_max), c.cells, html_bytes(c.slot_rss_bytes), c.slot_cores,
                         c.slots_per_node, c.slots, c.waves, html_seconds(c.work_s), html_seconds(c.longest_cell_s),
                         html_seconds(c.makespan_s));
    }
    o += fmt::format("<tr><th>family</th><th></th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
                     "<th>{}</th><th>{}</th><th>{}</th></tr>\n</table>\n",
                     f.cells, html_bytes(f.slot_rss_bytes), f.slot_cores, f.slots_per_node, f.slots, f.waves,
                     html_seconds(f.work_s), html_seconds(f.longest_cell_s), html_seconds(f.makespan_s));
    return o;
}

std::string family_block(const plan_record& p, const std::string& name, const family_plan& f, const report_inputs& in) {
    std::string o = fmt::format("<h3>{} <small>({})</small></h3>\n", esc(name), esc(joined(f.models)));
    o += fmt::format("<p>{} node(s), {} slot(s) per node ({} {}s of {} and {} core(s), {} slot(s) each; limited by {}), "
                     "{} slots, {} waves; makespan between {} and {}{}{}. Basis: cores {}, memory {}, GPU {}, wall {} "
                     "(priced by {}); {} ok fits, {:.1f}% failed{}.</p>\n",
                     f.nodes, f.slots_per_node, f.layout.units_per_node, esc(f.layout.unit), html_bytes(f.layout.unit_memory_bytes),
                     f.layout.unit_cores, f.layout.slots_per_unit, esc(f.layout.limited_by), f.slots, f.waves,
                     html_seconds(f.makespan_lower_s), html_seconds(f.makespan_s),
                     interval_words(p.run, f.makespan_interval, f.makespan_bound_s),
                     f.meets_deadline ? (*f.meets_deadline ? ", within the planned deadline" : ", <span class=\"bad\">past the planned deadline</span>") : "",
                     basis_badge(f.basis.cores), basis_badge(f.basis.memory), basis_badge(f.basis.gpu), basis_badge(f.basis.wall),
                     esc(f.wall_estimator), f.n_ok, f.failure_share * 100, f.low_confidence ? " — <span class=\"bad\">low confidence</span>" : "");
    if (!f.warnings.empty()) {
        o += "<ul class=\"warnings\">\n";
        for (const auto& w : f.warnings) o += "<li class=\"warn\">" + esc(w) + "</li>\n";
        o += "</ul>\n";
    }
    o += family_table(f);
    o += "<figure>\n" + node_figure(p, name, f) +
         "<figcaption class=\"legend\">One node: <span class=\"sw sw-sched\"></span>cores per unit (dotted: its slots) "
         "<span class=\"sw sw-mem\"></span>memory per unit; grey: left free.</figcaption>\n</figure>\n";
    std::string classes = classes_figure(name, f, measured_memory(f.models, profile_of(p, in), in));
    if (!classes.empty())
        o += "<figure>\n" + classes +
             "<figcaption class=\"legend\"><span class=\"sw sw-slot\"></span>each size class's slot memory over its lengths "
             "(dashed: the one size every cell fits) <span class=\"sw sw-mem\"></span>measured peaks of its models "
             "<span class=\"sw sw-fail\"></span>failed</figcaption>\n</figure>\n";
    return o;
}

std::string plan_summary(const plan_record& p) {
    std::string deadline = p.run.deadline_s ? fmt::format("deadline {} (planned: {}, {:.0f}% headroom)", html_seconds(p.run.deadline_s),
                                                      html_seconds(p.run.planned_deadline_s), headroom_share(p.run) * 100)
                                        : fmt::format("{} node(s) given, no deadline", html_count(p.run.nodes));
    std::string verdict;
    if (p.totals.meets_deadline)
        verdict = *p.totals.meets_deadline ? "<p class=\"verdict v-pass\">Meets the planned deadline</p>\n"
                                          : "<p class=\"verdict v-fail\">Misses the planned deadline</p>\n";
    return verdict +
           fmt::format("<p>{} series × {} model(s) ({}), {} cells on <b>{} node(s)</b> of {} cores and {}{}; layout {}; lengths "
                       "from {}{}. Makespan between <b>{}</b> and <b>{}</b>{}; {}. Work {}{}, longest cell {}.</p>\n",
                       p.run.series, p.run.models.size(), esc(joined(p.run.models)), p.totals.cells, p.totals.nodes, p.node.cores,
                       html_bytes(p.node.memory_bytes),
                       p.node.gpus ? fmt::format(" and {} GPU(s) of {}", p.node.gpus, html_bytes(p.node.gpu_memory_bytes)) : "",
                       esc(p.run.layout), esc(p.run.length_source), p.run.max_n_obs ? fmt::format(" (longest {})", *p.run.max_n_obs) : "",
                       html_seconds(p.totals.makespan_lower_s), html_seconds(p.totals.makespan_s),
                       interval_words(p.run, p.totals.makespan_interval, p.totals.makespan_bound_s), deadline,
                       html_seconds(p.totals.work_s),
                       p.totals.work_interval.low_s == p.totals.work_interval.high_s
                           ? std::string()
                           : fmt::format(" ({} to {})", html_seconds(p.totals.work_interval.low_s),
                                         html_seconds(p.totals.work_interval.high_s)),
                       html_seconds(p.totals.longest_cell_s));
}

}  // namespace

std::string plan_section(const placed<plan_record>& pp, std::size_t index, const report_inputs& in) {
    const plan_record& p = pp.record;
    std::string o = section_head("plan", "Plan", index, esc(pp.where) + ", " + basis_badge(p.provenance.basis));
    o += plan_summary(p);
    if (!p.warnings.empty()) {
        o += "<ul class=\"warnings\">\n";
        for (const auto& w : p.warnings) o += "<li class=\"warn\">" + esc(w) + "</li>\n";
        o += "</ul>\n";
    }
    o += "<h3>Schedule</h3>\n<figure>\n" + schedule_figure(p) +
         "<figcaption class=\"legend\"><span class=\"sw sw-sched\"></span>at least (work / slots, or the longest cell) "
         "<span class=\"sw\" style=\"background:#a3d6d7\"></span>at most (whole cells handed to free slots); white cuts: "
         "size classes, run one after another; whisker: the makespan's interval over the resampled runs (tick: P50)" +
         std::string(p.run.deadline_s ? " <span class=\"sw sw-dl\"></span>deadline (dashed: planned, after headroom)" : "") +
         "</figcaption>\n</figure>\n";
    for (const auto& [name, f] : p.families) o += family_block(p, name, f, in);
    return o + "</section>\n";
}

}  // namespace prof::report
