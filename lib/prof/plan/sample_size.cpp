// How many fits are enough (prof-plan --target-width): per resampled model the width of its own
// work interval at the fits it has, and the fits at which that width would reach the target.
#include "prof/plan/interval.hpp"

#include "prof/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace plan_detail {

// The bootstrap's width is a quantile spread of statistics of n draws: like a standard error it
// shrinks about as 1/sqrt(n), so the fits that reach a width t from w at n are n × (w / t)².
static std::uint64_t fits_for_width(std::uint64_t n, double width, double target) {
    const double needed = std::ceil(static_cast<double>(n) * (width / target) * (width / target) - 1e-9);
    return static_cast<std::uint64_t>(std::clamp(needed, 1.0, 1e15));
}

// A sample as large as the run is the run itself: said when the fits needed reach its series.
static std::string beyond_run(std::uint64_t fits_needed, std::uint64_t series) {
    if (fits_needed < series) return "";
    return fmt::format(" (the run has {} series: no sample narrows it, plan on the high end)", series);
}

void fill_sample_widths(family_plan& f, const std::vector<model_in_family>& models, const run_lengths& lengths,
                        std::uint64_t series, double time_margin, const plan_request& rq) {
    if (!rq.target_width || rq.resamples == 0 || lengths.from_fits) return;
    const double target = *rq.target_width;
    const size_class whole;  // no bounds: every length of the run
    for (const auto& m : models) {
        if (!m.cost || !m.cost->median_wall_s || m.cost->readings.empty()) continue;
        std::vector<double> works;
        for (const auto& r : bootstrap_model(m.cost->readings, rq.resamples, rq.seed, m.name))
            works.push_back(measured_class_cost({{&r.curve, r.median_wall_s}}, lengths, whole, series, time_margin).work_s);
        model_sample_width w;
        w.model_type = m.name;
        w.n_fits = m.cost->readings.size();
        w.work_interval = interval_of(std::move(works), rq.confidence);
        if (!(w.work_interval.p50_s > 0)) continue;  // no work to be relative to
        w.width = (w.work_interval.high_s - w.work_interval.low_s) / w.work_interval.p50_s;
        w.fits_needed = fits_for_width(w.n_fits, w.width, target);
        w.narrow_enough = w.width <= target;
        if (!w.narrow_enough)
            f.warnings.push_back(fmt::format(
                "{}: its work interval is {:.1f} % of its P50 wide at {} fit(s), wider than --target-width {:.1f} %: "
                "measure about {} series (prof-sample --samples {}) to narrow it to the target{}",
                m.name, 100 * w.width, w.n_fits, 100 * target, w.fits_needed, w.fits_needed,
                beyond_run(w.fits_needed, series)));
        f.sample_widths.push_back(std::move(w));
    }
}

std::string render_sample_widths(const plan_record& p) {
    if (!p.run.target_width) return "";
    const double target = *p.run.target_width;
    const long lo = std::lround(50 * (1 - p.run.confidence)), hi = std::lround(50 * (1 + p.run.confidence));
    std::string out = fmt::format("fits for --target-width {:.1f} % (the width P{} to P{} of a model's work over its "
                                  "P50 shrinks about as 1/sqrt(fits): fits needed = ceil(fits x (width / target)^2)):\n",
                                  100 * target, lo, hi);
    bool any = false;
    for (const auto& [name, f] : p.families)
        for (const auto& w : f.sample_widths) {
            any = true;
            out += fmt::format("  {} ({}): {} fit(s), work {} / {} / {}, width {:.1f} %: {}\n", w.model_type, name,
                               w.n_fits, human_seconds(w.work_interval.low_s), human_seconds(w.work_interval.p50_s),
                               human_seconds(w.work_interval.high_s), 100 * w.width,
                               w.narrow_enough ? fmt::format("narrow enough (about {} fit(s) would do)", w.fits_needed)
                                               : fmt::format("about {} fits (prof-sample --samples {}){}", w.fits_needed,
                                                             w.fits_needed, beyond_run(w.fits_needed, p.run.series)));
        }
    if (!any) out += "  no model has readings to resample (an older or harvested profile, or --resamples 0)\n";
    return out;
}

}  // namespace plan_detail
}  // namespace prof
