// The median (median.hpp): odd and even counts, the mean of the middle two that cannot overflow.
#include "prof/core/median.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <span>

using prof::median;

TEST_CASE("the median of odd and even counts; nothing of none") {
    std::vector<double> odd{3, 1, 2}, even{4, 1, 3, 2}, none;
    CHECK(*median(odd) == 2);
    CHECK(*median(even) == 2.5);  // the mean of the two middle values
    CHECK_FALSE(median(none));
}

TEST_CASE("the mean of the two middle values does not overflow where their sum would") {
    const double big = std::numeric_limits<double>::max();
    std::vector<double> v{big, big * 0.5, 1.0, big * 0.75};
    CHECK(*median(v) == prof::mean_of_middle(big * 0.5, big * 0.75));
    CHECK(prof::mean_of_middle(big, big) == big);
    CHECK((big + big) / 2 != big);  // the other way to write it: inf
}

TEST_CASE("median_of_parts equals the median of the concatenation, without copying it") {
    std::mt19937_64 rng(7);
    // Trials below 100 hold at most 18 values (nth_element); from 100 on, more than 64 in most
    // trials (radix steps over the parts, then over the kept bucket); 300 and up, 33000 or more
    // per part. The value shapes: ties, a wide range of exponents, one narrow band, a smooth
    // spread, and extremes from the smallest subnormal to the largest double.
    for (int trial = 0; trial < 320; ++trial) {
        std::size_t nparts = 1 + rng() % 6;
        std::vector<std::vector<double>> parts(nparts);
        std::vector<double> all;
        for (auto& p : parts) {
            std::size_t len = trial >= 300 ? 33000 + rng() % 20000 : rng() % (trial < 100 ? 4 : 400);
            for (std::size_t i = 0; i < len; ++i) {
                double d;
                switch (trial % 5) {
                case 4: {
                    const double extremes[] = {std::numeric_limits<double>::denorm_min(), 1e-300, 1.0, 1.0 + 1e-15,
                                               1e300, std::numeric_limits<double>::max()};
                    d = extremes[rng() % 6];
                    break;
                }
                case 0: d = 1.0 + static_cast<double>(rng() % 5); break;                  // many ties
                case 1: d = std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 1000, -(int)(rng() % 40)); break;
                case 2: d = 0.05 + static_cast<double>(rng() % 1000000) * 1e-7; break;  // one narrow band
                case 3: d = std::exp(static_cast<double>(rng() % 4000) / 100.0 - 20); break;
                }
                p.push_back(d);
                all.push_back(d);
            }
        }
        std::vector<std::span<const double>> ptrs;
        for (const auto& p : parts) ptrs.emplace_back(p);
        auto want = prof::median(all);
        auto got = prof::median_of_parts(ptrs);
        REQUIRE(want.has_value() == got.has_value());
        if (want) CHECK(*got == *want);  // bit-identical, not approximately equal
    }
}

TEST_CASE("median_of_parts finds the lower middle value when it lies in an earlier radix bucket") {
    // An even count whose lower half lies far below its upper half: the first counting step
    // keeps the upper middle value's bucket with no key of the lower half in it, so the lower
    // middle value (the largest of the lower half) comes from the pass that keeps the bucket.
    // Sizes: nth_element only (40), one step then nth_element (200), several steps (5000), the
    // wide first step (70000 and more); the halves split over parts of uneven length.
    std::mt19937_64 rng(11);
    for (std::size_t n : {40u, 200u, 5000u, 70000u, 140002u}) {
        for (int shape = 0; shape < 3; ++shape) {
            std::vector<double> all;
            for (std::size_t i = 0; i < n; ++i) {
                const bool upper = i % 2 == 1;
                double d;
                switch (shape) {
                case 0: d = upper ? 1e6 + static_cast<double>(rng() % 1000) : 1e-3 * (1 + static_cast<double>(rng() % 1000)); break;
                case 1: d = upper ? 2.0 : 1.0; break;  // two runs of ties
                default: d = upper ? 1.5 + static_cast<double>(rng() % 100) * 1e-9 : 1.25 - static_cast<double>(rng() % 100) * 1e-9;
                }
                all.push_back(d);
            }
            std::vector<double> copy = all;
            const std::size_t cut = n / 3 + 1;
            std::vector<std::span<const double>> parts{std::span<const double>(all).first(cut),
                                                       std::span<const double>(all).subspan(cut)};
            const double want = *prof::median(copy);
            CHECK(*prof::median_of_parts(parts) == want);
        }
    }
}
