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

namespace {
std::vector<std::uint64_t> lengths_of(const std::vector<series_ref>& picked) {
    std::vector<std::uint64_t> out;
    for (const auto& s : picked) out.push_back(s.n_obs);
    return out;
}
std::vector<std::string> ids_of(const std::vector<series_ref>& picked) {
    std::vector<std::string> out;
    for (const auto& s : picked) out.push_back(s.ts_id);
    return out;
}
// Ten series s0…s9, listed out of order, lengths 10 … 10,000 (a long tail).
std::vector<series_ref> skewed_panel() {
    return {{"s9", 10000}, {"s0", 10}, {"s1", 12}, {"s2", 15}, {"s3", 20},
            {"s4", 30},    {"s5", 50}, {"s6", 100}, {"s7", 300}, {"s8", 1000}};
}
}  // namespace

TEST_CASE("the mixed spread takes half by rank and splits the widest gaps in ln n_obs with the rest") {
    // n = 10, K = 6: k_r = max(2, ceil(6/2)) = 3, spread_indices(10, 3) = floor(4.5j + 0.5) =
    // 0, 5, 9 → 10, 50, 10000. Gaps in ln n_obs: 10–50 ln 5 = 1.61, 50–10000 ln 200 = 5.30.
    //   split 50–10000 at sqrt(50·10000) = 707: 1000 at ln(1000/707) = 0.35, 300 at 0.86 → 1000
    //   gaps 1.61, 50–1000 ln 20 = 3.00 (1000–10000 has nothing inside): at sqrt(50·1000) = 224:
    //   300 at 0.29, 100 at 0.81 → 300
    //   gaps 1.61, 50–300 ln 6 = 1.79 → its only series inside, 100
    auto mixed = select_sample(skewed_panel(), 6, spread_rule::mixed);
    CHECK(lengths_of(mixed) == std::vector<std::uint64_t>{10, 50, 100, 300, 1000, 10000});
    // the rank spread of the same panel: floor(1.8j + 0.5) = 0, 2, 4, 5, 7, 9
    auto rank = select_sample(skewed_panel(), 6, spread_rule::rank);
    CHECK(lengths_of(rank) == std::vector<std::uint64_t>{10, 15, 30, 50, 300, 10000});
    // log, K = 5: 10 and 10000, then sqrt(10·10000) = 316: 300 at 0.05, 1000 at 1.15 → 300;
    // gaps 10–300 ln 30 = 3.40, 300–10000 ln 33.3 = 3.51 → its only series inside, 1000;
    // then 10–300 at sqrt(3000) = 54.8: 50 at 0.09, 100 at 0.60 → 50
    auto log = select_sample(skewed_panel(), 5, spread_rule::log);
    CHECK(lengths_of(log) == std::vector<std::uint64_t>{10, 50, 300, 1000, 10000});
    // K = 6: gaps 10–50 ln 5 = 1.61, 50–300 ln 6 = 1.79 → 100
    CHECK(lengths_of(select_sample(skewed_panel(), 6, spread_rule::log)) ==
          std::vector<std::uint64_t>{10, 50, 100, 300, 1000, 10000});
    // K = 7: 10–50 is the only gap with series inside, split at sqrt(500) = 22.4: 20 at 0.11,
    // 30 at 0.29 → 20
    CHECK(lengths_of(select_sample(skewed_panel(), 7, spread_rule::log)) ==
          std::vector<std::uint64_t>{10, 20, 50, 100, 300, 1000, 10000});
    // the default is mixed
    CHECK(ids_of(select_sample(skewed_panel(), 6)) == ids_of(mixed));
}

TEST_CASE("the mixed and log spreads equal the rank spread for k <= 2") {
    for (auto rule : {spread_rule::mixed, spread_rule::log}) {
        // k = 1: the median rank, floor(9/2) = 4 → 30
        CHECK(lengths_of(select_sample(skewed_panel(), 1, rule)) == std::vector<std::uint64_t>{30});
        CHECK(lengths_of(select_sample(skewed_panel(), 2, rule)) == std::vector<std::uint64_t>{10, 10000});
    }
    CHECK(rank_picks(spread_rule::mixed, 1) == 1);
    CHECK(rank_picks(spread_rule::mixed, 3) == 2);
    CHECK(rank_picks(spread_rule::mixed, 8) == 4);
    CHECK(rank_picks(spread_rule::mixed, 9) == 5);
    CHECK(rank_picks(spread_rule::log, 8) == 2);
    CHECK(rank_picks(spread_rule::rank, 8) == 8);
}

TEST_CASE("every spread takes the whole panel when K >= n") {
    for (auto rule : {spread_rule::rank, spread_rule::mixed, spread_rule::log}) {
        CHECK(select_sample(skewed_panel(), 10, rule).size() == 10);
        CHECK(select_sample(skewed_panel(), 50, rule).size() == 10);
    }
}

TEST_CASE("equal lengths and ties at a target go to the shorter series, then the smaller ts_id") {
    // all lengths equal: the rank part takes a and e (indices 0 and 4); no gap holds a new length,
    // so the pick is the middle of the fullest gap, index 2 → c
    std::vector<series_ref> flat = {{"e", 7}, {"d", 7}, {"c", 7}, {"b", 7}, {"a", 7}};
    CHECK(ids_of(select_sample(flat, 3, spread_rule::mixed)) == std::vector<std::string>{"a", "c", "e"});
    // three series at the target length 10 = sqrt(1·100): x, the smallest ts_id, is taken
    std::vector<series_ref> dup = {{"z", 10}, {"b", 100}, {"y", 10}, {"a", 1}, {"x", 10}};
    CHECK(ids_of(select_sample(dup, 3, spread_rule::mixed)) == std::vector<std::string>{"a", "x", "b"});
    // K = 4: a, x and b; x–b holds only 10s (no new length) and a–x nothing, so the middle of
    // x–b (indices 1 and 4): index 2 → y
    CHECK(ids_of(select_sample(dup, 4, spread_rule::mixed)) == std::vector<std::string>{"a", "x", "y", "b"});
    // target 4 = sqrt(1·16) lies as far from 2 as from 8 (ln 2 each): the shorter wins
    std::vector<series_ref> even = {{"a", 1}, {"b", 2}, {"c", 8}, {"d", 16}};
    CHECK(lengths_of(select_sample(even, 3, spread_rule::mixed)) == std::vector<std::uint64_t>{1, 2, 16});
}

TEST_CASE("a gap holding only its ends' lengths gets a pick only when no gap holds a new length") {
    // sorted: e1…e5 (12), m (55), n (100), z (2284). K = 5: k_r = 3, spread_indices(8, 3) =
    // floor(3.5j + 0.5) = 0, 4, 7 → e1, e5, z. e1–e5 holds only 12s; e5–z holds 55 and 100:
    // split at sqrt(12·2284) = 165.6 → 100 (nothing inside above it); then e5–n → 55.
    std::vector<series_ref> p = {{"z", 2284}, {"e5", 12}, {"e4", 12}, {"e3", 12}, {"e2", 12},
                                 {"e1", 12}, {"n", 100}, {"m", 55}};
    CHECK(ids_of(select_sample(p, 5, spread_rule::mixed)) == std::vector<std::string>{"e1", "e5", "m", "n", "z"});
    // K = 6: no gap holds a new length; the fullest, e1–e5 (indices 0 and 4), gets its middle, e3
    CHECK(ids_of(select_sample(p, 6, spread_rule::mixed)) ==
          std::vector<std::string>{"e1", "e3", "e5", "m", "n", "z"});
    // the rank spread: floor(1.4j + 0.5) = 0, 1, 3, 4, 6, 7
    CHECK(ids_of(select_sample(p, 6, spread_rule::rank)) ==
          std::vector<std::string>{"e1", "e2", "e4", "e5", "n", "z"});
}

TEST_CASE("a spread rule is named on the command line and in the sample record") {
    CHECK(parse_spread_rule("mixed") == spread_rule::mixed);
    CHECK(parse_spread_rule("rank") == spread_rule::rank);
    CHECK(parse_spread_rule("log") == spread_rule::log);
    CHECK_THROWS_WITH(parse_spread_rule("even"), "--spread: expected rank, mixed or log, got 'even'");
    CHECK(spread_rule_name(spread_rule::rank) == "rank-spread");
    CHECK(spread_rule_name(spread_rule::mixed) == "rank-log-spread");
    CHECK(spread_rule_name(spread_rule::log) == "log-spread");
}

TEST_CASE("a model spec is NAME or NAME:FAMILY") {
    CHECK(parse_model_spec("theta").family == "theta");
    CHECK(parse_model_spec("theta:statistical").family == "statistical");
    CHECK_THROWS_AS(parse_model_spec(":x"), usage_error);
    CHECK_THROWS_AS(parse_model_spec("a:"), usage_error);
}

TEST_CASE("the sample record carries the panel's lengths, which read back as the same distribution") {
    prof::sample_record rec;
    rec.rule = prof::spread_rule::rank;
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
    rec.rule = prof::spread_rule::mixed;
    CHECK(prof::write_sample(rec).find(R"("rule":"rank-log-spread",)") != std::string::npos);
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
