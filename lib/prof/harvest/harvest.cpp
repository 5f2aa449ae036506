// Warehouse rows → profiles (see harvest.hpp). Lines go through the shared for_each_object
// loop, with a strict fast reader for flat rows and simdjson on-demand for everything else.
#include "prof/harvest/harvest.hpp"

#include "prof/harvest/aggregates.hpp"

#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/io/input.hpp"
#include "prof/io/interner.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

namespace {

// A string value without escapes is read straight from the input line (its raw token minus
// the quotes), skipping simdjson's unescape copy; anything else goes through get_string().
inline std::optional<std::string_view> plain_string(od::value& v) {
    std::string_view tok = trimmed_token(v);
    if (tok.size() < 2 || tok[0] != '"' || tok.back() != '"' || tok.find('\\') != std::string_view::npos) return std::nullopt;
    return tok.substr(1, tok.size() - 2);
}

std::optional<std::string_view> read_text(od::value v, std::string_view field) {
    if (auto s = plain_string(v)) return s;
    od::json_type t = v.type();
    if (t == od::json_type::null) return std::nullopt;
    if (t == od::json_type::string) return std::string_view(v.get_string());
    wrong_type(v, field, "a string");
}

// fold_id / ensemble_id: set unless null or "" (a non-Nullable String column, as ClickHouse
// exports it, writes "" where there is no fold).
inline bool is_set(od::value& v) {
    od::json_type t = v.type();
    if (t == od::json_type::null) return false;
    if (t == od::json_type::string) return !std::string_view(v.get_string()).empty();
    return true;
}

// The key's text straight from the line when it has no escape (every real column name);
// otherwise unescaped.
inline std::string_view key_of(simdjson::simdjson_result<od::field>& f) {
    od::raw_json_string raw = f.key();
    const char* p = raw.raw();
    std::size_t n = 0;
    while (n < 32 && p[n] != '"' && p[n] != '\\') ++n;
    if (n < 32 && p[n] == '"') return std::string_view(p, n);
    return f.unescaped_key();
}

// The columns the row rules read; anything else is `other` (a scalar, checked and ignored).
enum class column : std::uint8_t {
    run_id, ts_id, model_type, family, n_obs, fit_seconds, cpu_seconds, process_rss_bytes,
    peak_rss_bytes, peak_gpu_bytes, intraop_threads, memory_limit_bytes, fold_id, ensemble_id, finished_at, error,
    rss_method, other
};

// The column names, looked up by the row readers when a key was not predicted (the fast
// reader remembers each member's key from the last row) and by the simdjson reader.
constexpr std::pair<std::string_view, column> column_names[] = {
    {"run_id", column::run_id},
    {"ts_id", column::ts_id},
    {"model_type", column::model_type},
    {"family", column::family},
    {"n_obs", column::n_obs},
    {"fit_seconds", column::fit_seconds},
    {"cpu_seconds", column::cpu_seconds},
    {"process_rss_bytes", column::process_rss_bytes},
    {"peak_rss_bytes", column::peak_rss_bytes},
    {"peak_gpu_bytes", column::peak_gpu_bytes},
    {"intraop_threads", column::intraop_threads},
    {"memory_limit_bytes", column::memory_limit_bytes},
    {"fold_id", column::fold_id},
    {"ensemble_id", column::ensemble_id},
    {"finished_at", column::finished_at},
    {"error", column::error},
    {"rss_method", column::rss_method},
};

column column_of(std::string_view key) { return key_id(key, column_names, column::other); }

}  // namespace

harvest_row read_harvest_row(od::object& obj) {
    harvest_row r;
    bool have_run = false, have_ts = false, have_model = false;
    for (auto f : obj) {
        std::string_view k = key_of(f);
        od::value v = f.value();
        switch (column_of(k)) {
        case column::ts_id: r.ts_id = read_id(v, "ts_id"); have_ts = true; break;
        case column::run_id: r.run_id = read_id(v, "run_id"); have_run = true; break;
        case column::n_obs: r.n_obs = read_count(v, "n_obs"); break;
        case column::error: r.error = read_text(v, "error"); break;
        case column::family: r.family = read_text(v, "family"); break;
        case column::rss_method: r.rss_method = read_text(v, "rss_method"); break;
        case column::fold_id: r.fold = is_set(v); break;
        case column::ensemble_id: r.ensemble = is_set(v); break;
        case column::model_type: {
            auto s = read_text(v, "model_type");
            if (!s) throw field_error("field 'model_type': expected a string, found null");
            r.model_type = *s;
            have_model = true;
            break;
        }
        case column::fit_seconds: r.fit_seconds = read_number(v, "fit_seconds"); break;
        case column::cpu_seconds: r.cpu_seconds = read_number(v, "cpu_seconds"); break;
        case column::finished_at:
            if (auto s = read_text(v, "finished_at")) {
                auto t = parse_rfc3339(*s);
                if (!t) {
                    // A zone-less stamp is PostgreSQL's `timestamp` (without time zone): say which cast.
                    bool zoneless = parse_rfc3339(std::string(*s) + "Z").has_value();
                    throw field_error(fmt::format("field 'finished_at': expected an RFC 3339 time stamp with a zone "
                                                  "(1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z), found \"{}\"{}",
                                                  shown_value(*s),
                                                  zoneless ? "; this is a timestamp without time zone: export it with "
                                                             "its zone, e.g. finished_at AT TIME ZONE 'UTC' (when it holds "
                                                             "UTC) in the SELECT that row_to_json reads"
                                                           : ""));
                }
                r.finished_at_ns = t;
            } else {
                r.finished_at_ns.reset();  // a later null wins, as for every other column
            }
            break;
        case column::peak_rss_bytes: r.peak_rss_bytes = read_count(v, "peak_rss_bytes"); break;
        case column::peak_gpu_bytes: r.peak_gpu_bytes = read_count(v, "peak_gpu_bytes"); break;
        case column::process_rss_bytes: r.process_rss_bytes = read_count(v, "process_rss_bytes"); break;
        case column::intraop_threads: r.intraop_threads = read_count(v, "intraop_threads"); break;
        case column::memory_limit_bytes: r.memory_limit_bytes = read_count(v, "memory_limit_bytes"); break;
        case column::other: break;
        }
    }
    if (!have_run) missing_field("run_id");
    if (!have_ts) missing_field("ts_id");
    if (!have_model) missing_field("model_type");
    return r;
}

// ---- the fast reader ------------------------------------------------------------------------
// Warehouse rows are flat objects of plain strings, numbers and literals (a failed fit's
// seconds often the string "NaN"). This reader accepts exactly that subset of JSON
// (json_scan.hpp) and gives up — returns false — on anything else: an escape, a nested value,
// a quoted count that is not an integer, a missing column, any syntax error. The caller then re-reads the line with simdjson's on-demand parser, which owns every
// rule and every error message, so the two paths cannot disagree on what a line means.
namespace {

// One value of a known column, at s.p, into the row (one dispatch per member; each column
// looks first for the form its values take).
[[gnu::always_inline]] inline bool read_value(json_scanner& s, column c, harvest_row& r, bool& have_run, bool& have_ts,
                                              bool& have_model, rfc3339_stream& stamps) {
    switch (c) {
    case column::fit_seconds: return scan_seconds(s, r.fit_seconds);
    case column::cpu_seconds: return scan_seconds(s, r.cpu_seconds);
    case column::n_obs: return scan_count(s, r.n_obs);
    case column::process_rss_bytes: return scan_count(s, r.process_rss_bytes);
    case column::memory_limit_bytes: return scan_count(s, r.memory_limit_bytes);
    case column::peak_rss_bytes: return scan_count(s, r.peak_rss_bytes);
    case column::peak_gpu_bytes: return scan_count(s, r.peak_gpu_bytes);
    case column::intraop_threads: return scan_count(s, r.intraop_threads);
    case column::ts_id: return have_ts = scan_id(s, r.ts_id);
    case column::run_id: return have_run = scan_id(s, r.run_id);
    case column::model_type: return have_model = s.string(r.model_type);
    case column::family: return scan_text(s, r.family);
    case column::error: return scan_text(s, r.error);
    case column::rss_method: return scan_text(s, r.rss_method);
    case column::fold_id: return scan_set(s, r.fold);
    case column::ensemble_id: return scan_set(s, r.ensemble);
    case column::finished_at: {
        std::optional<std::string_view> t;
        if (!scan_text(s, t)) return false;
        if (!t) {
            r.finished_at_ns.reset();
            return true;
        }
        r.finished_at_ns = stamps(*t);
        return r.finished_at_ns.has_value();
    }
    case column::other: break;
    }
    scan_kind k;  // another column: any scalar
    std::string_view t;
    return s.scalar(k, t);
}

}  // namespace

// The row at `begin` of [begin, end), read to its closing '}' and the whitespace after it:
// where that whitespace ends, or nullptr when the row was declined. The scanner is a local of
// this function so that it stays in registers (a store into the row could otherwise alias it).
template <bool NewlineEnds>
[[gnu::always_inline]] inline const char* harvest_row_reader::read_object(const char* begin, const char* end,
                                                                          const char* readable_end, bool check_utf8,
                                                                          harvest_row& r) {
    r.clear();
    json_scanner s{begin, end};
    s.check_utf8 = check_utf8;
    s.newline_ends = NewlineEnds;
    bool have_run = false, have_ts = false, have_model = false;
    s.ws();
    if (!s.eat('{')) return nullptr;
    auto id_of = [](std::string_view key) { return static_cast<std::uint8_t>(column_of(key)); };
    std::uint8_t c;
    if (!keys_.member(0, s, readable_end, id_of, c)) return nullptr;  // `{}` too: it has no run_id
    key_predictor::cursor at = keys_.at(1);
    for (;;) {
        if (!read_value(s, static_cast<column>(c), r, have_run, have_ts, have_model, stamps_)) return nullptr;
        // The ',' and the next key in one prediction (the last row's bytes), else scanned.
        key_predictor::step next = keys_.next_member(at, s, readable_end, id_of, c);
        if (next == key_predictor::step::end) break;
        if (next == key_predictor::step::fail) return nullptr;
    }
    s.ws();
    return have_run && have_ts && have_model ? s.p : nullptr;
}

bool harvest_row_reader::read(std::string_view line, harvest_row& r, bool padded, bool utf8_checked) {
    const char* end = line.data() + line.size();
    // A 32-byte load at p stays inside the line or its padding while readable_end - p >= 32.
    const char* readable_end = end + (padded ? simdjson::SIMDJSON_PADDING : 0);
    return read_object<false>(line.data(), end, readable_end, !utf8_checked, r) == end;
}

const char* harvest_row_reader::read_line(const char* begin, const char* end, const char* readable_end,
                                          harvest_row& r) {
    const char* stop = read_object<true>(begin, end, readable_end, true, r);
    return stop && stop < end && *stop == '\n' ? stop : nullptr;
}

bool read_harvest_row_fast(std::string_view line, harvest_row& r) {
    harvest_row_reader reader;
    return reader.read(line, r);
}

std::string rows_export_query(std::string_view table) {
    bool upper = std::any_of(table.begin(), table.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    return "SELECT row_to_json(t) FROM " + (upper ? sql_table_name(table) : std::string(table)) + " t";
}

void throw_with_export_hint(const input_error& e, std::string_view table) {
    // A line that is not JSON at all is most often another export format. The query goes
    // inside a double-quoted shell word: its own double quotes are escaped.
    if (e.detail.rfind("expected a JSON object", 0) == 0 ||
        (e.detail.rfind("malformed JSON", 0) == 0 && e.detail.find("improper structure") != std::string::npos)) {
        std::string query;
        for (char c : rows_export_query(table)) query += c == '"' ? std::string("\\\"") : std::string(1, c);
        throw input_error(e.source_name, e.line_number,
                          e.detail + "; if this is COPY's text format or psql's aligned table, export JSON Lines "
                                     "instead: psql -AtX -c \"" + query + "\"");
    }
    throw e;
}

std::string fit_seconds_error(std::optional<double> fit_seconds) {
    if (!fit_seconds) return "fit_seconds=null";
    double d = *fit_seconds;
    if (std::isnan(d)) return "fit_seconds=NaN";
    if (std::isinf(d)) return d > 0 ? "fit_seconds=Infinity" : "fit_seconds=-Infinity";
    return "fit_seconds=" + format_double(d);
}

json_value harvest_counts_json(const harvest_counts& c) {
    auto u = [](std::uint64_t x) {
        json_value v;
        v.t = json_value::type::uinteger;
        v.u = x;
        return v;
    };
    json_value o;
    o.t = json_value::type::object;  // canonical: members sorted by key
    o.obj = {{"bad_lines_skipped", u(c.bad_lines_skipped)},
             {"ensemble_rows_skipped", u(c.ensemble_rows_skipped)},
             {"fold_rows_skipped", u(c.fold_rows_skipped)},
             {"rows_read", u(c.rows_read)}};
    return o;
}

void read_harvest_option_files(const harvest_option_files& files, const std::vector<std::string>& rows,
                               const http_options* http, harvest_config& config) {
    const bool rows_on_stdin = std::find(rows.begin(), rows.end(), "-") != rows.end();
    cli::check_one_stdin({{"the rows", rows_on_stdin ? "-" : ""},
                          {"--family-map", files.family_map},
                          {"--signature", files.signature},
                          {"--signature-map", files.signature_map}});
    auto read = [&](const std::string& spec, auto& into, auto parse) {
        if (spec.empty()) return;
        auto in = read_whole_input(spec, http);
        into = parse(in.text, in.name);
    };
    read(files.family_map, config.family_map, parse_family_map);
    read(files.signature, config.signature, parse_signature);
    read(files.signature_map, config.signature_map, parse_signature_map);
}

std::map<std::string, std::string> parse_family_map(std::string_view text, const std::string& source) {
    json_value v = parse_json_object_file(text, source, "--family-map");
    std::map<std::string, std::string> out;
    for (const auto& [model, fam] : v.obj) {
        if (fam.t != json_value::type::string || fam.s.empty())
            throw error(exit_code::data_err,
                        fmt::format("{}: model '{}': expected a family name (a non-empty string)", source, model));
        out[model] = fam.s;
    }
    return out;
}

json_value parse_signature(std::string_view text, const std::string& source) {
    return parse_json_object_file(text, source, "--signature");
}

std::map<std::string, json_value> parse_signature_map(std::string_view text, const std::string& source) {
    json_value v = parse_json_object_file(text, source, "--signature-map");
    std::map<std::string, json_value> out;
    for (const auto& [run, sig] : v.obj) {
        if (!sig.is_object())
            throw error(exit_code::data_err,
                        fmt::format("{}: run '{}': expected a signature (a JSON object)", source, run));
        out[run] = sig;
    }
    return out;
}

profile_provenance harvest_provenance(const harvest_config& config, const std::string& run_id,
                                      const latest_instant& latest,
                                      const std::vector<std::string>& unmapped_models) {
    profile_provenance pv;
    pv.basis = "measured";
    pv.source = "harvest";
    pv.run_id = run_id;
    if (auto it = config.signature_map.find(run_id); it != config.signature_map.end()) pv.signature = it->second;
    else pv.signature = config.signature;
    pv.measured_at = latest.rfc3339();
    if (!unmapped_models.empty()) {
        std::string names;
        for (const auto& m : unmapped_models) names += (names.empty() ? "" : ", ") + m;
        pv.warnings.push_back(fmt::format("no family for model(s) {}: each counted as its own family; "
                                          "add a 'family' column or give --family-map FILE",
                                          names));
    }
    return pv;
}

std::string harvest_summary(const std::vector<compute_profile>& profiles, std::uint64_t bad_lines) {
    std::uint64_t rows = 0, ok = 0, failed = 0, folds = 0, ensembles = 0;
    for (const auto& p : profiles) {
        ok += p.n_ok;
        failed += p.n_failed;
        if (!p.harvest) continue;
        auto count = [&](const char* k) {
            const json_value* v = p.harvest->find(k);
            return v && v->t == json_value::type::uinteger ? v->u : 0;
        };
        rows += count("rows_read");
        folds += count("fold_rows_skipped");
        ensembles += count("ensemble_rows_skipped");
    }
    return fmt::format("{} row(s) of {} run(s): {} fit(s) ok, {} failed; {} fold and {} ensemble row(s) skipped, {} "
                       "malformed line(s) skipped",
                       rows, profiles.size(), ok, failed, folds, ensembles, bad_lines);
}

harvester::harvester(harvest_config config) : config_(std::move(config)) {
    family_map_.insert(config_.family_map.begin(), config_.family_map.end());
}

harvester::run_acc& harvester::run_for(std::string_view run_id) {
    if (last_run_ && same_text(run_id, last_run_id_)) return *last_run_;
    auto it = runs_.find(run_id);
    if (it == runs_.end())
        it = runs_.emplace(std::string(run_id), run_acc(config_.margin)).first;
    last_run_ = &it->second;
    last_run_id_.assign(run_id);
    return *last_run_;
}

void harvester::add(const harvest_row& row) {
    if (config_.run_id && row.run_id != *config_.run_id) return;
    // Rows of one run come together: the last run's accumulator is checked inline first.
    run_acc& r = last_run_ && same_text(row.run_id, last_run_id_) ? *last_run_ : run_for(row.run_id);
    ++r.counts.rows_read;
    if (row.fold) {
        ++r.counts.fold_rows_skipped;
        return;
    }
    if (row.ensemble) {
        ++r.counts.ensemble_rows_skipped;
        return;
    }
    r.latest.add(row.finished_at_ns);
    // A row without a family (column and --family-map) does not vote on its model's family.
    std::string_view family = row.model_type;
    bool family_named = true;
    if (row.family && !row.family->empty()) family = *row.family;
    else if (auto it = family_map_.find(row.model_type); it != family_map_.end()) family = it->second;
    else family_named = false;
    // A set error column is a failed cell whatever fit_seconds says: many pipelines record the
    // elapsed time of a fit that failed (a memory kill after 600 s is no 600 s fit).
    const bool has_error = row.error && !row.error->empty();  // "": a non-Nullable String column's "none"
    // The evidence is kept across rows: only the fields a row sets are written (the others
    // keep their defaults), not a whole fit_evidence built anew each row.
    fit_evidence& f = evidence_;
    f.ts_id = row.ts_id;
    f.model_type = row.model_type;
    f.family = family;
    f.family_named = family_named;
    f.n_obs = row.n_obs;
    f.ok = !has_error && usable(row.fit_seconds);
    f.wall_s = row.fit_seconds;
    f.cpu_s = row.cpu_seconds;
    f.process_rss_bytes = row.process_rss_bytes;
    f.peak_rss_bytes = row.peak_rss_bytes;
    f.peak_gpu_bytes = row.peak_gpu_bytes;
    f.intraop_threads = row.intraop_threads;
    f.memory_limit_bytes = row.memory_limit_bytes;
    f.rss_method = row.rss_method && !row.rss_method->empty() ? row.rss_method : std::nullopt;
    f.error = std::nullopt;
    std::string error;
    if (!f.ok) {
        if (has_error) {
            f.error = *row.error;
        } else {
            error = fit_seconds_error(row.fit_seconds);
            f.error = error;
        }
    }
    r.builder.add(f);
}

jsonl_stats harvester::read_lines(line_reader& in, std::size_t max_bad_lines, const std::function<void()>& tick) {
    // Flat rows go through the strict fast reader; anything it declines (escapes, nesting, NaN
    // words, errors) is parsed by simdjson on-demand. The line loop, UTF-8 check, trailing-content
    // check and the --max-bad-lines budget are the shared for_each_object's (its form that calls
    // the fast reader directly). The fast reader checks the UTF-8 of the rows it reads as it
    // scans them, so the line reader does not check it first.
    in.check_utf8(false);
    auto fast = [&](std::string_view text, bool utf8_checked) {
        if (tick && !utf8_checked) tick();  // each line's first call (a declined line's second has it checked)
        if (!row_reader_.read(text, fast_row_, true, utf8_checked)) return false;  // lines come padded
        add(fast_row_);
        return true;
    };
    auto slow = [&](od::object& obj, std::size_t) {
        harvest_row row = read_harvest_row(obj);
        add(row);
    };
    // Most rows are taken before their line is cut: the reader finds the '\n' at their end.
    // Each row also starts the load of the input three pages ahead: the hardware prefetcher
    // follows a stream only within a 4 KiB page, so without it the reader waited for memory at
    // every page it entered. A prefetch never faults, so the address may lie past the input.
    constexpr std::uintptr_t prefetch_ahead = 3 * 4096;
    auto cut = [&](const line_reader::unread_view& v) -> const char* {
        __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(v.begin) + prefetch_ahead));
        const char* newline = row_reader_.read_line(v.begin, v.end, v.readable_end, fast_row_);
        if (!newline) return nullptr;
        if (tick) tick();
        add(fast_row_);
        return newline;
    };
    return for_each_object_fast(in, max_bad_lines, slow, fast, {}, cut);
}

void harvester::read(line_reader& in, const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    std::function<void()> tick;
    if (progress)
        tick = [&] {
            if ((++lines_seen_ & 0xFFFF) == 0) progress(lines_seen_, bytes_base_ + in.bytes_read());
        };
    try {
        bad_lines_ += read_lines(in, config_.max_bad_lines - bad_lines_, tick).bad_lines;
    } catch (const input_error& e) {
        throw_with_export_hint(e, config_.table);
    }
    bytes_base_ += in.bytes_read();
}

std::vector<compute_profile> harvester::finish() const {
    if (config_.signature && runs_.size() > 1) {
        std::string names;
        std::size_t n = 0;
        for (const auto& [id, r] : runs_)
            if (n++ < 5) names += (names.empty() ? "" : ", ") + id;
        if (n > 5) names += ", ...";
        throw usage_error(fmt::format("--signature describes one run's data, but the input holds {} runs ({}): give "
                                      "each run its own with --signature-map FILE, or keep one with --run-id",
                                      n, names));
    }
    std::vector<compute_profile> out;
    for (const auto& [run_id, r] : runs_) {  // a sorted map: profiles come out by run_id
        compute_profile p =
            r.builder.finish(harvest_provenance(config_, run_id, r.latest, r.builder.models_without_family()), threads_);
        harvest_counts c = r.counts;
        c.bad_lines_skipped = bad_lines_;
        p.harvest = harvest_counts_json(c);
        // A run measured every cell: nothing to resample (prof-plan prices it from its own fits),
        // and the warehouse's aggregates, which keep no fit, give the same profile.
        for (auto& [name, m] : p.models) m.readings.clear();
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace prof
