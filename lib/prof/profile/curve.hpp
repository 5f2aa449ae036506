// A model's cost against series length (n_obs): the bounded cost curve a profile keeps per
// model, the length distribution of a run, and the prediction of a run's total work and its
// longest cell from the two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prof {

// One point of a cost curve: the fits whose n_obs lies in [n_obs_min, n_obs_max]. n_obs is
// the median length of those fits (the lower middle one for an even count); wall_s and cpu_s
// the medians of their usable wall and CPU seconds (cpu_s null when none had one);
// max_process_rss_bytes the largest usable process RSS among them (the memory curve: a peak,
// never a median, since a slot must hold the largest cell it runs; null when none had one).
struct curve_point {
    std::uint64_t n_obs = 0, n_obs_min = 0, n_obs_max = 0;
    std::uint64_t n_fits = 0;
    double wall_s = 0;
    std::optional<double> cpu_s;
    std::optional<std::uint64_t> max_process_rss_bytes;
};

// A curve holds at most this many points, whatever the number of fits behind it.
inline constexpr std::size_t max_curve_points = 32;

// One ok fit of a model as a profile keeps it for resampling (prof-plan's intervals): its
// length (0 = unknown), its usable wall seconds, its CPU seconds (null when not usable) and
// whether the host was busy while it ran (records.hpp contended()).
struct fit_reading {
    std::uint64_t n_obs = 0;
    double wall_s = 0;
    std::optional<double> cpu_s;
    bool contended = false;
    auto operator<=>(const fit_reading&) const = default;
};

// A profile keeps a model's readings while it has at most this many fits with a usable wall;
// past that it keeps none (a sample that large pins the curve: the plan reads it as exact).
inline constexpr std::size_t max_model_readings = 256;

// The cost curve from the (n_obs, wall seconds) and (n_obs, CPU seconds) of a model's ok fits
// (values finite and > 0, as usable axis values are). One point per distinct length while
// there are at most max_curve_points of them; otherwise the fits, sorted by length, are cut
// into max_curve_points bins of equal count (quantiles of n_obs), a length never split
// between two bins. A CPU value lands on the point whose length range holds its n_obs (on
// none when it falls between ranges). Empty when `walls` is empty. Reorders both vectors.
std::vector<curve_point> build_curve(std::vector<std::pair<std::uint64_t, double>>& walls,
                                     std::vector<std::pair<std::uint64_t, double>>& cpus);

// The same curve, point for point, from values kept where they are: walls(fn) and cpus(fn)
// each call fn(seconds, n_obs) once per value, n_obs 0 meaning none (the value is left off the
// curve). The lengths are counted into a histogram indexed by n_obs, the bins cut from it,
// and each value dropped straight into its bin: no sort and no copy of (length, value) pairs.
// Past curve_histogram_lengths, the pairs are collected and sorted (build_curve above).
inline constexpr std::uint32_t curve_histogram_lengths = 1u << 22;
template <class Walls, class Cpus>
std::vector<curve_point> build_curve_in_place(const Walls& walls, const Cpus& cpus);

namespace curve_detail {
// The bins of a curve from the histogram of its wall lengths (count[n] = the values of length
// n; count[0] unused): each point's n_obs, range and n_fits set, its values not yet, and for
// every length inside a point's range the point's index (npos elsewhere).
struct bin_plan {
    static constexpr std::uint32_t npos = UINT32_MAX;
    std::vector<curve_point> points;
    std::vector<std::uint32_t> point_of;  // by n_obs, as long as `count`
};
bin_plan plan_bins(const std::vector<std::uint64_t>& count);
// Every point's wall_s and cpu_s: the medians of its values.
void finish_points(std::vector<curve_point>& points, std::vector<std::vector<double>>& walls,
                   std::vector<std::vector<double>>& cpus);
}  // namespace curve_detail

template <class Walls, class Cpus>
std::vector<curve_point> build_curve_in_place(const Walls& walls, const Cpus& cpus) {
    std::vector<std::uint64_t> count;
    bool too_long = false;
    walls([&](double, std::uint32_t n) {
        if (n >= curve_histogram_lengths) too_long = true;
        else if (n >= count.size()) count.resize(std::size_t{n} + 1, 0);
        if (n && !too_long) ++count[n];
    });
    if (too_long) {
        std::vector<std::pair<std::uint64_t, double>> w, c;
        walls([&](double v, std::uint32_t n) { if (n) w.emplace_back(n, v); });
        cpus([&](double v, std::uint32_t n) { if (n) c.emplace_back(n, v); });
        return build_curve(w, c);
    }
    curve_detail::bin_plan plan = curve_detail::plan_bins(count);
    std::vector<std::vector<double>> wall_bins(plan.points.size()), cpu_bins(plan.points.size());
    for (std::size_t k = 0; k < plan.points.size(); ++k) wall_bins[k].reserve(plan.points[k].n_fits);
    walls([&](double v, std::uint32_t n) { if (n) wall_bins[plan.point_of[n]].push_back(v); });
    cpus([&](double v, std::uint32_t n) {
        if (n && n < plan.point_of.size() && plan.point_of[n] != curve_detail::bin_plan::npos)
            cpu_bins[plan.point_of[n]].push_back(v);
    });
    curve_detail::finish_points(plan.points, wall_bins, cpu_bins);
    return std::move(plan.points);
}

// The curve of a set of readings, as build_curve makes it from their (n_obs, wall) and
// (n_obs, cpu) pairs (readings of unknown length are left off): the profile's wall_curve when
// they are every reading the profile kept. Empty when none has a length.
std::vector<curve_point> curve_of_readings(const std::vector<fit_reading>& readings);

// The wall seconds one fit of length n_obs takes on the curve (which must not be empty):
// linear in n_obs between the two points around it; below the shortest point, the shortest
// point's time; above the longest, the longest point's time × (n_obs / its n_obs)^b, where b
// is the log-log slope of the last two points clamped to [1, 3] (1 with one point): never
// below proportional growth, so a long series is never priced cheaper than linear scaling
// says. Always finite and > 0 (a value past the largest double is that double).
double curve_wall_at(const std::vector<curve_point>& curve, std::uint64_t n_obs);

// Puts each (n_obs, largest process RSS at that length) pair on the curve's memory: on the point
// whose range holds n_obs, else on the first point above it, else on the last point (a reading
// of memory is never left off: a slot must hold it), keeping the largest per point. n_obs 0
// (unknown) is skipped. Pairs in any order; the curve as build_curve made it.
void attach_memory(std::vector<curve_point>& curve, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& peaks);

// The process RSS one fit of length n_obs needs on the curve's memory, or null when a point of
// the curve has none (an older profile, a model measured without memory: size it from its
// model maximum instead). The rule never prices a longer series below a shorter one:
//   within the measured lengths, the largest peak of the points up to and including the first
//   one whose range reaches n_obs (a length between two ranges takes the upper one);
//   beyond the longest point, the largest measured peak, or the last point's peak grown along
//   the chord of the last two points (slope clamped at >= 0) if that is larger — memory is
//   never priced below the largest measured peak, and grows as the last measured lengths
//   say. Saturates at UINT64_MAX.
std::optional<std::uint64_t> curve_rss_at(const std::vector<curve_point>& curve, std::uint64_t n_obs);

// How many series of each length a run holds. A bin counts the series whose n_obs lies in
// [n_obs_min, n_obs_max]; n_obs is their mean length, rounded to the nearest integer, and
// n_series may be fractional once scaled to a run of another size.
struct length_bin {
    std::uint64_t n_obs = 0, n_obs_min = 0, n_obs_max = 0;
    double n_series = 0;
};
struct length_distribution {
    std::vector<length_bin> bins;  // sorted by n_obs
    double series() const;         // Σ n_series
    std::uint64_t max_n_obs() const;  // the longest series' length (0 when empty)
    std::uint64_t min_n_obs() const;
};

// A distribution holds at most this many bins.
inline constexpr std::size_t max_length_bins = 256;

// The distribution of the given lengths (each > 0): one bin per distinct length while there
// are at most max_length_bins of them, else equal-count bins over the sorted lengths (one
// length never split). Reorders `lengths`.
length_distribution distribution_of_lengths(std::vector<std::uint64_t>& lengths);
// The same shape for a run of `series` series: every bin's n_series × series / d.series().
length_distribution scale_distribution(const length_distribution& d, double series);

// A model's share of a run predicted from its curve (raw: no time margin).
struct model_work {
    double total_wall_s = 0;        // Σ over bins of n_series × curve_wall_at(n_obs)
    double longest_cell_s = 0;      // the most one fit takes: the curve at each bin's n_obs and n_obs_max
    std::uint64_t longest_n_obs = 0;
    bool above_measured = false;    // the run holds series longer than the curve's longest point
    bool below_measured = false;    // ... or shorter than its shortest
};
// The curve and the distribution must not be empty.
model_work predict_model_work(const std::vector<curve_point>& curve, const length_distribution& d);

}  // namespace prof
