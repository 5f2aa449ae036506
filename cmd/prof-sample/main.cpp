// prof-sample: the gate (should we profile?) and the sample of cells, from a panel of series.
#include "prof/cli.hpp"
#include "prof/diag.hpp"
#include "prof/errors.hpp"
#include "prof/fsutil.hpp"
#include "prof/json_in.hpp"
#include "prof/records.hpp"
#include "prof/sample.hpp"

#include <fmt/format.h>
#include <map>
#include <set>

namespace {

struct config {
    std::string panel = "-";
    std::vector<std::string> models;
    std::uint64_t samples = 8;
    std::string mode = "auto";
    std::uint64_t min_cells = 1000;
    std::uint64_t max_bad_lines = 0;
    std::string params;
};

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Decide whether a run is worth profiling (the gate) and pick the sample of cells:\n"
                 "usable series sorted by (n_obs, ts_id), an even spread that always holds the\n"
                 "shortest and the longest, every model on every sampled series.",
                 "prof-sample"};
    prof::cli::configure(app, "prof-sample --panel panel.jsonl --model theta:statistical --model sarimax:statistical "
                              "| prof-measure --worker 'python3 worker.py' --ready | prof-aggregate",
                         "reads panel lines {ts_id, n_obs, ...}; writes cell records");
    app.add_option("--panel", c.panel, "Panel file of {ts_id, n_obs} lines ('-' = stdin)");
    app.add_option("--model", c.models, "A model to run, NAME or NAME:FAMILY (repeatable; family defaults to NAME)")
        ->required()
        ->allow_extra_args(false);
    prof::cli::add_count_option(app, "--samples", c.samples, "Series to sample, K (>= 1)");
    app.add_option("--mode", c.mode, "Gate: off, always or auto (sample only when cells >= --min-cells)")
        ->capture_default_str();
    prof::cli::add_count_option(app, "--min-cells", c.min_cells, "Cells (usable series x models) at which auto samples");
    prof::cli::add_count_option(app, "--max-bad-lines", c.max_bad_lines,
                                "Skip up to N malformed panel lines (counted on stderr)");
    app.add_option("--params", c.params, "JSON file of model → tuned params, carried on each of its cells");
    prof::cli::parse(app, argc, argv);

    prof::profile_mode mode = prof::parse_profile_mode(c.mode, "--mode");
    if (c.samples == 0) throw prof::usage_error("--samples must be at least 1");
    std::vector<prof::model_spec> models;
    std::set<std::string> seen_models;
    for (const auto& m : c.models) {
        auto spec = prof::parse_model_spec(m);
        if (!seen_models.insert(spec.model_type).second)
            throw prof::usage_error(fmt::format("--model: '{}' is named twice", spec.model_type));
        models.push_back(spec);
    }

    std::vector<prof::series_ref> usable;
    std::map<std::string, std::size_t> first_line;
    std::size_t unusable = 0;
    prof::line_reader in(prof::open_input(c.panel));
    auto stats = prof::for_each_object(in, c.max_bad_lines, [&](simdjson::ondemand::object& obj, std::size_t line) {
        std::optional<std::string> ts_id;
        std::optional<std::uint64_t> n_obs;
        for (auto field : obj) {
            std::string_view k = field.unescaped_key();
            if (k == "ts_id") ts_id = prof::require_string(field.value(), k);
            else if (k == "n_obs") n_obs = prof::read_count(field.value(), k);
        }
        if (!ts_id) prof::missing_field("ts_id");
        auto [it, fresh] = first_line.emplace(*ts_id, line);
        if (!fresh) throw prof::field_error(fmt::format("field 'ts_id': \"{}\" already given on line {}", *ts_id, it->second));
        if (!n_obs || *n_obs == 0) {
            ++unusable;
            return;
        }
        usable.push_back({*ts_id, *n_obs});
    });
    if (stats.bad_lines) prof::warn(fmt::format("skipped {} malformed panel line(s)", stats.bad_lines));
    if (unusable) prof::note(fmt::format("{} series without observations (n_obs null, missing or 0) are not usable", unusable));

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
    std::map<std::string, std::string> params;
    if (!c.params.empty()) {
        params = prof::parse_params_file(prof::read_file(c.params), c.params);
        for (const auto& [model, p] : params)
            if (!seen_models.count(model)) prof::warn(fmt::format("--params: '{}' is not a --model; its params are not used", model));
    }
    for (auto& cell : prof::sample_cells(prof::select_sample(std::move(usable), c.samples), models)) {
        if (auto p = params.find(cell.model_type); p != params.end()) cell.params = p->second;
        prof::cli::emit_line(prof::write_cell(cell));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-sample", argc, argv, run); }
