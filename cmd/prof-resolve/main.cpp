// prof-resolve: which evidence this run sizes from (a pinned run, the newest matching harvest,
// the baseline, or nothing), printed as one profile stamped with where it came from.
#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/http.hpp"
#include "prof/resolve/registry.hpp"
#include "prof/resolve/resolve.hpp"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

namespace {

struct config {
    std::string source = "auto";
    std::string mode = "auto";
    std::string registry;
    std::string signature;
    std::string baseline;
    bool force = false;
    bool check = false;
    bool strict = false;
    std::string format = "json";
};

std::string self_path(const char* argv0) {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(argv0) : p.string();
}

prof::evidence_loaders make_loaders(const config& c, const char* argv0) {
    prof::evidence_loaders io;
    if (!c.registry.empty()) {
        if (prof::is_http_url(c.registry))
            io = prof::registry_loaders(prof::http_fetch(c.registry), prof::redact_url(c.registry));
        else {
            io = prof::registry_loaders(prof::directory_fetch(c.registry), c.registry);
            io.load_index = prof::with_unindexed_runs(std::move(io.load_index), c.registry);
        }
    }
    if (c.baseline != "none") {
        if (c.baseline.empty()) {
            io.load_baseline = prof::installed_baseline_loader(self_path(argv0));
        } else {
            std::string path = c.baseline;
            io.load_baseline = [path] { return prof::load_baseline_file(path); };
        }
    }
    return io;
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Decide which evidence this run sizes from: a pinned run's harvest, the newest harvest whose\n"
                 "data signature matches, or the baseline shipped with prof; print it as one profile whose\n"
                 "provenance says where it came from. Never measures; refuses a pin that has drifted (78).",
                 "prof-resolve"};
    prof::cli::configure(app, "prof-resolve --registry reg/ --signature sig.json | prof-plan --models theta,sarimax --series 85 --node-cores 16 --node-memory 64GiB --deadline 2h",
                         "reads a registry (index.jsonl, runs/*.json), a baseline profile and a signature; "
                         "writes one profile record");
    app.add_option("--source", c.source, "auto, none, baseline, or a RUN_ID to pin")
        ->type_name("SOURCE")
        ->capture_default_str();
    app.add_option("--mode", c.mode, "off (no evidence), always or auto (walk the chain)")
        ->type_name("MODE")
        ->capture_default_str()
        ->check(CLI::IsMember({"off", "always", "auto"}));
    app.add_option("--registry", c.registry, "Registry directory or http(s) URL (prof-harvest's layout)")
        ->type_name("DIR|URL");
    app.add_option("--signature", c.signature, "This run's data signature: a file holding one JSON object")
        ->type_name("FILE");
    app.add_option("--baseline", c.baseline, "Baseline profile FILE (.gz or not) or URL, or none (default: the installed one)")
        ->type_name("FILE|none");
    app.add_flag("--force", c.force, "Use a pinned run even when its signature differs (drift as warnings)");
    app.add_flag("--strict", c.strict,
                 "Exit 65 instead of falling back: a pinned run missing from a readable registry, or a result "
                 "with any axis assumed");
    app.add_flag("--check", c.check, "Only check a pinned source for drift: no output, exit 0 or 78");
    app.add_option("--format", c.format, "json (one profile record) or table (for people)")
        ->capture_default_str()
        ->check(CLI::IsMember({"json", "table"}));
    prof::cli::parse(app, argc, argv);
    if (c.source.empty()) throw prof::usage_error("--source: expected auto, none, baseline or a run id, found ''");
    for (const char* flag : {"--registry", "--signature", "--baseline"})
        if (app.count(flag) && app.get_option(flag)->as<std::string>().empty())
            throw prof::usage_error(fmt::format("{}: expected a value, found ''", flag));

    prof::cli::check_one_stdin({{"--signature", c.signature}, {"--baseline", c.baseline}});
    prof::resolve_request req;
    req.source = c.source;
    req.mode = c.mode;
    req.force = c.force;
    req.strict = c.strict;
    // The escape hatch consults nothing: no evidence is walked, so no signature is read.
    const bool escape = c.source == "none" || c.mode == "off";
    if (!c.signature.empty() && !escape) req.signature = prof::read_signature_file(c.signature);
    prof::evidence_loaders io = make_loaders(c, argv[0]);

    if (c.check) {
        prof::pin_check pc = prof::check_pinned_source(req, io);
        for (const auto& w : pc.warnings) prof::warn(w);
        if (c.strict && pc.missing_from_index)
            throw prof::error(prof::exit_code::data_err,
                              fmt::format("--strict: pinned run '{}' is not in the registry", pc.run_id));
        if (pc.status == prof::pin_check::state::drifted) {
            if (!c.force) throw prof::drift_error(pc.drift_message);
            for (const auto& w : prof::forced_drift_warnings(pc)) prof::warn(w);
        }
        return 0;
    }
    prof::compute_profile p = prof::resolve_profile_source(req, io);
    for (const auto& w : p.provenance.warnings) prof::warn(w);
    if (c.format == "table") std::fputs(prof::printable(prof::format_profile_table(p), true).c_str(), stdout);
    else prof::cli::emit_line(prof::write_profile(p));
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-resolve", argc, argv, run); }
