// What a run's cells cost and which lengths it runs: the run's lengths, each family's work
// priced over them on the cost curve, the cold starts, and the size classes' split of the
// lengths (see plan.hpp).
#include "prof/plan/layout.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_out.hpp"
#include "prof/profile/sample.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <set>

namespace prof {

using namespace plan_detail;

std::vector<std::size_t> choose_size_classes(const std::vector<length_cost>& bins, std::uint64_t max_classes,
                                             double min_saving) {
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
    // The best partition is always eligible when it saves min_saving; when it does not, one
    // class is (within min_saving of the best), so the loop ends by kmax.
    const double step = min_saving * best[1][n];
    auto eligible = [&](std::size_t k) {
        return best[k][n] <= least + step && (k == 1 || best[k][n] <= best[1][n] - step);
    };
    std::size_t k = 1;
    while (k < kmax && !eligible(k)) ++k;
    std::vector<std::size_t> ends;
    for (std::size_t b = n; k > 0; --k) {
        ends.push_back(b);
        b = from[k][b];
    }
    std::reverse(ends.begin(), ends.end());
    return ends;
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

std::vector<double> warm_cold_starts(const std::vector<model_in_family>& models, double time_margin) {
    std::vector<double> out;
    bool any = false;
    for (const auto& m : models) {
        const bool has = m.cost && m.cost->cold_start_s;
        any = any || has;
        out.push_back(has ? *m.cost->cold_start_s * time_margin : 0.0);
    }
    if (!any) return {};
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
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

}  // namespace prof
