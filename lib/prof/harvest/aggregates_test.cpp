// Unit tests of the aggregate result rows: what prof computes from them, and what it refuses.
// The query itself is tested against a real PostgreSQL and DuckDB (testdata/prof-harvest).
#include "prof/core/errors.hpp"
#include "prof/harvest/aggregates.hpp"

#include <doctest/doctest.h>

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
           R"("unmapped":false,"n_fits":3,"n_ok":2,"max_n_obs":100,"wall_s_lo":0.25,"wall_s_hi":0.5,)"
           R"("n_eff_unsure":0,"n_threads":0,"n_threads_known":0,"n_oom_killed":0,"n_oom_no_limit":0,)"
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

TEST_CASE("a model whose curve needs binning is refused with exit 65") {
    // 33 distinct lengths > max_curve_points (32): per-length rows cannot give bin medians.
    try {
        one_profile(run_row + model_row(33));
        FAIL("expected an error");
    } catch (const prof::error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
        CHECK(std::string(e.what()).find("stream the rows instead") != std::string::npos);
    }
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
