// prof-harvest's core: the rows of a completed run's `forecast_metadata` table → one profile
// per run_id, through the same profile_builder (build_profile) as prof-aggregate.
//
// A row is one JSON object with the table's columns (unknown columns are ignored; a missing
// key reads as NULL; numeric columns may be JSON strings holding numbers, as warehouses
// export 64-bit integers):
//   run_id        string or integer, required   — the run the row belongs to
//   ts_id         string or integer, required   — the series
//   model_type    string, required
//   family        string or null                — null or "" → --family-map, else the model name
//   n_obs         non-negative integer or null
//   fit_seconds   number or null                — the fit's wall time (→ wall_s)
//   cpu_seconds   number or null                — user + system CPU (→ cpu_s)
//   process_rss_bytes, peak_rss_bytes, peak_gpu_bytes   non-negative integers or null
//   memory_limit_bytes  non-negative integer or null — the memory limit the fit ran under
//                 (a container's); with an error text naming a kill, the row is an OOM kill
//                 at that limit (fit_was_oom_killed), a lower bound on the model's memory
//   fold_id, ensemble_id   any; a value other than null or "" skips the row (a fold is
//                 bracketed by its full fit; an ensemble is arithmetic over predictions, not a
//                 fit; "" is how a non-Nullable ClickHouse String column says "none")
//   finished_at   RFC 3339 string or null       — the latest one is provenance.measured_at
//   error         string or null                — the failure text of a failed row ("" = none)
// Rules: a row whose error is set (not null, not "") is a failed cell whatever its fit_seconds
// (pipelines record the elapsed time of failed fits too); otherwise a finite fit_seconds > 0 is
// a fit that happened (ok). Any other row is a failed cell: counted in n_measurements and
// n_failed, excluded from every axis, its error the `error` column, else "fit_seconds=<value>"
// (value: shortest number, NaN, Infinity or null). Memory: the builder keeps two doubles and two 32-bit lengths per usable row plus the
// distinct ts_ids.
#pragma once

#include "prof/harvest/line_chunks.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/profile/profile.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace prof {

// One row as read. The string views point into the parser's buffers: valid until the next
// row is parsed.
struct harvest_row {
    std::string_view run_id, ts_id, model_type;
    std::optional<std::string_view> family, error, rss_method;  // rss_method: how memory and CPU were read
    std::optional<std::int64_t> finished_at_ns;  // finished_at as an instant (ns since the epoch)
    std::optional<std::uint64_t> n_obs, process_rss_bytes, peak_rss_bytes, peak_gpu_bytes, intraop_threads,
        memory_limit_bytes;
    std::optional<double> fit_seconds, cpu_seconds;
    bool fold = false, ensemble = false;

    // Back to a default row, field by field: an assignment from harvest_row{} compiles to a
    // block store whose start-up cost is large beside a row's few dozen bytes of work. Each
    // view is cleared on its own: a chained `a = b = c = {}` reloads c's 16 bytes right after
    // storing them as two words, which stalls on store-to-load forwarding. Each optional is
    // made anew, disengaged (one store), not reset() (a test, then a store).
    void clear() {
        run_id = {};
        ts_id = {};
        model_type = {};
        disengage(family, error, rss_method, finished_at_ns, n_obs, process_rss_bytes, peak_rss_bytes, peak_gpu_bytes,
                  intraop_threads, memory_limit_bytes, fit_seconds, cpu_seconds);
        fold = ensemble = false;
    }

private:
    template <class... T>
    static void disengage(std::optional<T>&... o) {
        static_assert((std::is_trivially_destructible_v<std::optional<T>> && ...));
        (::new (static_cast<void*>(&o)) std::optional<T>(), ...);
    }
};

// Reads one row object; throws field_error naming the field (wrong type, a required column
// missing, a finished_at that is not an RFC 3339 time stamp with a zone).
harvest_row read_harvest_row(simdjson::ondemand::object& obj);

// The same row from a line (valid UTF-8) without simdjson, when the line is a flat object of
// plain strings, numbers and literals that the rules above accept as it stands; false means
// "not sure": re-read the line with read_harvest_row, which gives the value or the error. The
// views point into `line`.
bool read_harvest_row_fast(std::string_view line, harvest_row& row);

// The same, as a reader kept across the rows of one input: it predicts each member's key from
// the last row (json_scan.hpp's key_predictor), so a row of an exporter's usual shape is read
// without looking up its keys. Same results as read_harvest_row_fast, row by row.
class harvest_row_reader {
public:
    // padded: SIMDJSON_PADDING readable bytes follow the line (line_reader's lines do).
    // utf8_checked false: the line's UTF-8 is not known to be valid; it is then read only
    // when it is (the strings' non-ASCII bytes are validated as they are scanned; every other
    // byte of a row read whole is ASCII).
    bool read(std::string_view line, harvest_row& row, bool padded = false, bool utf8_checked = true);
    // The row at `begin` of a text [begin, end) that holds more than one line, read to the '\n'
    // that ends it without that '\n' being looked for first: that '\n' when the row was read
    // (exactly when read(line, row, true, false) takes the line before it), else nullptr. Loads
    // are allowed up to readable_end.
    const char* read_line(const char* begin, const char* end, const char* readable_end, harvest_row& row);

private:
    template <bool NewlineEnds>
    const char* read_object(const char* begin, const char* end, const char* readable_end, bool check_utf8,
                            harvest_row& row);
    key_predictor keys_;
    rfc3339_stream stamps_;  // finished_at
};

// The query that exports `table`'s rows as the JSON Lines a harvest reads:
// SELECT row_to_json(t) FROM TABLE t, the name as given when it has no upper-case letter (an
// unquoted name means the same then), else as sql_table_name quotes it (each dot-separated
// part double-quoted) so that PostgreSQL keeps its case. `table` is a name sql_table_name
// accepts.
std::string rows_export_query(std::string_view table);

// Throws the error of the malformed line `e` that ends a harvest: `e` itself, or, for a line
// that is not JSON at all (most often another export format), `e` with a hint naming the
// export to use instead: psql with rows_export_query(table).
[[noreturn]] void throw_with_export_hint(const input_error& e, std::string_view table);

// "fit_seconds=<value>": the error text of a failed row that has no `error` column.
std::string fit_seconds_error(std::optional<double> fit_seconds);

// The harvest's counts for one run, written as the profile's `harvest` object:
// {"rows_read":…,"fold_rows_skipped":…,"ensemble_rows_skipped":…,"bad_lines_skipped":…}.
// rows_read counts the run's rows (skipped ones included); bad_lines_skipped counts the
// malformed lines of the whole input (a malformed line names no run).
struct harvest_counts {
    std::uint64_t rows_read = 0, fold_rows_skipped = 0, ensemble_rows_skipped = 0, bad_lines_skipped = 0;
};
json_value harvest_counts_json(const harvest_counts& c);

struct harvest_config {
    margins margin;                                // --memory-margin, --time-margin
    std::optional<std::string> run_id;            // keep only this run
    std::map<std::string, std::string> family_map; // model → family (--family-map)
    std::optional<json_value> signature;           // provenance.signature of the one run (--signature)
    std::map<std::string, json_value> signature_map;  // run_id → its signature (--signature-map)
    std::size_t max_bad_lines = 0;                 // across all inputs (--max-bad-lines)
    std::size_t chunk_bytes = 4u << 20;            // parallel ingest: the size lines are cut at
    std::string table = "forecast_metadata";       // the table the rows come from (--sql-table):
                                                   // the messages that suggest a query name it
};

// Parses a --family-map file's text: one JSON object whose values are strings. Throws
// input_error (exit 65) "SOURCE:LINE: --family-map: what" for bad JSON (parse_json_object_file),
// prof::error (65) naming `source` and the model for a value that is no family name.
std::map<std::string, std::string> parse_family_map(std::string_view text, const std::string& source);
// Parses a --signature file's text: any JSON object. Throws input_error (exit 65) as
// parse_json_object_file words it, the same as prof-resolve --signature.
json_value parse_signature(std::string_view text, const std::string& source);
// Parses a --signature-map file's text: one JSON object of run_id → signature object. Throws
// prof::error (exit 65) naming `source` and the run otherwise.
std::map<std::string, json_value> parse_signature_map(std::string_view text, const std::string& source);

// The files prof-harvest's options name (empty: not given).
struct harvest_option_files {
    std::string family_map, signature, signature_map;
};
// Reads them into `config`, each a file, "-" or an http(s) URL fetched with `http`, gzip told by
// its magic bytes (io/input.hpp: read_whole_input), parsed as above with errors naming the
// source. `rows` are the row inputs the run will read: a usage error (64) when two of the
// files, or a file and the rows, are "-" (stdin holds one input).
void read_harvest_option_files(const harvest_option_files& files, const std::vector<std::string>& rows,
                               const http_options* http, harvest_config& config);

// A harvested run's provenance: basis "measured", source "harvest", the run_id, its
// signature (the signature_map entry, else the config's), measured_at = the latest finished_at
// when there was one, and the warning naming the models (sorted) no row of which named a family.
profile_provenance harvest_provenance(const harvest_config& config, const std::string& run_id,
                                      const latest_instant& latest,
                                      const std::vector<std::string>& unmapped_models);

// The line prof-harvest ends with on stderr: rows read, runs, fits ok and failed, rows skipped.
std::string harvest_summary(const std::vector<compute_profile>& profiles, std::uint64_t bad_lines);

class harvester {
public:
    explicit harvester(harvest_config config);
    // Reads every row of one input. Malformed lines follow for_each_object (input_error naming the
    // source and line, or a warning and a skip while under max_bad_lines); an I/O error of the
    // source propagates. `progress`, when set, is called every 65536 lines with the total
    // lines and bytes read so far.
    void read(line_reader& in, const std::function<void(std::uint64_t lines, std::uint64_t bytes)>& progress = {});
    // The same for one whole source, its lines parsed on `jobs` threads (1: on this one, as
    // read(line_reader&) does). The source is read on this thread and cut into chunks of whole
    // lines; each worker folds its chunks into a harvester of its own, and those are merged
    // (merge()) when the source ends. Malformed lines are collected with their place and then
    // judged in input order, so the warnings, the --max-bad-lines count, the line that exceeds
    // it and every profile are what jobs = 1 gives, byte for byte. An I/O error of the source
    // is raised after the malformed lines read before it (the first error a sequential read
    // meets). `progress` is called every chunk with the lines parsed and bytes read so far.
    void read(std::unique_ptr<byte_source> src, unsigned jobs,
              const std::function<void(std::uint64_t lines, std::uint64_t bytes)>& progress = {});
    // Folds in the rows `other` was given (a worker's share of one input; same config).
    void merge(harvester&& other);
    // Adds one parsed row (read() calls this; tests may too).
    void add(const harvest_row& row);
    // One profile per run_id, sorted by run_id (computed on as many threads as read() was
    // given jobs): basis "measured", source "harvest", the run_id, the signature, measured_at = the latest finished_at (else null), the counts.
    // The signature is the run's signature_map entry, else `signature`. A model with no family
    // anywhere is counted under its own name, with a warning in provenance.warnings.
    // Throws usage_error (64) when `signature` is set and the input held more than one run:
    // one data signature cannot describe several runs' data.
    std::vector<compute_profile> finish() const;
    std::uint64_t bad_lines() const { return bad_lines_; }

private:
    struct run_acc {
        explicit run_acc(const margins& m) : builder(m) {}
        profile_builder builder;
        harvest_counts counts;
        latest_instant latest;  // of finished_at
    };
    run_acc& run_for(std::string_view run_id);
    // A malformed line of a chunk: its number there, and what is wrong.
    struct chunk_bad_line {
        std::uint64_t chunk;
        std::size_t line;
        std::string what;
    };
    // The rows of `in` into this harvester under for_each_object's bad-line rules; `tick`, when
    // set, is called once per line.
    jsonl_stats read_lines(line_reader& in, std::size_t max_bad_lines, const std::function<void()>& tick);
    // Every row of a chunk into this harvester; its malformed lines are appended to `bad`.
    // Returns the chunk's lines (chunk_lines).
    std::size_t read_chunk(const line_chunk& chunk, const std::string& source, std::vector<chunk_bad_line>& bad);

    harvest_config config_;
    std::map<std::string, std::string, std::less<>> family_map_;  // looked up by string_view
    std::map<std::string, run_acc, std::less<>> runs_;
    run_acc* last_run_ = nullptr;
    std::string last_run_id_;
    harvest_row fast_row_;
    fit_evidence evidence_;  // add()'s, kept across rows (its fields a row does not set stay default)
    harvest_row_reader row_reader_;
    std::uint64_t bad_lines_ = 0, lines_seen_ = 0, bytes_base_ = 0;
    unsigned threads_ = 1;  // the most jobs read() was given: finish() computes on as many
};

}  // namespace prof
