// prof-spans: one profiled query execution (Polars, Chrome trace, DuckDB) → a query_profile
// (fixed + per-row host cost); estimate, stale, fit, and the ProfileCache (put/get/list).
#include "prof/cache.hpp"
#include "prof/cli.hpp"
#include "prof/diag.hpp"
#include "prof/errors.hpp"
#include "prof/fsutil.hpp"
#include "prof/host.hpp"
#include "prof/json_in.hpp"
#include "prof/json_out.hpp"
#include "prof/spans.hpp"

#include <charconv>
#include <ctime>
#include <fmt/format.h>

namespace {

struct config {
    std::vector<std::string> files;
    std::string rows, plan_key, input_format = "auto", engine_version, cache;
    std::vector<std::string> fixed;
    std::optional<double> fixed_seconds, selectivity;
    std::optional<std::string> host, engine_version_flag;
    double factor = 10.0;
    std::uint64_t max_bad_lines = 0;
    bool stats = false, strict = false;
};

double cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::vector<prof::located_query_profile> read_profiles(const config& c) {
    return prof::read_query_profile_lines(prof::cli::inputs_or_stdin(c.files), c.max_bad_lines);
}

std::optional<std::uint64_t> parse_rows(const std::string& text, bool allow_zero) {
    if (text.empty()) return std::nullopt;
    std::int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < 0 || (v == 0 && !allow_zero))
        throw prof::usage_error(fmt::format("--rows must be a {} integer, not '{}'", allow_zero ? "non-negative" : "positive", text));
    return static_cast<std::uint64_t>(v);
}

int build(const config& c) {
    if (c.files.size() > 1) throw prof::usage_error("build reads one profiled run: give at most one FILE");
    std::string path = c.files.empty() ? "-" : c.files[0];
    std::string name = path == "-" ? "<stdin>" : path;
    prof::padded_input input(path);
    std::string_view text = input.text();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {  // empty input → empty output
        if (c.strict) throw prof::error(prof::exit_code::data_err, fmt::format("{}: empty input (--strict)", name));
        return 0;
    }
    if (c.plan_key.empty()) throw prof::usage_error("--plan-key K is required: the cache key of the query plan");
    if (!c.fixed.empty() && c.fixed_seconds) throw prof::usage_error("--fixed and --fixed-seconds exclude each other");
    if (c.fixed_seconds && !(*c.fixed_seconds >= 0)) throw prof::usage_error("--fixed-seconds must be >= 0");
    prof::query_options o;
    o.plan_key = c.plan_key;
    o.host = prof::host_identity(c.host);
    o.rows = parse_rows(c.rows, false);
    o.fixed_nodes = c.fixed;
    o.fixed_seconds = c.fixed_seconds;
    o.selectivity = c.selectivity;
    o.engine_version = c.engine_version_flag.value_or("");
    prof::span_format f = c.input_format == "auto"          ? prof::detect_span_format(text, name)
                          : c.input_format == "polars-jsonl" ? prof::span_format::polars_jsonl
                          : c.input_format == "polars-csv"   ? prof::span_format::polars_csv
                          : c.input_format == "chrome"       ? prof::span_format::chrome
                                                             : prof::span_format::duckdb;
    prof::query_profile p;
    if (f == prof::span_format::duckdb) {
        p = prof::build_from_duckdb(prof::read_duckdb_profile(text, name), o, name);
    } else {
        prof::span_set s;
        double t0 = cpu_seconds();
        if (f == prof::span_format::chrome) {
            s = prof::read_chrome_trace(text, name);
            if (c.strict) prof::refuse_defects(s, name);
            auto report = prof::report_trace(s, name);
            for (const auto& n : report.notes) prof::note(n);
            for (const auto& w : report.warnings) prof::warn(w);
        } else {
            s = f == prof::span_format::polars_jsonl ? prof::read_polars_jsonl(text, name) : prof::read_polars_csv(text, name);
        }
        if (s.spans.empty()) {  // no evidence: nothing to price
            std::string why = fmt::format("{}: no timed spans ({}) in the input: no query_profile written", name,
                                          f == prof::span_format::chrome
                                              ? fmt::format("X events or B/E pairs, among {} event(s)", s.events)
                                              : std::string("node/start/end rows"));
            if (c.strict) throw prof::error(prof::exit_code::data_err, why + " (--strict)");
            prof::warn(why);
            return 0;
        }
        double t1 = cpu_seconds();
        p = prof::build_from_spans(s, o, f == prof::span_format::chrome ? std::vector<std::string>{}
                                                                         : std::vector<std::string>{"optimization"},
                                   f == prof::span_format::chrome ? "chrome" : "polars");
        if (c.stats) {
            std::string how;
            if (f == prof::span_format::chrome) {
                how = s.whole_document ? "; events read by one whole-document parse"
                                       : fmt::format("; events: {} scanned, {} from DOM batches", s.scanned_events, s.dom_events);
                std::string skipped = prof::defect_counts(s);
                how += "; defects: " + (skipped.empty() ? std::string("none") : skipped);
            }
            prof::note(fmt::format("stats: {} bytes, {} spans of {} nodes; cpu s: read+parse {:.6f}, union {:.6f}{}",
                                   text.size(), s.spans.size(), s.names.size(), t1 - t0, cpu_seconds() - t1, how));
        }
    }
    for (const auto& w : p.warnings) prof::warn(w);
    std::string line = prof::write_query_profile(p);
    if (!c.cache.empty()) prof::profile_cache(c.cache).put("query_profile", prof::query_profile_key(p.plan_key, p.host), line);
    prof::cli::emit_line(line);
    return 0;
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Turn one profiled query execution into a query_profile: fixed seconds plus per-row seconds,\n"
                 "so a scheduler can price the query at any row count. Reads Polars profile rows (JSON Lines or\n"
                 "CSV: node,start,end in microseconds), a Chrome trace (X and B/E spans) or a DuckDB JSON\n"
                 "profile (detailed mode). Operations: build (default), estimate, stale, fit, put, get, list.",
                 "prof-spans"};
    prof::cli::configure(app, "prof-spans --rows 1000 --plan-key q1 --engine-version 1.5.6 run.json | prof-spans estimate --rows 100000",
                         "reads engine spans or query_profile lines; writes query_profile lines (estimate: one number a line)");
    app.fallthrough();
    app.add_option("files", c.files, "Input (build: one profiled run; other operations: query_profile lines; '-' = stdin)");
    app.add_option("--rows", c.rows, "Rows the run processed (build; DuckDB default: cumulative_rows_scanned), or rows to price (estimate, stale)");
    app.add_option("--plan-key", c.plan_key, "Identity of the query plan (build, get)");
    app.add_option("--fixed", c.fixed, "A span node whose time is fixed cost; repeat the flag for several (default: optimization for Polars, none for Chrome)")
        ->take_last()
        ->allow_extra_args(false)
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--fixed-seconds", c.fixed_seconds, "Fixed cost in seconds, overriding the spans (required for a standard-mode DuckDB profile)");
    app.add_option("--host", c.host, "Host identity (default: $PROF_HOST, else the hostname)");
    app.add_option("--engine-version", c.engine_version_flag, "Engine version (build: recorded, default unknown \"\"; stale: the engine now)");
    app.add_option("--selectivity", c.selectivity, "Fraction of rows the query keeps, recorded as given");
    app.add_option("--input-format", c.input_format, "auto, polars-jsonl, polars-csv, chrome or duckdb")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "polars-jsonl", "polars-csv", "chrome", "duckdb"}));
    app.add_option("--factor", c.factor, "stale: the row ratio (either way) beyond which a profile is stale")->capture_default_str();
    app.add_option("--cache", c.cache, "ProfileCache directory (put, get, list; build also stores its profile there)");
    app.add_flag("--stats", c.stats, "build: print span counts, the CPU time of parsing and of the union, and the trace's defects on stderr");
    app.add_flag("--strict", c.strict, "build: exit 65 on empty input, input with no timed spans, or a trace event that was skipped or mismatched (naming its line)");
    prof::cli::add_count_option(app, "--max-bad-lines", c.max_bad_lines,
                                "Skip up to N malformed query_profile lines (counted on stderr)");
    auto* estimate = app.add_subcommand("estimate", "Print fixed + per_row x rows for each query_profile read");
    auto* stale = app.add_subcommand("stale", "Exit 0 if every profile read can price --rows on --engine-version, 1 (reason on stderr) if not");
    auto* fit = app.add_subcommand("fit", "Fit fixed and per-row cost by non-negative least squares over profiles at different row counts");
    auto* put = app.add_subcommand("put", "Store each query_profile read in the --cache directory");
    auto* get = app.add_subcommand("get", "Print the cached profile of --plan-key on --host; exit 1 when there is none");
    auto* list = app.add_subcommand("list", "Print every cached query_profile");
    // The options belong to prof-spans itself and serve every operation (fallthrough), so an
    // operation's own --help points there instead of listing only -h.
    for (auto* s : {estimate, stale, fit, put, get, list}) {
        s->fallthrough();
        s->footer("Options: every option of `prof-spans --help` applies here (--rows, --cache, ...).\n\n" +
                  app.get_footer());
    }
    app.require_subcommand(0, 1);
    prof::cli::parse(app, argc, argv);
    if (!(c.factor > 1.0)) throw prof::usage_error("--factor must be > 1");
    if (c.selectivity && !(*c.selectivity >= 0 && *c.selectivity <= 1))
        throw prof::usage_error(fmt::format("--selectivity must be a fraction from 0 to 1, got {}", *c.selectivity));

    auto need_cache = [&] {
        if (c.cache.empty()) throw prof::usage_error("this operation needs --cache DIR");
        return prof::profile_cache(c.cache);
    };
    if (estimate->parsed()) {
        auto rows = parse_rows(c.rows, true);
        if (!rows) throw prof::usage_error("estimate needs --rows N");
        for (const auto& r : read_profiles(c)) prof::cli::emit_line(prof::format_double(prof::located_estimate(r, *rows)));
        return 0;
    }
    if (stale->parsed()) {
        auto rows = parse_rows(c.rows, false);
        if (!rows) throw prof::usage_error("stale needs --rows N");
        if (!c.engine_version_flag) throw prof::usage_error("stale needs --engine-version V (the engine that will run the query)");
        auto profiles = read_profiles(c);
        if (profiles.empty()) {
            prof::note("stale: no query_profile read, so nothing can price the query");
            return static_cast<int>(prof::exit_code::negative);
        }
        bool any = false;
        for (const auto& [p, source, line] : profiles) {
            if (auto why = prof::stale_reason(p, *rows, *c.engine_version_flag, c.factor)) {
                prof::note(fmt::format("stale: plan '{}' on '{}': {}", p.plan_key, p.host, *why));
                any = true;
            }
        }
        return any ? static_cast<int>(prof::exit_code::negative) : 0;
    }
    if (fit->parsed()) {
        std::vector<prof::query_profile> profiles;
        for (auto& r : read_profiles(c)) {
            prof::located_estimate(r, r.profile.rows);  // each run's own point, named by its line
            profiles.push_back(std::move(r.profile));
        }
        if (profiles.empty()) return 0;
        prof::query_profile p;
        try {
            p = prof::fit_query_profiles(profiles);
        } catch (const prof::field_error& e) {
            throw prof::error(prof::exit_code::data_err, e.what());
        }
        for (const auto& w : p.warnings) prof::warn(w);
        prof::cli::emit_line(prof::write_query_profile(p));
        return 0;
    }
    if (put->parsed()) {
        auto cache = need_cache();
        for (const auto& r : read_profiles(c))
            cache.put("query_profile", prof::query_profile_key(r.profile.plan_key, r.profile.host),
                      prof::write_query_profile(r.profile));
        return 0;
    }
    if (get->parsed()) {
        auto cache = need_cache();
        if (c.plan_key.empty()) throw prof::usage_error("get needs --plan-key K");
        std::string host = prof::host_identity(c.host);
        auto rec = cache.get("query_profile", prof::query_profile_key(c.plan_key, host), prof::query_profile_record_key);
        if (!rec) {
            prof::note(fmt::format("no cached profile for plan '{}' on '{}'", c.plan_key, host));
            return static_cast<int>(prof::exit_code::negative);
        }
        prof::cli::emit_line(*rec);
        return 0;
    }
    if (list->parsed()) {
        for (const auto& e : need_cache().list("query_profile", prof::query_profile_record_key)) prof::cli::emit_line(e.record);
        return 0;
    }
    return build(c);
}

}  // namespace

int main(int argc, char** argv) {
    prof::cli::prefer_heap_reuse();  // spans, B/E events, sort buffers: ~100 MB at 2 M spans
    return prof::cli::run_tool("prof-spans", argc, argv, run);
}
