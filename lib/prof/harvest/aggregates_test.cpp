// Unit tests of the aggregate result rows: what prof computes from them, and what it refuses.
// The query itself is tested against a real PostgreSQL and DuckDB (testdata/prof-harvest).
#include "prof/core/errors.hpp"
#include "prof/harvest/aggregates.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <string>

namespace {

prof::compute_profile one_profile(const std::string& rows, prof::harvest_config cfg = {}) {
    prof::aggregate_reader r(std::move(cfg));
    prof::line_reader in(prof::string_source(rows, "agg"));
    r.read(in);
    auto ps = r.finish();
    REQUIRE(ps.size() == 1);
    return ps.front();
}

const std::string run_row =
    R"({"aggregate":"run","run_id":"r","rows_read":3,"fold_rows_skipped":0,"ensemble_rows_skipped":0,)"
    R"("n_measurements":3,"n_ok":2,"n_sample_series":2,"finished_us":1000000})"
    "\n";

std::string model_row(int n_lengths) {
    return R"({"aggregate":"model","run_id":"r","model_type":"arima","family":"stat","n_families":1,)"
           R"("n_unnamed":0,"unmapped":false,"n_fits":3,"n_ok":2,"max_n_obs":100,"wall_s_lo":0.25,"wall_s_hi":0.5,)"
           R"("n_eff_unsure":0,"n_rss_methods":0,"n_threads":0,"n_threads_known":0,"n_oom_killed":0,"n_oom_no_limit":0,)"
           R"("n_gpu_oom":0,"first_error_ts_id":"b","n_lengths":)" +
           std::to_string(n_lengths) + "}\n";
}

}  // namespace

TEST_CASE("a median is the mean of the two middle values the query gives") {
    // lo 0.25, hi 0.5: 0.25 + (0.5 - 0.25) / 2 = 0.375 for the model and for its family.
    auto p = one_profile(run_row + model_row(0) +
                         R"({"aggregate":"family","run_id":"r","family":"stat","wall_s_lo":0.25,"wall_s_hi":0.5})" "\n");
    CHECK(*p.models.at("arima").median_wall_s == 0.375);
    CHECK(*p.families.at("stat").median_wall_s == 0.375);
    CHECK(p.n_failed == 1);                                  // 3 measurements, 2 ok
    CHECK(*p.provenance.measured_at == "1970-01-01T00:00:01Z");  // 10^6 µs
}

TEST_CASE("the first error is the bytewise-first text at the first series, fit_seconds standing in") {
    // Two failed fits on series "b": no error text with fit_seconds NaN, and "boom".
    // "boom" < "fit_seconds=NaN" bytewise ('b' 0x62 < 'f' 0x66).
    auto p = one_profile(
        run_row + model_row(0) +
        R"({"aggregate":"error","run_id":"r","model_type":"arima","ts_id":"b","error":null,"fit_seconds":"NaN"})" "\n"
        R"({"aggregate":"error","run_id":"r","model_type":"arima","ts_id":"b","error":"boom","fit_seconds":1})" "\n");
    CHECK(p.first_error_by_model.at("arima") == "boom");
}

std::string point_row(int n_obs, int lo, int hi, int n_fits, double wall_lo, double wall_hi) {
    return R"({"aggregate":"point","run_id":"r","model_type":"arima","n_obs":)" + std::to_string(n_obs) +
           R"(,"n_obs_min":)" + std::to_string(lo) + R"(,"n_obs_max":)" + std::to_string(hi) + R"(,"n_fits":)" +
           std::to_string(n_fits) + R"(,"wall_s_lo":)" + std::to_string(wall_lo) + R"(,"wall_s_hi":)" +
           std::to_string(wall_hi) + R"(,"cpu_s_lo":null,"cpu_s_hi":null})" "\n";
}

TEST_CASE("binned point rows become curve points over their length ranges") {
    // 40 distinct lengths in two bins, rows given out of order: [21, 40] (n_obs 30, 1 fit,
    // wall 2) and [1, 20] (n_obs 10, 2 fits, walls 0.25 and 0.5: 0.25 + 0.25 / 2 = 0.375).
    auto p = one_profile(run_row + model_row(40) + point_row(30, 21, 40, 1, 2, 2) + point_row(10, 1, 20, 2, 0.25, 0.5));
    const auto& c = p.models.at("arima").wall_curve;
    REQUIRE(c.size() == 2);
    using range = std::array<std::uint64_t, 4>;  // n_obs, n_obs_min, n_obs_max, n_fits
    CHECK(range{c[0].n_obs, c[0].n_obs_min, c[0].n_obs_max, c[0].n_fits} == range{10, 1, 20, 2});
    CHECK(range{c[1].n_obs, c[1].n_obs_min, c[1].n_obs_max, c[1].n_fits} == range{30, 21, 40, 1});
    CHECK((c[0].wall_s == 0.375 && !c[0].cpu_s && c[1].wall_s == 2));
}

// The message of the prof::error (exit 65) that reading `rows` ends in.
std::string refusal(const std::string& rows) {
    try {
        one_profile(rows);
    } catch (const prof::error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
        return e.what();
    }
    FAIL("expected an error");
    return "";
}

TEST_CASE("point rows that are not one per length, for at most 32 lengths, are refused") {
    // 3 distinct lengths need 3 per-length points; 2 rows (an older query's, another's) are not the curve.
    CHECK(refusal(run_row + model_row(3) + point_row(1, 1, 1, 1, 1, 1) + point_row(2, 2, 2, 1, 1, 1))
              .find("2 curve points for 3 distinct lengths") != std::string::npos);
    // A point over a range where every point is one length.
    CHECK(refusal(run_row + model_row(1) + point_row(1, 1, 2, 1, 1, 1)).find("n_obs 1 in [1, 2]") != std::string::npos);
}

TEST_CASE("a model past 32 lengths without point rows is refused, not given an empty curve") {
    // An older query gave no points past 32 lengths: an empty curve would plan as "no lengths known".
    CHECK(refusal(run_row + model_row(33)).find("0 curve points for 33 distinct lengths") != std::string::npos);
}

TEST_CASE("overlapping point ranges are refused") {
    // [1, 20] and [20, 40] share length 20.
    CHECK(refusal(run_row + model_row(40) + point_row(10, 1, 20, 2, 1, 1) + point_row(30, 20, 40, 1, 1, 1))
              .find("curve points overlap at n_obs 20") != std::string::npos);
}

TEST_CASE("a point row without its length range is a line-numbered error naming the query") {
    CHECK_THROWS_WITH_AS(
        one_profile(run_row + model_row(1) +
                    R"({"aggregate":"point","run_id":"r","model_type":"arima","n_obs":5,"n_fits":1,"wall_s_lo":1,"wall_s_hi":1})" "\n"),
        doctest::Contains("agg:3: field 'n_obs_min': missing"), prof::input_error);
}

TEST_CASE("a fit the aggregate rows cannot carry is refused with the export of the table the rows come from") {
    // n_eff_unsure 1: the query could not compute one fit's effective cores exactly.
    std::string model = model_row(0);
    model.replace(model.find("\"n_eff_unsure\":0"), 16, "\"n_eff_unsure\":1");
    prof::harvest_config cfg;
    cfg.table = "wh.fits_2026";
    try {
        one_profile(run_row + model, cfg);
        FAIL("expected an error");
    } catch (const prof::error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
        CHECK(std::string(e.what()).find("stream the rows instead (SELECT row_to_json(t) FROM wh.fits_2026 t | prof-harvest)") !=
              std::string::npos);
    }
}

TEST_CASE("the table name is quoted part by part") {
    CHECK(prof::sql_table_name("forecast_metadata") == "\"forecast_metadata\"");
    CHECK(prof::sql_table_name("wh.Fits_2026") == "\"wh\".\"Fits_2026\"");
    CHECK(prof::sql_table_name("db.wh.t") == "\"db\".\"wh\".\"t\"");
    prof::harvest_config cfg;
    CHECK(prof::harvest_aggregates_sql(prof::sql_dialect::duckdb, cfg, "wh.t").find("FROM \"wh\".\"t\"") != std::string::npos);
}

TEST_CASE("a table name that is no plain identifier is a usage error") {
    auto usage = [](std::string_view name) {
        try {
            prof::sql_table_name(name);
        } catch (const prof::usage_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(usage("t; DROP TABLE x").find("the character ';'") != std::string::npos);
    CHECK(usage("wh.\"t\"").find("the character '\"'") != std::string::npos);
    CHECK(usage("1t").find("starting with a digit") != std::string::npos);
    CHECK(usage("a..b").find("an empty name part") != std::string::npos);
    CHECK(usage("").find("an empty name part") != std::string::npos);
    CHECK(usage("a.b.c.d").find("more than database.schema.table") != std::string::npos);
    CHECK(usage(std::string(64, 'x')).find("longer than 63 bytes") != std::string::npos);
    CHECK(usage("t\x01").find("the byte 0x01") != std::string::npos);
}

TEST_CASE("the bins' integer division is each dialect's") {
    // ceil(fits / 32) as (total + 31) DIV 32: PostgreSQL's / on integers, DuckDB's // (its / gives a double).
    prof::harvest_config cfg;
    CHECK(prof::harvest_aggregates_sql(prof::sql_dialect::postgres, cfg).find("(total + 31) / 32") != std::string::npos);
    CHECK(prof::harvest_aggregates_sql(prof::sql_dialect::duckdb, cfg).find("(total + 31) // 32") != std::string::npos);
}

TEST_CASE("an unknown aggregate kind is a line-numbered error") {
    CHECK_THROWS_WITH_AS(one_profile(run_row + R"({"aggregate":"nope","run_id":"r"})" "\n"),
                         doctest::Contains("agg:2: field 'aggregate'"), prof::input_error);
}

TEST_CASE("family map texts are quoted as SQL literals") {
    // O'Neil's quote is doubled: 'O''Neil'.
    prof::harvest_config cfg;
    cfg.family_map = {{"O'Neil", "stat"}};
    std::string q = prof::harvest_aggregates_sql(prof::sql_dialect::postgres, cfg);
    CHECK(q.find("VALUES ('O''Neil', 'stat')") != std::string::npos);
    CHECK(q.find("COLLATE \"C\"") != std::string::npos);
    CHECK(prof::harvest_aggregates_sql(prof::sql_dialect::duckdb, cfg).find("COLLATE") == std::string::npos);
}

TEST_CASE("a model's family from the aggregate rows follows the row harvest's rule: most rows, a tie refused") {
    // arima: 2 rows under "stat", 1 under "a_first" (sorting first): counted under "stat".
    std::string model = model_row(0);
    model.replace(model.find("\"n_families\":1"), 14, "\"n_families\":2");
    auto fam = [](const char* f, int n) {
        return fmt::format(R"({{"aggregate":"model_family","run_id":"r","model_type":"arima","family":"{}","n_fits":{}}})"
                           "\n",
                           f, n);
    };
    auto p = one_profile(run_row + model + fam("a_first", 1) + fam("stat", 2));
    CHECK(p.models.at("arima").family == "stat");
    try {
        one_profile(run_row + model + fam("a_first", 1) + fam("stat", 1));
        FAIL("a tie was not refused");
    } catch (const prof::error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
        CHECK(std::string(e.what()).find("model 'arima' appears under families 'a_first' (1 fit), 'stat' (1 fit)") !=
              std::string::npos);
    }
    // An older query's model row, without n_unnamed, is refused with a note to print it again.
    std::string old = model_row(0);
    old.replace(old.find("\"n_unnamed\":0,"), 14, "");
    CHECK(refusal(run_row + old).find("field 'n_unnamed': missing") != std::string::npos);
}

TEST_CASE("a model's thread caps from the aggregate rows: counted per cap, sized under the largest") {
    // arima's 2 ok fits: one under cap 1, one under cap 4 (n_threads 2).
    std::string model = model_row(0);
    model.replace(model.find("\"n_threads\":0,\"n_threads_known\":0"), 33, "\"n_threads\":2,\"n_threads_known\":2");
    auto cap = [](const char* t, int n) {
        return fmt::format(
            R"({{"aggregate":"model_threads","run_id":"r","model_type":"arima","intraop_threads":{},"n_fits":{}}})" "\n",
            t, n);
    };
    auto p = one_profile(run_row + model + cap("4", 1) + cap("1", 1));
    CHECK(p.models.at("arima").thread_caps == std::vector<prof::thread_cap_count>{{1, 1}, {4, 1}});
    CHECK(p.models.at("arima").intraop_threads == std::optional<std::uint64_t>(4));
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0].find("model 'arima': its fits ran under different thread caps: 1 (1 fit), 4 (1 fit)") !=
          std::string::npos);
    // One known cap and one row without (n_threads_known 1 of 2 ok): no cap is the largest.
    std::string part = model_row(0);
    part.replace(part.find("\"n_threads\":0,\"n_threads_known\":0"), 33, "\"n_threads\":1,\"n_threads_known\":1");
    auto q = one_profile(run_row + part + cap("null", 1) + cap("2", 1));
    CHECK(q.models.at("arima").thread_caps == std::vector<prof::thread_cap_count>{{std::nullopt, 1}, {2, 1}});
    CHECK_FALSE(q.models.at("arima").intraop_threads.has_value());
    // An older query's rows (no model_threads rows) are refused with a note to print it again.
    CHECK(refusal(run_row + model).find("print the query again with prof-harvest --emit-sql") != std::string::npos);
    CHECK(refusal(run_row + model + cap("1", 1) + cap("1", 1)).find("two model_threads rows of one thread cap") !=
          std::string::npos);
}

TEST_CASE("a model's rss_method from the aggregate rows: the one its ok rows name, mixed for several") {
    std::string model = model_row(0);
    auto with = [&](const char* n, const char* m) {
        std::string r = model;
        r.replace(r.find("\"n_rss_methods\":0"), 17, std::string("\"n_rss_methods\":") + n + ",\"rss_method\":" + m);
        return r;
    };
    CHECK(one_profile(run_row + with("1", "\"proc\"")).models.at("arima").rss_method == std::optional<std::string>("proc"));
    CHECK(one_profile(run_row + with("2", "\"cgroup-v2\"")).models.at("arima").rss_method ==
          std::optional<std::string>("mixed"));
    CHECK_FALSE(one_profile(run_row + model).models.at("arima").rss_method.has_value());
    std::string old = model;
    old.replace(old.find("\"n_rss_methods\":0,"), 18, "");
    CHECK(refusal(run_row + old).find("field 'n_rss_methods': missing") != std::string::npos);
}
