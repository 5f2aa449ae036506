// prof-harvest: a completed run's warehouse rows (files, .gz, stdin, http(s) URLs) → one
// profile per run_id through build_profile, optionally stored in a run registry.
#include "prof/core/cli.hpp"
#include "prof/profile/margin_flags.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/harvest/harvest.hpp"
#include "prof/harvest/aggregates.hpp"
#include "prof/io/http.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/resolve/registry.hpp"
#include "prof/measure/spawn.hpp"
#include "prof/core/units.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <set>

namespace {

struct config {
    std::vector<std::string> inputs;
    std::string run_id, family_map, signature, signature_map, registry, format = "json";
    bool force = false, quiet = false, from_aggregates = false;
    std::string emit_sql, sql_table = "forecast_metadata";
    prof::margin_flags margins;
    std::uint64_t max_bad_lines = 0;
    prof::cli::http_flags http;
    unsigned jobs = prof::allowed_cpu_count();
};

void add_options(CLI::App& app, config& c) {
    app.description("Turn a completed run's forecast_metadata rows into its cost profile (one per run_id), the\n"
                 "same build_profile as prof-aggregate: \"size this run like run X\" becomes a query.");
    prof::cli::configure(app,
                         "psql -AtX -c \"SELECT row_to_json(t) FROM forecast_metadata t WHERE run_id = 'nightly-42'\" "
                         "| prof-harvest --family-map families.json --registry /var/lib/prof/registry",
                         "reads forecast_metadata rows (JSON Lines); writes profile records");
    app.add_option("inputs", c.inputs, "Row files, '-' (stdin), .gz files or http(s):// URLs (default stdin)");
    app.add_option("--run-id", c.run_id, "Keep only the rows of this run");
    app.add_option("--family-map", c.family_map, "JSON object model -> family, for rows without a family");
    app.add_option("--signature", c.signature, "JSON object file: the data signature of the one run harvested");
    app.add_option("--signature-map", c.signature_map, "JSON object file: run_id -> that run's data signature");
    prof::cli::add_choice_option(app, "--format", c.format, "json (profile records) or table (for people)", {"json", "table"});
    app.add_option("--registry", c.registry, "Also store each profile in this registry directory");
    app.add_flag("--force", c.force, "Replace a run already in the registry (default: skip it with a note)");
    prof::add_margin_options(app, c.margins);
    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines);
    prof::cli::add_http_options(app, c.http);
    app.add_option("--jobs,-j", c.jobs, "Threads parsing rows (default: the CPUs this process may use)")
        ->check(CLI::Range(1u, 256u));
    prof::cli::add_quiet_flag(app, c.quiet);
    app.add_option("--emit-sql", c.emit_sql, "Print the query that computes the aggregates in the warehouse, and exit")
        ->check(CLI::IsMember({"postgres", "duckdb"}));
    app.add_option("--sql-table", c.sql_table, "The table (or view) the rows come from: the query reads it, hints name it")
        ->capture_default_str();
    app.add_flag("--from-aggregates", c.from_aggregates, "Inputs are that query's result rows, not table rows");
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"", "prof-harvest"};
    add_options(app, c);
    prof::cli::parse(app, argc, argv);
    if (!c.registry.empty()) prof::check_registry_directory(c.registry);

    prof::harvest_config hc;
    hc.margin = c.margins.value();
    hc.max_bad_lines = c.max_bad_lines;
    if (!c.run_id.empty()) hc.run_id = c.run_id;
    prof::sql_table_name(c.sql_table);  // a bad name is a usage error (64) whatever the mode
    hc.table = c.sql_table;
    prof::http_options http = prof::http_options_from(c.http);
    std::vector<std::string> rows = c.emit_sql.empty() ? prof::cli::inputs_or_stdin(c.inputs) : std::vector<std::string>{};
    prof::read_harvest_option_files({c.family_map, c.signature, c.signature_map}, rows, &http, hc);
    if (!c.emit_sql.empty()) {
        std::fputs(prof::harvest_aggregates_sql(prof::parse_sql_dialect(c.emit_sql), hc, hc.table).c_str(), stdout);
        return 0;
    }
    prof::aggregate_reader aggregates(hc);
    prof::harvester h(hc);
    {
        prof::cli::progress_meter progress(prof::cli::show_progress(c.quiet));
        for (const auto& in : rows) {
            if (c.from_aggregates) aggregates.read(prof::open_input(in, &http));
            else h.read(prof::open_input(in, &http), c.jobs, progress.callback());
        }
    }
    const std::uint64_t bad_lines = c.from_aggregates ? aggregates.bad_lines() : h.bad_lines();
    prof::warn_skipped(prof::bad_line_policy(), bad_lines);

    auto profiles = c.from_aggregates ? aggregates.finish() : h.finish();
    if (profiles.empty() && hc.run_id) prof::warn(fmt::format("no rows of run '{}' in the input", *hc.run_id));
    std::set<std::string> warned;
    for (const auto& p : profiles) {
        for (const auto& w : p.provenance.warnings)
            if (warned.insert(w).second) prof::warn(w);
        if (!c.registry.empty()) {
            auto r = prof::registry_store(c.registry, p, c.force);
            if (r == prof::registry_write::skipped_exists)
                prof::note(fmt::format("run '{}' is already in registry {}; not replaced (--force replaces it)",
                                       *p.provenance.run_id, c.registry));
        }
        std::string table = c.format == "table" ? prof::printable(prof::format_profile_table(p), true) : "";
        if (c.format == "table") std::fputs(((&p == &profiles.front() ? "" : "\n") + table).c_str(), stdout);
        else prof::cli::emit_line(prof::write_profile(p));
    }
    if (!c.quiet) prof::note(prof::harvest_summary(profiles, bad_lines));
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-harvest", argc, argv, run); }
