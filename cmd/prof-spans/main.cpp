// prof-spans: one profiled query execution (Polars, Chrome trace, DuckDB) → a query_profile
// (fixed + per-row host cost); estimate, stale, fit, and the ProfileCache (put/get/list).
#include "prof/io/cache.hpp"
#include "prof/core/cli.hpp"
#include "prof/core/cpus.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/measure/host.hpp"
#include "prof/io/json_out.hpp"
#include "prof/spans/spans.hpp"
#include "prof/spans/build.hpp"
#include "prof/spans/operations.hpp"

#include <fmt/format.h>

namespace {

struct config {
    std::vector<std::string> files;
    std::string rows, plan_key, input_format = "auto", cache;
    std::vector<std::string> fixed;
    std::optional<double> fixed_seconds, selectivity;
    std::optional<std::string> host, engine_version_flag;
    double factor = 10.0;
    std::uint64_t max_bad_lines = 0;
    std::optional<std::uint64_t> jobs;
    bool stats = false, strict = false;
};

std::vector<prof::located_query_profile> read_profiles(const config& c) {
    return prof::read_query_profile_lines(prof::cli::inputs_or_stdin(c.files), c.max_bad_lines);
}

int build(const config& c) {
    if (c.files.size() > 1) throw prof::usage_error("build reads one profiled run: give at most one FILE");
    auto options = [&] {  // called once the input is known not to be empty
        if (c.plan_key.empty()) throw prof::usage_error("--plan-key K is required: the cache key of the query plan");
        if (!c.fixed.empty() && c.fixed_seconds) throw prof::usage_error("--fixed and --fixed-seconds exclude each other");
        if (c.fixed_seconds && !(*c.fixed_seconds >= 0)) throw prof::usage_error("--fixed-seconds must be >= 0");
        return prof::run_input{{c.plan_key, prof::host_identity(c.host), prof::rows_option(c.rows, false), c.fixed,
                                c.fixed_seconds, c.selectivity, c.engine_version_flag.value_or("")},
                               prof::span_format::chrome,
                               c.jobs ? static_cast<unsigned>(std::min<std::uint64_t>(*c.jobs, 1024)) : prof::allowed_cpu_count(),
                               c.strict, c.stats};
    };
    auto p = prof::build_run_profile(c.files.empty() ? "-" : c.files[0], c.input_format, c.strict, options);
    if (!p) return 0;
    for (const auto& w : p->warnings) prof::warn(w);
    std::string line = prof::write_query_profile(*p);
    if (!c.cache.empty()) prof::profile_cache(c.cache).put("query_profile", prof::query_profile_key(p->plan_key, p->host), line);
    prof::cli::emit_line(line);
    return 0;
}

// The options serve every operation (fallthrough): prof-spans --help lists them all.
void declare(CLI::App& app, config& c) {
    prof::cli::configure(app, "prof-spans --rows 1000 --plan-key q1 --engine-version 1.5.6 run.json | prof-spans estimate --rows 100000",
                         "reads engine spans or query_profile lines; writes query_profile lines (estimate: one number a line)");
    app.fallthrough();
    app.add_option("files", c.files, "Input (build: one profiled run; other operations: query_profile lines; '-' = stdin)");
    app.add_option("--rows", c.rows, "Rows the run processed (build; DuckDB default: cumulative_rows_scanned), or rows to price (estimate, stale)");
    app.add_option("--plan-key", c.plan_key, "Identity of the query plan (build, get)");
    app.add_option("--fixed", c.fixed, "A span node whose time is fixed cost; repeat the flag for several (default: optimization for Polars, none for Chrome)")
        ->take_last()->allow_extra_args(false)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--fixed-seconds", c.fixed_seconds, "Fixed cost in seconds, overriding the spans (required for a standard-mode DuckDB profile)");
    app.add_option("--host", c.host, "Host identity (default: $PROF_HOST, else the hostname)");
    app.add_option("--engine-version", c.engine_version_flag, "Engine version (build: recorded, default unknown \"\"; stale: the engine now)");
    app.add_option("--selectivity", c.selectivity, "Fraction of rows the query keeps, recorded as given");
    prof::cli::add_choice_option(app, "--input-format", c.input_format, "auto, polars-jsonl, polars-csv, chrome or duckdb",
                                 {"auto", "polars-jsonl", "polars-csv", "chrome", "duckdb"});
    app.add_option("--factor", c.factor, "stale: the row ratio (either way) beyond which a profile is stale")->capture_default_str();
    app.add_option("--cache", c.cache, "ProfileCache directory (put, get, list; build also stores its profile there)");
    prof::cli::add_count_option(app, "--jobs", c.jobs,
                                "build: threads that read a Chrome trace's events (default: the cores this process may use)");
    app.add_flag("--stats", c.stats, "build: print span counts, the CPU time of parsing and of the union, and the trace's defects on stderr");
    app.add_flag("--strict", c.strict, "build: exit 65 on empty input, input with no timed spans, or a trace event that was skipped or mismatched (naming its line)");
    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines, "query_profile lines");
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Turn one profiled query execution into a query_profile: fixed seconds plus per-row seconds,\n"
                 "so a scheduler can price the query at any row count. Reads Polars profile rows (JSON Lines or\n"
                 "CSV: node,start,end in microseconds), a Chrome trace (X and B/E spans) or a DuckDB JSON\n"
                 "profile (detailed mode). Operations: build (default), estimate, stale, fit, put, get, list.",
                 "prof-spans"};
    declare(app, c);
    auto* estimate = app.add_subcommand("estimate", "Print fixed + per_row x rows for each query_profile read");
    auto* stale = app.add_subcommand("stale", "Exit 0 if every profile read can price --rows on --engine-version, 1 (reason on stderr) if not");
    auto* fit = app.add_subcommand("fit", "Fit fixed and per-row cost by non-negative least squares over profiles at different row counts");
    auto* put = app.add_subcommand("put", "Store each query_profile read in the --cache directory");
    auto* get = app.add_subcommand("get", "Print the cached profile of --plan-key on --host; exit 1 when there is none");
    auto* list = app.add_subcommand("list", "Print every cached query_profile");
    for (auto* s : {estimate, stale, fit, put, get, list}) {  // an operation's --help points to the options
        s->fallthrough();
        s->footer("Options: every option of `prof-spans --help` applies here (--rows, --cache, ...).\n\n" + app.get_footer());
    }
    app.require_subcommand(0, 1);
    prof::cli::parse(app, argc, argv);
    if (!(c.factor > 1.0)) throw prof::usage_error("--factor must be > 1");
    if (c.selectivity && !(*c.selectivity >= 0 && *c.selectivity <= 1))
        throw prof::usage_error(fmt::format("--selectivity must be a fraction from 0 to 1, got {}", *c.selectivity));
    if (c.jobs && *c.jobs == 0) throw prof::usage_error("--jobs must be at least 1");
    auto need_cache = [&] {
        if (c.cache.empty()) throw prof::usage_error("this operation needs --cache DIR");
        return prof::profile_cache(c.cache);
    };
    if (estimate->parsed()) {
        auto rows = prof::rows_option(c.rows, true);
        if (!rows) throw prof::usage_error("estimate needs --rows N");
        prof::estimate_lines(read_profiles(c), *rows, [](const std::string& line) { prof::cli::emit_line(line); });
        return 0;
    }
    if (stale->parsed()) {
        auto rows = prof::rows_option(c.rows, false);
        if (!rows) throw prof::usage_error("stale needs --rows N");
        if (!c.engine_version_flag) throw prof::usage_error("stale needs --engine-version V (the engine that will run the query)");
        return prof::stale_verdict(read_profiles(c), *rows, *c.engine_version_flag, c.factor);
    }
    if (fit->parsed()) {
        prof::cli::emit_line(prof::write_query_profile(prof::fit_located_profiles(read_profiles(c))));
        return 0;
    }
    if (put->parsed()) {
        auto cache = need_cache();
        for (const auto& r : read_profiles(c))
            cache.put("query_profile", prof::query_profile_key(r.profile.plan_key, r.profile.host), prof::write_query_profile(r.profile));
        return 0;
    }
    if (get->parsed()) {
        auto cache = need_cache();
        if (c.plan_key.empty()) throw prof::usage_error("get needs --plan-key K");
        auto rec = prof::cached_query_profile(cache, c.plan_key, prof::host_identity(c.host));  // a miss is noted
        if (rec) prof::cli::emit_line(*rec);
        return rec ? 0 : static_cast<int>(prof::exit_code::negative);
    }
    if (list->parsed()) {
        for (const auto& e : need_cache().list("query_profile", prof::query_profile_record_key)) prof::cli::emit_line(e.record);
        return 0;
    }
    return build(c);
}

}  // namespace

int main(int argc, char** argv) {
    prof::cli::prefer_heap_reuse();  // spans, B/E events, sort buffers: large arrays filled and freed in turn
    return prof::cli::run_tool("prof-spans", argc, argv, run);
}
