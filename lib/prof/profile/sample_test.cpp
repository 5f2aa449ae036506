// The gate and the sample (prof-sample(1)).
#include "prof/profile/sample.hpp"

#include "prof/core/errors.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

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

TEST_CASE("the sample record carries the panel's lengths, which read back as the same distribution") {
    prof::sample_record rec;
    rec.samples = 2;
    std::vector<std::uint64_t> lengths = {12, 12, 12, 2284};
    rec.lengths = prof::distribution_of_lengths(lengths);
    rec.ts_ids = {"a", "co2"};
    rec.models = {{"ets", "statistical"}};
    std::string line = prof::write_sample(rec);
    CHECK(line == R"({"kind":"sample","rule":"rank-spread","samples":2,"n_series":4,"n_unusable":0,"n_obs_min":12,)"
                  R"("n_obs_max":2284,"lengths":[{"n_obs":12,"n_obs_min":12,"n_obs_max":12,"n_series":3},)"
                  R"({"n_obs":2284,"n_obs_min":2284,"n_obs_max":2284,"n_series":1}],"ts_ids":["a","co2"],)"
                  R"("models":[{"model_type":"ets","family":"statistical"}]})");
    auto d = prof::sample_lengths(prof::parse_json_text(line));
    REQUIRE(d.bins.size() == 2);
    CHECK(d.bins[0].n_series == 3);
    CHECK(d.max_n_obs() == 2284);
    CHECK_THROWS_WITH(prof::sample_lengths(prof::parse_json_text(R"({"kind":"sample"})")),
                      "field 'sample.lengths': expected an array of length bins");
    CHECK_THROWS_WITH(prof::sample_lengths(prof::parse_json_text(
                          R"({"lengths":[{"n_obs":5,"n_obs_min":9,"n_obs_max":9,"n_series":1}]})")),
                      "field 'sample.lengths[0]': expected 0 < n_obs_min <= n_obs <= n_obs_max");
}

namespace {
// TEXT in a file under the temporary directory, removed when the test ends.
struct temp_panel {
    explicit temp_panel(const std::string& text)
        : path((std::filesystem::temp_directory_path() / ("prof-sample-test-" + std::to_string(::getpid()) + ".jsonl")).string()) {
        std::ofstream(path) << text;
    }
    ~temp_panel() { std::filesystem::remove(path); }
    std::string path;
};
}  // namespace

TEST_CASE("a panel's integer ts_id is kept as its decimal text, as prof-harvest keeps it") {
    std::string text = "{\"ts_id\":7,\"n_obs\":10}\n{\"ts_id\":\"b\",\"n_obs\":20}\n"
                       "{\"ts_id\":18446744073709551615,\"n_obs\":30}\n";
    auto p = prof::read_panel(temp_panel(text).path, prof::bad_line_policy());
    REQUIRE(p.usable.size() == 3);
    CHECK(p.usable[0].ts_id == "7");
    CHECK(p.usable[1].ts_id == "b");
    CHECK(p.usable[2].ts_id == "18446744073709551615");  // 2^64 - 1: exact, never through a double
    // 7 and "7" are one series: the second is a duplicate naming the first line
    std::string dup = "{\"ts_id\":7,\"n_obs\":10}\n{\"ts_id\":\"7\",\"n_obs\":20}\n";
    CHECK_THROWS_WITH(prof::read_panel(temp_panel(dup).path, prof::bad_line_policy()), doctest::Contains("\"7\" already given on line 1"));
    // a fraction is no identifier
    CHECK_THROWS_WITH(prof::read_panel(temp_panel("{\"ts_id\":7.5,\"n_obs\":10}\n").path, prof::bad_line_policy()),
                      doctest::Contains("field 'ts_id': expected a string or an integer"));
}
