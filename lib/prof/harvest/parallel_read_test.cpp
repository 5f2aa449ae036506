// Unit tests of parallel ingest: chunked, multi-threaded harvests against the one-thread read.
#include "prof/core/errors.hpp"
#include "prof/harvest/harvest.hpp"
#include "prof/harvest/line_chunks.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

namespace {

// Every profile of a harvest, as written, one per line.
std::string written(const std::vector<prof::compute_profile>& ps) {
    std::string out;
    for (const auto& p : ps) out += prof::write_profile(p) + "\n";
    return out;
}

std::string harvest_jobs(const std::string& text, unsigned jobs, std::size_t chunk_bytes, prof::harvest_config cfg = {}) {
    cfg.chunk_bytes = chunk_bytes;
    prof::harvester h(std::move(cfg));
    h.read(prof::string_source(text, "rows", 7000), jobs);
    return written(h.finish()) + fmt::format("bad={}\n", h.bad_lines());
}

// Rows of every kind the rules tell apart: three runs, models with and without a family, ok
// and failed fits (null, 0, "NaN", an error text, an OOM kill under a limit), folds, ensembles,
// quoted integers, escaped strings (the simdjson path), 60 distinct lengths (a binned curve),
// mixed thread caps, time stamps, blank and CRLF lines.
std::vector<std::string> varied_rows(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    auto pick = [&](std::size_t k) { return static_cast<std::size_t>(rng() % k); };
    const char* models[] = {"arima", "ets", "lgbm", "tft", "chronos", "naive"};
    const char* families[] = {"\"stat\"", "\"stat\"", "\"ml\"", "\"deep\"", "null", "\"\""};
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t m = pick(6);
        std::string fit;
        switch (pick(12)) {
        case 0: fit = "null"; break;
        case 1: fit = "0"; break;
        case 2: fit = "\"NaN\""; break;
        default: fit = fmt::format("{}.{:03}", 1 + pick(50), pick(1000));
        }
        std::string extra;
        if (pick(10) == 0) extra += R"(,"fold_id":1)";
        if (pick(30) == 0) extra += R"(,"ensemble_id":"e")";
        if (pick(25) == 0) extra += R"(,"error":"Killed","memory_limit_bytes":4294967296)";
        if (pick(40) == 0) extra += R"(,"error":"CUDA out of memory","peak_gpu_bytes":"8000000000")";
        if (pick(4) == 0) extra += fmt::format(R"(,"intraop_threads":{})", 1 + pick(2));
        std::string ts = pick(50) == 0 ? fmt::format(R"(s\"{})", pick(99)) : fmt::format("s{}", pick(400));
        std::string row = fmt::format(
            R"({{"run_id":"run-{}","ts_id":"{}","model_type":"{}","family":{},"n_obs":{},"fit_seconds":{},)"
            R"("cpu_seconds":{}.5,"process_rss_bytes":{},"finished_at":"2026-01-0{}T0{}:00:00Z"{}}})",
            pick(3), ts, models[m], families[m], pick(3) ? std::to_string(10 * (1 + pick(60))) : "null", fit,
            pick(9), pick(2) ? std::to_string(1000 + pick(100000)) : fmt::format("\"{}\"", 1000 + pick(100000)),
            1 + pick(9), pick(10), extra);
        if (pick(20) == 0) row = " " + row + "\r";
        rows.push_back(row);
        if (pick(50) == 0) rows.push_back("   ");
    }
    return rows;
}

std::string joined(const std::vector<std::string>& rows) {
    std::string out;
    for (const auto& r : rows) out += r + "\n";
    return out;
}

}  // namespace

TEST_CASE("a harvest parsed on several threads in chunks writes what one thread writes, byte for byte") {
    auto rows = varied_rows(3000, 1);
    std::string text = joined(rows);
    std::string one = harvest_jobs(text, 1, 4u << 20);
    REQUIRE(one.find("\"run_id\":\"run-2\"") != std::string::npos);
    REQUIRE(one.find("n_obs_min") != std::string::npos);  // a curve was built
    for (unsigned jobs : {2u, 3u, 8u})
        for (std::size_t chunk : {std::size_t{1}, std::size_t{100}, std::size_t{4096}, std::size_t{4u << 20}}) {
            CAPTURE(jobs);
            CAPTURE(chunk);
            CHECK(harvest_jobs(text, jobs, chunk) == one);
        }
    // Rows shuffled and some duplicated: still one answer (every rule is order-independent).
    std::mt19937 rng(2);
    for (int k = 0; k < 300; ++k) rows.push_back(rows[rng() % rows.size()]);
    std::shuffle(rows.begin(), rows.end(), rng);
    text = joined(rows);
    CHECK(harvest_jobs(text, 3, 500) == harvest_jobs(text, 1, 4u << 20));
    // The last line without a '\n' is a line in every chunking.
    text.pop_back();
    CHECK(harvest_jobs(text, 2, 333) == harvest_jobs(text, 1, 4u << 20));
}

TEST_CASE("malformed lines in several chunks keep their input line numbers and the budget counts exactly") {
    auto rows = varied_rows(400, 3);
    // Lines 5, 150 and 390 are bad (1-based), in different chunks of 1000 bytes.
    rows[4] = R"({"run_id":"r","ts_id":)";
    rows[149] = R"({"run_id":"r","ts_id":"a","model_type":"m","fit_seconds":"abc"})";
    rows[389] = "not json";
    std::string text = joined(rows);
    prof::harvest_config exact;
    exact.max_bad_lines = 3;  // exactly reached: all three skipped and counted
    std::string one = harvest_jobs(text, 1, 4u << 20, exact);
    CHECK(one.find("\"bad_lines_skipped\":3") != std::string::npos);
    CHECK(harvest_jobs(text, 2, 1000, exact) == one);
    CHECK(harvest_jobs(text, 4, 1, exact) == one);

    prof::harvest_config short_by_one;
    short_by_one.max_bad_lines = 2;  // exceeded at the third bad line, line 390
    for (unsigned jobs : {1u, 2u, 4u}) {
        CAPTURE(jobs);
        try {
            harvest_jobs(text, jobs, 1000, short_by_one);
            FAIL("expected an input_error");
        } catch (const prof::input_error& e) {
            CHECK(e.line_number == 390);
            CHECK(std::string(e.what()).rfind("rows:390: expected a JSON object; if this is COPY's text format", 0) == 0);
        }
    }
    prof::harvest_config none;  // the first bad line ends it
    try {
        harvest_jobs(text, 3, 1000, none);
        FAIL("expected an input_error");
    } catch (const prof::input_error& e) {
        CHECK(std::string(e.what()) ==
              "rows:5: malformed JSON (JSON document ended early in the middle of an object or array.)");
    }
}

TEST_CASE("a byte order mark is skipped before the first line only, however the input is cut") {
    std::string row = R"({"run_id":"r","ts_id":"a","model_type":"m","family":"f","fit_seconds":1})";
    std::string text = "\xEF\xBB\xBF" + row + "\n" + row + "\n";
    CHECK(harvest_jobs(text, 2, 1) == harvest_jobs(text, 1, 4u << 20));
    // A mark at the start of line 2 (a chunk's first line when cut at every line) is bad JSON.
    text = row + "\n\xEF\xBB\xBF" + row + "\n";
    for (unsigned jobs : {1u, 2u}) {
        try {
            harvest_jobs(text, jobs, 1);
            FAIL("expected an input_error");
        } catch (const prof::input_error& e) {
            CHECK(e.line_number == 2);
        }
    }
}

namespace {

// The bytes of `text`, then an I/O error.
class failing_source : public prof::byte_source {
public:
    explicit failing_source(std::string text) : text_(std::move(text)) {}
    std::size_t read(char* buf, std::size_t n) override {
        if (at_ == text_.size()) throw prof::io_error("rows: read failed");
        std::size_t k = std::min(n, text_.size() - at_);
        std::copy_n(text_.data() + at_, k, buf);
        at_ += k;
        return k;
    }
    const std::string& name() const override { return name_; }

private:
    std::string text_, name_ = "rows";
    std::size_t at_ = 0;
};

}  // namespace

TEST_CASE("a malformed line read before an I/O error is the error reported; else the I/O error") {
    auto rows = varied_rows(200, 4);
    rows[120] = "{";
    prof::harvest_config cfg;
    cfg.chunk_bytes = 500;
    prof::harvester h(cfg);
    try {
        h.read(std::make_unique<failing_source>(joined(rows)), 2);
        FAIL("expected an input_error");
    } catch (const prof::input_error& e) {
        CHECK(e.line_number == 121);
    }
    cfg.max_bad_lines = 1;
    prof::harvester tolerant(cfg);
    CHECK_THROWS_AS(tolerant.read(std::make_unique<failing_source>(joined(rows)), 2), prof::io_error);
    CHECK(tolerant.bad_lines() == 1);
}

TEST_CASE("a chunk holds whole lines, numbered from the input's line after the chunks before it") {
    prof::line_chunk c;
    c.reserve(16);
    std::string_view t = "a\nb\n\nc";
    std::copy(t.begin(), t.end(), c.data.get());
    c.size = t.size();
    c.region = {std::string_view(c.data.get(), c.size), 0, false};
    CHECK(prof::chunk_lines(c) == 4);  // a, b, the blank line, c without its '\n'
    c.index = 1;
    prof::line_reader in = prof::chunk_reader(c, "x");
    prof::text_line l;
    REQUIRE(in.next(l));
    CHECK(l.text == "a");
    CHECK(l.number - prof::chunk_line_bias(c.index) == 1);
    std::vector<std::string> rest;
    while (in.next(l)) rest.push_back(std::string(l.text));
    CHECK(rest == std::vector<std::string>{"b", "c"});  // the blank line is counted, not handed out
    CHECK(in.lines_read() == 4);
}
