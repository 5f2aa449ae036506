// The bootstrap of a model's fits (see bootstrap.hpp).
#include "prof/profile/bootstrap.hpp"

#include "prof/core/median.hpp"

#include <algorithm>
#include <cmath>

namespace prof {

double quantile(std::vector<double>& values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const std::size_t below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    const double t = at - static_cast<double>(below);
    return values[below] + t * (values[above] - values[below]);
}

std::uint64_t resample_stream::next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// The high half of a 64 x 64-bit product (Lemire's multiply-shift: a draw below n without a
// division); GCC and Clang's 128-bit integer, outside ISO C++.
__extension__ typedef unsigned __int128 uint128;

std::uint64_t resample_stream::below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<uint128>(next()) * n) >> 64);
}

std::uint64_t model_seed(std::uint64_t seed, std::string_view model) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char ch : model) h = (h ^ ch) * 0x100000001b3ULL;
    return seed ^ h;
}

std::vector<model_resample> bootstrap_model(const std::vector<fit_reading>& readings, std::uint64_t resamples,
                                            std::uint64_t seed, std::string_view model) {
    std::vector<model_resample> out;
    if (readings.empty()) return out;
    out.reserve(resamples);
    resample_stream draw(model_seed(seed, model));
    std::vector<fit_reading> drawn(readings.size());
    std::vector<double> walls(readings.size());
    for (std::uint64_t r = 0; r < resamples; ++r) {
        for (std::size_t i = 0; i < drawn.size(); ++i) {
            drawn[i] = readings[draw.below(readings.size())];
            walls[i] = drawn[i].wall_s;
        }
        model_resample m;
        m.curve = curve_of_readings(drawn);
        m.median_wall_s = median(walls).value_or(0);
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace prof
