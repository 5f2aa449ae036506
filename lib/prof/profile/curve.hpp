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
// the medians of their usable wall and CPU seconds (cpu_s null when none had one).
struct curve_point {
    std::uint64_t n_obs = 0, n_obs_min = 0, n_obs_max = 0;
    std::uint64_t n_fits = 0;
    double wall_s = 0;
    std::optional<double> cpu_s;
};

// A curve holds at most this many points, whatever the number of fits behind it.
inline constexpr std::size_t max_curve_points = 32;

// The cost curve from the (n_obs, wall seconds) and (n_obs, CPU seconds) of a model's ok fits
// (values finite and > 0, as usable axis values are). One point per distinct length while
// there are at most max_curve_points of them; otherwise the fits, sorted by length, are cut
// into max_curve_points bins of equal count (quantiles of n_obs), a length never split
// between two bins. A CPU value lands on the point whose length range holds its n_obs (on
// none when it falls between ranges). Empty when `walls` is empty. Reorders both vectors.
std::vector<curve_point> build_curve(std::vector<std::pair<std::uint64_t, double>>& walls,
                                     std::vector<std::pair<std::uint64_t, double>>& cpus);

// The wall seconds one fit of length n_obs takes on the curve (which must not be empty):
// linear in n_obs between the two points around it; below the shortest point, the shortest
// point's time; above the longest, the longest point's time × (n_obs / its n_obs)^b, where b
// is the log-log slope of the last two points clamped to [1, 3] (1 with one point): never
// below proportional growth, so a long series is never priced cheaper than linear scaling
// says. Always finite and > 0 (a value past the largest double is that double).
double curve_wall_at(const std::vector<curve_point>& curve, std::uint64_t n_obs);

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
