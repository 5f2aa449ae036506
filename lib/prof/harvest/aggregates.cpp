// The warehouse-side aggregate query and its result rows (see aggregates.hpp).
#include "prof/harvest/aggregates.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <initializer_list>
#include <utility>

namespace prof {

namespace {

// A SQL string literal: quotes doubled. A backslash is itself in DuckDB and in PostgreSQL
// under standard_conforming_strings=on, but an escape under =off (a server setting the query
// cannot see), so for PostgreSQL a value holding one is written as an escape string,
// E'...' with every backslash doubled, which reads the same under either setting
// (PostgreSQL manual, 4.1.2.2 "String Constants with C-Style Escapes").
std::string quoted(std::string_view s, std::string_view what, bool pg) {
    if (s.find('\0') != std::string_view::npos)
        throw usage_error(fmt::format("{} holds a NUL byte, which no SQL text value can hold", what));
    bool escape = pg && s.find('\\') != std::string_view::npos;
    std::string out = escape ? "E'" : "'";
    for (char c : s) {
        if (c == '\'') out += "''";
        else if (c == '\\' && escape) out += "\\\\";
        else out.push_back(c);
    }
    return out + "'";
}

// `error` holds one of the patterns (case-sensitive, anywhere): the SQL twin of the loops in
// fit_was_oom_killed and fit_was_device_oom.
template <std::size_t N>
std::string any_pattern(const std::string_view (&patterns)[N]) {
    std::string out;
    for (std::string_view p : patterns) out += fmt::format("{}strpos(error, {}) > 0", out.empty() ? "" : " OR ", quoted(p, "a pattern", false));
    return "(" + out + ")";
}

// A CTE `name` with the two middle values (lo, hi; equal for an odd count) and the count of
// `value` over the rows of `from`, per `keys`: ranks, no engine's percentile interpolation.
std::string middle(std::string_view name, std::string_view from, std::string_view keys, std::string_view value) {
    return fmt::format(
        "{0}_r AS (SELECT {2}, {3} AS v, row_number() OVER (PARTITION BY {2} ORDER BY {3}) AS rn, count(*) OVER "
        "(PARTITION BY {2}) AS cnt FROM {1} WHERE {3} IS NOT NULL),\n"
        "{0} AS (SELECT {2}, max(v) FILTER (WHERE 2 * rn IN (cnt, cnt + 1)) AS lo, max(v) FILTER (WHERE 2 * rn IN "
        "(cnt + 1, cnt + 2)) AS hi, max(cnt) AS cnt FROM {0}_r GROUP BY {2}),\n",
        name, from, keys, value);
}

// The CTEs of the cost curve's points, build_curve's rule (curve.hpp) over each model's fits
// with a usable length (`len`). `lpos`: per distinct length, its fits' positions [cum_start,
// cum_end) among the model's fits sorted by length, and the bin size `target`: 1 while the
// model has at most max_curve_points lengths (one point per length), else ceil(fits /
// max_curve_points). `bins` [s, e): equal_count_ranges' greedy walk, recursively: from s, the
// bin ends where the length holding position min(s + target, fits) - 1 ends, so a length is
// never split (ntile would split one, and would not carry a bin's overflow into the next).
// `lbin`: each length's bin; `binned`: each fit's, ranked by wall and by CPU seconds. `pts`:
// one row per bin: its range, its n_obs (the length at position s + floor((e - s - 1) / 2),
// written without a division: 2 (cum_start - s) <= e - s - 1 < 2 (cum_end - s)) and the two
// middle values of each median, as middle() gives them, in one pass: no join for a planner to
// misjudge; and the largest usable process RSS of its fits (the memory curve's peak). `div` is
// the dialect's integer division.
std::string curve_bins(std::string_view div) {
    return fmt::format(
        "lens AS (SELECT run_id, model_type, len, count(*) AS cnt FROM cls WHERE len IS NOT NULL GROUP BY run_id, "
        "model_type, len),\n"
        "lcum AS (SELECT run_id, model_type, len, cnt, CAST(sum(cnt) OVER (PARTITION BY run_id, model_type ORDER BY "
        "len ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT) AS cum_end, CAST(sum(cnt) OVER (PARTITION "
        "BY run_id, model_type) AS BIGINT) AS total, count(*) OVER (PARTITION BY run_id, model_type) AS n_len FROM "
        "lens),\n"
        "lpos AS (SELECT run_id, model_type, len, cum_end - cnt AS cum_start, cum_end, total, CASE WHEN n_len <= {0} "
        "THEN CAST(1 AS BIGINT) ELSE (total + {1}) {2} {0} END AS target FROM lcum),\n"
        "bins(run_id, model_type, s, e) AS (SELECT run_id, model_type, CAST(0 AS BIGINT), cum_end FROM lpos WHERE "
        "cum_start < target AND cum_end >= target\n"
        "UNION ALL SELECT b.run_id, b.model_type, b.e, l.cum_end FROM bins b JOIN lpos l ON l.run_id = b.run_id AND "
        "l.model_type = b.model_type AND l.cum_start < LEAST(b.e + l.target, l.total) AND l.cum_end >= LEAST(b.e + "
        "l.target, l.total) WHERE b.e < l.total),\n"
        "lbin AS (SELECT l.run_id, l.model_type, l.len, l.cum_start, l.cum_end, b.s, b.e FROM lpos l JOIN bins b ON "
        "b.run_id = l.run_id AND b.model_type = l.model_type AND l.cum_start >= b.s AND l.cum_start < b.e),\n"
        "binned AS (SELECT c.run_id, c.model_type, c.uw, c.uc, c.process_rss, b.len, b.cum_start, b.cum_end, b.s, b.e, "
        "row_number() OVER (PARTITION BY c.run_id, c.model_type, b.s ORDER BY c.uw) AS rw, row_number() OVER "
        "(PARTITION BY c.run_id, c.model_type, b.s ORDER BY c.uc NULLS LAST) AS rc, count(c.uc) OVER (PARTITION BY "
        "c.run_id, c.model_type, b.s) AS nc FROM cls c JOIN lbin b ON b.run_id = c.run_id AND b.model_type = "
        "c.model_type AND b.len = c.len),\n"
        "pts AS (SELECT run_id, model_type, min(len) AS min_len, max(len) AS max_len, max(len) FILTER (WHERE 2 * "
        "(cum_start - s) <= e - s - 1 AND e - s - 1 < 2 * (cum_end - s)) AS mid_len, count(*) AS cnt, max(uw) "
        "FILTER (WHERE 2 * rw IN (e - s, e - s + 1)) AS wall_lo, max(uw) FILTER (WHERE 2 * rw IN (e - s + 1, e - s "
        "+ 2)) AS wall_hi, max(uc) FILTER (WHERE 2 * rc IN (nc, nc + 1)) AS cpu_lo, max(uc) FILTER (WHERE 2 * rc "
        "IN (nc + 1, nc + 2)) AS cpu_hi, max(process_rss) FILTER (WHERE process_rss > 0) AS max_rss FROM binned "
        "GROUP BY run_id, model_type, s, e),\n",
        max_curve_points, max_curve_points - 1, div);
}

// One SQL expression per member of a result row's JSON object, after its `aggregate` and
// `run_id`: (member name, expression).
using row_members = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// The SELECT of one kind of result row (aggregates.hpp) into the `lines` CTE: its sort key (the
// run_id expression), its kind's order among a run's rows, and the row as OBJ('aggregate',
// KIND, 'run_id', RUN_ID, NAME, EXPR, ...) `from` its tables. The first kind (order 0) names
// the columns (k, kind, line); each later one is a UNION ALL.
std::string result_kind(std::string_view obj, int order, std::string_view kind, std::string_view run_id,
                        row_members members, std::string_view from) {
    std::string row = fmt::format("{}('aggregate', '{}', 'run_id', {}", obj, kind, run_id);
    for (const auto& [name, expr] : members) row += fmt::format(", '{}', {}", name, expr);
    row += ")";
    if (order == 0) return fmt::format("SELECT {} AS k, 0 AS kind, {} AS line {}\n", run_id, row, from);
    return fmt::format("UNION ALL SELECT {}, {}, {} {}\n", run_id, order, row, from);
}

// The result rows of a model's votes (kinds 3 and 4): each family of a model named under several
// (model_family), each thread cap of a model whose fits ran under several (model_threads).
std::string vote_rows(std::string_view obj) {
    return result_kind(obj, 3, "model_family", "d.run_id",
                       {{"model_type", "d.model_type"}, {"family", "d.fam"}, {"n_fits", "d.n"}},
                       "FROM famc d JOIN models m ON m.run_id = d.run_id AND m.model_type = d.model_type WHERE "
                       "m.n_families > 1") +
           result_kind(obj, 4, "model_threads", "t.run_id",
                       {{"model_type", "t.model_type"}, {"intraop_threads", "t.threads"}, {"n_fits", "t.n"}},
                       "FROM thc t JOIN models m ON m.run_id = t.run_id AND m.model_type = t.model_type WHERE "
                       "m.n_threads > 1 OR (m.n_threads_known > 0 AND m.n_threads_known < CASE WHEN m.n_ok > 0 THEN "
                       "m.n_ok ELSE m.n_fits END)");
}

// The `lines` CTE (one JSON object per result row, prof-records(5)) and the final SELECT.
std::string result_rows(bool pg, const std::string& inf) {
    const std::string C = pg ? " COLLATE \"C\"" : "";
    const std::string obj = pg ? "json_build_object" : "json_object";
    const std::string wall_nan = pg ? "e.wall = CAST('NaN' AS DOUBLE PRECISION)" : "isnan(e.wall)";  // PostgreSQL: NaN = NaN
    // A fit_seconds that JSON cannot hold as a number (NaN, an infinity) as PostgreSQL's text.
    const std::string fit_seconds = fmt::format(
        "CASE WHEN e.wall IS NULL OR (e.wall > -{0} AND e.wall < {0}) THEN to_json(e.wall) WHEN {1} THEN "
        "to_json(CAST('NaN' AS TEXT)) WHEN e.wall > 0 THEN to_json(CAST('Infinity' AS TEXT)) ELSE "
        "to_json(CAST('-Infinity' AS TEXT)) END",
        inf, wall_nan);
    std::string q = "lines AS (\n";
    q += result_kind(obj, 0, "run", "r.run_id",
                     {{"rows_read", "r.rows_read"},
                      {"fold_rows_skipped", "r.fold_rows"},
                      {"ensemble_rows_skipped", "r.ensemble_rows"},
                      {"n_measurements", "COALESCE(f.n_measurements, 0)"},
                      {"n_ok", "COALESCE(f.n_ok, 0)"},
                      {"n_sample_series", "COALESCE(f.n_series, 0)"},
                      {"finished_us", "f.finished_us"}},
                     "FROM runs r LEFT JOIN rfits f ON f.run_id = r.run_id");
    q += result_kind(obj, 1, "series", "run_id", {{"ts_id", "ts_id"}}, "FROM series WHERE rn <= 100");
    q += result_kind(obj, 2, "model", "m.run_id",
                     {{"model_type", "m.model_type"},
                      {"family", "m.family"},
                      {"n_families", "m.n_families"},
                      {"n_unnamed", "m.n_unnamed"},
                      {"unmapped", "m.unmapped"},
                      {"n_fits", "m.n_fits"},
                      {"n_ok", "m.n_ok"},
                      {"max_n_obs", "m.max_n_obs"},
                      {"max_process_rss_bytes", "m.max_process_rss_bytes"},
                      {"max_peak_rss_bytes", "m.max_peak_rss_bytes"},
                      {"max_peak_gpu_bytes", "m.max_peak_gpu_bytes"},
                      {"wall_s_lo", "w.lo"},
                      {"wall_s_hi", "w.hi"},
                      {"cpu_s_lo", "c.lo"},
                      {"cpu_s_hi", "c.hi"},
                      {"max_effective_cores", "m.max_effective_cores"},
                      {"n_eff_unsure", "m.n_eff_unsure"},
                      {"n_rss_methods", "m.n_rss_methods"},
                      {"rss_method", "m.rss_method"},
                      {"n_threads", "m.n_threads"},
                      {"n_threads_known", "m.n_threads_known"},
                      {"intraop_threads", "m.intraop_threads"},
                      {"n_oom_killed", "m.n_oom_killed"},
                      {"n_oom_no_limit", "m.n_oom_no_limit"},
                      {"oom_limit_bytes", "m.oom_limit_bytes"},
                      {"n_gpu_oom", "m.n_gpu_oom"},
                      {"gpu_oom_peak_bytes", "m.gpu_oom_peak_bytes"},
                      {"first_error_ts_id", "m.first_error_ts_id"},
                      {"n_lengths", "m.n_lengths"}},
                     "FROM models m LEFT JOIN wmed w ON w.run_id = m.run_id AND w.model_type = m.model_type LEFT JOIN "
                     "cmed c ON c.run_id = m.run_id AND c.model_type = m.model_type");
    q += vote_rows(obj);
    q += result_kind(obj, 5, "point", "run_id",
                     {{"model_type", "model_type"},
                      {"n_obs", "mid_len"},
                      {"n_obs_min", "min_len"},
                      {"n_obs_max", "max_len"},
                      {"n_fits", "cnt"},
                      {"wall_s_lo", "wall_lo"},
                      {"wall_s_hi", "wall_hi"},
                      {"cpu_s_lo", "cpu_lo"},
                      {"cpu_s_hi", "cpu_hi"},
                      {"max_process_rss_bytes", "max_rss"}},
                     "FROM pts");
    q += result_kind(obj, 6, "family", "run_id", {{"family", "family"}, {"wall_s_lo", "lo"}, {"wall_s_hi", "hi"}},
                     "FROM fmed");
    q += result_kind(obj, 7, "error", "e.run_id",
                     {{"model_type", "e.model_type"}, {"ts_id", "e.ts_id"}, {"error", "e.error"}, {"fit_seconds", fit_seconds}},
                     "FROM (SELECT DISTINCT c.run_id, c.model_type, c.ts_id, c.error, c.wall FROM cls c JOIN models m ON "
                     "m.run_id = c.run_id AND m.model_type = c.model_type AND c.ts_id = m.first_error_ts_id WHERE NOT "
                     "c.ok) e");
    q += fmt::format(")\nSELECT CAST(line AS TEXT) FROM lines ORDER BY k{}, kind;\n", C);
    return q;
}

// The CTEs of a model's family (profile.hpp family_choice): the one most of its rows name,
// rows naming none not voting; its own name when no row names one. A tie gives several
// families the most rows: the model_family rows carry each count and the reader refuses it.
std::string family_ctes(const std::string& C) {
    std::string q = "famc AS (SELECT run_id, model_type, fam, count(*) AS n FROM fits WHERE NOT unmapped GROUP BY "
                    "run_id, model_type, fam),\n";
    q += "ftop AS (SELECT run_id, model_type, count(*) AS n_families, max(n) AS n_most FROM famc GROUP BY run_id, "
         "model_type),\n";
    q += fmt::format("fpick AS (SELECT c.run_id, c.model_type, min(c.fam{0}) AS fam FROM famc c JOIN ftop t ON t.run_id "
                     "= c.run_id AND t.model_type = c.model_type AND c.n = t.n_most GROUP BY c.run_id, c.model_type),\n",
                     C);
    return q;
}

// The models with their family (models0 and the family CTEs), and the thread caps' votes
// (profile_builder's rule): the rows that ran, or every row while none has.
std::string model_ctes() {
    return "models AS (SELECT m.*, COALESCE(p.fam, m.model_type) AS family, COALESCE(t.n_families, 0) AS n_families "
           "FROM models0 m LEFT JOIN ftop t ON t.run_id = m.run_id AND t.model_type = m.model_type LEFT JOIN fpick p ON "
           "p.run_id = m.run_id AND p.model_type = m.model_type),\n"
           "thc AS (SELECT c.run_id, c.model_type, c.threads, count(*) AS n FROM cls c JOIN models0 m ON m.run_id = "
           "c.run_id AND m.model_type = c.model_type WHERE c.ok OR m.n_ok = 0 GROUP BY c.run_id, c.model_type, "
           "c.threads),\n";
}

}  // namespace

sql_dialect parse_sql_dialect(std::string_view name) {
    if (name == "postgres") return sql_dialect::postgres;
    if (name == "duckdb") return sql_dialect::duckdb;
    throw usage_error(fmt::format("--emit-sql: expected postgres or duckdb, found '{}'", name));
}

std::string sql_table_name(std::string_view name) {
    // Each part as PostgreSQL and DuckDB read an unquoted identifier, and no longer than
    // PostgreSQL keeps one (it would silently truncate a longer name to another table's).
    auto bad = [&](std::string_view why) {
        return usage_error(fmt::format("--sql-table: expected a table name (letters, digits and _, not starting "
                                       "with a digit; schema.table allowed), found '{}': {}",
                                       shown_value(name), why));
    };
    std::string out;
    std::size_t parts = 0;
    for (std::size_t at = 0; at <= name.size(); ++parts) {
        std::size_t dot = std::min(name.find('.', at), name.size());
        std::string_view part = name.substr(at, dot - at);
        if (part.empty()) throw bad("an empty name part");
        if (part.size() > 63) throw bad("a part longer than 63 bytes");
        if (part.front() >= '0' && part.front() <= '9') throw bad("a part starting with a digit");
        for (char ch : part)
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
                throw bad(ch > ' ' && ch < 0x7f ? fmt::format("the character '{}'", ch)
                                                : fmt::format("the byte 0x{:02x}", static_cast<unsigned char>(ch)));
        out += fmt::format("{}\"{}\"", out.empty() ? "" : ".", part);
        at = dot + 1;
    }
    if (parts > 3) throw bad("more than database.schema.table");
    return out;
}

std::string harvest_aggregates_sql(sql_dialect dialect, const harvest_config& config, std::string_view table) {
    const bool pg = dialect == sql_dialect::postgres;
    const std::string C = pg ? " COLLATE \"C\"" : "";          // bytewise order
    const std::string N = pg ? "numeric" : "HUGEINT";           // an exact integer of any u64
    const std::string inf = "CAST('Infinity' AS DOUBLE PRECISION)";
    const std::string epoch_us = pg ? "CAST(EXTRACT(EPOCH FROM finished_at) * 1000000 AS BIGINT)" : "epoch_us(finished_at)";
    std::string fmap;
    for (const auto& [model, family] : config.family_map)
        fmap += fmt::format("{}({}, {})", fmap.empty() ? "VALUES " : ", ", quoted(model, "--family-map", pg),
                            quoted(family, "--family-map", pg));
    if (fmap.empty()) fmap = "SELECT CAST(NULL AS TEXT), CAST(NULL AS TEXT) WHERE false";
    std::string where = config.run_id ? " WHERE CAST(run_id AS TEXT) = " + quoted(*config.run_id, "--run-id", pg) : "";
    const std::string gpu = any_pattern(device_memory_error_patterns);
    const std::string mem = any_pattern(memory_error_patterns), kill = any_pattern(killed_error_patterns);

    std::string q = "-- prof-harvest --from-aggregates reads this query's rows (prof-harvest(1)).\n";
    q += fmt::format("WITH RECURSIVE fmap(model_type, family) AS ({}),\n", fmap);
    q += fmt::format(
        "src AS (SELECT CAST(run_id AS TEXT) AS run_id, CAST(ts_id AS TEXT) AS ts_id, CAST(model_type AS TEXT) AS "
        "model_type, NULLIF(CAST(family AS TEXT), '') AS family_col, CAST(n_obs AS {0}) AS n_obs, CAST(fit_seconds AS "
        "DOUBLE PRECISION) AS wall, CAST(cpu_seconds AS DOUBLE PRECISION) AS cpu, CAST(process_rss_bytes AS {0}) AS "
        "process_rss, CAST(peak_rss_bytes AS {0}) AS peak_rss, CAST(peak_gpu_bytes AS {0}) AS peak_gpu, "
        "CAST(intraop_threads AS {0}) AS threads, CAST(memory_limit_bytes AS {0}) AS mem_limit, "
        "COALESCE(CAST(fold_id AS TEXT), '') <> '' AS fold, COALESCE(CAST(ensemble_id AS TEXT), '') <> '' AS ensemble, "
        "{1} AS finished_us, NULLIF(CAST(error AS TEXT), '') AS error, NULLIF(CAST(rss_method AS TEXT), '') AS "
        "rss_method FROM {2}{3}),\n",
        N, epoch_us, sql_table_name(table), where);
    q += fmt::format(
        "fits AS (SELECT s.*, COALESCE(s.family_col, m.family, s.model_type) AS fam, (s.family_col IS NULL AND "
        "m.family IS NULL) AS unmapped, COALESCE(s.error IS NULL AND s.wall > 0 AND s.wall < {0}, false) AS ok FROM src s LEFT JOIN "
        "fmap m ON m.model_type = s.model_type WHERE NOT s.fold AND NOT s.ensemble),\n",
        inf);
    q += fmt::format(
        "cls0 AS (SELECT f.*, CASE WHEN ok THEN wall END AS uw, CASE WHEN ok AND cpu > 0 AND cpu < {0} THEN cpu END "
        "AS uc, CASE WHEN ok AND n_obs > 0 AND n_obs <= 4294967295 THEN n_obs END AS len, (NOT ok AND error IS NOT "
        "NULL AND {1}) AS gpu_oom, (NOT ok AND error IS NOT NULL AND NOT {1} AND ({2} OR (mem_limit IS NOT NULL AND "
        "{3}))) AS oom FROM fits f),\n",
        inf, gpu, mem, kill);
    // effective_cores (records.hpp): 1 below 1 ms of wall; else max(1, cpu / wall), computed
    // only where the quotient cannot overflow (PostgreSQL raises an error on an overflow).
    q += "cls AS (SELECT c.*, CASE WHEN uw IS NOT NULL AND uc IS NOT NULL THEN CASE WHEN uw < CAST(0.001 AS DOUBLE "
         "PRECISION) THEN CAST(1 AS DOUBLE PRECISION) WHEN uc < CAST(1e305 AS DOUBLE PRECISION) OR uw >= CAST(1 AS "
         "DOUBLE PRECISION) THEN GREATEST(CAST(1 AS DOUBLE PRECISION), uc / uw) END END AS eff, (uw IS NOT NULL AND "
         "uc IS NOT NULL AND uw >= CAST(0.001 AS DOUBLE PRECISION) AND NOT (uc < CAST(1e305 AS DOUBLE PRECISION) OR "
         "uw >= CAST(1 AS DOUBLE PRECISION))) AS eff_unsure FROM cls0 c),\n";
    q += "runs AS (SELECT run_id, count(*) AS rows_read, count(*) FILTER (WHERE fold) AS fold_rows, count(*) FILTER "
         "(WHERE ensemble AND NOT fold) AS ensemble_rows FROM src GROUP BY run_id),\n";
    q += "rfits AS (SELECT run_id, count(*) AS n_measurements, count(*) FILTER (WHERE ok) AS n_ok, count(DISTINCT "
         "ts_id) AS n_series, max(finished_us) AS finished_us FROM fits GROUP BY run_id),\n";
    q += fmt::format("series AS (SELECT run_id, ts_id, row_number() OVER (PARTITION BY run_id ORDER BY ts_id{}) AS rn "
                     "FROM (SELECT DISTINCT run_id, ts_id FROM fits) d),\n",
                     C);
    q += family_ctes(C);
    q += fmt::format(
        "models0 AS (SELECT run_id, model_type, count(*) FILTER (WHERE unmapped) AS n_unnamed, "
        "bool_and(unmapped) AS unmapped, count(*) AS n_fits, count(*) FILTER (WHERE ok) AS n_ok, max(n_obs) FILTER "
        "(WHERE ok) AS max_n_obs, max(process_rss) FILTER (WHERE ok AND process_rss > 0) AS max_process_rss_bytes, "
        "max(peak_rss) FILTER (WHERE ok AND peak_rss > 0) AS max_peak_rss_bytes, max(peak_gpu) FILTER (WHERE ok) AS "
        "max_peak_gpu_bytes, max(eff) AS max_effective_cores, count(*) FILTER (WHERE eff_unsure) AS n_eff_unsure, "
        "count(DISTINCT rss_method) FILTER (WHERE ok) AS n_rss_methods, min(rss_method{0}) FILTER (WHERE ok) AS "
        "rss_method, "
        "CASE WHEN bool_or(ok) THEN count(DISTINCT threads) FILTER (WHERE ok) ELSE count(DISTINCT threads) END AS "
        "n_threads, CASE WHEN bool_or(ok) THEN count(threads) FILTER (WHERE ok) ELSE count(threads) END AS "
        "n_threads_known, CASE WHEN bool_or(ok) THEN min(threads) FILTER (WHERE ok) ELSE min(threads) END AS "
        "intraop_threads, "
        "count(*) FILTER (WHERE oom) AS n_oom_killed, count(*) FILTER (WHERE oom AND mem_limit IS NULL) AS "
        "n_oom_no_limit, max(mem_limit) FILTER (WHERE oom) AS oom_limit_bytes, count(*) FILTER (WHERE gpu_oom) AS "
        "n_gpu_oom, max(peak_gpu) FILTER (WHERE gpu_oom AND peak_gpu > 0) AS gpu_oom_peak_bytes, min(ts_id{0}) "
        "FILTER (WHERE NOT ok) AS first_error_ts_id, count(DISTINCT len) FILTER (WHERE uw IS NOT NULL) AS n_lengths "
        "FROM cls GROUP BY run_id, model_type),\n",
        C);
    q += model_ctes();
    q += "fw AS (SELECT c.run_id, m.family, c.uw FROM cls c JOIN models m ON m.run_id = c.run_id AND m.model_type = "
         "c.model_type WHERE c.uw IS NOT NULL),\n";
    q += curve_bins(pg ? "/" : "//");
    q += middle("wmed", "cls", "run_id, model_type", "uw");
    q += middle("cmed", "cls", "run_id, model_type", "uc");
    q += middle("fmed", "fw", "run_id, family", "uw");
    return q + result_rows(pg, inf);
}

}  // namespace prof

namespace prof {

namespace {

const json_value& member(const json_value& row, std::string_view key) {
    static const json_value null;
    const json_value* v = row.find(key);
    return v ? *v : null;
}

std::optional<std::uint64_t> count_of(const json_value& row, std::string_view key) {
    const json_value& v = member(row, key);
    if (v.t == json_value::type::null) return std::nullopt;
    if (v.t == json_value::type::uinteger) return v.u;
    if (v.t == json_value::type::integer && v.i >= 0) return static_cast<std::uint64_t>(v.i);
    throw field_error(fmt::format("field '{}': expected a non-negative integer, found {}", key, shown_value(v.dump())));
}

std::uint64_t required_count(const json_value& row, std::string_view key) {
    auto c = count_of(row, key);
    if (!c) throw field_error(fmt::format("field '{}': expected a non-negative integer, found null", key));
    return *c;
}

std::optional<double> number_of(const json_value& row, std::string_view key) {
    const json_value& v = member(row, key);
    switch (v.t) {
    case json_value::type::null: return std::nullopt;
    case json_value::type::number: return v.d;
    case json_value::type::uinteger: return static_cast<double>(v.u);
    case json_value::type::integer: return static_cast<double>(v.i);
    case json_value::type::string:  // NaN and the infinities, as PostgreSQL writes them
        if (v.s == "NaN") return std::nan("");
        if (v.s == "Infinity") return HUGE_VAL;
        if (v.s == "-Infinity") return -HUGE_VAL;
        break;
    default: break;
    }
    throw field_error(fmt::format("field '{}': expected a number, found {}", key, shown_value(v.dump())));
}

std::string text_of(const json_value& row, std::string_view key) {
    const json_value& v = member(row, key);
    if (v.t != json_value::type::string)
        throw field_error(fmt::format("field '{}': expected a string, found {}", key, shown_value(v.dump())));
    return v.s;
}

// The mean of the two middle values (mean_of_middle, as median() takes it); nullopt when the set
// was empty.
std::optional<double> median_of(const json_value& row, std::string_view lo_key, std::string_view hi_key) {
    auto lo = number_of(row, lo_key), hi = number_of(row, hi_key);
    if (!lo || !hi) return std::nullopt;
    return mean_of_middle(*lo, *hi);
}

// A model's cost curve from its point rows, refusing rows that cannot be the curve the query
// gives for `n_lengths` distinct lengths (build_curve's shapes, curve.hpp).
template <class Point>
std::vector<curve_point> curve_of_points(const std::string& run_id, const std::string& model, std::uint64_t n_lengths,
                                         std::vector<Point> points) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.n_obs_min < b.n_obs_min; });
    auto refuse = [&](std::string what) {
        return error(exit_code::data_err,
                     fmt::format("run '{}', model '{}': {}; these rows do not come from prof-harvest --emit-sql's "
                                 "query (print it again)",
                                 run_id, model, what));
    };
    const bool per_length = n_lengths <= max_curve_points;
    if (per_length ? points.size() != n_lengths : points.empty() || points.size() > max_curve_points)
        throw refuse(fmt::format("{} curve points for {} distinct lengths", points.size(), n_lengths));
    std::vector<curve_point> out;
    for (const auto& pt : points) {
        if (!(0 < pt.n_obs_min && pt.n_obs_min <= pt.n_obs && pt.n_obs <= pt.n_obs_max) ||
            (per_length && pt.n_obs_min != pt.n_obs_max) || pt.n_fits == 0)
            throw refuse(fmt::format("a curve point of n_obs {} in [{}, {}] with {} fits", pt.n_obs, pt.n_obs_min,
                                     pt.n_obs_max, pt.n_fits));
        if (!out.empty() && pt.n_obs_min <= out.back().n_obs_max)
            throw refuse(fmt::format("curve points overlap at n_obs {}", pt.n_obs_min));
        curve_point c;
        c.n_obs = pt.n_obs;
        c.n_obs_min = pt.n_obs_min;
        c.n_obs_max = pt.n_obs_max;
        c.n_fits = pt.n_fits;
        c.wall_s = mean_of_middle(pt.wall_lo, pt.wall_hi);
        if (pt.cpu_lo && pt.cpu_hi) c.cpu_s = mean_of_middle(*pt.cpu_lo, *pt.cpu_hi);
        c.max_process_rss_bytes = pt.max_rss;
        out.push_back(c);
    }
    return out;
}

}  // namespace

aggregate_reader::aggregate_reader(harvest_config config) : config_(std::move(config)) {}

void aggregate_reader::read(line_reader& in) {
    bad_lines_ += for_each_object(in, config_.max_bad_lines - bad_lines_, [&](simdjson::ondemand::object& obj, std::size_t) {
        json_value row;
        row.t = json_value::type::object;
        for (auto f : obj) {
            std::string key(std::string_view(f.unescaped_key()));
            row.obj.emplace_back(std::move(key), read_json_value(f.value()));
        }
        std::sort(row.obj.begin(), row.obj.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        add(row);
    }).bad_lines;
}

void aggregate_reader::read(std::unique_ptr<byte_source> src) {
    line_reader in(std::move(src));
    read(in);
}

void aggregate_reader::add(const json_value& row) {
    const std::string kind = text_of(row, "aggregate");
    run_rows& r = runs_[text_of(row, "run_id")];
    if (kind == "run") {
        r.seen = true;
        r.counts.rows_read = required_count(row, "rows_read");
        r.counts.fold_rows_skipped = required_count(row, "fold_rows_skipped");
        r.counts.ensemble_rows_skipped = required_count(row, "ensemble_rows_skipped");
        r.n_measurements = required_count(row, "n_measurements");
        r.n_ok = required_count(row, "n_ok");
        r.n_series = required_count(row, "n_sample_series");
        const json_value& us = member(row, "finished_us");
        if (us.t == json_value::type::integer) r.finished_us = us.i;
        else if (us.t == json_value::type::uinteger && us.u <= INT64_MAX) r.finished_us = static_cast<std::int64_t>(us.u);
        else if (us.t != json_value::type::null)
            throw field_error("field 'finished_us': expected an integer (microseconds since the epoch) or null");
        if (r.finished_us && (*r.finished_us > INT64_MAX / 1000 || *r.finished_us < INT64_MIN / 1000))
            throw field_error(fmt::format("field 'finished_us': {} is outside the time stamps a profile holds "
                                          "(1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)",
                                          *r.finished_us));
    } else if (kind == "series") {
        r.series.push_back(text_of(row, "ts_id"));
    } else if (kind == "model") {
        r.models[text_of(row, "model_type")].row = row;
    } else if (kind == "model_family") {
        if (!row.find("n_fits"))
            throw field_error("field 'n_fits': missing, as in the rows of an older prof-harvest's query: print the "
                              "query again with prof-harvest --emit-sql");
        r.models[text_of(row, "model_type")].families.emplace_back(text_of(row, "family"), required_count(row, "n_fits"));
    } else if (kind == "model_threads") {
        r.models[text_of(row, "model_type")].threads.push_back(
            {count_of(row, "intraop_threads"), required_count(row, "n_fits")});
    } else if (kind == "point") {
        point p;
        p.n_obs = required_count(row, "n_obs");
        for (std::string_view key : {"n_obs_min", "n_obs_max"})
            if (!row.find(key))
                throw field_error(fmt::format("field '{}': missing, as in the rows of an older prof-harvest's query: "
                                              "print the query again with prof-harvest --emit-sql",
                                              key));
        p.n_obs_min = required_count(row, "n_obs_min");
        p.n_obs_max = required_count(row, "n_obs_max");
        p.n_fits = required_count(row, "n_fits");
        auto lo = number_of(row, "wall_s_lo"), hi = number_of(row, "wall_s_hi");
        if (!lo || !hi) throw field_error("field 'wall_s_lo': a curve point needs its wall seconds");
        p.wall_lo = *lo;
        p.wall_hi = *hi;
        p.cpu_lo = number_of(row, "cpu_s_lo");
        p.cpu_hi = number_of(row, "cpu_s_hi");
        p.max_rss = count_of(row, "max_process_rss_bytes");  // absent from an older query's rows: null
        if (p.max_rss == std::uint64_t{0}) p.max_rss.reset();
        r.models[text_of(row, "model_type")].points.push_back(p);
    } else if (kind == "family") {
        r.family_median[text_of(row, "family")] = median_of(row, "wall_s_lo", "wall_s_hi");
    } else if (kind == "error") {
        const json_value& e = member(row, "error");
        std::string text = e.t == json_value::type::string ? e.s : fit_seconds_error(number_of(row, "fit_seconds"));
        r.models[text_of(row, "model_type")].errors.emplace_back(text_of(row, "ts_id"), std::move(text));
    } else {
        throw field_error(fmt::format("field 'aggregate': expected run, series, model, model_family, model_threads, "
                                      "point, family or error, found \"{}\"",
                                      shown_value(kind)));
    }
}

namespace {

// A model's family votes by profile_builder's rule, from the counts the query gives: each
// family's rows when it names several (model_family rows), else the one family's (its rows
// but those naming none).
family_votes votes_of(const std::string& run_id, const std::string& name, const json_value& row,
                      const std::vector<std::pair<std::string, std::uint64_t>>& families) {
    if (!row.find("n_unnamed"))
        throw error(exit_code::data_err,
                    fmt::format("run '{}', model '{}': field 'n_unnamed': missing, as in the rows of an older "
                                "prof-harvest's query: print the query again with prof-harvest --emit-sql",
                                run_id, name));
    family_votes votes;
    votes.n_unnamed = required_count(row, "n_unnamed");
    if (!families.empty()) {
        votes.named = families;
        std::sort(votes.named.begin(), votes.named.end());
    } else if (required_count(row, "n_families") > 0) {
        const std::uint64_t n_fits = required_count(row, "n_fits");
        if (votes.n_unnamed >= n_fits)
            throw error(exit_code::data_err, fmt::format("run '{}', model '{}': n_unnamed {} leaves none of its {} fits "
                                                         "to name its family",
                                                         run_id, name, votes.n_unnamed, n_fits));
        votes.named.emplace_back(text_of(row, "family"), n_fits - votes.n_unnamed);
    }
    return votes;
}

// A model's thread caps from its model_threads rows (given when its counts say several caps),
// sorted, each cap once.
std::vector<thread_cap_count> thread_caps_of(const std::string& run_id, const std::string& name,
                                             std::vector<thread_cap_count> caps) {
    std::sort(caps.begin(), caps.end());
    for (std::size_t k = 1; k < caps.size(); ++k)
        if (caps[k].intraop_threads == caps[k - 1].intraop_threads)
            throw error(exit_code::data_err, fmt::format("run '{}', model '{}': two model_threads rows of one thread cap",
                                                         run_id, name));
    if (caps.size() < 2)
        throw error(exit_code::data_err,
                    fmt::format("run '{}', model '{}': its fits ran under several thread caps, but {} model_threads "
                                "row(s) name them, as in the rows of an older prof-harvest's query: print the query "
                                "again with prof-harvest --emit-sql",
                                run_id, name, caps.size()));
    return caps;
}

}  // namespace

compute_profile aggregate_reader::profile_of(const std::string& run_id, const run_rows& r) const {
    std::vector<std::string> unmapped;
    for (const auto& [name, m] : r.models)
        if (member(m.row, "unmapped").t == json_value::type::boolean && member(m.row, "unmapped").b) unmapped.push_back(name);
    latest_instant latest;
    if (r.finished_us) latest.add(*r.finished_us * 1000);
    profile_provenance pv = harvest_provenance(config_, run_id, latest, unmapped);
    compute_profile p;
    p.provenance = std::move(pv);
    p.memory_margin = config_.margin.memory();
    p.time_margin = config_.margin.time();
    p.n_measurements = r.n_measurements;
    p.n_ok = r.n_ok;
    p.n_sample_series = r.n_series;
    p.sample_ts_ids = r.series;
    std::sort(p.sample_ts_ids.begin(), p.sample_ts_ids.end());
    for (const auto& [name, mr] : r.models) {
        const json_value& row = mr.row;
        if (!row.is_object())
            throw error(exit_code::data_err, fmt::format("run '{}': rows of model '{}' but no model row", run_id, name));
        if (!mr.errors.empty()) p.first_error_by_model[name] = std::min_element(mr.errors.begin(), mr.errors.end())->second;
        const family_votes votes = votes_of(run_id, name, row, mr.families);
        model_cost m;
        m.model_type = name;
        m.family = family_choice(name, votes);
        m.n_fits = required_count(row, "n_fits");
        m.n_ok = required_count(row, "n_ok");
        m.max_n_obs = count_of(row, "max_n_obs");
        m.max_process_rss_bytes = count_of(row, "max_process_rss_bytes");
        m.max_peak_rss_bytes = count_of(row, "max_peak_rss_bytes");
        m.max_peak_gpu_bytes = count_of(row, "max_peak_gpu_bytes");
        m.median_wall_s = median_of(row, "wall_s_lo", "wall_s_hi");
        m.median_cpu_s = median_of(row, "cpu_s_lo", "cpu_s_hi");
        m.max_effective_cores = number_of(row, "max_effective_cores");
        if (!row.find("n_rss_methods"))
            throw error(exit_code::data_err,
                        fmt::format("run '{}', model '{}': field 'n_rss_methods': missing, as in the rows of an older "
                                    "prof-harvest's query: print the query again with prof-harvest --emit-sql",
                                    run_id, name));
        if (const std::uint64_t n = required_count(row, "n_rss_methods"); n > 1) m.rss_method = "mixed";
        else if (n == 1) m.rss_method = text_of(row, "rss_method");
        bool mixed = required_count(row, "n_threads") > 1 ||
                     (required_count(row, "n_threads_known") > 0 &&
                      required_count(row, "n_threads_known") < (m.n_ok > 0 ? m.n_ok : m.n_fits));
        if (mixed) m.thread_caps = thread_caps_of(run_id, name, mr.threads);
        m.intraop_threads = mixed ? sized_thread_cap(m.thread_caps) : count_of(row, "intraop_threads");
        m.n_oom_killed = required_count(row, "n_oom_killed");
        m.oom_limit_bytes = count_of(row, "oom_limit_bytes");
        m.n_gpu_oom = required_count(row, "n_gpu_oom");
        m.gpu_oom_peak_bytes = count_of(row, "gpu_oom_peak_bytes");
        append_oom_warnings(p.provenance.warnings, name, required_count(row, "n_oom_no_limit"), m.n_gpu_oom,
                            m.gpu_oom_peak_bytes);
        bool any_axis = m.max_process_rss_bytes || m.max_peak_rss_bytes || (m.max_peak_gpu_bytes && *m.max_peak_gpu_bytes > 0) ||
                        m.median_wall_s || m.median_cpu_s || m.oom_limit_bytes || m.gpu_oom_peak_bytes;
        if (!any_axis) {
            p.dropped_models.push_back(name);
            p.dropped_model_families[name] = m.family;
            continue;
        }
        append_family_warning(p.provenance.warnings, name, votes);
        append_thread_cap_warning(p.provenance.warnings, name, m.thread_caps);
        if (required_count(row, "n_eff_unsure") > 0)
            throw error(exit_code::data_err,
                        fmt::format("run '{}', model '{}': a fit's cpu_seconds / fit_seconds is near the largest "
                                    "double; the aggregate rows cannot give its effective cores exactly: stream the "
                                    "rows instead ({} | prof-harvest)",
                                    run_id, name, rows_export_query(config_.table)));
        m.wall_curve = curve_of_points(run_id, name, required_count(row, "n_lengths"), mr.points);
        auto fm = r.family_median.find(m.family);
        p.families[m.family].median_wall_s = fm == r.family_median.end() ? std::nullopt : fm->second;
        p.models.emplace(name, std::move(m));
    }
    recompute_derived(p);
    warn_if_sizes_nothing(p);
    harvest_counts c = r.counts;
    c.bad_lines_skipped = bad_lines_;
    p.harvest = harvest_counts_json(c);
    return p;
}

std::vector<compute_profile> aggregate_reader::finish() const {
    if (config_.signature && runs_.size() > 1)
        throw usage_error(fmt::format("--signature describes one run's data, but the input holds {} runs: give each "
                                      "run its own with --signature-map FILE, or keep one with --run-id",
                                      runs_.size()));
    std::vector<compute_profile> out;
    for (const auto& [run_id, r] : runs_) {
        if (!r.seen) throw error(exit_code::data_err, fmt::format("run '{}': aggregate rows but no run row", run_id));
        out.push_back(profile_of(run_id, r));
    }
    return out;
}

}  // namespace prof
