// prof-diff: two cost profiles compared per model and family, with a regression gate for CI.
#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/profile/diff.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/http.hpp"
#include "prof/resolve/resolve.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace {

struct config {
    std::string old_spec, new_spec, registry, format = "table", max_slower, max_bigger, confidence = "80%";
};

// A side: "run:ID" from the registry, else a file or "-" holding exactly one profile.
prof::compute_profile load_side(const config& c, const std::string& spec) {
    if (spec.rfind("run:", 0) == 0) {
        if (c.registry.empty())
            throw prof::usage_error(fmt::format("{}: a run id needs --registry DIR|URL to read it from", spec));
        std::string run_id = spec.substr(4);
        auto io = prof::is_http_url(c.registry)
                      ? prof::registry_loaders(prof::http_fetch(c.registry), prof::redact_url(c.registry))
                      : prof::registry_loaders(prof::directory_fetch(c.registry), c.registry);
        try {
            return io.load_run(run_id);
        } catch (const prof::no_input_error&) {
            // Say what the registry does hold rather than which file was missing.
            std::string held;
            std::size_t n = 0;
            for (const auto& e : io.load_index().entries)
                if (n++ < 10) held += (held.empty() ? "" : ", ") + e.run_id;
            if (n > 10) held += fmt::format(", ... ({} runs)", n);
            throw prof::no_input_error(fmt::format("registry {} has no run '{}' (it holds: {})", c.registry, run_id,
                                                   held.empty() ? "no runs" : held));
        }
    }
    return prof::read_single_profile(spec);
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Compare two cost profiles per model and family: median wall and CPU, process RSS, GPU peak\n"
                 "and cores of each model (raw), and the sized slots of each family. With --max-slower or\n"
                 "--max-bigger it is a regression gate: exit 1 when a model got slower or bigger than allowed.",
                 "prof-diff"};
    prof::cli::configure(app,
                         "prof-diff --registry reg/ run:nightly-1128 run:nightly-1129 --max-slower 20% --max-bigger 10%",
                         "reads two profile records (files, '-', or run:ID from a registry); writes one diff "
                         "record (--format json) or a table");
    app.add_option("old", c.old_spec, "The baseline profile: FILE, '-' or run:ID")->required();
    app.add_option("new", c.new_spec, "The profile to check: FILE, '-' or run:ID")->required();
    app.add_option("--registry", c.registry, "Registry (directory or http(s) URL) that run:ID sides are read from");
    app.add_option("--format", c.format, "table (for people) or json (one diff record)")
        ->capture_default_str()
        ->check(CLI::IsMember({"json", "table"}));
    app.add_option("--max-slower", c.max_slower, "Fail (exit 1) when a model's median or curve wall grew by more than R (0.2 or 20%)")
        ->type_name("R");
    app.add_option("--max-bigger", c.max_bigger,
                   "Fail (exit 1) when a model's process RSS, GPU peak or cores grew by more than R")
        ->type_name("R");
    prof::diff_gate gate;
    app.add_option("--confidence", c.confidence,
                   "Share of each side's resampled fits a time interval spans (80% = P10 to P90); a slower axis "
                   "fails only when NEW's low end is above OLD's high end")
        ->type_name("SHARE")
        ->capture_default_str();
    prof::cli::add_count_option(app, "--resamples", gate.resamples,
                                "Resamples of each model's fits the time intervals are read from (0: none, the ratio "
                                "alone; at most 10000)")
        ->capture_default_str();
    prof::cli::add_count_option(app, "--seed", gate.seed, "Seed of the resamples (the same seed, the same intervals)")
        ->capture_default_str();
    prof::cli::parse(app, argc, argv);
    if (c.old_spec == "-" && c.new_spec == "-") throw prof::usage_error("only one side can be read from stdin ('-')");
    gate.confidence = prof::parse_confidence(c.confidence, "--confidence");
    // Given means parsed: an empty value (an unset "$VAR" in CI) is an error, never "no gate".
    if (app.count("--max-slower")) gate.max_slower = prof::parse_gate_ratio(c.max_slower, "--max-slower");
    if (app.count("--max-bigger")) gate.max_bigger = prof::parse_gate_ratio(c.max_bigger, "--max-bigger");

    auto old_profile = load_side(c, c.old_spec);
    auto new_profile = load_side(c, c.new_spec);
    auto d = prof::diff_profiles(old_profile, new_profile, gate, c.old_spec == "-" ? "<stdin>" : c.old_spec,
                                 c.new_spec == "-" ? "<stdin>" : c.new_spec);
    if (c.format == "json") prof::cli::emit_line(prof::write_diff(d));
    else std::fputs(prof::printable(prof::format_diff_table(d), true).c_str(), stdout);
    return d.passed() ? 0 : static_cast<int>(prof::exit_code::negative);
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-diff", argc, argv, run); }
