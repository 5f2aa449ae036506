// blocks<T> (blocks.hpp): values kept in order, in blocks that never move.
#include "prof/core/blocks.hpp"
#include "prof/core/median.hpp"

#include <doctest/doctest.h>

#include <span>
#include <vector>

TEST_CASE("value_blocks keep every value in order, in blocks that never move") {
    prof::value_blocks b;
    CHECK(b.empty());
    std::vector<double> want;
    const double* first_values = nullptr;
    for (int i = 0; i < 300000; ++i) {
        b.push_back(i + 0.5);
        want.push_back(i + 0.5);
        if (i == 100) {
            std::vector<std::span<const double>> early;
            b.parts(early);
            first_values = early.front().data();
        }
    }
    CHECK(b.size() == want.size());
    std::vector<std::span<const double>> parts;
    b.parts(parts);
    CHECK(parts.size() > 4);
    CHECK(parts.front().data() == first_values);  // the first block's values never moved
    std::vector<double> got;
    for (auto p : parts) {
        CHECK(p.size() <= 65536);
        got.insert(got.end(), p.begin(), p.end());
    }
    CHECK(got == want);
    CHECK(prof::median_of_parts(parts) == prof::median(want));
}
