// QueryProfile (SPEC §2 query_profile): a query's fixed and per-row host cost from engine spans
// (Polars profile rows, Chrome Trace Event Format) or a DuckDB JSON profile; the staleness
// predicate, the estimate, and the non-negative least-squares fit over several runs.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// ---- spans and their arithmetic (SPEC §2, "From spans") ----------------------------------

// One span of one node, in integer nanoseconds; `node` indexes span_set::names.
struct span {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::uint32_t node = 0;
};

// Why an event of a Chrome trace was not used as written. Each is tolerated (the event is
// skipped, or for a mismatched end, used as the format's nesting says) and counted; --strict
// refuses them.
enum class event_defect : std::uint8_t {
    empty_event,     // {} : no member at all
    unknown_phase,   // no "ph", or one the Trace Event Format does not define ("XXX", "Q", 5)
    x_without_dur,   // an 'X' event with no dur, or dur null: it has no end
    missing_ts,      // an 'X', 'B' or 'E' event with no ts, or ts null
    bad_metadata,    // an event outside the spans (metadata, instant, counter, ...) whose ts or
                     // dur is null, not a number, or out of range: not needed, so not refused
    mismatched_end,  // an 'E' whose name differs from the 'B' it closes (it closes it anyway)
};
inline constexpr std::size_t event_defect_kinds = 6;
// A defect's short name ("x-without-dur", as --stats lists them) and what a warning says of it
// ("'X' event(s) without dur (skipped: no end)").
std::string_view defect_name(event_defect d);
std::string_view defect_description(event_defect d);

// How often one defect was met, and where first: the 1-based index of the event in the trace's
// event array and the line it starts on (both 0 when count is 0).
struct defect_count {
    std::size_t count = 0;
    std::size_t first_event = 0;
    std::size_t first_line = 0;
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
    std::array<defect_count, event_defect_kinds> defects{};  // indexed by event_defect
    bool unclosed = false;                // a JSON Array Format trace without its closing ']'
    std::string display_time_unit;        // the trace object's displayTimeUnit, as given ("" = none)
    // How a Chrome trace was read (prof-spans --stats, tests): events taken by the strict
    // scanner, events taken from simdjson DOM batches, or the whole document by on-demand.
    std::size_t scanned_events = 0;
    std::size_t dom_events = 0;
    bool whole_document = false;

    const defect_count& defect(event_defect d) const { return defects[static_cast<std::size_t>(d)]; }
};

// Length of the union of half-open intervals [first, second), in the same unit. Sorts `iv`
// in place by start (a stable radix sort over the starts' range, 11 bits a pass; std::stable_sort
// below 4096 intervals), then one sweep. Empty intervals add nothing. Unsigned: two time points
// below 9e18 ns in magnitude are up to 1.8e19 apart, which fits 64 bits only without a sign.
std::uint64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv);

// The SPEC's split of one run: elapsed = max(end) - min(start) over all spans; fixed = length
// of the union of the fixed nodes' intervals; per node, the length of the union of its own
// spans. All in integer nanoseconds.
struct span_summary {
    std::uint64_t elapsed_ns = 0;
    std::uint64_t fixed_ns = 0;
    std::vector<std::uint64_t> node_ns;  // indexed like span_set::names
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

// Polars profile rows (node, start, end) in integer microseconds, as JSON Lines objects. Integer
// fields (quoted integers accepted) below 9e15 in magnitude; end < start is bad input naming the
// line.
span_set read_polars_jsonl(std::string_view text, const std::string& source);
// The same rows as CSV with a header naming node, start and end (any order, other columns
// ignored; RFC 4180 quoting, so a node name may hold commas).
span_set read_polars_csv(std::string_view text, const std::string& source);
// Chrome Trace Event Format: an object with "traceEvents" or a bare array of events (the JSON
// Array Format, whose closing ']' is optional: a trace cut short may end after any whole event,
// with or without its comma). Spans are 'X' events (ts, dur) and 'B'/'E' pairs matched per
// (pid, tid) with nesting: per thread the events are ordered by ts (ties keep file order) and an
// 'E' closes the innermost open 'B', whatever its name (a different name is counted). Instants,
// metadata, counters, flow and async events do not count; async begins with no end are counted.
// ts and dur are microseconds whatever displayTimeUnit says (the format defines it as a display
// setting only; it is kept in span_set). Each is read exactly to the nanosecond from its decimal
// text, never through a double (5.1 is 5100 ns; digits below the nanosecond round half away
// from zero), and must be below 9e15 µs in magnitude, as must an 'X' event's end; a string
// holding a JSON number ("100", "5.1") reads as that number, as quoted numbers do in
// prof-harvest's rows. An event that cannot be used is skipped and counted by its event_defect,
// the line of the first of each kind found; invalid JSON, a ts or dur that is not a number where
// it is needed, a negative dur and a name that is not a string are errors.
// `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
// Identity fields (pid, tid, cat, id) are compared in one canonical text: a string by its
// unescaped contents, an integer in decimal, another number as the shortest text of its double.
// Speed: the common shapes (a bare array; an object holding "traceEvents" once, among members
// the scanner can check and skip) are checked to be UTF-8 once, then read event by event in
// place by a strict scanner of a subset of JSON (json_scan.hpp); an event it declines (an escape
// in a name, a fractional pid, ...) starts a batch of about `batch_bytes` parsed by simdjson's
// DOM parser (cut at "},{" boundaries, each batch validated whole before any event is taken, a
// bad cut extended to the next boundary), so memory stays bounded and every batch is parsed in
// cache. The DOM keeps a number only as a
// double, so a span's time with a fraction found there sends the trace to the whole-document
// parse, which reads its text. Any other shape, and any error, goes through one whole-document
// parse with simdjson's on-demand parser, which is also what names the line of a bad event.
// batch_bytes 0 = the whole-document parse only; scan false = no scanner, every event through
// the DOM batches. All give identical results (spans_test.cpp compares them on random traces).
span_set read_chrome_trace(std::string_view padded_text, const std::string& source,
                           std::size_t batch_bytes = std::size_t{1} << 20, bool scan = true);

// A JSON number token (RFC 8259 grammar, already checked) of microseconds as integer
// nanoseconds, from its decimal digits: exact, rounded half away from zero below the
// nanosecond. false when the value is 9e15 µs or more in magnitude (nothing is written then).
bool micros_token_to_ns(std::string_view token, std::int64_t& ns);

// What prof-spans says on stderr of a Chrome trace it read: notes (async begins without an end,
// an array without its closing ']') and warnings (one line per defect met, with its count and
// the line of the first; 'B'/'E' events left unmatched; a displayTimeUnit the format does not
// define, which changes nothing: times are microseconds).
struct trace_report {
    std::vector<std::string> notes, warnings;
};
trace_report report_trace(const span_set& s, const std::string& source);
// --strict: throws input_error naming the line of the first defect in file order, if any.
void refuse_defects(const span_set& s, const std::string& source);
// The --stats words for the defects met ("x-without-dur 2, unknown-phase 1"); "" for none.
std::string defect_counts(const span_set& s);

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

    // SPEC: fixed_seconds + per_row_seconds × rows; +inf when that is beyond double range
    // (finite_estimate refuses it).
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
// field_error when plan_key or host differ, engine versions differ, fewer than two distinct
// row counts are given, or a run's estimate or the fitted line is beyond double range (a record
// never carries a non-finite number).
query_profile fit_query_profiles(const std::vector<query_profile>& runs);

// estimate(rows), or field_error when it is beyond double range (per_row_seconds 1e308 at 10
// rows): no record or output carries a non-finite number.
double finite_estimate(const query_profile& p, std::uint64_t rows);

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

// A query_profile line as read, with where it was read (for messages).
struct located_query_profile {
    query_profile profile;
    std::string source;  // the path, "<stdin>" for "-"
    std::size_t line = 0;
};
// Every query_profile line of `paths` ("-" = stdin), in order. Up to max_bad_lines malformed
// lines are skipped (one warning with their count); the next is input_error naming its line.
std::vector<located_query_profile> read_query_profile_lines(const std::vector<std::string>& paths,
                                                            std::size_t max_bad_lines);
// finite_estimate(p.profile, rows), its refusal as input_error naming the profile's line.
double located_estimate(const located_query_profile& p, std::uint64_t rows);

std::string write_query_profile(const query_profile& p);
// Reads a query_profile record (kind checked); throws field_error naming the field.
query_profile read_query_profile(simdjson::ondemand::object& obj);
// Cache key of a query profile: (plan_key, host); the engine version is staleness, not key.
std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host);
// The key a stored query_profile text names by its own fields (the ProfileCache's record_key for
// "query_profile"); throws field_error when the text is no query_profile.
std::vector<std::string> query_profile_record_key(std::string_view text);

}  // namespace prof
