// The gate and the sample (SPEC §2 "The sample (prof-sample) and the gate").
#include "prof/sample.hpp"

#include "prof/errors.hpp"

#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("the gate compares cells with --min-cells in auto mode") {
    CHECK_FALSE(should_profile(profile_mode::off, 1000000, 1).sample);
    CHECK(should_profile(profile_mode::always, 0, 1000).sample);
    CHECK(should_profile(profile_mode::automatic, 1000, 1000).sample);
    auto g = should_profile(profile_mode::automatic, 340, 1000);
    CHECK_FALSE(g.sample);
    CHECK(g.reason.find("340 cells") != std::string::npos);
}

TEST_CASE("the spread always holds the shortest and the longest series") {
    // n = 10, k = 4: floor(j·9/3 + 0.5) = 0, 3, 6, 9
    CHECK(spread_indices(10, 4) == std::vector<std::size_t>{0, 3, 6, 9});
    // n = 85, k = 8: floor(j·84/7 + 0.5) = 0, 12, 24, ..., 84
    CHECK(spread_indices(85, 8) == std::vector<std::size_t>{0, 12, 24, 36, 48, 60, 72, 84});
    // n = 6, k = 4: 5j/3 + 0.5 → 0.5, 2.17, 3.83, 5.5 → 0, 2, 3, 5
    CHECK(spread_indices(6, 4) == std::vector<std::size_t>{0, 2, 3, 5});
    CHECK(spread_indices(7, 1) == std::vector<std::size_t>{3});
    CHECK(spread_indices(3, 8) == std::vector<std::size_t>{0, 1, 2});
    CHECK(spread_indices(0, 8).empty());
}

TEST_CASE("series sort by n_obs then ts_id, and cells come out series-outer, models-inner") {
    std::vector<series_ref> s = {{"b", 10}, {"a", 10}, {"c", 5}};
    auto picked = select_sample(s, 3);
    REQUIRE(picked.size() == 3);
    CHECK(picked[0].ts_id == "c");
    CHECK(picked[1].ts_id == "a");
    CHECK(picked[2].ts_id == "b");
    auto cells = sample_cells({picked[0], picked[1]}, {{"theta", "stat"}, {"naive", "naive"}});
    REQUIRE(cells.size() == 4);
    CHECK(cells[0].ts_id == "c");
    CHECK(cells[0].model_type == "theta");
    CHECK(cells[1].ts_id == "c");
    CHECK(cells[1].model_type == "naive");
    CHECK(cells[2].ts_id == "a");
}

TEST_CASE("a model spec is NAME or NAME:FAMILY") {
    CHECK(parse_model_spec("theta").family == "theta");
    CHECK(parse_model_spec("theta:statistical").family == "statistical");
    CHECK_THROWS_AS(parse_model_spec(":x"), usage_error);
    CHECK_THROWS_AS(parse_model_spec("a:"), usage_error);
}
