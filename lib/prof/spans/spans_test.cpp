// Unit tests of the span arithmetic, the span, DuckDB and Polars readers, fit, staleness and the
// query_profile record (spans.hpp).
#include "prof/spans/spans_test_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("spans: the SPEC example gives 0.015 s elapsed, 0.001 s fixed, not the 0.021 s a sum gives") {
    // optimization 0-1000, scan 1000-11000, filter 5000-15000 (microseconds).
    auto s = spans_of({{"optimization", 0, 1000}, {"scan", 1000, 11000}, {"filter", 5000, 15000}});
    auto p = build_from_spans(s, opts(10), {"optimization"}, "polars");
    CHECK(p.fixed_seconds == 0.001);
    // (15000 - 1000) µs = 0.014 s over 10 rows.
    CHECK(p.per_row_seconds == doctest::Approx(0.0014).epsilon(1e-15));
    CHECK(p.estimate(10) == doctest::Approx(0.015));
    REQUIRE(p.nodes.size() == 3);
    CHECK(p.nodes[0].node == "filter");
    CHECK(p.nodes[1].node == "optimization");
    CHECK_FALSE(p.nodes[1].scales_with_rows);
    CHECK(p.warnings.back() == std::string(single_run_warning));
}

TEST_CASE("spans: overlapping, nested, unsorted and tied intervals are unioned once") {
    // [0,10) ∪ [5,20) ∪ [2,3) nested ∪ [20,25) touching ∪ [20,25) tied ∪ [30,31) = 25 + 1 = 26.
    std::vector<std::pair<std::int64_t, std::int64_t>> iv{{20, 25}, {2, 3}, {0, 10}, {30, 31}, {5, 20}, {20, 25}};
    CHECK(union_length(iv) == 26u);
    std::vector<std::pair<std::int64_t, std::int64_t>> none;
    CHECK(union_length(none) == 0u);
    std::vector<std::pair<std::int64_t, std::int64_t>> empty_spans{{5, 5}, {7, 7}};
    CHECK(union_length(empty_spans) == 0u);
}

TEST_CASE("spans: gaps between spans are scaling cost, and two fixed nodes overlap once") {
    // plan 0-100 and opt 50-150 (fixed union 150); scan 400-1000; gap 150-400 scales.
    auto s = spans_of({{"scan", 400, 1000}, {"opt", 50, 150}, {"plan", 0, 100}});
    query_options o = opts(100);
    o.fixed_nodes = {"plan", "opt"};
    auto p = build_from_spans(s, o, {}, "polars");
    CHECK(p.fixed_seconds == 0.00015);
    // elapsed 1000 µs − fixed 150 µs = 850 µs over 100 rows = 8.5e-6 s per row.
    CHECK(p.per_row_seconds == doctest::Approx(8.5e-6).epsilon(1e-15));
}

TEST_CASE("spans: end before start is bad input naming the line, in CSV and in JSON Lines") {
    try {
        read_polars_csv("node,start,end\nscan,0,10\nfilter,20,5\n", "p.csv");
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(e.line_number == 3);
        CHECK(std::string(e.what()) == "p.csv:3: span 'filter' ends before it starts (start 20, end 5)");
    }
    try {
        read_polars_jsonl("{\"node\":\"a\",\"start\":0,\"end\":1}\n\n{\"node\":\"b\",\"start\":9,\"end\":2}\n", "p.jsonl");
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(e.line_number == 3);
    }
}

TEST_CASE("spans: a CSV node name may hold quoted commas, and quoted integers in JSON Lines are read") {
    auto s = read_polars_csv("start,node,end\n0,\"group_by(a, b)\",7\n", "p.csv");
    REQUIRE(s.spans.size() == 1);
    CHECK(s.names[0] == "group_by(a, b)");
    CHECK(s.spans[0].end_ns == 7000);
    auto j = read_polars_jsonl("{\"node\":\"x\",\"start\":\"3\",\"end\":\"9\"}", "p");
    CHECK(j.spans[0].start_ns == 3000);
    CHECK_THROWS_AS(read_polars_csv("node,begin,end\n", "p.csv"), input_error);
}

TEST_CASE("spans: rows must be given and positive") {
    auto s = spans_of({{"scan", 0, 10}});
    query_options o = opts(1);
    o.rows.reset();
    CHECK_THROWS_AS(build_from_spans(s, o, {}, "polars"), usage_error);
    o.rows = 0;
    CHECK_THROWS_AS(build_from_spans(s, o, {}, "polars"), usage_error);
}

TEST_CASE("duckdb: the detailed 1e3-row profile splits latency into planner fixed cost and per-row cost") {
    std::string text = read_file(input_path("duckdb_profile_1000.json"));
    CHECK(detect_span_format(text, "d") == span_format::duckdb);
    auto d = read_duckdb_profile(text, "d.json");
    CHECK(d.latency_s == 0.001875303);
    REQUIRE(d.fixed_s);
    // planner 0.000206173 + all_optimizers 0.000293573 + physical_planner 0.000040403.
    CHECK(*d.fixed_s == doctest::Approx(0.000540149).epsilon(1e-12));
    CHECK(d.rows_scanned == std::optional<std::uint64_t>(1000));
    query_options o = opts(1);
    o.rows.reset();
    auto p = build_from_duckdb(d, o, "d.json");
    CHECK(p.rows == 1000);
    // (0.001875303 − 0.000540149) / 1000 rows.
    CHECK(p.per_row_seconds == doctest::Approx(1.335154e-06).epsilon(1e-12));
}

TEST_CASE("duckdb: a standard-mode profile is refused with the way out, unless --fixed-seconds is given") {
    std::string text = read_file(input_path("duckdb_profile_1000_standard.json"));
    auto d = read_duckdb_profile(text, "s.json");
    CHECK_FALSE(d.fixed_s);
    query_options o = opts(1000);
    try {
        build_from_duckdb(d, o, "s.json");
        FAIL("expected a refusal");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
        CHECK(std::string(e.what()).find("profiling_mode='detailed'") != std::string::npos);
        CHECK(std::string(e.what()).find("--fixed-seconds") != std::string::npos);
    }
    o.fixed_seconds = 0.0005;
    auto p = build_from_duckdb(d, o, "s.json");
    CHECK(p.fixed_seconds == 0.0005);
}

namespace {

std::string duckdb_refusal(const std::string& file, const query_options& o) {
    try {
        build_from_duckdb(read_duckdb_profile(read_file(input_path(file)), file), o, file);
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
        return e.what();
    }
    return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("duckdb: EXPLAIN ANALYZE of DuckDB 1.1.3 and 1.3.2 (latency 0.0) is refused, never priced at 0") {
    query_options o = opts(1000000);
    for (const char* f : {"duckdb-1.1.3-explain-analyze-1e6.json", "duckdb-1.3.2-explain-analyze-1e6.json"}) {
        auto d = read_duckdb_profile(read_file(input_path(f)), f);
        CHECK(d.latency_s == 0);
        CHECK(d.explain_analyze);
        CHECK(d.planner_zero);  // planner, all_optimizers, physical_planner all written 0.0
        CHECK_FALSE(d.fixed_s);
        CHECK(d.operator_seconds > 0.05);  // the operators did run
        std::string why = duckdb_refusal(f, o);
        CHECK(has(why, "'latency' is 0 s"));
        CHECK(has(why, "PRAGMA enable_profiling='json'"));
        o.fixed_seconds = 0;  // no way round an untimed query
        CHECK(has(duckdb_refusal(f, o), "'latency' is 0 s"));
        o.fixed_seconds.reset();
    }
}

TEST_CASE("duckdb: an operator tree 511 deep (1,024 JSON levels, the bound) is read whole") {
    // A left-deep plan: each operator an object in its parent's "children" array, 2 levels
    // each, below the root object; the last one's empty "children" is level 1,024. 511
    // operators of 0.001 s sum to 0.511 s.
    std::string text = R"({"latency":1.0,"cumulative_rows_scanned":10,"children":)";
    for (int k = 0; k < 511; ++k) text += R"([{"operator_name":"UNION","operator_timing":0.001,"children":)";
    text += "[]";
    for (int k = 0; k < 511; ++k) text += "}]";
    text += "}";
    auto d = read_duckdb_profile(text, "deep.json");
    CHECK(d.operator_seconds == doctest::Approx(0.511));
    std::string deeper = text;
    deeper.replace(deeper.rfind("[]"), 2, "[[]]");  // one level past the bound
    CHECK_THROWS_WITH(read_duckdb_profile(deeper, "deeper.json"), doctest::Contains("JSON nested deeper than 1024 levels"));
}

TEST_CASE("duckdb: planner timings all 0.0 are not timed, so the fixed part is unknown, as in standard mode") {
    std::string text = R"({"latency":0.01,"planner":0.0,"all_optimizers":0.0,"physical_planner":0.0,
        "cumulative_rows_scanned":10,"children":[{"operator_name":"SEQ_SCAN","operator_timing":0.005}]})";
    auto d = read_duckdb_profile(text, "z.json");
    CHECK(d.planner_zero);
    CHECK_FALSE(d.fixed_s);
    CHECK_FALSE(d.before_1_5);
    try {
        build_from_duckdb(d, opts(10), "z.json");
        FAIL("expected a refusal");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
        CHECK(has(e.what(), "all 0 s (not timed)"));
    }
    query_options o = opts(10);
    o.fixed_seconds = 0.001;
    CHECK(build_from_duckdb(d, o, "z.json").per_row_seconds == doctest::Approx((0.01 - 0.001) / 10));
}

TEST_CASE("duckdb: before 1.5 cumulative_rows_scanned counts rows once per thread, so --rows is required") {
    query_options o = opts(1);
    o.rows.reset();
    // 1e6 rows on 2 threads: 1.1.3, 1.3.2 and 1.4.4 write 2000000, 1.5.6 writes 1000000.
    for (const char* f : {"duckdb-1.1.3-1e6.json", "duckdb-1.3.2-1e6.json", "duckdb-1.4.4-1e6.json"}) {
        auto d = read_duckdb_profile(read_file(input_path(f)), f);
        CHECK(d.rows_scanned == std::optional<std::uint64_t>(2000000));
        CHECK(d.before_1_5);
        std::string why = duckdb_refusal(f, o);
        CHECK(has(why, "before 1.5 (its operator names say so)"));
        CHECK(has(why, "give --rows N"));
        query_options given = opts(1000000);
        CHECK(build_from_duckdb(d, given, f).rows == 1000000);
    }
    auto d156 = read_duckdb_profile(read_file(input_path("duckdb-1.5.6-1e6.json")), "n");
    CHECK_FALSE(d156.before_1_5);
    CHECK(build_from_duckdb(d156, o, "n").rows == 1000000);
    // A 1.5 profile said to come from an older engine is refused too.
    o.engine_version = "1.4.1";
    CHECK(has(duckdb_refusal("duckdb-1.5.6-1e6.json", o), "(--engine-version 1.4.1)"));
    CHECK(duckdb_version_before_1_5("v1.3.2"));
    CHECK(duckdb_version_before_1_5("0.10.3"));
    CHECK_FALSE(duckdb_version_before_1_5("1.5.0"));
    CHECK_FALSE(duckdb_version_before_1_5("2.0"));
    CHECK_FALSE(duckdb_version_before_1_5(""));
    CHECK_FALSE(duckdb_version_before_1_5("main"));
}

TEST_CASE("duckdb: node names are trimmed of white space, and operator_type names an operator with no name") {
    auto names = [](const char* f) {
        std::vector<std::string> n;
        for (const auto& [name, secs] : read_duckdb_profile(read_file(input_path(f)), f).operators) n.push_back(name);
        return n;
    };
    auto n132 = names("duckdb-1.3.2-1e6.json");
    CHECK(std::find(n132.begin(), n132.end(), "SEQ_SCAN") != n132.end());  // written "SEQ_SCAN "
    CHECK(std::find(n132.begin(), n132.end(), "SEQ_SCAN ") == n132.end());
    auto n113 = names("duckdb-1.1.3-1e6.json");  // 1.1.3 writes operator_type only
    CHECK(std::find(n113.begin(), n113.end(), "TABLE_SCAN") != n113.end());
    auto n156 = names("duckdb-1.5.6-1e6.json");
    CHECK(std::find(n156.begin(), n156.end(), "SEQ_SCAN") != n156.end());
}

TEST_CASE("fit: the 1e3 and 1e5 DuckDB runs together price 1e5 rows as measured; the 1e3 run alone ~45x over") {
    query_options o = opts(1);
    o.rows.reset();
    auto small = build_from_duckdb(read_duckdb_profile(read_file(input_path("duckdb_profile_1000.json")), "a"), o, "a");
    auto large = build_from_duckdb(read_duckdb_profile(read_file(input_path("duckdb_profile_100000.json")), "b"), o, "b");
    double measured = 0.002970368;  // the 1e5 profile's latency
    double alone = small.estimate(100000);
    CHECK(alone / measured == doctest::Approx(45.13).epsilon(0.01));
    auto f = fit_query_profiles({large, small});
    CHECK(f.source == "fit");
    CHECK(f.runs == 2);
    CHECK(f.rows == 100000);
    CHECK(f.estimate(100000) == doctest::Approx(measured).epsilon(1e-9));
    // Slope (0.002970368 − 0.001875303) / 99000; intercept 0.001875303 − 1000 × slope.
    CHECK(f.per_row_seconds == doctest::Approx(1.1061262626e-08).epsilon(1e-9));
    CHECK(f.fixed_seconds == doctest::Approx(0.00186424174).epsilon(1e-9));
    REQUIRE(f.residuals.size() == 2);
    CHECK(f.residuals[0].rows == 1000);
}

TEST_CASE("fit: non-negative least squares clamps a negative slope or intercept to the edge") {
    // y = 1 + 2x exactly: interior solution.
    auto a = nnls_line({1, 2, 3}, {3, 5, 7});
    CHECK(a.intercept == doctest::Approx(1));
    CHECK(a.slope == doctest::Approx(2));
    // Decreasing times: slope clamps to 0, intercept = mean 2.
    auto b = nnls_line({1, 2, 3}, {3, 2, 1});
    CHECK(b.slope == 0);
    CHECK(b.intercept == doctest::Approx(2));
    // Line through (1,1),(2,3): intercept −1 clamps to 0; slope = Σxy/Σx² = 7/5.
    auto c = nnls_line({1, 2}, {1, 3});
    CHECK(c.intercept == 0);
    CHECK(c.slope == doctest::Approx(1.4));
}

TEST_CASE("fit: refuses mixed plans, mixed engines and a single row count") {
    query_profile a = parse_profile(R"({"kind":"query_profile","plan_key":"q","host":"h","rows":10,"fixed_seconds":0.1,"per_row_seconds":0.01})");
    query_profile b = a;
    CHECK_THROWS_AS(fit_query_profiles({a, b}), field_error);
    b.rows = 100;
    b.plan_key = "other";
    CHECK_THROWS_AS(fit_query_profiles({a, b}), field_error);
    b.plan_key = "q";
    b.engine_version = "1.5.6";
    CHECK_THROWS_AS(fit_query_profiles({a, b}), field_error);
}

TEST_CASE("query profile: a selectivity outside 0 to 1 is refused on read, as on build; null and the edges pass") {
    const std::string base = R"({"kind":"query_profile","plan_key":"q","host":"h","rows":10,"fixed_seconds":0,)"
                             R"("per_row_seconds":0.1,"nodes":[],"selectivity":)";
    for (const char* ok : {"null", "0", "1", "0.45"}) {
        CAPTURE(ok);
        CHECK_NOTHROW(parse_profile(base + ok + "}"));
    }
    for (const char* bad : {"7", "-0.1", "1.0000001", "1e999"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(parse_profile(base + bad + "}"),
                             doctest::Contains("p:1: field 'selectivity': expected a fraction from 0 to 1, found"), input_error);
    }
}

namespace {
// A fit of plan "q" on host "h" over 100,000 rows: fixed and per-row seconds as given.
query_profile fitted_profile(double fixed_s, double per_row_s) {
    query_profile p;
    p.plan_key = "q";
    p.host = "h";
    p.rows = 100000;
    p.fixed_seconds = fixed_s;
    p.per_row_seconds = per_row_s;
    p.source = "fit";
    return p;
}
}  // namespace

TEST_CASE("stale: a per-row cost of 0 cannot price more rows than it measured, even within the factor") {
    query_profile p = fitted_profile(0.003, 0);
    p.engine_version = "1.5.6";
    CHECK_FALSE(stale_reason(p, 100000, "1.5.6"));
    CHECK_FALSE(stale_reason(p, 20000, "1.5.6"));  // within what it measured: over-priced, never under
    CHECK(*stale_reason(p, 1000000, "1.5.6") ==
          "its per-row cost is 0 (clamped by the fit), so it prices every row count alike and cannot tell what 1000000 "
          "rows cost beyond the 100000 it measured");
    p.per_row_seconds = 1e-8;
    CHECK_FALSE(stale_reason(p, 1000000, "1.5.6"));  // exactly the factor (10x) is not stale
}

TEST_CASE("estimate: a clamped or extrapolated fit says so; a profile of one run, or a fit within its runs, does not") {
    query_profile p = fitted_profile(0.001, 1e-8);
    p.residuals = {{1000, 0, 0, 0}, {100000, 0, 0, 0}};
    CHECK_FALSE(estimate_caveat(p, 1000));
    CHECK_FALSE(estimate_caveat(p, 50000));
    CHECK(*estimate_caveat(p, 1000000) ==
          "estimate: plan 'q' on 'h': 1000000 rows is outside the 1000 to 100000 rows fitted: extrapolated");
    CHECK(*estimate_caveat(p, 10) == "estimate: plan 'q' on 'h': 10 rows is outside the 1000 to 100000 rows fitted: extrapolated");
    p.per_row_seconds = 0;
    CHECK(*estimate_caveat(p, 1000) == "estimate: plan 'q' on 'h': per-row cost clamped to 0, so every row count is priced alike");
    p.per_row_seconds = 1e-8;
    p.fixed_seconds = 0;
    CHECK(*estimate_caveat(p, 1000) == "estimate: plan 'q' on 'h': fixed cost clamped to 0");
    p.source = "duckdb";
    CHECK_FALSE(estimate_caveat(p, 1000000000));
}

TEST_CASE("fit and estimate: no query_profile at all is refused (65), never a quiet empty success") {
    try {
        fit_located_profiles({});
        FAIL("expected a refusal");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
        CHECK(std::string(e.what()) == "fit: no query_profile read: give the runs to fit, at two or more row counts");
    }
    try {
        estimate_lines({}, 10, [](const std::string&) {});
        FAIL("expected a refusal");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
        CHECK(std::string(e.what()) == "estimate: no query_profile read, so nothing prices the query");
    }
}

TEST_CASE("polars: the default fixed node is said, with its seconds; a named one is not") {
    auto s = spans_of({{"optimization", 0, 9000}, {"scan", 9000, 19000}});
    query_options o = opts(10);
    auto p = build_from_spans(s, o, {"optimization"}, "polars");
    CHECK(p.fixed_seconds == 0.009);
    REQUIRE(p.warnings.size() == 2);
    CHECK(p.warnings[0] ==
          "fixed cost is the node 'optimization' by default (0.009 s); name the fixed nodes with --fixed NAME to choose others");
    o.fixed_nodes = {"optimization"};
    auto named = build_from_spans(s, o, {"optimization"}, "polars");
    REQUIRE(named.warnings.size() == 1);
    CHECK(named.warnings[0] == std::string(single_run_warning));
}

TEST_CASE("stale: 10x rows is the edge, 11x and 1/11 are stale, as are another and an unknown engine") {
    query_profile p;
    p.rows = 1000;
    p.per_row_seconds = 1e-6;
    p.engine_version = "1.5.6";
    CHECK_FALSE(stale_reason(p, 10000, "1.5.6"));
    CHECK_FALSE(stale_reason(p, 100, "1.5.6"));
    auto r = stale_reason(p, 11000, "1.5.6");
    REQUIRE(r);
    CHECK(*r == "11000 rows is 11x the profile's 1000 rows (more than the factor 10)");
    CHECK(stale_reason(p, 90, "1.5.6"));
    CHECK(*stale_reason(p, 1000, "1.6.0") ==
          "the profile was taken on engine version '1.5.6', the engine is now '1.6.0'");
    CHECK_FALSE(stale_reason(p, 1500, "1.5.6", 1.5));
    CHECK(stale_reason(p, 1600, "1.5.6", 1.5));
    p.engine_version = "";
    CHECK(*stale_reason(p, 1000, "1.5.6") == "the profile's engine version is unknown");
    CHECK(*stale_reason(p, 100000, "") ==
          "100000 rows is 100x the profile's 1000 rows (more than the factor 10); the profile's engine version is unknown");
}

TEST_CASE("query_profile: the record round-trips byte for byte") {
    auto s = spans_of({{"optimization", 0, 1000}, {"scan", 1000, 11000}});
    query_options o = opts(7);
    o.selectivity = 0.25;
    o.engine_version = "1.2.0";
    auto p = build_from_spans(s, o, {"optimization"}, "polars");
    std::string line = write_query_profile(p);
    CHECK(line.rfind("{\"kind\":\"query_profile\",\"plan_key\":\"q\",\"host\":\"h\",\"rows\":7,\"fixed_seconds\":0.001,", 0) == 0);
    CHECK(write_query_profile(parse_profile(line)) == line);
    CHECK_THROWS_AS(parse_profile(R"({"kind":"query_profile","plan_key":"q","host":"h","rows":0,"fixed_seconds":0,"per_row_seconds":0})"),
                    input_error);
    CHECK_THROWS_AS(parse_profile(R"({"kind":"profile","plan_key":"q"})"), input_error);
}

TEST_CASE("detect: Polars JSON Lines and CSV, and an unknown text asks for --input-format") {
    CHECK(detect_span_format("{\"node\":\"a\",\"start\":0,\"end\":1}\n", "x") == span_format::polars_jsonl);
    CHECK(detect_span_format("\xEF\xBB\xBFnode,start,end\r\na,0,1\r\n", "x") == span_format::polars_csv);
    CHECK(detect_span_format("[]", "x") == span_format::chrome);
    CHECK_THROWS_AS(detect_span_format("hello\n", "x"), input_error);
}

TEST_CASE("spans: the union of many random intervals equals a microsecond-by-microsecond count") {
    // 20,000 intervals (above the radix-sort threshold) in [0, 100000): counted against a bitmap.
    std::uint64_t state = 7;
    auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    std::vector<bool> covered(100000, false);
    for (int i = 0; i < 20000; ++i) {
        auto s = static_cast<std::int64_t>(next() % 99000);
        auto e = s + static_cast<std::int64_t>(next() % 30);
        iv.push_back({s, e});
        for (auto t = s; t < e; ++t) covered[static_cast<std::size_t>(t)] = true;
    }
    auto expected = static_cast<std::uint64_t>(std::count(covered.begin(), covered.end(), true));
    CHECK(union_length(iv) == expected);
}

TEST_CASE("spans: the unions computed on several threads equal those computed on one") {
    // 30,000 random intervals over 7 nodes, two of them fixed: every node's union, the fixed
    // union and the elapsed time are the same for 1 to 9 threads (more threads than tasks too).
    std::uint64_t state = 11;
    auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    span_set s;
    for (int k = 0; k < 7; ++k) s.names.push_back(fmt::format("n{}", k));
    for (int i = 0; i < 30000; ++i) {
        auto start = static_cast<std::int64_t>(next() % 1000000) - 500000;
        s.spans.push_back({start, start + static_cast<std::int64_t>(next() % 400), static_cast<std::uint32_t>(next() % 7)});
    }
    const std::vector<bool> fixed = {false, true, false, false, true, false, false};
    span_summary one = summarize_spans(s, fixed, 1);
    CHECK(one.fixed_ns > 0);
    for (unsigned jobs = 2; jobs <= 9; ++jobs) {
        CAPTURE(jobs);
        span_summary many = summarize_spans(s, fixed, jobs);
        CHECK(many.elapsed_ns == one.elapsed_ns);
        CHECK(many.fixed_ns == one.fixed_ns);
        CHECK(many.node_ns == one.node_ns);
    }
    // The fixed union by hand, from the nodes' spans: the union of n1's and n4's intervals.
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    for (const auto& sp : s.spans)
        if (sp.node == 1 || sp.node == 4) iv.push_back({sp.start_ns, sp.end_ns});
    CHECK(union_length(iv) == one.fixed_ns);
}

TEST_CASE("query profile: an estimate beyond double range is refused, and a fit of huge runs is made on scaled times") {
    query_profile p = parse_profile(R"({"kind":"query_profile","plan_key":"q","host":"h","rows":10,"fixed_seconds":0,"per_row_seconds":1e308})");
    CHECK(finite_estimate(p, 1) == 1e308);
    CHECK_THROWS_WITH_AS(finite_estimate(p, 10), doctest::Contains("beyond the range of a double"), field_error);
    // 1e308 + 1e306 x rows at 10 and 20 rows: the unscaled sums of squares overflow (a null
    // slope before); scaled, the line is found.
    query_profile a = parse_profile(R"({"kind":"query_profile","plan_key":"q","host":"h","rows":10,"fixed_seconds":1e308,"per_row_seconds":1e306})");
    query_profile b = a;
    b.rows = 20;
    auto f = fit_query_profiles({a, b});
    CHECK(f.fixed_seconds == doctest::Approx(1e308).epsilon(1e-12));
    CHECK(f.per_row_seconds == doctest::Approx(1e306).epsilon(1e-12));
    // A run whose own estimate overflows gives no fit.
    b.per_row_seconds = 1e300;
    b.rows = 10000000000;
    CHECK_THROWS_AS(fit_query_profiles({a, b}), field_error);
}

TEST_CASE("query profile: the writer refuses a non-finite number instead of writing null") {
    query_profile p = parse_profile(R"({"kind":"query_profile","plan_key":"q","host":"h","rows":10,"fixed_seconds":0,"per_row_seconds":1})");
    CHECK_NOTHROW(write_query_profile(p));
    p.per_row_seconds = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(write_query_profile(p), error);
    p.per_row_seconds = 1;
    p.residuals.push_back({10, 1, std::numeric_limits<double>::quiet_NaN(), 0});
    CHECK_THROWS_AS(write_query_profile(p), error);
}
