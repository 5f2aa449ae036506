// prof-sample: the gate (should we profile?) and the sample of cells, from a panel of series.
#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/records/records.hpp"
#include "prof/profile/sample.hpp"
#include "prof/profile/signature.hpp"

#include <fmt/format.h>
#include <map>
#include <set>

namespace {

struct config {
    std::string panel = "-";
    std::vector<std::string> models;
    std::uint64_t samples = 8;
    std::string spread = "mixed";
    std::string mode = "auto";
    std::uint64_t min_cells = 1000;
    std::uint64_t max_bad_lines = 0;
    std::string signature_out;
    std::vector<std::string> signature_keys;
    std::string params;
};

void add_options(CLI::App& app, config& c) {
    prof::cli::configure(app, "prof-sample --panel panel.jsonl --model theta:statistical --model sarimax:statistical "
                              "| prof-measure --worker 'python3 worker.py' --ready | prof-aggregate",
                         "reads panel lines {ts_id, n_obs, ...}; writes one sample record, then cell records");
    app.add_option("--panel", c.panel, "Panel file of {ts_id, n_obs} lines ('-' = stdin)");
    app.add_option("--model", c.models, "A model to run, NAME or NAME:FAMILY (repeatable; family defaults to NAME)")
        ->required()
        ->allow_extra_args(false);
    prof::cli::add_count_option(app, "--samples", c.samples, "Series to sample, K (>= 1)");
    app.add_option("--spread", c.spread, "How the K series spread over the lengths: mixed (half by rank, half "
                                         "splitting the widest gaps in ln n_obs), rank or log")
        ->capture_default_str();
    app.add_option("--mode", c.mode, "Gate: off, always or auto (sample only when cells >= --min-cells)")
        ->capture_default_str();
    prof::cli::add_count_option(app, "--min-cells", c.min_cells, "Cells (usable series x models) at which auto samples");
    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines, "panel lines");
    app.add_option("--signature-out", c.signature_out, "Write the panel's data signature (for prof-resolve) to FILE")
        ->type_name("FILE");
    app.add_option("--signature-key", c.signature_keys, "K=V: a key of your own in the signature (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--params", c.params, "JSON file of model → tuned params, carried on each of its cells");
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Decide whether a run is worth profiling (the gate) and pick the sample of cells: half\n"
                 "of K series by an even spread over the ranks of n_obs (the shortest and the longest\n"
                 "in), the rest splitting the widest gaps in ln n_obs; every model on every series.",
                 "prof-sample"};
    add_options(app, c);
    prof::cli::parse(app, argc, argv);
    std::vector<std::pair<std::string, prof::json_value>> signature_keys;
    for (const auto& k : c.signature_keys) signature_keys.push_back(prof::parse_signature_key(k));
    if (!signature_keys.empty() && c.signature_out.empty())
        throw prof::usage_error("--signature-key needs --signature-out FILE");

    prof::profile_mode mode = prof::parse_profile_mode(c.mode, "--mode");
    if (c.samples == 0) throw prof::usage_error("--samples must be at least 1");
    prof::spread_rule spread = prof::parse_spread_rule(c.spread);
    std::vector<prof::model_spec> models;
    std::set<std::string> seen_models;
    for (const auto& m : c.models) {
        auto spec = prof::parse_model_spec(m);
        if (!seen_models.insert(spec.model_type).second)
            throw prof::usage_error(fmt::format("--model: '{}' is named twice", spec.model_type));
        models.push_back(spec);
    }
    // The escape hatch consults nothing: --mode off reads no panel and no params (unless a
    // signature of the panel is asked for).
    if (mode == prof::profile_mode::off && c.signature_out.empty()) {
        prof::note(prof::should_profile(mode, 0, c.min_cells).reason);
        return 0;
    }
    // Read before anything is written: a bad params file leaves no partial output.
    std::map<std::string, std::string> params;
    if (!c.params.empty()) {
        prof::cli::check_one_stdin({{"--panel", c.panel}, {"--params", c.params}});
        auto in = prof::read_whole_input(c.params);
        params = prof::parse_params_file(in.text, in.name);
        for (const auto& [model, p] : params)
            if (!seen_models.count(model)) prof::warn(fmt::format("--params: '{}' is not a --model; its params are not used", model));
    }

    prof::panel panel = prof::read_panel(c.panel, prof::bad_line_policy(c.max_bad_lines, "panel line"));
    if (panel.unusable)
        prof::note(fmt::format("{} series without observations (n_obs null, missing or 0) are not usable", panel.unusable));
    std::vector<prof::series_ref>& usable = panel.usable;

    // The signature describes the run's data whether or not the gate samples it.
    if (!c.signature_out.empty())
        prof::write_file_atomic(c.signature_out, prof::data_signature(usable, signature_keys).dump() + "\n");
    std::uint64_t cells = static_cast<std::uint64_t>(usable.size()) * models.size();
    auto gate = prof::should_profile(mode, cells, c.min_cells);
    if (!gate.sample) {
        prof::note(gate.reason);
        return 0;
    }
    if (usable.empty()) {
        prof::note("no usable series in the panel: nothing sampled");
        return 0;
    }
    if (c.samples == 1)
        prof::warn("--samples 1 is a smoke test, not a sizing: one sample has no spread (no longest series, no "
                   "curve in n_obs); use the default 8 or more to size a run");
    // The sample record first: the run this sample stands for (its lengths), which the profile
    // built from these cells carries to prof-plan.
    prof::sample_record rec;
    rec.rule = spread;
    rec.samples = c.samples;
    rec.n_unusable = panel.unusable;
    rec.models = models;
    std::vector<std::uint64_t> lengths;
    for (const auto& s : usable) lengths.push_back(s.n_obs);
    rec.lengths = prof::distribution_of_lengths(lengths);
    auto picked = prof::select_sample(std::move(usable), c.samples, spread);
    for (const auto& s : picked) rec.ts_ids.push_back(s.ts_id);
    prof::cli::emit_line(prof::write_sample(rec));
    for (auto& cell : prof::sample_cells(picked, models)) {
        if (auto p = params.find(cell.model_type); p != params.end()) cell.params = p->second;
        prof::cli::emit_line(prof::write_cell(cell));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-sample", argc, argv, run); }
