// prof-aggregate: fit records (any order, any number of files) → one cost profile (build_profile).
#include "prof/core/cli.hpp"
#include "prof/profile/margin_flags.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/harvest/harvest.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/profile/profile.hpp"
#include "prof/records/records.hpp"
#include "prof/profile/sample.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace {

struct config {
    std::vector<std::string> files;
    prof::margin_flags margins;
    std::string format = "json";
    std::uint64_t max_bad_lines = 0;
    bool mixed_params = false;
};

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Fold fit records into one cost profile per run: per model and per family, max of peaks\n"
                 "(x memory margin) for safety and median of times (x time margin) for throughput.",
                 "prof-aggregate"};
    prof::cli::configure(app, "prof-sample --panel panel.jsonl --model theta | prof-measure --run 'fit {ts_id}' "
                              "| prof-aggregate --format table",
                         "reads fit records (and prof-sample's sample record, kept on the profile); writes one profile record (or a table)");
    app.add_option("files", c.files, "Fit record files ('-' = stdin; default stdin)");
    prof::add_margin_options(app, c.margins);
    app.add_option("--format", c.format, "json (one profile record) or table (for people)")
        ->capture_default_str()
        ->check(CLI::IsMember({"json", "table"}));
    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines);
    app.add_flag("--mixed-params", c.mixed_params,
                 "Fold fits of one model measured under different params (params_digest) instead of refusing them");
    prof::cli::parse(app, argc, argv);
    prof::profile_builder builder(c.margins.value());
    std::size_t fits = 0;
    std::optional<prof::json_value> sample;
    prof::bad_line_policy policy(c.max_bad_lines);
    prof::for_each_record(prof::cli::inputs_or_stdin(c.files), policy, [&](simdjson::ondemand::object& obj, const prof::record_place&) {
        if (!prof::is_sample_record(obj)) {
            ++fits;
            return builder.add(prof::read_fit(obj));
        }
        prof::keep_sample_record(sample, prof::read_object_value(obj));
    });
    // No fit, no profile: a sample record alone (its pre-pass measured nothing, e.g. a worker
    // that could not start) must not become a "measured" profile that sizes from defaults.
    if (fits == 0) {
        if (sample) prof::warn("a sample record but no fit record: the pre-pass measured nothing, so no profile");
        return 0;
    }
    auto mixed = builder.mixed_params();
    if (!mixed.empty() && !c.mixed_params)
        throw prof::error(prof::exit_code::data_err,
                          mixed.front() + (mixed.size() > 1 ? fmt::format(" (and {} more models)", mixed.size() - 1) : "") +
                              ": a profile folded from them sizes neither; measure one set of params, or pass --mixed-params");
    prof::profile_provenance pv;
    pv.basis = "measured";
    pv.source = "prepass";
    auto profile = builder.finish(pv);
    profile.sample = std::move(sample);
    for (const auto& w : profile.provenance.warnings) prof::warn(w);
    if (c.format == "table") {
        std::fputs(prof::printable(prof::format_profile_table(profile), true).c_str(), stdout);
    } else {
        prof::cli::emit_line(prof::write_profile(profile));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-aggregate", argc, argv, run); }
