// Unit tests of the span arithmetic, the span/DuckDB readers, fit, staleness and the
// query_profile record (spans.hpp).
#include "prof/core/errors.hpp"
#include "prof/io/byte_source.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/spans/spans.hpp"
#include "prof/spans/operations.hpp"
#include "prof/spans/chrome_paths.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <cstdlib>
#include <fmt/format.h>
#include <doctest/doctest.h>

using namespace prof;

namespace {

std::string input_path(const std::string& name) {
    const char* root = std::getenv("PROF_ROOT");
    return std::string(root ? root : ".") + "/testdata/inputs/" + name;
}

span_set spans_of(std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> rows) {
    std::string text = "node,start,end\n";
    for (auto& [n, s, e] : rows) text += n + "," + std::to_string(s) + "," + std::to_string(e) + "\n";
    return read_polars_csv(text, "t.csv");
}

query_options opts(std::uint64_t rows) {
    query_options o;
    o.plan_key = "q";
    o.host = "h";
    o.rows = rows;
    return o;
}

query_profile parse_profile(const std::string& line) {
    query_profile out;
    line_reader in(string_source(line + "\n", "p"));
    for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { out = read_query_profile(o); });
    return out;
}

std::string chrome(const std::string& events) {
    return std::string("{\"traceEvents\":[\n") + events + "\n]}";
}

// The trace read by the given paths; jobs > 1 cuts even a short trace into that many chunks.
span_set read_chrome(const std::string& text, std::size_t batch = std::size_t{1} << 20, bool scan = true, unsigned jobs = 1,
                     chrome_read_stats* stats = nullptr) {
    simdjson::padded_string p(text);
    chrome_paths paths;
    paths.batch_bytes = batch;
    paths.scan = scan;
    paths.jobs = jobs;
    paths.min_chunk_bytes = 1;
    return read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, stats);
}

chrome_read_stats how_read(const std::string& text, unsigned jobs = 1) {
    chrome_read_stats st;
    read_chrome(text, std::size_t{1} << 20, true, jobs, &st);
    return st;
}

// Everything a reader produced, as one comparable text.
std::string dump(const span_set& s) {
    std::string out = fmt::format("events {} async {} ub {} ue {} unclosed {} unit '{}'\n", s.events, s.async_unmatched,
                                  s.unmatched_begins, s.unmatched_ends, s.unclosed, s.display_time_unit);
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        out += fmt::format("{} {} {} {}\n", defect_name(static_cast<event_defect>(k)), s.defects[k].count,
                           s.defects[k].first_event, s.defects[k].first_line);
    for (const auto& sp : s.spans) out += fmt::format("{} {} {}\n", s.names[sp.node], sp.start_ns, sp.end_ns);
    return out;
}

}  // namespace

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

TEST_CASE("chrome: X events and B/E pairs matched per thread with nesting, in any order") {
    // Thread 1: B outer 100, B inner 110, E 120 (inner), E 200 (outer), listed out of order.
    // Thread 2: X scan 150+100. Instants, metadata and counters do not count.
    auto s = read_chrome(chrome(R"({"ph":"E","pid":1,"tid":1,"ts":200},
{"ph":"B","pid":1,"tid":1,"ts":110,"name":"inner"},
{"ph":"M","pid":1,"tid":1,"ts":0,"name":"thread_name","args":{"name":"x"}},
{"ph":"M","pid":1,"tid":1,"ts":0,"name":"thread_name","args":{"name":"x"}},
{"ph":"B","pid":1,"tid":1,"ts":100,"name":"outer"},
{"ph":"I","pid":1,"tid":1,"ts":5,"name":"early"},
{"ph":"C","pid":1,"tid":1,"ts":900,"name":"ctr","args":{"v":1}},
{"ph":"E","pid":1,"tid":1,"ts":120},
{"ph":"X","pid":1,"tid":2,"ts":150,"dur":100,"name":"scan"})"));
    CHECK(s.spans.size() == 3);
    CHECK(s.events == 9);
    query_options o = opts(1);
    o.fixed_nodes = {"inner"};
    auto p = build_from_spans(s, o, {}, "chrome");
    // elapsed = 250 − 100 = 150 µs (the instant at 5 and the counter at 900 do not count).
    CHECK(p.fixed_seconds == 1e-05);
    CHECK(p.per_row_seconds == doctest::Approx(140e-6).epsilon(1e-15));
    REQUIRE(p.nodes.size() == 3);
    CHECK(p.nodes[0].node == "inner");
    CHECK(p.nodes[1].node == "outer");
    CHECK(p.nodes[1].seconds == 0.0001);
}

TEST_CASE("chrome: async begins without an end are ignored and counted; fractional microseconds are kept to the ns") {
    auto s = read_chrome(R"([{"ph":"b","cat":"c","id":"0x1","name":"a","ts":1,"pid":1,"tid":1},
{"ph":"e","cat":"c","id":"0x1","name":"a","ts":2,"pid":1,"tid":1},
{"ph":"b","cat":"c","id":"0x2","name":"a","ts":3,"pid":1,"tid":1},
{"ph":"X","name":"w","ts":10.4,"dur":5.6,"pid":1,"tid":1}])");
    CHECK(s.async_unmatched == 1);
    REQUIRE(s.spans.size() == 1);
    // 10.4 µs = 10400 ns; + 5.6 µs = 16000 ns.
    CHECK(s.spans[0].start_ns == 10400);
    CHECK(s.spans[0].end_ns == 16000);
}

TEST_CASE("chrome: fractional microseconds are exact nanoseconds on every path, never a double") {
    // 1.5 + 2.5 µs: 1500..4000 ns. 10.4 + 0.4: 10400..10800. 20 + 0.5: 20000..20500.
    // 1700000000000000 + 3.5 µs: a double cannot hold 1700000000000003.5, the ns integer can.
    // 198093488368.463 + 425.453 (a PyTorch kernel's digits): 198093488368463..198093488793916.
    std::string text = chrome(R"({"ph":"X","name":"a","ts":1.5,"dur":2.5,"pid":1,"tid":1},
{"ph":"X","name":"b","ts":10.4,"dur":0.4,"pid":1,"tid":1},
{"ph":"X","name":"c","ts":20,"dur":0.5,"pid":1,"tid":1},
{"ph":"X","name":"d","ts":1700000000000000,"dur":3.5,"pid":1,"tid":1},
{"ph":"X","name":"e","ts":198093488368.463,"dur":425.453,"pid":1,"tid":1})");
    std::string escaped = text;  // an escape in a name sends that event through simdjson
    escaped.replace(escaped.find("\"name\":\"a\""), 10, "\"name\":\"\\u0061\"");
    for (const std::string& t : {text, escaped})
        for (std::size_t batch : {std::size_t{0}, std::size_t{64}, std::size_t{1} << 20}) {
            span_set s = read_chrome(t, batch);
            REQUIRE(s.spans.size() == 5);
            CHECK(s.spans[0].start_ns == 1500);
            CHECK(s.spans[0].end_ns == 4000);
            CHECK(s.spans[1].start_ns == 10400);
            CHECK(s.spans[1].end_ns == 10800);
            CHECK(s.spans[2].end_ns == 20500);
            CHECK(s.spans[3].end_ns == 1700000000000003500);
            CHECK(s.spans[4].start_ns == 198093488368463);
            CHECK(s.spans[4].end_ns == 198093488793916);
        }
    // A key given twice: the later value wins, fraction or not.
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set twice = read_chrome(chrome(R"({"ph":"X","name":"t","ts":1.5,"dur":2.5,"ts":7,"dur":1})"), batch);
        REQUIRE(twice.spans.size() == 1);
        CHECK(twice.spans[0].start_ns == 7000);
        CHECK(twice.spans[0].end_ns == 8000);
    }
    CHECK_THROWS_WITH_AS(read_chrome(chrome(R"({"ph":"X","name":"n","ts":5,"dur":-0.25})")),
                         doctest::Contains("negative dur (-0.25)"), input_error);
}

TEST_CASE("chrome: a microsecond token reads as nanoseconds from its digits, rounded half away from zero") {
    auto ns = [](std::string_view t) {
        std::int64_t v = -42;
        return micros_token_to_ns(t, v) ? v : std::int64_t{-42};
    };
    CHECK(ns("5.1") == 5100);
    CHECK(ns("500.1") == 500100);
    CHECK(ns("0") == 0);
    CHECK(ns("-0") == 0);
    CHECK(ns("1.5e2") == 150000);        // 150 µs
    CHECK(ns("1e-3") == 1);              // 0.001 µs
    CHECK(ns("0.0005") == 1);            // 0.5 ns: half away from zero
    CHECK(ns("-0.0005") == -1);
    CHECK(ns("0.00049999999999999999999") == 0);  // just below half: a double would say 0.0005
    CHECK(ns("0.50000000000000000000000001") == 500);
    CHECK(ns("12.5E+1") == 125000);
    CHECK(ns("0e999999999999") == 0);
    CHECK(ns("1e-999999999999") == 0);
    CHECK(ns("8999999999999999.999") == 8999999999999999999);
    CHECK(ns("9e15") == -42);              // the bound itself is refused
    CHECK(ns("8999999999999999.9996") == -42);  // rounds up onto the bound
    CHECK(ns("-9000000000000000") == -42);
    CHECK(ns("1e999") == -42);
}

TEST_CASE("chrome: with no fixed node named, fixed is 0 and a warning says all cost scales") {
    auto s = read_chrome(R"([{"ph":"X","name":"w","ts":0,"dur":50,"pid":1,"tid":1}])");
    auto p = build_from_spans(s, opts(5), {}, "chrome");
    CHECK(p.fixed_seconds == 0);
    REQUIRE(p.warnings.size() == 2);
    CHECK(p.warnings[0] == "no fixed node named (--fixed NAME): all cost is treated as scaling with rows");
}

TEST_CASE("chrome: a negative dur names the line and the event") {
    try {
        read_chrome(chrome("{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":-3}"));
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()) == "trace.json:3: event 2: 'X' event 'b' has a negative dur (-3)");
    }
    CHECK_THROWS_AS(read_chrome("[{\"ph\":\"X\",\"ts\":0,"), input_error);
    CHECK_THROWS_AS(read_chrome("{\"other\":[]}"), input_error);
}

TEST_CASE("chrome: the real Node.js trace gives 95 spans over 315962 µs and 42 unended async begins") {
    // Checked independently in Python: 63 X events + 32 matched B/E pairs; min ts 629071427,
    // max end 629387389.
    std::string text = read_file(input_path("node_trace.json"));
    CHECK(detect_span_format(text, "t") == span_format::chrome);
    auto s = read_chrome(text);
    CHECK(s.events == 429);
    CHECK(s.spans.size() == 95);
    CHECK(s.async_unmatched == 42);
    CHECK(s.unmatched_begins == 0);
    CHECK(s.unmatched_ends == 0);
    auto sum = summarize_spans(s, std::vector<bool>(s.names.size(), false));
    CHECK(sum.elapsed_ns == 315962000u);
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

TEST_CASE("stale: a per-row cost of 0 cannot price more rows than it measured, even within the factor") {
    query_profile p;
    p.plan_key = "q";
    p.host = "h";
    p.rows = 100000;
    p.fixed_seconds = 0.003;
    p.per_row_seconds = 0;
    p.engine_version = "1.5.6";
    p.source = "fit";
    CHECK_FALSE(stale_reason(p, 100000, "1.5.6"));
    CHECK_FALSE(stale_reason(p, 20000, "1.5.6"));  // within what it measured: over-priced, never under
    CHECK(*stale_reason(p, 1000000, "1.5.6") ==
          "its per-row cost is 0 (clamped by the fit), so it prices every row count alike and cannot tell what 1000000 "
          "rows cost beyond the 100000 it measured");
    p.per_row_seconds = 1e-8;
    CHECK_FALSE(stale_reason(p, 1000000, "1.5.6"));  // exactly the factor (10x) is not stale
}

TEST_CASE("estimate: a clamped or extrapolated fit says so; a profile of one run, or a fit within its runs, does not") {
    query_profile p;
    p.plan_key = "q";
    p.host = "h";
    p.rows = 100000;
    p.fixed_seconds = 0.001;
    p.per_row_seconds = 1e-8;
    p.source = "fit";
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

TEST_CASE("chrome: reading in small batches gives exactly what one whole-document parse gives") {
    // Cuts fall on "},{" inside strings and inside nested arrays of objects: those batches do not
    // parse and are extended; ids and tids as numbers and strings.
    std::string tricky = chrome(R"({"ph":"X","name":"a},{b","ts":1,"dur":2,"pid":1,"tid":1},
{"ph":"X","name":"c","ts":3,"dur":4,"pid":1,"tid":1,"args":{"list":[{"x":1},{"y":2},{"z":3}]}},
{"ph":"B","name":"d","ts":5,"pid":"p","tid":"t"},
{"ph":"b","cat":"c","id":"0x1","name":"a","ts":6,"pid":1,"tid":1},
{"ph":"E","ts":9,"pid":"p","tid":"t"},
{"ph":"X","name":"e\\u0041","ts":10.6,"dur":1,"pid":2,"tid":2})");
    for (std::size_t batch : {1, 8, 40, 100}) CHECK(dump(read_chrome(tricky, batch)) == dump(read_chrome(tricky, 0)));
    std::string node = read_file(input_path("node_trace.json"));
    for (std::size_t batch : {1, 500, 4096, 65536}) CHECK(dump(read_chrome(node, batch)) == dump(read_chrome(node, 0)));
    // A bad event found by a batch is still reported by the whole-document path, with its line.
    try {
        read_chrome(chrome("{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":-3}"), 1);
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()) == "trace.json:3: event 2: 'X' event 'b' has a negative dur (-3)");
    }
}

namespace {

// A random trace event in one of the spellings a producer may use: every phase, integer,
// fractional and exponent time stamps (only integers when `fractional` is false, so that events
// the scanner declines stay in the DOM batches), numbers in strings, names with escapes and
// non-ASCII text, pids and tids as numbers, strings, escaped strings, -0 and 1.0, nested args
// with arrays of objects and surrogate pairs, keys in any order, whitespace anywhere; with
// `defects`, the ones a reader tolerates and counts (no dur, no ts, null times, {} events,
// unknown phases, 'E' names that differ from their 'B'); with `bad`, now and then something
// that is an error.
std::string random_event(std::mt19937_64& rng, bool bad, bool plain, bool fractional, bool defects) {
    auto pick = [&](std::initializer_list<const char*> xs) {
        auto k = std::uniform_int_distribution<std::size_t>(0, xs.size() - 1)(rng);
        return std::string(*(xs.begin() + static_cast<std::ptrdiff_t>(k)));
    };
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    auto ws = [&]() { return chance(0.15) ? pick({" ", "\n", "\t ", "\r\n  "}) : std::string(); };
    if (defects && chance(0.03)) return "{" + ws() + "}";
    std::vector<std::pair<std::string, std::string>> fields;
    std::string ph = pick({"X", "X", "X", "X", "B", "E", "B", "E", "i", "M", "b", "e", "C"});
    if (defects && chance(0.04)) ph = pick({"XXX", "Q", "", "xX"});
    if (!(defects && chance(0.02))) fields.push_back({"ph", "\"" + ph + "\""});
    else if (chance(0.5)) fields.push_back({"ph", "5"});
    auto time = [&](bool is_dur) {
        if (defects && chance(0.03)) return std::string("null");
        if (chance(0.05)) return pick({"\"100\"", "\"37\"", "\"0\""});
        if (fractional && chance(0.05)) return pick({"\"5.1\"", "\"1.5e2\"", "\"0.0005\""});
        if (!fractional) return is_dur ? pick({"10", "0", "300", "45"}) : pick({"100", "250", "1000", "37", "0", "-3"});
        if (is_dur) return pick({"10", "0", "7.6", "300", "2e1", "45", "0.5", "2.5", "0.4", "500.1", "0.0015", "425.453"});
        return pick({"100", "250", "1000", "37", "0", "12.5", "1.5e2", "99.49", "-3", "1e0", "5.1", "0.0005",
                     "198093488368.463", "0.50000000000000000000000001", "0.70000000000000000000"});
    };
    if (!(defects && chance(0.05))) fields.push_back({"ts", time(false)});
    if (ph == "M" && defects && chance(0.2)) fields.push_back({"ts", pick({"null", "\"abc\"", "true", "9e99"})});
    if (ph == "X" && !(defects && chance(0.05)))
        fields.push_back({"dur", bad && chance(0.05) ? std::string("-4") : time(true)});
    if (bad && chance(0.03)) fields.push_back({"ts", pick({"\"abc\"", "true", "{}", "9e15"})});
    if (plain) {  // the spellings the scanner takes
        fields.push_back({"name", pick({"\"scan\"", "\"optimization\"", "\"sort\"", "\"a},{b\"", "\"café\""})});
        fields.push_back({"pid", pick({"1", "\"1\"", "2", "0", "\"p1\""})});
        fields.push_back({"tid", pick({"7", "\"7\"", "8", "\"t\""})});
    } else {
        fields.push_back({"name", pick({"\"scan\"", "\"optimization\"", "\"sort\"", "\"a},{b\"", "\"caf\\u00e9\"",
                                        "\"café\"", "\"q\\\"uote\"", "\"opt\\u0069mization\"", "\"\\ud83d\\ude00\""})});
        fields.push_back({"pid", pick({"1", "\"1\"", "2", "-0", "0", "1.0", "\"p\\u0031\"", "\"p1\"", "{}", "{\"a\": 1}",
                                       "[]", "[1]"})});
        fields.push_back({"tid", pick({"7", "\"7\"", "8", "7e0", "\"t\""})});
    }
    // An 'E' names what it closes only sometimes; without defects, it carries no name.
    if (ph == "E" && !defects) fields.erase(std::find_if(fields.begin(), fields.end(), [](auto& f) { return f.first == "name"; }));
    if (ph == "b" || ph == "e") {
        fields.push_back({"cat", plain ? std::string("\"c\"") : pick({"\"c\"", "\"\\u0063\""})});
        fields.push_back({"id", pick({"\"0x1\"", "1", "\"0x2\""})});
    }
    if (!plain && chance(0.01))
        fields.push_back({"args", "\"lone \\ud800\""});
    else if (!plain && chance(0.5))
        fields.push_back({"args", pick({"\"\\ud83d\\ude00\"", "{\"deep\":[[[[{\"a\":[1]}]]]]}"})});
    else if (chance(0.5))
        fields.push_back({"args", pick({"{}", "{\"list\":[{\"x\":1},{\"y\":[2,{\"z\":\"},{\"}]}]}",
                                        "{\"s\":\"tab\\tnew\\nline \\\\ \\/ \\u2603\"}",
                                        "{\"n\":null,\"t\":true,\"f\":false,\"d\":-1.25e-3}", "[1, [2, [3]]]"})});
    if (chance(0.1)) fields.push_back({"tts", "12345"});
    if (chance(0.05) && !fields.empty() && fields[0].first == "ph") fields.push_back(fields[0]);  // a duplicated key: the last wins
    std::shuffle(fields.begin() + (fields.empty() ? 0 : 1), fields.end(), rng);
    // Escaped spellings of the keys read ("d\u0075r" is "dur"), now and then.
    if (!plain)
        for (auto& [k, v] : fields)
            if (chance(0.05) && k.size() >= 2) k = k.substr(0, 1) + fmt::format("\\u{:04x}", static_cast<unsigned>(k[1])) + k.substr(2);
    std::string out = "{" + ws();
    for (std::size_t k = 0; k < fields.size(); ++k) {
        if (k) out += "," + ws();
        out += "\"" + fields[k].first + "\"" + ws() + ":" + ws() + fields[k].second + ws();
    }
    return out + "}";
}

// The result of one reading, or its error, as one comparable text.
std::string outcome(const std::string& text, std::size_t batch, bool scan, unsigned jobs = 1) {
    try {
        return dump(read_chrome(text, batch, scan, jobs));
    } catch (const input_error& e) {
        return std::string("error: ") + e.what();
    }
}

// What read_chrome_stream makes of `text` written into a real pipe by a thread of its own, in
// pieces of 1 to 97 bytes, as prof-spans reads stdin: a head of `head` bytes first, then the
// ring's chunks of about `chunk_bytes` on `jobs` threads. The stream is read to its end.
std::string stream_outcome(const std::string& text, std::size_t head, std::size_t chunk_bytes, unsigned jobs,
                           chrome_read_stats* stats = nullptr) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] {
        std::mt19937 rng(static_cast<unsigned>(text.size()));
        for (std::size_t at = 0; at < text.size();) {
            const ssize_t w = ::write(fds[1], text.data() + at, std::min<std::size_t>(text.size() - at, 1 + rng() % 97));
            if (w <= 0) break;
            at += static_cast<std::size_t>(w);
        }
        ::close(fds[1]);
    });
    auto src = fd_source(fds[0], "trace.json", true);
    std::string out;
    try {
        std::string first(head, '\0');
        std::size_t got = 0;
        for (std::size_t k = 1; got < head && k > 0; got += k) k = src->read(first.data() + got, head - got);
        first.resize(got);
        chrome_paths paths;
        paths.jobs = jobs;
        paths.chunk_bytes = chunk_bytes;
        chrome_read_stats st;
        std::uint64_t bytes = 0;
        out = dump(read_chrome_stream(first, *src, "trace.json", paths, &st, bytes));
        if (bytes != text.size()) out += fmt::format("read {} bytes of {}\n", bytes, text.size());
        if (stats) *stats = st;
    } catch (const input_error& e) {
        out = std::string("error: ") + e.what();
    }
    char rest[4096];
    while (src->read(rest, sizeof rest) > 0) {}
    src.reset();
    writer.join();
    return out;
}

}  // namespace

TEST_CASE("chrome: the scanner, the DOM batches and the whole-document parse agree on random traces") {
    std::mt19937_64 rng(20261129);
    std::size_t errors = 0, scanned_all = 0, mixed = 0, whole = 0, with_defects = 0, unclosed = 0, fractions = 0;
    for (int trace = 0; trace < 600; ++trace) {
        bool bad = trace % 4 == 3, plain = trace % 3 == 0, fractional = trace % 5 < 2, defects = trace % 7 < 4;
        std::string events;
        int n = std::uniform_int_distribution<int>(1, 60)(rng);
        for (int k = 0; k < n; ++k) events += (k ? ",\n" : "") + random_event(rng, bad, plain, fractional, defects);
        std::string text = trace % 2 ? chrome(events) : "[" + events + "]";
        if (trace % 17 == 5) text = "\xEF\xBB\xBF" + text;                                  // a byte order mark
        if (trace % 23 == 7) text = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[" + events + "]}";  // other members
        if (trace % 29 == 11)  // members after the events, one holding a ']' (the fast path declines it)
            text = "{\"schemaVersion\":1,\"devices\":[{\"id\":0}],\"traceEvents\":[" + events +
                   "],\"displayTimeUnit\":\"ns\"" + (trace % 2 ? ",\"meta\":{\"l\":[1,2]}}" : "}");
        if (trace % 2 == 0 && trace % 11 == 4) text = "[" + events + (trace % 3 ? ",\n" : "\n");  // cut short
        std::string all = outcome(text, 0, false);
        INFO("trace ", trace, ":\n", text);
        CHECK(outcome(text, std::size_t{1} << 20, true) == all);
        CHECK(outcome(text, 64, true) == all);
        CHECK(outcome(text, 64, false) == all);
        CHECK(outcome(text, 1, false) == all);
        CHECK(outcome(text, std::size_t{1} << 20, true, 2) == all);
        CHECK(outcome(text, 64, true, 3) == all);
        CHECK(outcome(text, 64, false, 7) == all);
        // Through a pipe: a head of one byte (a bare array's header read from the stream, an
        // object's read whole), chunks of one event or a few, on 1 to 3 threads.
        CHECK(stream_outcome(text, 1, 1, 2) == all);
        CHECK(stream_outcome(text, 40, 1, 2) == all);
        CHECK(stream_outcome(text, 16, 64, 3) == all);
        CHECK(stream_outcome(text, 4096, std::size_t{1} << 20, 1) == all);
        if (all.rfind("error: ", 0) == 0) {
            ++errors;
            continue;
        }
        span_set s = read_chrome(text);
        chrome_read_stats st = how_read(text);
        with_defects += defect_counts(s).empty() ? 0 : 1;
        unclosed += s.unclosed;
        fractions += fractional;
        if (text.find("displayTimeUnit") != std::string::npos) {
            CHECK(s.display_time_unit == "ns");
            if (text.find("\"meta\"") != std::string::npos) CHECK(st.whole_document);
            continue;
        }
        // A lone surrogate escape in a skipped value: simdjson's DOM refuses it, its on-demand
        // parser (which skips the value) does not, so that trace is read whole; so is one where
        // the DOM met a span's time with a fraction.
        if (text.find("lone \\ud800") != std::string::npos) CHECK(st.whole_document);
        if (!fractional && !bad && text.find("lone \\ud800") == std::string::npos) CHECK_FALSE(st.whole_document);
        if (st.whole_document) {
            ++whole;
        } else {
            CHECK(st.scanned_events + st.dom_events == s.events);
            (st.dom_events == 0 ? scanned_all : mixed) += 1;
        }
    }
    // The generator reaches every case: bad traces, traces read by the scanner alone, traces where
    // declined events went through DOM batches, traces read whole, tolerated defects, traces cut
    // short, fractional times.
    INFO("errors ", errors, ", scanned alone ", scanned_all, ", mixed ", mixed, ", whole ", whole, ", with defects ",
         with_defects, ", unclosed ", unclosed, ", fractional ", fractions);
    CHECK(errors > 20);
    CHECK(scanned_all > 20);
    CHECK(mixed > 100);
    CHECK(whole > 20);
    CHECK(with_defects > 100);
    CHECK(unclosed > 10);
    CHECK(fractions > 100);
}

TEST_CASE("chrome: bad bytes are line-numbered errors, not crashes; a BOM is skipped; NULs are not whitespace") {
    // Stage 1 of the whole-document parse fails on these: there was no position to ask for
    // (the call crashed), so the bad byte is looked for.
    auto error_of = [](const std::string& text) {
        try {
            read_chrome(text);
        } catch (const input_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of("[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"a\tb\"}]").rfind("trace.json:1: malformed JSON", 0) == 0);
    CHECK(error_of("[\n{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"a\"},\n{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"\xff\"}]")
              .rfind("trace.json:3: malformed JSON (The input is not valid UTF-8)", 0) == 0);
    CHECK(error_of("{\"x\":\"\x01\",\"traceEvents\":[]}").rfind("trace.json:1: malformed JSON", 0) == 0);
    CHECK(error_of("[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]" + std::string(2, '\0')).rfind("trace.json:1: malformed JSON", 0) == 0);
    // A byte order mark before either shape, and before a shape only the whole-document parse reads.
    for (std::string t : {"[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]",
                          "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]}"}) {
        span_set s = read_chrome("\xEF\xBB\xBF" + t);
        REQUIRE(s.spans.size() == 1);
        CHECK(s.spans[0].end_ns == 5000);
    }
}

TEST_CASE("chrome: an escaped key is its unescaped name on every path; 0.7000…0 is 0.7 on every path") {
    std::string esc = chrome(R"({"ph":"X","ts":0,"dur":1000,"name":"scan"},
{"ph":"X","ts":1000,"dur":1000,"d\u0075r":500000,"name":"agg"})");
    std::string tricky_number = chrome(R"({"ph":"X","ts":0,"dur":0.50000000000000000000000001,"name":"a"})");
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set s = read_chrome(esc, batch);
        REQUIRE(s.spans.size() == 2);
        CHECK(s.spans[1].end_ns == 501000000);  // the later "dur" (escaped) wins
        // simdjson 3.0's on-demand get_double read this as 0.0000...; it is 500 ns.
        span_set n = read_chrome(tricky_number, batch);
        REQUIRE(n.spans.size() == 1);
        CHECK(n.spans[0].end_ns == 500);
    }
}

TEST_CASE("chrome: time stamps at or beyond 9e15 µs are refused on every path, integers as fractions") {
    for (const char* ev : {R"({"ph":"X","ts":9223372036854775000,"dur":10000,"name":"q"})",
                           R"({"ph":"B","ts":-9223372036854775808,"pid":1,"tid":1,"name":"q"})",
                           R"({"ph":"X","ts":9000000000000000,"dur":1,"name":"q"})", R"({"ph":"X","ts":9e15,"dur":1,"name":"q"})"}) {
        for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
            CAPTURE(ev);
            CHECK_THROWS_WITH_AS(read_chrome(chrome(ev), batch),
                                 doctest::Contains("expected a number of microseconds below 9e15"), input_error);
        }
    }
    CHECK(read_chrome(chrome(R"({"ph":"X","ts":8999999999999999,"dur":0,"name":"q"})")).spans.size() == 1);
}

TEST_CASE("chrome: a plain trace is read by the scanner alone; the real Node trace too") {
    std::string plain = chrome(R"({"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":[{"x":"y\"z"}]}},
{"ph":"B","name":"d","ts":5,"pid":"p","tid":"t"},{"ph":"E","ts":9,"pid":"p","tid":"t"})");
    chrome_read_stats st = how_read(plain);
    CHECK(st.scanned_events == 3);
    CHECK(st.dom_events == 0);
    std::string node_text = read_file(input_path("node_trace.json"));
    span_set node = read_chrome(node_text);
    CHECK(how_read(node_text).scanned_events == node.events);
    CHECK(node.events == 429);
    // A thread is one thread however its pid is spelled: 1, 1.0, "p1" and "p\u0031" pair up.
    std::string spelled = chrome(R"({"ph":"B","name":"x","ts":0,"pid":1,"tid":"p1"},
{"ph":"E","ts":5,"pid":1.0,"tid":"p\u0031"})");
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set t = read_chrome(spelled, batch);
        CHECK(t.spans.size() == 1);
        CHECK(t.unmatched_begins == 0);
    }
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

TEST_CASE("chrome: the scanner predicts each key from the last event and relearns it where events differ") {
    // Events of different shapes in turn (X with dur, B/E without, members reordered), compact
    // and spaced, a key longer than the 32 bytes a prediction covers, an unknown key, "id2":
    // the scanner reads every one (no DOM batch), to what the whole-document parse reads. An
    // escaped key ("p\u0068" is "ph") is declined by the scanner and read by a DOM batch.
    std::string ev;
    for (int k = 0; k < 200; ++k) {
        if (!ev.empty()) ev += ",\n";
        switch (k % 5) {
        case 0: ev += fmt::format(R"({{"ph":"X","name":"a","ts":{},"dur":3,"pid":1,"tid":1}})", k); break;
        case 1: ev += fmt::format(R"({{"ph":"B","pid":1,"tid":2,"ts":{},"name":"b"}})", k); break;
        case 2: ev += fmt::format(R"({{ "ph": "E", "pid": 1, "tid": 2, "ts": {} }})", k + 2); break;
        case 3: ev += fmt::format(R"({{"name":"c","dur":1,"ts":{},"ph":"X","a_key_longer_than_thirty_two_bytes":0}})", k); break;
        case 4: ev += fmt::format(R"({{"ph":"b","cat":"q","id2":{},"name":"d","ts":{}}}, {{"ph":"e","cat":"q","id2":{},"name":"d","ts":{}}})", k, k, k, k + 1); break;
        }
    }
    std::string text = chrome(ev);
    chrome_read_stats st = how_read(text);
    CHECK(st.dom_events == 0);
    CHECK(st.scanned_events == 240);  // 200 events, 40 of them pairs
    span_set s = read_chrome(text);
    CHECK(dump(s) == dump(read_chrome(text, 0)));
    // By hand: 40 X "a" + 40 X "c" + 40 B/E "b" = 120 spans; no async begin left open.
    CHECK(s.spans.size() == 120);
    CHECK(s.async_unmatched == 0);
    std::string escaped = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1},
{"p\u0068":"X","name":"a","ts":1,"dur":1},
{"ph":"X","name":"a","ts":2,"dur":1})");
    st = how_read(escaped);
    CHECK(st.scanned_events + st.dom_events == 3);
    CHECK(st.dom_events >= 1);
    CHECK(dump(read_chrome(escaped)) == dump(read_chrome(escaped, 0)));
    CHECK(read_chrome(escaped).spans.size() == 3);
}

TEST_CASE("chrome: thousands of B/E pairs on interleaved threads are matched per thread in time order") {
    // 3 threads x 3000 pairs; each pair begins at 10k and ends at 10k+7 on its thread; events
    // are written thread-interleaved with every end before its begin in the file, and ties
    // (an end and the next begin at one time stamp) only within a thread's own order.
    std::string ev;
    for (int k = 0; k < 3000; ++k)
        for (int t = 0; t < 3; ++t) {
            if (!ev.empty()) ev += ",\n";
            ev += fmt::format(R"({{"ph":"E","pid":1,"tid":{},"ts":{}}},)", t, 10 * k + 7);
            ev += fmt::format(R"({{"ph":"B","pid":1,"tid":{},"ts":{},"name":"n{}"}})", t, 10 * k, t);
        }
    auto s = read_chrome(chrome(ev));
    REQUIRE(s.spans.size() == 9000);
    CHECK(s.unmatched_begins == 0);
    CHECK(s.unmatched_ends == 0);
    CHECK(std::all_of(s.spans.begin(), s.spans.end(), [](const span& sp) { return sp.end_ns - sp.start_ns == 7000; }));
    CHECK(dump(read_chrome(chrome(ev), 0)) == dump(s));
    // In chunks on several threads (each thread's events sorted and matched apart): the same.
    for (unsigned jobs : {2u, 3u, 7u}) CHECK(dump(read_chrome(chrome(ev), std::size_t{1} << 20, true, jobs)) == dump(s));
}

namespace {

// One trace read by every path (whole document; DOM batches of 1 and 64 bytes; the scanner with
// 64-byte and 1 MiB batches), which must agree; the whole-document result.
span_set read_every_way(const std::string& text) {
    std::string all = outcome(text, 0, false);
    for (auto [batch, scan] : {std::pair<std::size_t, bool>{1, false}, {64, false}, {64, true}, {std::size_t{1} << 20, true}}) {
        INFO("batch ", batch, " scan ", scan);
        CHECK(outcome(text, batch, scan) == all);
        for (unsigned jobs : {2u, 5u}) CHECK(outcome(text, batch, scan, jobs) == all);
    }
    return read_chrome(text, 0);
}

std::uint64_t elapsed_ns(const span_set& s) { return summarize_spans(s, {}).elapsed_ns; }

}  // namespace

TEST_CASE("chrome: each unusable event is skipped and counted by reason, with the line of the first") {
    // Line 1 '[', then one event a line. Used: a [0, 10) and b [20, 30) µs.
    std::string text = R"([
{"ph":"M","name":"thread_name","ts":null,"pid":1,"tid":1},
{"ph":"X","name":"a","ts":0,"dur":10},
{"ph":"X","name":"nodur","ts":5},
{"ph":"X","name":"nulldur","ts":5,"dur":null},
{"ph":"XXX","name":"odd","ts":5,"dur":1},
{"name":"nophase","ts":5,"dur":1},
{"ph":5,"name":"numeric","ts":5},
{},
{"ph":"B","name":"nots","pid":1,"tid":1},
{"ph":"X","name":"b","ts":20,"dur":10},
{"ph":"C","name":"ctr","ts":"abc","args":{}},
{"ph":"i","name":"tick","ts":1e99}
])";
    span_set s = read_every_way(text);
    REQUIRE(s.spans.size() == 2);
    CHECK(elapsed_ns(s) == 30000u);
    // (defect, count, line of the first): the X events without a usable dur on lines 4-5, the
    // unknown phases on 6-8, {} on 9, the B without ts on 10; the metadata event's null ts, the
    // counter's "abc" and the instant's 1e99 (lines 2, 12, 13) are not needed; no E at all.
    const std::tuple<event_defect, std::size_t, std::size_t> expected[] = {
        {event_defect::x_without_dur, 2, 4}, {event_defect::unknown_phase, 3, 6}, {event_defect::empty_event, 1, 9},
        {event_defect::missing_ts, 1, 10},   {event_defect::bad_metadata, 3, 2},  {event_defect::mismatched_end, 0, 0},
    };
    for (const auto& [kind, count, first_line] : expected) {
        CAPTURE(static_cast<int>(kind));
        CHECK(s.defect(kind).count == count);
        CHECK(s.defect(kind).first_line == first_line);
    }
    CHECK(s.defect(event_defect::empty_event).first_event == 8);
    CHECK(defect_counts(s) == "empty-event 1, unknown-phase 3, x-without-dur 2, missing-ts 1, bad-metadata 3");
    // --strict names the first in file order: event 1, the metadata event on line 2.
    CHECK_THROWS_WITH_AS(refuse_defects(s, "t.json"), doctest::Contains("t.json:2: event 1: 3 metadata"), input_error);
    auto r = report_trace(s, "t.json");
    REQUIRE(r.warnings.size() == 5);
    CHECK(r.warnings[2] == "t.json:4: 2 'X' event(s) without dur (skipped: no end), the first here (--strict refuses them)");
}

TEST_CASE("chrome: what is needed and not a number is still an error; so is invalid JSON") {
    auto error_of = [](const std::string& text) {
        std::string all = outcome(text, 0, false);
        CHECK(outcome(text, std::size_t{1} << 20, true) == all);
        CHECK(outcome(text, 64, false) == all);
        return all;
    };
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"abc\",\"dur\":1}]") ==
          "error: trace.json:2: event 1: field 'ts': expected a number of microseconds (or a string holding one)");
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":true}]") ==
          "error: trace.json:2: event 1: field 'dur': expected a number of microseconds (or a string holding one)");
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"9e15\",\"dur\":1}]") ==
          "error: trace.json:2: event 1: field 'ts': expected a number of microseconds below 9e15 in magnitude");
    CHECK(error_of("[{\"ph\":\"B\",\"name\":7,\"ts\":1}]") == "error: trace.json:1: event 1: field 'name': expected a string");
    // An X ending at or beyond the bound: 8e15 + 2e15 µs.
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"far\",\"ts\":8000000000000000,\"dur\":2000000000000000}]")
              .find("ends at or beyond 9e15 µs (ts 8000000000000000 + dur 2000000000000000)") != std::string::npos);
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},\n]").rfind("error: trace.json:2: malformed JSON", 0) == 0);
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":01,\"dur\":1}]").rfind("error: trace.json:1: malformed JSON", 0) == 0);
    // A misspelt literal in a time is not JSON, even where the time is not needed.
    for (const char* word : {"nul", "tru", "fals"})
        CHECK(error_of(fmt::format("[{{\"ph\":\"M\",\"name\":\"m\",\"ts\":{}}}]", word)).rfind("error: trace.json:1: malformed JSON", 0) == 0);
}

TEST_CASE("chrome: the JSON Array Format's closing bracket is optional, after a whole event only") {
    // a [0, 10) µs, b [5, 25) µs: elapsed 25 µs, whether the text ends after an event, after its
    // comma, or after whitespace; an object's brackets are not optional, nor is a cut event whole.
    for (std::string tail : {"", ",", ",\n", "\n\n", " ,  \r\n"}) {
        std::string text = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":20}" + tail;
        CAPTURE(tail);
        span_set s = read_every_way(text);
        CHECK(s.unclosed);
        CHECK(elapsed_ns(s) == 25000u);
    }
    span_set bare = read_every_way("[\n");
    CHECK(bare.unclosed);
    CHECK(bare.spans.empty());
    CHECK_FALSE(read_chrome("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10}]").unclosed);
    CHECK_THROWS_AS(read_chrome("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10}"), input_error);
    CHECK_THROWS_AS(read_chrome("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10},{\"ph\":\"X\",\"ts"), input_error);
    CHECK_THROWS_AS(read_chrome("[,"), input_error);
}

TEST_CASE("chrome: an E named differently closes the innermost B and is counted") {
    // Thread 1: B outer 0, B inner 10, E "outer" 20 (closes inner: [10, 20)), E "inner" 50
    // (closes outer: [0, 50)). Thread 2: B x 0, E "x" 5 matches; E without a name never counts.
    std::string text = R"([
{"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
{"ph":"B","name":"inner","ts":10,"pid":1,"tid":1},
{"ph":"E","name":"outer","ts":20,"pid":1,"tid":1},
{"ph":"E","name":"inner","ts":50,"pid":1,"tid":1},
{"ph":"B","name":"x","ts":0,"pid":1,"tid":2},
{"ph":"E","name":"x","ts":5,"pid":1,"tid":2},
{"ph":"B","name":"y","ts":6,"pid":1,"tid":2},
{"ph":"E","ts":9,"pid":1,"tid":2}
])";
    span_set s = read_every_way(text);
    CHECK(s.defect(event_defect::mismatched_end).count == 2);
    CHECK(s.defect(event_defect::mismatched_end).first_line == 4);
    auto sum = summarize_spans(s, std::vector<bool>(s.names.size(), false));
    REQUIRE(s.names.size() == 4);  // E names are never nodes
    CHECK(s.names[0] == "outer");
    CHECK(sum.node_ns[0] == 50000u);
    CHECK(sum.node_ns[1] == 10000u);
    CHECK(sum.elapsed_ns == 50000u);
}

TEST_CASE("chrome: a string holding a JSON number is that number; other strings are not numbers") {
    // "100" + "2.5" = [100, 102.5) µs; "1e2" .. "110" = [100, 110) µs.
    span_set s = read_every_way(R"([{"ph":"X","name":"q","ts":"100","dur":"2.5"},
{"ph":"B","name":"r","ts":"1e2","pid":1,"tid":1},{"ph":"E","ts":"110","pid":1,"tid":1}])");
    REQUIRE(s.spans.size() == 2);
    CHECK(s.spans[0].start_ns == 100000);
    CHECK(s.spans[0].end_ns == 102500);
    CHECK(s.spans[1].end_ns == 110000);
    for (const char* bad : {"\" 1\"", "\"0x10\"", "\"1.\"", "\"NaN\"", "\"\"", "\"+1\""}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(read_chrome(fmt::format(R"([{{"ph":"X","name":"q","ts":{},"dur":1}}])", bad)),
                             doctest::Contains("field 'ts': expected a number of microseconds"), input_error);
    }
}

TEST_CASE("chrome: displayTimeUnit is kept and changes no time; an undefined one is warned about") {
    for (const char* unit : {"ns", "ms", "us"}) {
        std::string text = fmt::format(R"({{"displayTimeUnit":"{}","traceEvents":[{{"ph":"X","name":"x","ts":1,"dur":2.5}}]}})", unit);
        span_set s = read_every_way(text);
        CHECK(s.display_time_unit == unit);
        REQUIRE(s.spans.size() == 1);
        CHECK(s.spans[0].end_ns == 3500);
        CHECK(report_trace(s, "t").warnings.size() == (std::string(unit) == "us" ? 1u : 0u));
    }
    // Keys after the events, and a second traceEvents ignored.
    span_set after = read_every_way(R"({"traceEvents":[{"ph":"X","name":"x","ts":1,"dur":1}],"displayTimeUnit":"ns","traceEvents":[]})");
    CHECK(after.display_time_unit == "ns");
    CHECK(after.spans.size() == 1);
    // Other members before and after the events: still read in place by the scanner.
    std::string members = R"({"schemaVersion":1,"devices":[{"id":0}],"traceEvents":[{"ph":"X","name":"x","ts":1,"dur":1}],"displayTimeUnit":"ms"})";
    span_set fast = read_chrome(members);
    CHECK_FALSE(how_read(members).whole_document);
    CHECK(how_read(members).scanned_events == 1);
    CHECK(fast.display_time_unit == "ms");
}

TEST_CASE("chrome: traces modelled on the peers' parser tests give the unions computed by hand") {
    struct peer_case {
        const char* what;
        const char* trace;
        std::size_t spans;
        std::uint64_t elapsed_ns;
    };
    const peer_case cases[] = {
        // String pid and tid, fractional times: [3.2, 403.3) µs = 400100 ns.
        {"string ids, fractions", R"({"traceEvents":[{"pid":"p","tid":"t","ts":3.2,"dur":400.1,"name":"n","ph":"X","cat":"c"}]})", 1, 400100},
        // Two X events at one ts on threads given and not given: [1, 9) and [1, 4) µs.
        {"same start", R"([{"name":"in","ph":"X","ts":1,"dur":3,"pid":2},{"name":"out","ph":"X","ts":1,"dur":8,"pid":2,"tid":2}])", 2, 8000},
        // Cut short after a comma, times with three decimals: [3000000.000, 3000004.000) µs.
        {"cut short", "[\n{\"name\":\"tc\",\"ph\":\"X\",\"ts\":3000000.000,\"dur\":4.000,\"pid\":9,\"tid\":1},\n", 1, 4000},
        // B "begin" .. E "end" (mismatched, closed) [10, 30), X [35, 40), instants of every scope
        // ignored: elapsed 30 µs.
        {"slice types", R"([{"ph":"B","pid":4,"tid":5,"ts":10,"name":"begin"},{"ph":"E","pid":4,"tid":5,"ts":30,"name":"end"},
{"ph":"X","pid":4,"tid":6,"ts":35,"dur":5,"name":"whole"},{"ph":"I","pid":4,"tid":5,"ts":41,"name":"g","s":"g"},
{"ph":"i","pid":4,"tid":5,"ts":42,"name":"t","s":"t"},{"ph":"R","pid":4,"tid":5,"ts":43,"name":"mark"}])", 2, 30000},
        // Counters and metadata (with ts) around B/E pairs without cat, X with a pid only and
        // with neither: [500, 520), [600, 640), [650, 655), [660, 665) µs: elapsed 165 µs.
        {"metadata", R"([{"ph":"B","pid":3,"tid":1,"ts":500,"name":"a"},{"ph":"C","pid":3,"tid":1,"ts":505,"name":"c","args":{"v":"2.5"}},
{"ph":"E","pid":3,"tid":1,"ts":520,"name":"a"},{"ph":"M","pid":3,"tid":0,"ts":530,"name":"process_name","args":{"name":"p"}},
{"ph":"B","pid":3,"tid":2,"ts":600},{"ph":"E","pid":3,"tid":2,"ts":640},{"ph":"X","pid":8,"ts":650,"dur":5,"name":"pid only"},
{"ph":"X","ts":660,"dur":5,"name":"no ids"}])", 4, 165000},
        // An X without dur (skipped), B/E of different names (closed), an X: [200, 300) and
        // [400, 450) µs.
        {"missing values", R"([{"ph":"X","pid":1,"tid":1,"ts":100,"name":"no dur"},{"ph":"B","pid":1,"tid":2,"ts":200,"name":"b"},
{"ph":"E","pid":1,"tid":2,"ts":300,"name":"e"},{"ph":"X","pid":1,"tid":3,"ts":400,"dur":50,"name":"x","tts":390}])", 2, 250000},
        // Async pairs only (id and id2, empty ids): no timed span.
        {"async only", R"([{"ph":"b","pid":1,"tid":1,"ts":1,"name":"a","id":""},{"ph":"e","pid":1,"tid":1,"ts":2,"name":"a","id":""},
{"ph":"b","pid":1,"tid":1,"ts":3,"name":"g","cat":"k","id2":{"global":"x"}},{"ph":"e","pid":1,"tid":1,"ts":4,"name":"g","cat":"k","id2":{"global":"x"}}])", 0, 0},
        // Deprecated async S/T/F around nested B/E on one thread: BE [20, 70) holding in [30, 40),
        // then BE [80, 90): elapsed 70 µs.
        {"async and nesting", R"([{"cat":"k","pid":1,"tid":1,"ts":10,"ph":"S","name":"A","id":"1"},{"cat":"k","pid":1,"tid":1,"ts":20,"ph":"B","name":"BE"},
{"cat":"k","pid":1,"tid":1,"ts":30,"ph":"B","name":"in"},{"cat":"k","pid":1,"tid":1,"ts":35,"ph":"T","name":"A","id":"1","args":{"step":"s"}},
{"cat":"k","pid":1,"tid":1,"ts":40,"ph":"E","name":"in"},{"cat":"k","pid":1,"tid":1,"ts":70,"ph":"E","name":"BE"},
{"cat":"k","pid":1,"tid":1,"ts":80,"ph":"B","name":"BE"},{"cat":"k","pid":1,"tid":1,"ts":85,"ph":"F","name":"A","id":"1"},
{"cat":"k","pid":1,"tid":1,"ts":90,"ph":"E","name":"BE"}])", 3, 70000},
    };
    for (const auto& c : cases) {
        CAPTURE(c.what);
        span_set s = read_every_way(c.trace);
        CHECK(s.spans.size() == c.spans);
        CHECK(elapsed_ns(s) == c.elapsed_ns);
    }
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

TEST_CASE("chrome: a trace cut into chunks read on several threads gives what one thread gives") {
    // A 'B' in one chunk closed by an 'E' in another, an async begin and its end apart, names
    // first met in a later chunk, defects first met in a later chunk (index and line), an 'E'
    // named differently across a cut, and "},{" inside a string and inside an args array, where
    // a cut must not be taken.
    std::string events = R"({"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
{"ph":"b","cat":"c","id":7,"name":"a","ts":1},
{"ph":"X","name":"s},{\"ph\":\"X\"},{x","ts":2,"dur":3},
{"ph":"X","name":"args","ts":4,"dur":1,"args":{"l":[{"k":1},{"k":2},{"k":3}]}},
{"ph":"X","name":"late","ts":5,"dur":1},
{"ph":"X","name":"nodur","ts":6},
{},
{"ph":"e","cat":"c","id":7,"name":"a","ts":9},
{"ph":"E","name":"other","ts":10,"pid":1,"tid":1},
{"ph":"X","name":"nodur","ts":11})";
    std::string text = chrome(events);
    std::string one = outcome(text, std::size_t{1} << 20, true, 1);
    for (unsigned jobs = 2; jobs <= 12; ++jobs)
        for (std::size_t batch : {std::size_t{1}, std::size_t{64}, std::size_t{1} << 20}) {
            CAPTURE(jobs);
            CAPTURE(batch);
            CHECK(outcome(text, batch, true, jobs) == one);
        }
    // An object with a phase inside an args array may be taken for an event and cut before: the
    // chunk before the cut then fails, and the trace is read in one piece, to the same result.
    std::string decoy = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1,"args":{"l":[{"k":1},{"ph":"X"},{"ph":"i"}]}},
{"ph":"X","name":"b","ts":1,"dur":1,"args":{"l":[{"ph":"X"},{"ph":"X"}]}},{"ph":"X","name":"c","ts":2,"dur":1})");
    for (unsigned jobs = 2; jobs <= 12; ++jobs) CHECK(outcome(decoy, std::size_t{1} << 20, true, jobs) == outcome(decoy, 0, true, 1));
    span_set s = read_chrome(text, std::size_t{1} << 20, true, 4);
    // By hand: outer [0, 10 µs] (B/E), s [2, 5], args [4, 5], late [5, 6]: 4 spans, in order of
    // first appearance outer, s..., args, late; no async left open; x-without-dur first at event
    // 6 on line 7 (the trace's first line holds "traceEvents"), empty event at 7 (line 8),
    // mismatched end at 9 (line 10).
    CHECK(s.spans.size() == 4);
    REQUIRE(s.names.size() == 4);
    CHECK(s.names[0] == "outer");
    CHECK(s.names[3] == "late");
    CHECK(s.async_unmatched == 0);
    CHECK(s.defect(event_defect::x_without_dur).count == 2);
    CHECK(s.defect(event_defect::x_without_dur).first_event == 6);
    CHECK(s.defect(event_defect::x_without_dur).first_line == 7);
    CHECK(s.defect(event_defect::empty_event).first_line == 8);
    CHECK(s.defect(event_defect::mismatched_end).first_event == 9);
    CHECK(s.defect(event_defect::mismatched_end).first_line == 10);
    // A plain trace is really read apart, in as many chunks as asked for; where a cut falls
    // inside an event (above), the chunk before it fails and the trace is read in one piece.
    std::string plain;
    for (int k = 0; k < 40; ++k) plain += fmt::format("{}{{\"ph\":\"X\",\"name\":\"n{}\",\"ts\":{},\"dur\":1}}", k ? ",\n" : "", k % 3, k);
    chrome_read_stats st = how_read(chrome(plain), 4);
    CHECK(st.chunks == 4);
    CHECK(st.scanned_events == 40);
    CHECK(dump(read_chrome(chrome(plain), std::size_t{1} << 20, true, 4)) == dump(read_chrome(chrome(plain))));
    // Events whose args hold arrays of objects (a stack trace): cuts go between events, never
    // among those objects, so the trace is still read in as many chunks as asked for.
    std::string stacks;
    for (int k = 0; k < 40; ++k)
        stacks += fmt::format("{}{{\"ph\":\"X\",\"name\":\"f\",\"ts\":{},\"dur\":1,\"args\":{{\"stack\":[{{\"fn\":\"a\"}}, {{\"fn\":\"b\"}},{{\"fn\":\"c\"}}]}}}}",
                              k ? ",\n" : "", k);
    st = how_read(chrome(stacks), 4);
    CHECK(st.chunks == 4);
    CHECK(dump(read_chrome(chrome(stacks), std::size_t{1} << 20, true, 4)) == dump(read_chrome(chrome(stacks))));
}

TEST_CASE("chrome: a trace is cut into more chunks than threads, taken as threads are free, to the same result") {
    // 60 events over 3 threads' B/E pairs and X spans of 5 names, an unmatched 'E', an X without
    // dur every 7th event and an empty event every 11th, so that names, threads and defects are
    // first met in later chunks. With chunks of about `chunk_bytes`, 2 and 3 threads read every
    // cut the text allows (chunk_bytes 1: one event a chunk) or a few events a chunk, and the
    // chunks, joined in file order whichever thread read them, give what one piece gives.
    std::string events;
    for (int k = 0; k < 60; ++k) {
        std::string e = k % 11 == 10 ? "{}"
                        : k % 7 == 6 ? fmt::format(R"({{"ph":"X","name":"n{}","ts":{}}})", k % 5, k)
                        : k % 4 == 0 ? fmt::format(R"({{"ph":"B","name":"b{}","ts":{},"pid":1,"tid":{}}})", k % 3, k, k % 3)
                        : k % 4 == 2 ? fmt::format(R"({{"ph":"E","ts":{},"pid":1,"tid":{}}})", k + 1, (k + 2) % 3)
                                     : fmt::format(R"({{"ph":"X","name":"n{}","ts":{},"dur":2}})", k % 5, k);
        events += (k ? ",\n" : "") + e;
    }
    const std::string text = chrome(events);
    const std::string one = dump(read_chrome(text));
    for (unsigned jobs : {2u, 3u})
        for (std::size_t chunk_bytes : {std::size_t{1}, std::size_t{200}}) {
            CAPTURE(jobs);
            CAPTURE(chunk_bytes);
            simdjson::padded_string p(text);
            chrome_paths paths;
            paths.jobs = jobs;
            paths.chunk_bytes = chunk_bytes;
            paths.min_chunk_bytes = 1;
            chrome_read_stats st;
            span_set s = read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, &st);
            CHECK(dump(s) == one);
            // By hand: the interior is about 2400 bytes, so chunks of 200 bytes make about 12
            // (more than the threads); chunks of 1 byte one per event, except that no chunk
            // starts at an event without a phase (the 5 empty ones): 60 - 5 = 55.
            CHECK(st.chunks > jobs);
            if (chunk_bytes == 1) CHECK(st.chunks == 55);
        }
    // One thread reads the trace in one piece, whatever the chunk size.
    simdjson::padded_string p(text);
    chrome_paths paths;
    paths.chunk_bytes = 1;
    paths.min_chunk_bytes = 1;
    chrome_read_stats st;
    read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, &st);
    CHECK(st.chunks == 1);
}

TEST_CASE("chrome: a stream cut short or followed by garbage past its first chunk fails as the file does") {
    // simdjson gives these errors no position; the file names line 1, and so must a stream whose
    // later chunk is read again whole behind a rebuilt header (it had named that chunk's line).
    std::string events;
    for (int k = 0; k < 200; ++k)
        events += fmt::format("{}{{\"ph\":\"X\",\"name\":\"x\",\"ts\":{},\"dur\":1,\"pid\":1,\"tid\":2}}", k ? ",\n" : "", k * 10);
    const std::string whole = "{\"traceEvents\":[\n" + events + "\n]}";
    for (const std::string& text : {whole + " x", whole + "]", whole + " 1", whole.substr(0, whole.size() - 2),
                                    whole.substr(0, whole.size() / 2 + 3)}) {
        std::string file = outcome(text, 0, false);
        INFO(text.substr(text.size() - 20));
        CHECK(file.rfind("error: ", 0) == 0);
        CHECK(stream_outcome(text, 64, 256, 2) == file);
        CHECK(stream_outcome(text, 64, 1024, 1) == file);
    }
}

TEST_CASE("chrome: invalid JSON in a value nobody reads, or after the trace, is an error from a file and a pipe") {
    // simdjson's on-demand parser skips values it does not read without checking them; the
    // whole-document path checks the grammar after it. Expected: exit 65 at the line of the bad
    // byte (3: the event holding it, or what follows the trace on that line).
    const std::string event = "{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":{\"s\":}}\n]}", "trace.json:3: malformed JSON (unexpected '}')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":{1:2}}\n]}", "trace.json:3: malformed JSON (unexpected '1')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":[1,,2]}\n]}", "trace.json:3: malformed JSON (unexpected ',')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":tru}\n]}", "trace.json:3: malformed JSON (unexpected 't')"},
        {"{\"traceEvents\":[\n" + event + "}\n]}{}", "trace.json:3: unexpected content after the trace"},
        {"[\n" + event + "}\n]]", "trace.json:3: unexpected content after the trace"},
    };
    for (const auto& [text, want] : cases) {
        INFO(text);
        std::string file = outcome(text, 0, false);
        CHECK(file == "error: " + want);
        CHECK(outcome(text, std::size_t{1} << 20, true, 2) == file);
        CHECK(stream_outcome(text, 16, 64, 2) == file);
        CHECK(stream_outcome(text, 4096, std::size_t{1} << 20, 1) == file);
    }
}

TEST_CASE("chrome: a stream read through the ring is joined in order, and a chunk it cannot read is read again whole") {
    // 200 events of one name over 2 threads' B/E pairs, an X without dur every 50th: through a
    // pipe in chunks of about 64 bytes (one or two events), every chunk is read by the scanner
    // and joined in file order: the result of the whole text, and the stats say so.
    std::string events;
    for (int k = 0; k < 200; ++k)
        events += (k ? ",\n" : "") + (k % 50 == 49   ? fmt::format(R"({{"ph":"X","name":"nodur","ts":{}}})", k)
                                      : k % 10 == 0 ? fmt::format(R"({{"ph":"B","name":"b","ts":{},"pid":1,"tid":{}}})", k, k % 20)
                                      : k % 10 == 5 ? fmt::format(R"({{"ph":"E","ts":{},"pid":1,"tid":{}}})", k, (k - 5) % 20)
                                                    : fmt::format(R"({{"ph":"X","name":"x","ts":{},"dur":1}})", k));
    const std::string text = chrome(events);
    const std::string one = dump(read_chrome(text));
    chrome_read_stats st;
    CHECK(stream_outcome(text, 32, 64, 2, &st) == one);
    CHECK_FALSE(st.whole_document);
    CHECK(st.streamed);
    CHECK(st.chunks > 50);
    CHECK(st.scanned_events == 200);
    // By hand: the first X without dur is event 50, on line 51 (line 1 holds "traceEvents").
    span_set s = read_chrome(text);
    CHECK(s.defect(event_defect::x_without_dur).first_line == 51);
    // An event the scanner declines (an escape in a name) is read by a DOM batch, which knows
    // no line: its chunk, with every chunk after it, goes to the whole-document parse, resumed
    // after the chunks before it, to the same spans, defects and lines.
    std::string declined = text;
    declined.replace(declined.find("\"nodur\""), 7, "\"no\\u0064ur\"");
    CHECK(stream_outcome(declined, 32, 64, 2, &st) == dump(read_chrome(declined)));
    CHECK(st.whole_document);
}

TEST_CASE("chrome: an error in a later chunk names the line and event one thread names") {
    std::string text = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1},
{"ph":"X","name":"b","ts":1,"dur":1},
{"ph":"X","name":"c","ts":2,"dur":-1},
{"ph":"X","name":"d","ts":3,"dur":1})");
    for (unsigned jobs : {1u, 2u, 3u, 4u}) {
        CHECK_THROWS_WITH_AS(read_chrome(text, std::size_t{1} << 20, true, jobs),
                             "trace.json:4: event 3: 'X' event 'c' has a negative dur (-1)", input_error);
        // Through a pipe, the bad event in a chunk of its own after two read by the ring.
        CHECK(stream_outcome(text, 1, 1, jobs) == "error: trace.json:4: event 3: 'X' event 'c' has a negative dur (-1)");
    }
}

TEST_CASE("chrome: every trace in testdata reads the same in chunks on several threads, errors included") {
    const char* root = std::getenv("PROF_ROOT");
    std::string dir = std::string(root ? root : ".") + "/testdata/";
    std::size_t read = 0;
    for (const char* name : {"inputs/node_trace.json", "prof-spans/inputs/clangd_trace.json", "prof-spans/inputs/cut-in-event.json",
                             "prof-spans/inputs/mismatched-end.json", "prof-spans/inputs/no-spans.json", "prof-spans/inputs/ns.json",
                             "prof-spans/inputs/quoted-bad.json", "prof-spans/inputs/quoted.json", "prof-spans/inputs/raw-newline.json",
                             "prof-spans/inputs/tolerated.json", "prof-spans/inputs/trailing-comma.json",
                             "prof-spans/inputs/unclosed-comma.json", "prof-spans/inputs/unclosed.json", "prof-spans/inputs/unit-ns.json",
                             "prof-spans/inputs/unit-us.json"}) {
        CAPTURE(name);
        std::string text = read_file(dir + name);
        std::string one = outcome(text, std::size_t{1} << 20, true, 1);
        for (unsigned jobs : {2u, 3u, 4u, 9u}) CHECK(outcome(text, std::size_t{1} << 20, true, jobs) == one);
        CHECK(outcome(text, 64, false, 3) == one);
        for (unsigned jobs : {1u, 2u, 3u})
            for (std::size_t chunk : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) CHECK(stream_outcome(text, 8, chunk, jobs) == one);
        ++read;
    }
    CHECK(read == 15);
}
