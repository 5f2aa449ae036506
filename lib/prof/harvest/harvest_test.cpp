// Unit tests of the harvest rules.
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/harvest/harvest.hpp"
#include "prof/io/keys.hpp"
#include "prof/core/test_support.hpp"
#include "prof/profile/test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>

namespace {

std::vector<prof::compute_profile> harvest_text(const std::string& text, prof::harvest_config cfg = {}) {
    prof::harvester h(std::move(cfg));
    prof::line_reader in(prof::string_source(text, "rows"));
    h.read(in);
    return h.finish();
}

std::string counts(const prof::compute_profile& p) { return p.harvest ? p.harvest->dump() : "none"; }

using prof::test::temp_dir;

}  // namespace

TEST_CASE("fold and ensemble rows are skipped and counted, never measured") {
    auto ps = harvest_text(
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":1})" "\n"
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":9,"fold_id":0})" "\n"
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":9,"ensemble_id":"e"})" "\n"
        R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","fit_seconds":3,"fold_id":null,"ensemble_id":null})" "\n"
        R"({"run_id":"r","ts_id":"c","model_type":"m","family":"f","fit_seconds":2,"fold_id":"","ensemble_id":""})" "\n");
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].n_measurements == 3);  // "" is no fold and no ensemble
    CHECK(ps[0].models.at("m").median_wall_s == 2.0);  // median of 1, 2, 3; the 9 s rows never count
    CHECK(counts(ps[0]) ==
          R"({"bad_lines_skipped":0,"ensemble_rows_skipped":1,"fold_rows_skipped":1,"rows_read":5})");
}

TEST_CASE("a row without a finite positive fit_seconds is a failed cell with a stated error") {
    auto ps = harvest_text(
        R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","fit_seconds":0})" "\n"
        R"({"run_id":"r","ts_id":"c","model_type":"m","family":"f"})" "\n"
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":"NaN","cpu_seconds":5})" "\n"
        R"({"run_id":"r","ts_id":"d","model_type":"m","family":"f","fit_seconds":2,"cpu_seconds":2})" "\n"
        R"({"run_id":"r","ts_id":"a","model_type":"x","family":"f","fit_seconds":-1,"error":"exit 1: boom"})" "\n"
        // "" is how a non-Nullable String column says "no error": the fit_seconds text instead
        R"({"run_id":"r","ts_id":"a","model_type":"y","family":"f","fit_seconds":null,"error":""})" "\n");
    REQUIRE(ps.size() == 1);
    const auto& p = ps[0];
    CHECK(p.n_measurements == 6);
    CHECK(p.n_failed == 5);
    CHECK(p.first_error_by_model.at("y") == "fit_seconds=null");
    // smallest ts_id wins: "a" → the NaN row; its cpu_seconds is excluded from every axis
    CHECK(p.first_error_by_model.at("m") == "fit_seconds=NaN");
    CHECK(p.first_error_by_model.at("x") == "exit 1: boom");
    CHECK(p.models.at("m").median_cpu_s == 2.0);
    CHECK(p.dropped_models == std::vector<std::string>{"x", "y"});
    CHECK(prof::fit_seconds_error(std::nullopt) == "fit_seconds=null");
    CHECK(prof::fit_seconds_error(0.0) == "fit_seconds=0");
    CHECK(prof::fit_seconds_error(-1.5) == "fit_seconds=-1.5");
}

TEST_CASE("a row with an error set is a failed cell whatever its fit_seconds, in both readers") {
    // A memory kill after 600 s: the pipeline recorded the elapsed time and the RSS it reached.
    const std::string killed =
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","n_obs":5000,"fit_seconds":600.0,)"
        R"("process_rss_bytes":2000000000,"memory_limit_bytes":2147483648,"error":"OOMKilled"})";
    const std::string good =
        R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","n_obs":100,"fit_seconds":2.0,)"
        R"("process_rss_bytes":1000000000,"error":null})";
    // the same rows with a space after each colon read by simdjson only (the fast reader's
    // compact-key prediction does not apply; the rule lives in harvester::add for both)
    auto spaced = [](std::string t) {
        for (std::size_t i = 0; (i = t.find("\":", i)) != std::string::npos; i += 3) t.insert(i + 2, " ");
        return t;
    };
    for (const std::string& text : {killed + "\n" + good + "\n", spaced(killed) + "\n" + spaced(good) + "\n"}) {
        prof::harvest_row row;
        CHECK(prof::read_harvest_row_fast(killed, row));  // the fast reader reads the line itself
        auto ps = harvest_text(text);
        REQUIRE(ps.size() == 1);
        const auto& p = ps[0];
        CHECK(p.n_ok == 1);
        CHECK(p.n_failed == 1);
        const auto& m = p.models.at("m");
        CHECK(m.n_oom_killed == 1);
        CHECK(m.oom_limit_bytes == 2147483648ULL);
        CHECK(m.max_n_obs == 100ULL);                        // not the killed row's 5000
        CHECK(m.median_wall_s == 2.0);                       // not the median of 2 and 600
        CHECK(m.wall_curve.size() == 1);
        CHECK(m.max_process_rss_bytes == 1000000000ULL);     // the killed row's RSS sizes nothing
        CHECK(p.first_error_by_model.at("m") == "OOMKilled");
        // slot = max(ceil(1e9 × 1.25), oom floor) = max(1.25e9, ceil(2147483648 × 1.2) = 2576980378)
        CHECK(p.families.at("f").slot_rss_bytes == 2576980378ULL);
    }
}

TEST_CASE("family comes from the row, else the family map, else the model name with a warning") {
    prof::harvest_config cfg;
    cfg.family_map = {{"lgbm", "ml"}, {"theta", "mapped"}};
    auto ps = harvest_text(R"({"run_id":"r","ts_id":"a","model_type":"theta","family":"statistical","fit_seconds":1})" "\n"
                           R"({"run_id":"r","ts_id":"a","model_type":"lgbm","fit_seconds":1})" "\n"
                           R"({"run_id":"r","ts_id":"a","model_type":"nbeats","family":"","fit_seconds":1})" "\n",
                           cfg);
    const auto& p = ps.at(0);
    CHECK(p.models.at("theta").family == "statistical");
    CHECK(p.models.at("lgbm").family == "ml");
    CHECK(p.models.at("nbeats").family == "nbeats");
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0].find("no family for model(s) nbeats") == 0);
}

TEST_CASE("a row with no family does not vote: its model stays in the family the other rows name") {
    // ets: two rows under "stat", one without a family, whose fallback "ets" sorts before
    // "stat" (the first-sorted family used to win); arima: no row names one, so its own name.
    auto ps = harvest_text(R"({"run_id":"r","ts_id":"a","model_type":"ets","family":"stat","fit_seconds":1})" "\n"
                           R"({"run_id":"r","ts_id":"b","model_type":"ets","fit_seconds":2})" "\n"
                           R"({"run_id":"r","ts_id":"c","model_type":"ets","family":"stat","fit_seconds":3})" "\n"
                           R"({"run_id":"r","ts_id":"a","model_type":"arima","fit_seconds":1})" "\n");
    const auto& p = ps.at(0);
    CHECK(p.models.at("ets").family == "stat");
    CHECK(p.families.count("ets") == 0);
    CHECK(p.models.at("arima").family == "arima");
    REQUIRE(p.provenance.warnings.size() == 2);
    CHECK(p.provenance.warnings[0].find("no family for model(s) arima:") == 0);
    CHECK(p.provenance.warnings[1] == "model 'ets': 1 of its fits name no family; counted under 'stat', the family "
                                      "the others name: give each model one family");
}

TEST_CASE("one profile per run_id, sorted, with harvest provenance and the latest finished_at") {
    prof::harvest_config cfg;
    cfg.signature_map = prof::parse_signature_map(R"({"r2":{"b":1,"a":[2]}})", "map");
    auto ps = harvest_text(
        R"({"run_id":"r2","ts_id":"a","model_type":"m","family":"f","fit_seconds":1,"finished_at":"2026-11-29T10:00:00Z"})" "\n"
        R"({"run_id":17,"ts_id":5,"model_type":"m","family":"f","fit_seconds":1})" "\n"
        // 10:30+01:00 is 09:30Z: earlier as an instant though larger as a string
        R"({"run_id":"r2","ts_id":"b","model_type":"m","family":"f","fit_seconds":1,"finished_at":"2026-11-29T10:30:00+01:00"})" "\n",
        cfg);
    REQUIRE(ps.size() == 2);
    CHECK(*ps[0].provenance.run_id == "17");
    CHECK(ps[0].sample_ts_ids == std::vector<std::string>{"5"});
    CHECK_FALSE(ps[0].provenance.measured_at);
    CHECK_FALSE(ps[0].provenance.signature);  // no entry in the map, no --signature
    CHECK(*ps[1].provenance.run_id == "r2");
    CHECK(ps[1].provenance.basis == "measured");
    CHECK(ps[1].provenance.source == "harvest");
    CHECK(*ps[1].provenance.measured_at == "2026-11-29T10:00:00Z");
    CHECK(ps[1].provenance.signature->dump() == R"({"a":[2],"b":1})");

    cfg.run_id = "r2";
    cfg.signature = prof::parse_signature(R"({"one":"run"})", "sig");
    auto one = harvest_text(R"({"run_id":"r2","ts_id":"a","model_type":"m","fit_seconds":1})" "\n"
                            R"({"run_id":"r1","ts_id":"a","model_type":"m","fit_seconds":1})" "\n",
                            cfg);
    REQUIRE(one.size() == 1);
    CHECK(counts(one[0]) == R"({"bad_lines_skipped":0,"ensemble_rows_skipped":0,"fold_rows_skipped":0,"rows_read":1})");
    CHECK(one[0].provenance.signature->dump() == R"({"a":[2],"b":1})");  // the map's entry wins
}

TEST_CASE("one --signature for an input of several runs is refused, naming them") {
    prof::harvest_config cfg;
    cfg.signature = prof::parse_signature(R"({"n_series":85})", "sig");
    CHECK_THROWS_WITH_AS(harvest_text(R"({"run_id":"a","ts_id":"x","model_type":"m","fit_seconds":1})" "\n"
                                      R"({"run_id":"b","ts_id":"x","model_type":"m","fit_seconds":1})" "\n",
                                      cfg),
                         doctest::Contains("the input holds 2 runs (a, b)"), prof::usage_error);
}

TEST_CASE("the harvest of rows equals build_profile over the equivalent fit records") {
    std::string rows =
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","n_obs":10,"fit_seconds":0.5,"cpu_seconds":1,"process_rss_bytes":"100","peak_rss_bytes":7})" "\n"
        R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","n_obs":30,"fit_seconds":1.5,"cpu_seconds":1.5,"process_rss_bytes":300,"peak_gpu_bytes":0})" "\n"
        R"({"run_id":"r","ts_id":"c","model_type":"m","family":"f","n_obs":20,"fit_seconds":null,"error":"killed by SIGKILL"})" "\n";
    auto fit = [](std::string ts, std::uint64_t n_obs, bool ok, std::optional<double> wall, std::optional<double> cpu,
                  std::optional<std::uint64_t> rss, std::optional<std::uint64_t> peak, std::optional<std::uint64_t> gpu,
                  std::optional<std::string> error) {
        auto f = prof::test::fit_of(ts, "m", "f",
                                    {.n_obs = n_obs, .wall_s = wall, .cpu_s = cpu, .process_rss_bytes = rss,
                                     .peak_rss_bytes = peak, .peak_gpu_bytes = gpu},
                                    error);
        f.ok = ok;
        return f;
    };
    std::vector<prof::measured_fit> fits = {fit("a", 10, true, 0.5, 1.0, 100, 7, std::nullopt, std::nullopt),
                                            fit("b", 30, true, 1.5, 1.5, 300, std::nullopt, 0, std::nullopt),
                                            fit("c", 20, false, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                                std::nullopt, "killed by SIGKILL")};
    auto h = harvest_text(rows).at(0);
    auto b = prof::build_profile(fits, {prof::default_memory_margin, prof::default_time_margin}, h.provenance);
    b.harvest = h.harvest;
    CHECK(b.models.at("m").readings.size() == 2);  // a pre-pass keeps its fits for resampling;
    for (auto& [name, m] : b.models) m.readings.clear();  // a harvest, which measured every cell, none
    CHECK(prof::write_profile(h) == prof::write_profile(b));
    CHECK(h.families.at("f").slot_rss_bytes == 375);  // ceil(300 × 1.25)
    CHECK(h.models.at("m").max_n_obs == 30);          // the failed row's n_obs counts too
}

TEST_CASE("malformed rows name the line; a skipped line is never half-counted") {
    CHECK_THROWS_WITH_AS(harvest_text("\n" R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":true})" "\n"),
                         "rows:2: field 'fit_seconds': expected a number, found true", prof::input_error);
    CHECK_THROWS_WITH_AS(harvest_text(R"({"ts_id":"a","model_type":"m"})"), "rows:1: field 'run_id': missing",
                         prof::input_error);
    CHECK_THROWS_WITH_AS(harvest_text(R"({"run_id":"r","ts_id":"a","model_type":"m","finished_at":"yesterday"})"),
                         "rows:1: field 'finished_at': expected an RFC 3339 time stamp with a zone (1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z), found \"yesterday\"",
                         prof::input_error);
    prof::harvest_config cfg;
    cfg.max_bad_lines = 1;
    auto ps = harvest_text(R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":1} [])" "\n"
                           R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","fit_seconds":2})" "\n",
                           cfg);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].n_measurements == 1);
    CHECK(counts(ps[0]) == R"({"bad_lines_skipped":1,"ensemble_rows_skipped":0,"fold_rows_skipped":0,"rows_read":1})");
}

TEST_CASE("rows are read before their line is cut, never across a line break") {
    // Row c's CRLF, the blank line and the last line without '\n' go through the line
    // reader; the object broken over lines 3 and 4 is two bad lines, never one row.
    const std::string text =
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":1})" "\n"
        R"({"run_id":"r","ts_id":"b","model_type":"m","family":"f","fit_seconds":2})" "\n"
        R"({"run_id":"r","ts_id":"x","model_type":"m", )" "\n"
        R"("family":"f","fit_seconds":9})" "\n"
        "  \t\n"
        R"( {"run_id":"r","ts_id":"c","model_type":"m","family":"f","fit_seconds":3} )" "\r\n"
        R"({"run_id":"r","ts_id":"d","model_type":"m","family":"f","fit_seconds":4})";
    auto check = [](const std::vector<prof::compute_profile>& ps) {
        REQUIRE(ps.size() == 1);
        CHECK(ps[0].n_measurements == 4);
        CHECK(counts(ps[0]) == R"({"bad_lines_skipped":2,"ensemble_rows_skipped":0,"fold_rows_skipped":0,"rows_read":4})");
    };
    prof::harvest_config cfg;
    cfg.max_bad_lines = 2;
    check(harvest_text(text, cfg));  // read through a buffer
    // In place, as a mapped file is read: the tail (no padding after it) is copied.
    prof::harvester h(cfg);
    prof::line_reader in(prof::memory_region{text, 0, false}, "rows");
    h.read(in);
    check(h.finish());
    CHECK_THROWS_WITH_AS(harvest_text(text), doctest::Contains("rows:3: "), prof::input_error);
    // The reader itself: a row ends at its own '\n'; the broken one is declined, not joined.
    std::string padded = text + std::string(simdjson::SIMDJSON_PADDING, '\0');
    const char* b = padded.data();
    const char* e = b + text.size();
    prof::harvest_row row;
    prof::harvest_row_reader reader;
    std::size_t nl1 = text.find('\n'), nl2 = text.find('\n', nl1 + 1), nl6 = text.rfind('\n');
    CHECK(reader.read_line(b, e, e + simdjson::SIMDJSON_PADDING, row) == b + nl1);
    CHECK(reader.read_line(b + nl1 + 1, e, e + simdjson::SIMDJSON_PADDING, row) == b + nl2);
    CHECK(row.ts_id == "b");
    CHECK(reader.read_line(b + nl2 + 1, e, e + simdjson::SIMDJSON_PADDING, row) == nullptr);
    std::size_t c = text.find(" {");
    CHECK(reader.read_line(b + c, e, e + simdjson::SIMDJSON_PADDING, row) == b + nl6);  // its '\r' is whitespace
    CHECK(reader.read_line(b + nl6 + 1, e, e + simdjson::SIMDJSON_PADDING, row) == nullptr);  // no '\n' after it
}

TEST_CASE("string values with escapes are unescaped; integers above 2^53 stay exact") {
    auto ps = harvest_text(
        R"({"run_id":"r\u002f1","ts_id":"a\"b","model_type":"m","family":"f","fit_seconds":1,"process_rss_bytes":"9007199254740993"})");
    REQUIRE(ps.size() == 1);
    CHECK(*ps[0].provenance.run_id == "r/1");
    CHECK(ps[0].sample_ts_ids == std::vector<std::string>{"a\"b"});
    CHECK(*ps[0].models.at("m").max_process_rss_bytes == 9007199254740993ull);
}

TEST_CASE("family map and signature files must be JSON objects") {
    CHECK(prof::parse_family_map(R"({"a":"x"})", "fm").at("a") == "x");
    CHECK_THROWS_WITH(prof::parse_family_map(R"({"a":1})", "fm"), "fm: model 'a': expected a family name (a non-empty string)");
    CHECK_THROWS_WITH(prof::parse_signature("[1]", "sig"), "sig:1: --signature: expected a JSON object, found an array");
    CHECK_THROWS_WITH(prof::parse_family_map("{\"a\":\"x\",\n\"b\":}", "fm"), "fm:2: --family-map: malformed JSON (near byte 15: '}')");
}

TEST_CASE("the fast row reader agrees with the simdjson reader wherever it accepts a line") {
    // Lines the fast reader must accept with the same values, and lines it must hand over.
    std::vector<std::pair<std::string, bool>> lines = {
        {R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","n_obs":12,"fit_seconds":0.5,"cpu_seconds":1e-3,"process_rss_bytes":"123","peak_rss_bytes":18446744073709551615,"peak_gpu_bytes":null,"fold_id":null,"ensemble_id":null,"finished_at":"2026-11-29T10:00:00+01:00","error":null})", true},
        {R"( { "run_id" : 42 , "ts_id" : 7 , "model_type" : "m" , "fit_seconds" : "2.5E1" , "extra" : true , "x" : -0.0 } )", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":1,"fit_seconds":2,"fold_id":0,"ensemble_id":false})", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","n_obs":"0012"})", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fold_id":"","ensemble_id":"e"})", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fold_id":"2","ensemble_id":""})", true},
        {R"({"run_id":"r","ts_id":"a\"b","model_type":"m"})", false},          // an escape
        {R"({"run_id":"r","ts_id":"a","model_type":"m","tags":{"a":1}})", false}, // a nested value
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":"NaN","cpu_seconds":"-Infinity","n_obs":"NaN"})", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":"inf","cpu_seconds":"Inf","peak_rss_bytes":"inf"})", true},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":"Nan"})", false},  // no such word: an error
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":1e400})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","n_obs":01})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","n_obs":1.0})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","n_obs":-1})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","peak_rss_bytes":18446744073709551616})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m",})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m"} x)", false},
        {R"({"run_id":"r","ts_id":1.5,"model_type":"m"})", false},
        {R"({"run_id":"r","model_type":"m"})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","finished_at":"2026-11-29"})", false},
        {R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":tru})", false},
        {"{\"run_id\":\"r\",\"ts_id\":\"a\tb\",\"model_type\":\"m\"}", false},  // a raw control character
    };
    simdjson::ondemand::parser parser;
    for (const auto& [text, accept] : lines) {
        CAPTURE(text);
        prof::harvest_row fast;
        REQUIRE(prof::read_harvest_row_fast(text, fast) == accept);
        if (!accept) continue;
        simdjson::padded_string padded(text);
        auto doc = parser.iterate(padded);
        simdjson::ondemand::object obj = doc.get_object();
        prof::harvest_row slow = prof::read_harvest_row(obj);
        CHECK(fast.run_id == slow.run_id);
        CHECK(fast.ts_id == slow.ts_id);
        CHECK(fast.model_type == slow.model_type);
        CHECK(fast.family == slow.family);
        CHECK(fast.error == slow.error);
        CHECK(fast.finished_at_ns == slow.finished_at_ns);
        CHECK(fast.n_obs == slow.n_obs);
        CHECK(fast.process_rss_bytes == slow.process_rss_bytes);
        CHECK(fast.peak_rss_bytes == slow.peak_rss_bytes);
        CHECK(fast.peak_gpu_bytes == slow.peak_gpu_bytes);
        CHECK(fast.intraop_threads == slow.intraop_threads);
        // NaN is unequal to itself: the values are compared as the texts a failed fit's error shows.
        CHECK(prof::fit_seconds_error(fast.fit_seconds) == prof::fit_seconds_error(slow.fit_seconds));
        CHECK(prof::fit_seconds_error(fast.cpu_seconds) == prof::fit_seconds_error(slow.cpu_seconds));
        CHECK(fast.fold == slow.fold);
        CHECK(fast.ensemble == slow.ensemble);
    }
}

namespace {

// Every field of a row as one comparable text.
std::string row_text(const prof::harvest_row& r) {
    auto o = [](const auto& v) {
        if (!v) return std::string("null");
        std::ostringstream s;
        s.precision(17);
        s << *v;
        return s.str();
    };
    return std::string(r.run_id) + "|" + std::string(r.ts_id) + "|" + std::string(r.model_type) + "|" + o(r.family) +
           "|" + o(r.error) + "|" + o(r.finished_at_ns) + "|" + o(r.n_obs) + "|" + o(r.process_rss_bytes) + "|" +
           o(r.peak_rss_bytes) + "|" + o(r.peak_gpu_bytes) + "|" + o(r.intraop_threads) + "|" + o(r.fit_seconds) + "|" + o(r.cpu_seconds) + "|" +
           (r.fold ? "F" : "-") + (r.ensemble ? "E" : "-");
}

}  // namespace

TEST_CASE("the row reader kept across rows (remembered key order) reads each row as a fresh one does") {
    // Rows whose key order, spacing and key lengths change from row to row, so the remembered
    // `"key":` bytes match, partly match and miss; read with and without padding.
    std::mt19937_64 rng(3);
    const std::vector<std::pair<std::string, std::vector<std::string>>> cols = {
        {"run_id", {"\"r1\"", "\"r2\"", "7"}},          {"ts_id", {"\"a\"", "\"series-0001\"", "12"}},
        {"model_type", {"\"arima\"", "\"ets\""}},       {"family", {"\"stat\"", "null", "\"\""}},
        {"n_obs", {"120", "12", "1200", "\"120\"", "null", "0"}},
        {"fit_seconds", {"0.25", "0.2", "0.255", "1e-3", "\"0.5\"", "null", "0", "3"}},
        {"cpu_seconds", {"0.5", "12.125", "null"}},    {"process_rss_bytes", {"123456789", "\"9007199254740993\"", "null"}},
        {"peak_rss_bytes", {"1", "99999999999", "null"}}, {"peak_gpu_bytes", {"null", "0", "4096"}},
        {"intraop_threads", {"1", "\"4\"", "null"}},         {"fold_id", {"null", "\"\"", "\"2\""}},         {"ensemble_id", {"null", "\"e\""}},
        {"finished_at", {"\"2026-11-28T00:00:01Z\"", "null", "\"2026-11-28T01:00:00.5+01:00\"", "\"2026-11-28T00:00:59Z\"",
                         "\"2026-11-28T00:00:60Z\"", "\"2026-11-28T00:01:00Z\"", "\"2026-11-29T00:00:02Z\"",
                         "\"2026-11-28T00:00:61Z\"", "\"2026-11-28T00:00:0xZ\""}},
        {"error", {"null", "\"boom\"", "\"boo\"", "nul"}},                {"extra_column", {"1", "\"x\"", "true"}},
        {"run_idx", {"1"}},                             {"ts_ix", {"2"}},
        {"a_column_whose_name_is_longer_than_32_bytes", {"1", "null"}}};
    prof::harvest_row_reader kept, kept_padded;
    int accepted = 0;
    for (int row = 0; row < 3000; ++row) {
        std::vector<std::size_t> order(cols.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        if (row % 5 == 0) std::shuffle(order.begin(), order.end(), rng);  // mostly the same order
        std::string line = "{";
        for (std::size_t k : order) {
            if (cols[k].first != "run_id" && cols[k].first != "ts_id" && cols[k].first != "model_type" && rng() % 4 == 0)
                continue;  // a missing column
            const auto& vals = cols[k].second;
            line += (line.size() > 1 ? (rng() % 9 == 0 ? ", " : ",") : "") + std::string("\"") + cols[k].first + "\"" +
                    (rng() % 11 == 0 ? " : " : ":") + vals[rng() % vals.size()];
        }
        line += "}";
        prof::harvest_row fresh, a, b;
        bool ok = prof::read_harvest_row_fast(line, fresh);
        std::string padded = line + std::string(simdjson::SIMDJSON_PADDING, '\0');
        CAPTURE(line);
        REQUIRE(kept.read(line, a) == ok);
        REQUIRE(kept_padded.read(std::string_view(padded.data(), line.size()), b, true) == ok);
        if (!ok) continue;
        ++accepted;
        CHECK(row_text(a) == row_text(fresh));
        CHECK(row_text(b) == row_text(fresh));
    }
    CHECK(accepted > 2000);
}

TEST_CASE("the row reader kept across rows reads objects of more members than it remembers") {
    // The predictor remembers 32 members: rows of 6 to 51 members, the row's own columns
    // last, alternate so that its cursor meets the end of what it remembers mid-row. Read as
    // lines, padded and not, and cut from the whole text by read_line.
    std::vector<std::string> lines;
    const std::vector<std::size_t> extras = {0, 40, 18, 45, 45, 3, 36, 0, 36};
    for (std::size_t extra : extras) {
        std::string line = "{";
        for (std::size_t k = 0; k < extra; ++k) line += "\"x" + std::to_string(k) + "\":" + std::to_string(k) + ",";
        lines.push_back(line + R"("run_id":"r","ts_id":"s","model_type":"m","n_obs":)" + std::to_string(10 + extra) +
                        R"(,"fit_seconds":0.5,"peak_gpu_bytes":null})");
    }
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    const std::size_t text_size = text.size();
    text.append(simdjson::SIMDJSON_PADDING, '\0');
    prof::harvest_row_reader kept, kept_padded, cutting;
    const char* at = text.data();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        prof::harvest_row fresh, a, b, c;
        CAPTURE(line);
        REQUIRE(prof::read_harvest_row_fast(line, fresh));
        std::string padded = line + std::string(simdjson::SIMDJSON_PADDING, '\0');
        REQUIRE(kept.read(line, a));
        REQUIRE(kept_padded.read(std::string_view(padded.data(), line.size()), b, true));
        const char* newline = cutting.read_line(at, text.data() + text_size, text.data() + text.size(), c);
        REQUIRE(newline == at + line.size());
        at = newline + 1;
        CHECK(row_text(a) == row_text(fresh));
        CHECK(row_text(b) == row_text(fresh));
        CHECK(row_text(c) == row_text(fresh));
        CHECK(fresh.n_obs == 10 + extras[i]);
        CHECK(fresh.fit_seconds == 0.5);
    }
}

TEST_CASE("unchecked, the row reader validates UTF-8 itself: valid rows read as checked ones, invalid never") {
    // Strings of ASCII, valid multi-byte text (2, 3 and 4 bytes) and invalid sequences (a lone
    // lead byte, 0xFF, an overlong '/', a UTF-16 surrogate, a sequence cut by the closing quote),
    // in a read column, an ignored column's value and a key, long and short (the vector scan
    // and its byte-by-byte tail).
    const std::vector<std::string> texts = {"sku-1",       "caf\xC3\xA9",      "\xE6\x97\xA5\xE6\x9C\xAC",
                                            "\xF0\x9F\x98\x80 fit", "bad \xC3 lead", "\xFF",
                                            "\xC0\xAF",  "\xED\xA0\x80",    "cut \xE6\x97",
                                            std::string(40, 'x') + "\xC3\xA9" + std::string(40, 'y'),
                                            std::string(40, 'x') + "\xC3" + std::string(40, 'y')};
    prof::harvest_row_reader checked_reader, unchecked_reader;
    int valid = 0, invalid = 0;
    for (std::size_t k = 0; k < 5 * texts.size(); ++k) {
        const std::string& t = texts[k % texts.size()];
        std::string line;
        switch (k / texts.size()) {
        case 0: line = R"({"run_id":"r","ts_id":")" + t + R"(","model_type":"m","fit_seconds":1})"; break;
        case 1: line = R"({"run_id":"r","ts_id":"a","model_type":"m","error":")" + t + R"("})"; break;
        case 2: line = R"({"run_id":"r","ts_id":"a","model_type":"m","note":")" + t + R"(","fit_seconds":2})"; break;
        case 3: line = R"({"run_id":"r","ts_id":"a",")" + t + R"(":1,"model_type":"m"})"; break;
        default: line = R"({"run_id":"r","ts_id":"a","model_type":")" + t + R"(","note":"x\"y"})"; break;
        }
        std::string padded = line + std::string(simdjson::SIMDJSON_PADDING, '\0');
        std::string_view view(padded.data(), line.size());
        CAPTURE(line);
        prof::harvest_row a, b;
        bool ok_unchecked = unchecked_reader.read(view, a, true, false);
        if (simdjson::validate_utf8(line.data(), line.size())) {
            ++valid;
            bool ok_checked = checked_reader.read(view, b, true, true);
            CHECK(ok_unchecked == ok_checked);
            if (ok_checked) CHECK(row_text(a) == row_text(b));
        } else {
            ++invalid;
            CHECK(!ok_unchecked);
        }
    }
    CHECK(valid == 25);
    CHECK(invalid == 30);
    // Through the harvest: the invalid line is named, as before.
    CHECK_THROWS_WITH_AS(harvest_text(R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":1})" "\n"
                                      "{\"run_id\":\"r\",\"ts_id\":\"caf\xC3\",\"model_type\":\"m\",\"fit_seconds\":1}\n"),
                         "rows:2: invalid UTF-8", prof::input_error);
}

TEST_CASE("both readers: a later null finished_at wins; 0.7000…0 is 0.7 (not simdjson 3.0's misreading)") {
    auto p1 = harvest_text(
        R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":0.70000000000000000000,"finished_at":"2024-01-01T00:00:00Z","finished_at":null})" "\n");
    // The same row through the simdjson reader: an escape in model_type sends it there.
    auto p2 = harvest_text(
        R"({"run_id":"r","ts_id":"a","model_type":"\u006d","family":"f","fit_seconds":0.70000000000000000000,"finished_at":"2024-01-01T00:00:00Z","finished_at":null})" "\n");
    REQUIRE(p1.size() == 1);
    REQUIRE(p2.size() == 1);
    for (const auto& p : {p1[0], p2[0]}) {
        CHECK(!p.provenance.measured_at);
        REQUIRE(p.models.count("m"));
        CHECK(p.models.at("m").median_wall_s == 0.7);
    }
}

TEST_CASE("the export a line in another format is told to use names the table the rows come from") {
    // As given when all lower case; each part quoted when the name has an upper-case letter,
    // the quotes escaped for the double-quoted shell word the query goes in.
    CHECK(prof::rows_export_query("forecast_metadata") == "SELECT row_to_json(t) FROM forecast_metadata t");
    CHECK(prof::rows_export_query("wh.Fits_2026") == "SELECT row_to_json(t) FROM \"wh\".\"Fits_2026\" t");
    for (auto [table, expected] : {std::pair<std::string, std::string>{"forecast_metadata", "FROM forecast_metadata t\""},
                                   {"wh.fits_2026", "FROM wh.fits_2026 t\""},
                                   {"wh.Fits_2026", "FROM \\\"wh\\\".\\\"Fits_2026\\\" t\""}}) {
        CAPTURE(table);
        prof::harvest_config cfg;
        cfg.table = table;
        try {
            harvest_text("nightly-41\tco2\tets\t0.5\n", cfg);
            FAIL("expected an input_error");
        } catch (const prof::input_error& e) {
            std::string what = e.what();
            CHECK(what.find("rows:1: expected a JSON object; if this is COPY's text format") == 0);
            CHECK(what.size() >= expected.size());
            CHECK(what.compare(what.size() - expected.size(), expected.size(), expected) == 0);
        }
    }
}
