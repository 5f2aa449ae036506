// The bootstrap of a plan's intervals (see interval.hpp): resampled fits, their curves priced
// over the run's size classes, the resampled runs scheduled, and quantiles.
#include "prof/plan/interval.hpp"

#include <algorithm>
#include <cmath>

namespace prof {

plan_interval interval_of(std::vector<double> values, double confidence) {
    plan_interval out;
    out.low_s = quantile(values, (1 - confidence) / 2);
    out.p50_s = quantile(values, 0.5);
    out.high_s = quantile(values, (1 + confidence) / 2);
    return out;
}

namespace plan_detail {

class_cost measured_class_cost(const std::vector<priced_model>& models, const run_lengths& lengths,
                               const size_class& c, std::uint64_t series, double time_margin) {
    class_cost out;
    double work = 0;
    for (const priced_model& m : models) {
        const bool curve = m.curve && !m.curve->empty();
        if (!lengths.lengths) {
            work += static_cast<double>(series) * m.median_wall_s;
            out.longest_s = std::max(out.longest_s, m.median_wall_s * time_margin);
            continue;
        }
        for (const length_bin& b : lengths.lengths->bins) {
            if ((c.n_obs_min && b.n_obs_max < *c.n_obs_min) || (c.n_obs_max && b.n_obs_min > *c.n_obs_max)) continue;
            if (!curve) {
                work += b.n_series * m.median_wall_s;
                out.longest_s = std::max(out.longest_s, m.median_wall_s * time_margin);
                continue;
            }
            const double at = curve_wall_at(*m.curve, b.n_obs);
            work += b.n_series * at;
            out.longest_s = std::max(out.longest_s, std::max(at, curve_wall_at(*m.curve, b.n_obs_max)) * time_margin);
        }
    }
    out.work_s = work * time_margin;
    return out;
}

double family_resamples::makespan(const family_schedule& sc, std::size_t r, std::uint64_t nodes) const {
    double t = 0;
    for (std::size_t k = 0; k < sc.classes.size(); ++k) {
        class_schedule c = sc.classes[k];
        if (k < runs[r].size()) {
            c.work_s = runs[r][k].work_s;
            c.longest_s = runs[r][k].longest_s;
        }
        t += c.makespan(nodes);
    }
    return t;
}

std::vector<double> family_resamples::makespans(const family_schedule& sc, std::uint64_t nodes) const {
    std::vector<double> out(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r) out[r] = makespan(sc, r, nodes);
    return out;
}

std::vector<double> family_resamples::works() const {
    std::vector<double> out;
    for (const auto& run : runs) {
        double w = 0;
        for (const auto& c : run) w += c.work_s;
        out.push_back(w);
    }
    return out;
}

std::vector<double> family_resamples::longest_cells() const {
    std::vector<double> out;
    for (const auto& run : runs) {
        double l = 0;
        for (const auto& c : run) l = std::max(l, c.longest_s);
        out.push_back(l);
    }
    return out;
}

family_resamples resample_family(family_plan& f, const std::vector<model_in_family>& models,
                                 const run_lengths& lengths, std::uint64_t series, double time_margin,
                                 const plan_request& rq) {
    family_resamples out;
    if (rq.resamples == 0 || lengths.from_fits) return out;
    std::vector<priced_model> point;
    std::vector<std::vector<model_resample>> drawn;  // by measured model; empty: kept at its point
    bool any = false, defaulted = false;
    for (const auto& m : models) {
        if (!m.cost || !m.cost->median_wall_s) {
            defaulted = true;
            continue;
        }
        point.push_back({&m.cost->wall_curve, *m.cost->median_wall_s});
        drawn.push_back(bootstrap_model(m.cost->readings, rq.resamples, rq.seed, m.name));
        if (!drawn.back().empty()) {
            any = true;
            f.resampled_models.push_back(m.name);
        }
    }
    if (!any) return out;
    // A class's longest cell is max(its measured models', its defaulted models') plus what its
    // cold starts add: the measured part is the one a resample moves.
    const double default_longest = defaulted ? rq.defaults.wall_s : 0.0;
    std::vector<class_cost> base;
    for (const auto& c : f.size_classes) base.push_back(measured_class_cost(point, lengths, c, series, time_margin));
    out.runs.assign(rq.resamples, {});
    std::vector<priced_model> draw = point;
    for (std::uint64_t r = 0; r < rq.resamples; ++r) {
        for (std::size_t i = 0; i < point.size(); ++i)
            if (!drawn[i].empty()) draw[i] = {&drawn[i][r].curve, drawn[i][r].median_wall_s};
        for (std::size_t k = 0; k < f.size_classes.size(); ++k) {
            const size_class& c = f.size_classes[k];
            const class_cost now = measured_class_cost(draw, lengths, c, series, time_margin);
            const double extra = std::max(0.0, c.longest_cell_s - std::max(base[k].longest_s, default_longest));
            out.runs[r].push_back({std::max(0.0, c.work_s + now.work_s - base[k].work_s),
                                   std::max(now.longest_s, default_longest) + extra});
        }
    }
    return out;
}

double makespan_bound(const family_schedule& sc, const family_resamples& rs, std::uint64_t nodes, double confidence) {
    const double point = sc.makespan(nodes);
    if (rs.runs.empty()) return point;
    std::vector<double> all = rs.makespans(sc, nodes);
    return std::max(point, quantile(all, (1 + confidence) / 2));
}

void fill_intervals(family_plan& f, const family_schedule& sc, const family_resamples& rs, double confidence) {
    if (rs.runs.empty()) {
        f.work_interval = {f.work_s, f.work_s, f.work_s};
        f.longest_cell_interval = {f.longest_cell_s, f.longest_cell_s, f.longest_cell_s};
        f.makespan_interval = {f.makespan_s, f.makespan_s, f.makespan_s};
    } else {
        // The warm cold starts are the same in every resample (cold_start_s is not resampled).
        std::vector<double> works = rs.works();
        for (double& w : works) w += sc.cold_work(f.nodes);
        f.work_interval = interval_of(std::move(works), confidence);
        f.longest_cell_interval = interval_of(rs.longest_cells(), confidence);
        f.makespan_interval = interval_of(rs.makespans(sc, f.nodes), confidence);
    }
    f.makespan_bound_s = std::max(f.makespan_s, f.makespan_interval.high_s);
}

std::vector<double> total_makespans(const std::map<std::string, family_schedule>& schedules,
                                    const std::map<std::string, family_resamples>& resamples, std::uint64_t nodes) {
    std::size_t runs = 0;
    for (const auto& [name, rs] : resamples) runs = std::max(runs, rs.runs.size());
    std::vector<double> out(runs, 0.0);
    for (const auto& [name, sc] : schedules) {
        const std::uint64_t n = std::min(nodes, sc.enough_nodes());
        auto it = resamples.find(name);
        if (it == resamples.end() || it->second.runs.empty()) {
            const double t = sc.makespan(n);
            for (double& v : out) v += t;
        } else {
            for (std::size_t r = 0; r < runs; ++r) out[r] += it->second.makespan(sc, r, n);
        }
    }
    return out;
}

double total_makespan_bound(double point, const std::map<std::string, family_schedule>& schedules,
                            const std::map<std::string, family_resamples>& resamples, std::uint64_t nodes,
                            double confidence) {
    std::vector<double> all = total_makespans(schedules, resamples, nodes);
    return all.empty() ? point : std::max(point, quantile(all, (1 + confidence) / 2));
}

void fill_total_intervals(plan_totals& t, const std::map<std::string, family_schedule>& schedules,
                          const std::map<std::string, family_resamples>& resamples, const plan_record& p,
                          double confidence) {
    std::vector<double> makespans = total_makespans(schedules, resamples, t.nodes);
    if (makespans.empty()) {
        t.work_interval = {t.work_s, t.work_s, t.work_s};
        t.longest_cell_interval = {t.longest_cell_s, t.longest_cell_s, t.longest_cell_s};
        t.makespan_interval = {t.makespan_s, t.makespan_s, t.makespan_s};
    } else {
        std::vector<double> works(makespans.size(), 0.0), longest(makespans.size(), 0.0);
        for (const auto& [name, f] : p.families) {
            auto it = resamples.find(name);
            const bool drawn = it != resamples.end() && !it->second.runs.empty();
            const std::vector<double> w = drawn ? it->second.works() : std::vector<double>();
            const std::vector<double> l = drawn ? it->second.longest_cells() : std::vector<double>();
            const double cold = schedules.at(name).cold_work(f.nodes);
            for (std::size_t r = 0; r < works.size(); ++r) {
                works[r] += drawn ? w[r] + cold : f.work_s;
                longest[r] = std::max(longest[r], drawn ? l[r] : f.longest_cell_s);
            }
        }
        t.work_interval = interval_of(std::move(works), confidence);
        t.longest_cell_interval = interval_of(std::move(longest), confidence);
        t.makespan_interval = interval_of(std::move(makespans), confidence);
    }
    t.makespan_bound_s = std::max(t.makespan_s, t.makespan_interval.high_s);
}

}  // namespace plan_detail
}  // namespace prof
