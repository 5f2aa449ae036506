// The harvest area: warehouse rows → profiles. This file: the aggregate query that computes,
// inside the warehouse (PostgreSQL or DuckDB), what prof-harvest computes from the rows of a
// forecast_metadata table, and the reader that turns that query's result rows into the same
// profiles, byte for byte, as streaming the rows through prof-harvest.
//
// The query reads, from the table forecast_metadata (or --sql-table's), the columns run_id,
// ts_id, model_type, family, n_obs, fit_seconds, cpu_seconds, process_rss_bytes,
// peak_rss_bytes, peak_gpu_bytes, intraop_threads, memory_limit_bytes, fold_id, ensemble_id,
// finished_at, error and rss_method (a table lacking one must give it as NULL, e.g. through a view);
// finished_at must be a time stamp with a zone (PostgreSQL timestamptz, DuckDB TIMESTAMPTZ).
// Each rule of the row harvest has its SQL twin: fold and ensemble rows counted and skipped (a
// value other than NULL or ''), the family column, else the --family-map (inlined into the
// query as a VALUES list), else the model name (a row naming no family does not vote on its
// model's family: profile.hpp family_choice); ok = no error text and a finite fit_seconds >
// 0; a usable value finite and > 0 (the GPU peak: >= 0); host OOM kills and device OOMs from
// the error text's patterns (profile.hpp); series and first errors ordered bytewise (COLLATE
// "C" in PostgreSQL); the cost curve's bins chosen as build_curve chooses them (curve.hpp: one
// point per length up to max_curve_points lengths, else equal-count bins that never split a
// length), walked bin by bin in a recursive CTE.
// Medians: the query gives the two middle values of each set (equal for an odd count) and
// prof takes their mean as median() does, so no engine's interpolation enters a number.
//
// One result row is one JSON object; its `aggregate` member names the kind (prof-records(5)):
//   run     run_id, rows_read, fold_rows_skipped, ensemble_rows_skipped, n_measurements, n_ok,
//           n_sample_series, finished_us (the latest finished_at, µs since the epoch, or null)
//   series  run_id, ts_id: one of the run's 100 bytewise-smallest distinct series
//   model   run_id, model_type, family (the one most of its rows name; its own name when
//           none names one), n_families (distinct families named), n_unnamed (rows naming none),
//           unmapped (no row named a family), n_fits, n_ok, the maxima, wall_s_lo/hi, cpu_s_lo/hi, max_effective_cores,
//           n_rss_methods (distinct rss_method of ok rows), rss_method (the smallest),
//           n_threads, n_threads_known, intraop_threads, the OOM counts and bounds,
//           first_error_ts_id, n_lengths (distinct usable lengths), n_eff_unsure
//   model_family  run_id, model_type, family, n_fits: one row per family of a model with
//           several, with the count of its rows naming it
//   model_threads  run_id, model_type, intraop_threads, n_fits: one row per thread cap (null:
//           none) of a model whose voting rows ran under more than one, with their count
//   point   run_id, model_type, n_obs, n_obs_min, n_obs_max, n_fits, wall_s_lo/hi, cpu_s_lo/hi,
//           max_process_rss_bytes: one point of the model's cost curve (curve_point: its
//           lengths' range, their lower middle length, the fits, the two middle wall and CPU
//           seconds, the largest process RSS; a row without the last, from an older query,
//           gives a point without memory)
//   family  run_id, family, wall_s_lo/hi: the family's median cell over its models' fits
//   error   run_id, model_type, ts_id, error, fit_seconds: a failed fit at the model's
//           first_error_ts_id (prof picks the bytewise-first error text among them)
#pragma once

#include "prof/harvest/harvest.hpp"
#include "prof/io/json_in.hpp"
#include "prof/profile/profile.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

enum class sql_dialect { postgres, duckdb };

// Parses --emit-sql's value; throws usage_error (64) for anything but postgres or duckdb.
sql_dialect parse_sql_dialect(std::string_view name);

// --sql-table's value as the query names the table: each of its one to three dot-separated
// parts (database.schema.table) double-quoted, so PostgreSQL does not fold its case (DuckDB
// never matches names by case). Throws usage_error (64) unless every part is 1 to 63 ASCII letters, digits and _,
// not starting with a digit.
std::string sql_table_name(std::string_view name);

// The query, one statement ending in ";\n", over `table` (sql_table_name's rules), for the
// config's run_id filter and family map. Throws usage_error (64) for a bad table name, or for a
// family-map or run_id text that holds a NUL byte (no SQL text column can hold one).
std::string harvest_aggregates_sql(sql_dialect dialect, const harvest_config& config,
                                   std::string_view table = "forecast_metadata");

// Reads the query's result rows and builds one profile per run_id, as harvester::finish does
// (margins, signature and signature_map from the config; run_id and family_map were applied
// by the query). Malformed lines follow for_each_object under config.max_bad_lines, one budget
// over every read() (a warning and a skip while under it, else an input_error naming source and
// line, exit 65), and are counted in each profile's harvest object as table rows' are. A model
// whose effective cores the query could not compute exactly is refused (exit 65) with a note
// to stream the rows instead; so is one whose point rows cannot be its curve (not one point
// per length up to max_curve_points lengths, at most max_curve_points points beyond, ranges
// out of order or overlapping: rows of another query, e.g. an older prof-harvest's).
class aggregate_reader {
public:
    explicit aggregate_reader(harvest_config config);
    void read(line_reader& in);
    void read(std::unique_ptr<byte_source> src);  // the same, for one whole source
    std::vector<compute_profile> finish() const;
    std::uint64_t bad_lines() const { return bad_lines_; }  // malformed lines skipped so far

private:
    struct point {
        std::uint64_t n_obs = 0, n_obs_min = 0, n_obs_max = 0, n_fits = 0;
        double wall_lo = 0, wall_hi = 0;
        std::optional<double> cpu_lo, cpu_hi;
        std::optional<std::uint64_t> max_rss;
    };
    struct model_row {
        json_value row;                                  // the model row as read
        std::vector<std::pair<std::string, std::uint64_t>> families;  // model_family rows: (family, n_fits)
        std::vector<thread_cap_count> threads;                        // model_threads rows
        std::vector<point> points;
        std::vector<std::pair<std::string, std::string>> errors;  // (ts_id, error text)
    };
    struct run_rows {
        bool seen = false;
        harvest_counts counts;
        std::uint64_t n_measurements = 0, n_ok = 0, n_series = 0;
        std::optional<std::int64_t> finished_us;
        std::vector<std::string> series;
        std::map<std::string, model_row> models;
        std::map<std::string, std::optional<double>> family_median;
    };
    void add(const json_value& row);
    compute_profile profile_of(const std::string& run_id, const run_rows& r) const;

    harvest_config config_;
    std::map<std::string, run_rows> runs_;
    std::uint64_t bad_lines_ = 0;
};

}  // namespace prof
