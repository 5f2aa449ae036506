// The bootstrap of a model's fits: the profile's readings resampled with replacement from a
// seeded stream, each resample's curve and median, and the quantiles read from the results.
// prof-plan's intervals and prof-diff's noise rule both read it.
#pragma once

#include "prof/profile/curve.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace prof {

// The q-quantile (q in [0, 1]) of `values`: linear between the order statistics around
// q × (n − 1) (Hyndman and Fan's type 7, R's and NumPy's default). 0 for no values. Reorders
// `values`.
double quantile(std::vector<double>& values, double q);

// A deterministic stream of 64-bit draws (splitmix64), so a seed gives the same resamples on
// every platform and standard library.
class resample_stream {
public:
    explicit resample_stream(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    std::uint64_t below(std::uint64_t n);  // uniform in [0, n), n > 0 (Lemire's multiply-shift)
private:
    std::uint64_t state_;
};

// The seed of one model's stream: a seed (prof-plan's --seed) mixed with the model's name
// (FNV-1a), so adding a model to the run leaves the others' resamples as they were.
std::uint64_t model_seed(std::uint64_t seed, std::string_view model);

// One resample of a model's fits: its cost curve (curve_of_readings) and median wall.
struct model_resample {
    std::vector<curve_point> curve;
    double median_wall_s = 0;
};
// `resamples` resamples of `readings` (not empty), each as many readings drawn with
// replacement from model_seed(seed, model)'s stream, in order.
std::vector<model_resample> bootstrap_model(const std::vector<fit_reading>& readings, std::uint64_t resamples,
                                            std::uint64_t seed, std::string_view model);

}  // namespace prof
