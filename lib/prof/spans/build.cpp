// One run's query_profile (see build.hpp).
#include "prof/spans/build.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/spans/chrome.hpp"
#include "prof/spans/polars.hpp"

#include <ctime>
#include <fmt/format.h>

namespace prof {

namespace {

double cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

span_set read_spans(span_format f, std::string_view text, const std::string& source, unsigned jobs, chrome_read_stats* how) {
    switch (f) {
    case span_format::polars_jsonl: return read_polars_jsonl(text, source);
    case span_format::polars_csv: return read_polars_csv(text, source);
    case span_format::chrome: return read_chrome_trace(text, source, jobs, how);
    case span_format::duckdb: break;
    }
    throw error(exit_code::software, "read_spans: a DuckDB profile has no spans");
}

std::optional<query_profile> build_run_profile(std::string_view text, const std::string& source, const run_input& in) {
    if (in.format == span_format::duckdb) return build_from_duckdb(read_duckdb_profile(text, source), in.opts, source);
    const bool chrome = in.format == span_format::chrome;
    double t0 = cpu_seconds();
    chrome_read_stats how;
    span_set s = read_spans(in.format, text, source, in.jobs, &how);
    if (chrome) {
        if (in.strict) refuse_defects(s, source);
        auto report = report_trace(s, source);
        for (const auto& n : report.notes) note(n);
        for (const auto& w : report.warnings) warn(w);
    }
    if (s.spans.empty()) {  // no evidence: nothing to price
        std::string why = no_spans_reason(in.format, s, source);
        if (in.strict) throw error(exit_code::data_err, why + " (--strict)");
        warn(why);
        return std::nullopt;
    }
    double t1 = cpu_seconds();
    query_profile p = build_from_spans(s, in.opts, default_fixed_nodes(in.format), record_source(in.format), in.jobs);
    if (in.stats) {
        std::string way;
        if (chrome) {
            std::string skipped = defect_counts(s);
            way = stats_words(how) + "; defects: " + (skipped.empty() ? std::string("none") : skipped);
        }
        note(fmt::format("stats: {} bytes, {} spans of {} nodes; cpu s: read+parse {:.6f}, union {:.6f}{}", text.size(),
                         s.spans.size(), s.names.size(), t1 - t0, cpu_seconds() - t1, way));
    }
    return p;
}

std::optional<query_profile> build_run_profile(const std::string& path, std::string_view format_word, bool strict,
                                               const std::function<run_input()>& options) {
    const std::string name = path == "-" ? "<stdin>" : path;
    padded_input input(path);
    std::string_view text = input.text();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {  // empty input → empty output
        if (strict) throw error(exit_code::data_err, fmt::format("{}: empty input (--strict)", name));
        return std::nullopt;
    }
    run_input in = options();
    in.format = span_format_named(format_word, text, name);
    return build_run_profile(text, name, in);
}

}  // namespace prof
