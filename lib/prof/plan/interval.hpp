// The plan's intervals: a model's measured fits resampled with replacement (the bootstrap), each
// resample's curve priced over the run's lengths, every resampled run scheduled whole-cell on the
// planned slots, and quantiles read from the results. Internal to the plan area (plan.hpp is the
// public header); the tests use it.
#pragma once

#include "prof/plan/layout.hpp"
#include "prof/profile/bootstrap.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// The interval of a confidence c in (0, 1): its low end the (1 − c)/2 quantile, p50 the median,
// its high end the (1 + c)/2 quantile (c 0.8: P10, P50, P90).
plan_interval interval_of(std::vector<double> values, double confidence);

namespace plan_detail {

// One measured model of a family as its bin costs price it: its curve (empty: priced by the
// median) and its median wall.
struct priced_model {
    const std::vector<curve_point>* curve = nullptr;
    double median_wall_s = 0;
};
struct class_cost {
    double work_s = 0, longest_s = 0;
};
// The measured part of one size class's work, margin applied, by predict_family_work's and the
// class split's rules: with lengths, Σ over the run's bins inside [n_obs_min, n_obs_max] of
// n_series × the curve at the bin's n_obs (the median without a curve), the longest cell the
// curve at the bin's n_obs and n_obs_max; without, series × the median. Models priced from the
// defaults are left out: their part is the same in every resample.
class_cost measured_class_cost(const std::vector<priced_model>& models, const run_lengths& lengths,
                               const size_class& c, std::uint64_t series, double time_margin);

// A family's resampled runs: runs[r][k] the work and longest cell of size class k in resample r
// (the plan's own values moved by the resample's change of its measured part, never below 0),
// without the warm cold starts, which depend on the nodes and not on the resample.
struct family_resamples {
    std::vector<std::vector<class_cost>> runs;
    // The makespan of resample r on `nodes` nodes: the plan's schedule (its warm cold starts'
    // delay included), each class's work and longest cell those of the resample.
    double makespan(const family_schedule& sc, std::size_t r, std::uint64_t nodes) const;
    std::vector<double> makespans(const family_schedule& sc, std::uint64_t nodes) const;
    std::vector<double> works() const;  // Σ over classes, the warm cold starts left out
    std::vector<double> longest_cells() const;
};

// A family's resampled runs (`resamples` of them, none with rq.resamples 0): every measured
// model with readings in the profile is resampled (bootstrap_model), the others kept at their
// point; each class moved from f's own values by the change of its measured part. A run whose
// every cell was measured (lengths.from_fits, a harvest) is not resampled. Names the resampled
// models in f.resampled_models.
family_resamples resample_family(family_plan& f, const std::vector<model_in_family>& models,
                                 const run_lengths& lengths, std::uint64_t series, double time_margin,
                                 const plan_request& rq);

// The makespan the plan holds to a deadline on `nodes` nodes: the larger of the schedule's own
// and the high end of the resampled makespans.
double makespan_bound(const family_schedule& sc, const family_resamples& rs, std::uint64_t nodes, double confidence);

// f's work, longest-cell and makespan intervals and its makespan bound on f.nodes (the point
// three times over without resamples); f's schedule filled first (fill_schedule).
void fill_intervals(family_plan& f, const family_schedule& sc, const family_resamples& rs, double confidence);

// The families one after another on `nodes` nodes (each on at most the nodes it can use), per
// resampled run: the sums of their makespans. Empty without resamples.
std::vector<double> total_makespans(const std::map<std::string, family_schedule>& schedules,
                                    const std::map<std::string, family_resamples>& resamples, std::uint64_t nodes);
// The totals' bound on `nodes` nodes (plan_totals::makespan_bound_s): the larger of `point`
// and the high end of total_makespans.
double total_makespan_bound(double point, const std::map<std::string, family_schedule>& schedules,
                            const std::map<std::string, family_resamples>& resamples, std::uint64_t nodes,
                            double confidence);
// The totals' intervals on t.nodes, and its bound (t's point values filled first).
void fill_total_intervals(plan_totals& t, const std::map<std::string, family_schedule>& schedules,
                          const std::map<std::string, family_resamples>& resamples, const plan_record& p,
                          double confidence);

// --target-width: f.sample_widths, one per model with readings, its work over the run resampled
// as resample_family draws it (the same streams), and a warning per model wider than the
// target naming the prof-sample --samples to run. Nothing without a target, resamples, or
// with every cell measured.
void fill_sample_widths(family_plan& f, const std::vector<model_in_family>& models, const run_lengths& lengths,
                        std::uint64_t series, double time_margin, const plan_request& rq);
// The table's lines on the fits each model needs; "" without --target-width.
std::string render_sample_widths(const plan_record& p);

}  // namespace plan_detail
}  // namespace prof
