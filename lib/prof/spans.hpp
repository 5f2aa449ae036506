// QueryProfile (SPEC §2 query_profile): a query's fixed and per-row host cost from engine spans
// (Polars profile rows, Chrome Trace Event Format) or a DuckDB JSON profile; the staleness
// predicate, the estimate, and the non-negative least-squares fit over several runs.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// ---- spans and their arithmetic (SPEC §2, "From spans") ----------------------------------

// One span of one node, in integer microseconds; `node` indexes span_set::names.
struct span {
    std::int64_t start_us = 0;
    std::int64_t end_us = 0;
    std::uint32_t node = 0;
};

// What a span reader produced: the spans, their node names (interned, in order of first
// appearance), and counts of what was seen but does not count toward elapsed time.
struct span_set {
    std::vector<std::string> names;
    std::vector<span> spans;
    std::size_t events = 0;               // trace events read (all phases)
    std::size_t async_unmatched = 0;      // Chrome async begins ('b', 'S') with no end: ignored
    std::size_t unmatched_begins = 0;     // Chrome 'B' with no 'E' on its thread: ignored
    std::size_t unmatched_ends = 0;       // Chrome 'E' with no open 'B' on its thread: ignored
    // How a Chrome trace was read (prof-spans --stats, tests): events taken by the strict
    // scanner, events taken from simdjson DOM batches, or the whole document by on-demand.
    std::size_t scanned_events = 0;
    std::size_t dom_events = 0;
    bool whole_document = false;
};

// Length of the union of half-open intervals [first, second), in the same unit. Sorts `iv`
// in place by start (a stable radix sort over the starts' range, 11 bits a pass; std::stable_sort
// below 4096 intervals), then one sweep. Empty intervals add nothing.
std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv);

// The SPEC's split of one run: elapsed = max(end) - min(start) over all spans; fixed = length
// of the union of the fixed nodes' intervals; per node, the length of the union of its own
// spans. All in integer microseconds.
struct span_summary {
    std::int64_t elapsed_us = 0;
    std::int64_t fixed_us = 0;
    std::vector<std::int64_t> node_us;  // indexed like span_set::names
};
// is_fixed is indexed like span_set::names. An empty span set has elapsed 0.
span_summary summarize_spans(const span_set& s, const std::vector<bool>& is_fixed);

// ---- readers ------------------------------------------------------------------------------
// Each reader takes the whole input text and the source name for diagnostics, and throws
// input_error("SOURCE:LINE: what") (exit 65) on bad data.

enum class span_format { polars_jsonl, polars_csv, chrome, duckdb };
// Guesses the format from the text: '[' or an object holding "traceEvents" → chrome; a first
// line that is a JSON object with "node" → polars_jsonl; an object with "latency" → duckdb; a
// first line naming node, start and end columns → polars_csv. Throws input_error otherwise.
span_format detect_span_format(std::string_view text, const std::string& source);
// "polars-jsonl", "polars-csv", "chrome", "duckdb" (the --input-format words).
std::string_view format_name(span_format f);

// Polars profile rows (node, start, end) in microseconds, as JSON Lines objects. Integer
// fields (quoted integers accepted); end < start is bad input naming the line.
span_set read_polars_jsonl(std::string_view text, const std::string& source);
// The same rows as CSV with a header naming node, start and end (any order, other columns
// ignored; RFC 4180 quoting, so a node name may hold commas).
span_set read_polars_csv(std::string_view text, const std::string& source);
// Chrome Trace Event Format: an object with "traceEvents" or a bare array of events. Spans are
// 'X' events (ts, dur) and 'B'/'E' pairs matched per (pid, tid) with nesting: per thread the
// events are ordered by ts (ties keep file order) and an 'E' closes the innermost open 'B'.
// Instants, metadata, counters, flow and async events do not count; async begins with no end
// are counted. ts and dur are microseconds; fractional values are rounded to the nearest
// microsecond. `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
// Identity fields (pid, tid, cat, id) are compared in one canonical text: a string by its
// unescaped contents, an integer in decimal, another number as the shortest text of its double.
// Speed: the two common shapes (a bare array; an object whose only key is "traceEvents") are
// checked to be UTF-8 once, then read event by event in place by a strict scanner of a subset of
// JSON (json_scan.hpp); an event it declines (an escape in a name, a fractional pid, ...) starts
// a batch of about `batch_bytes` parsed by simdjson's DOM parser (cut at "},{" boundaries, each
// batch validated whole before any event is taken, a bad cut extended to the next boundary), so
// memory stays bounded and every batch is parsed in cache. Any other shape, and any error, goes
// through one whole-document parse with simdjson's on-demand parser, which is also what names
// the line of a bad event. batch_bytes 0 = the whole-document parse only; scan false = no
// scanner, every event through the DOM batches. All give identical results (spans_test.cpp
// compares them on random traces).
span_set read_chrome_trace(std::string_view padded_text, const std::string& source,
                           std::size_t batch_bytes = std::size_t{1} << 20, bool scan = true);

// A DuckDB JSON profile (PRAGMA enable_profiling='json'; times in seconds, see
// shared/data/README.md): elapsed = root "latency"; fixed = "planner" + "all_optimizers" +
// "physical_planner" (detailed mode only; nullopt in standard mode, where the keys are absent);
// nodes = operator_timing per operator_name over the tree (summed over threads by DuckDB, and
// over operators sharing a name here); rows_scanned = root "cumulative_rows_scanned".
struct duckdb_profile {
    double latency_s = 0;
    std::optional<double> fixed_s;
    std::vector<std::pair<std::string, double>> operators;  // sorted by name
    std::optional<std::uint64_t> rows_scanned;
};
duckdb_profile read_duckdb_profile(std::string_view text, const std::string& source);

// ---- the record ---------------------------------------------------------------------------

struct query_node {
    std::string node;
    double seconds = 0;
    bool scales_with_rows = true;
};

// One run's place in a fit: its row count, what it took, what the fitted line says.
struct query_fit_point {
    std::uint64_t rows = 0;
    double measured_s = 0;
    double predicted_s = 0;
    double residual_s = 0;  // measured - predicted
};

// SPEC §2 QueryProfile, plus how it was obtained. Key order of the record:
// kind, plan_key, host, rows, fixed_seconds, per_row_seconds, nodes (sorted by node),
// selectivity, engine_version, source, runs, residuals, warnings.
struct query_profile {
    std::string plan_key;
    std::string host;
    std::uint64_t rows = 0;  // > 0; for a fit, the largest row count fitted
    double fixed_seconds = 0;
    double per_row_seconds = 0;
    std::vector<query_node> nodes;  // for a fit, the largest run's, as measured (not refitted)
    std::optional<double> selectivity;
    std::string engine_version;  // "" = unknown
    std::string source;          // polars | chrome | duckdb | fit
    std::uint64_t runs = 1;      // executions behind the numbers
    std::vector<query_fit_point> residuals;  // fit only
    std::vector<std::string> warnings;

    // SPEC: fixed_seconds + per_row_seconds × rows.
    double estimate(double at_rows) const { return fixed_seconds + per_row_seconds * at_rows; }
};

// What the build step needs besides the spans.
struct query_options {
    std::string plan_key;
    std::string host;
    std::optional<std::uint64_t> rows;          // required for span inputs
    std::vector<std::string> fixed_nodes;       // --fixed; empty = the format's default
    std::optional<double> fixed_seconds;        // --fixed-seconds: overrides the fixed part
    std::optional<double> selectivity;
    std::string engine_version;
};

// The warning every single-run profile carries (shared/data/README.md: the 1e3-row DuckDB
// profile alone over-prices 1e5 rows ~45x).
extern const char* const single_run_warning;

// Builds from spans: fixed nodes are opts.fixed_nodes, or `default_fixed` when none are named
// (Polars: "optimization"; Chrome: none, which warns that all cost is treated as scaling).
// Throws usage_error for rows missing/0, or --fixed-seconds above the elapsed time.
query_profile build_from_spans(const span_set& s, const query_options& opts, const std::vector<std::string>& default_fixed,
                               std::string source);
// Builds from a DuckDB profile; a standard-mode profile without --fixed-seconds is refused
// (input_error telling to set profiling_mode='detailed' or pass --fixed-seconds).
query_profile build_from_duckdb(const duckdb_profile& d, const query_options& opts, const std::string& source_name);

// Non-negative least squares of measured = fixed + per_row × rows over several profiles of
// one plan and host (each contributes the point (rows, its own estimate(rows))). The result
// has source "fit", rows = the largest row count, runs = the number of inputs (runs summed),
// nodes of the largest run, one residual per input (sorted by rows, then measured). Throws
// field_error when plan_key or host differ, engine versions differ, or fewer than two distinct
// row counts are given.
query_profile fit_query_profiles(const std::vector<query_profile>& runs);

// The unconstrained-then-clamped 2-parameter NNLS itself: minimises Σ(a + b·x − y)² with
// a, b ≥ 0 (the best of the interior solution and the three boundary solutions).
struct line_fit {
    double intercept = 0;
    double slope = 0;
};
line_fit nnls_line(const std::vector<double>& x, const std::vector<double>& y);

// SPEC's single staleness predicate: the reason the profile cannot price `rows` on
// `engine_version` (rows / profile.rows above factor or below 1/factor; engine version
// different from the current one; the profile's engine version unknown), or nullopt when it
// can. factor must be > 1.
std::optional<std::string> stale_reason(const query_profile& p, std::uint64_t rows, const std::string& engine_version,
                                        double factor = 10.0);

std::string write_query_profile(const query_profile& p);
// Reads a query_profile record (kind checked); throws field_error naming the field.
query_profile read_query_profile(simdjson::ondemand::object& obj);
// Cache key of a query profile: (plan_key, host); the engine version is staleness, not key.
std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host);
// The key a stored query_profile text names by its own fields (the ProfileCache's record_key for
// "query_profile"); throws field_error when the text is no query_profile.
std::vector<std::string> query_profile_record_key(std::string_view text);

}  // namespace prof
