// prof-plan: one profile + the size of the run → the fleet shape (plan record, Spark, Ray, k8s).
#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/plan/plan.hpp"
#include "prof/plan/plan_cli.hpp"
#include "prof/profile/sample.hpp"
#include "prof/core/units.hpp"

#include <fmt/format.h>
#include <optional>

namespace {

struct config {
    std::string file = "-", node_memory, node_gpu_memory, deadline;
    std::string default_memory = "4GiB", default_wall = "60s", default_gpu_memory;
    std::string target = "json", layout, max_container_memory;
    std::string panel, on_unmeasured = "fail";
    prof::scheduler_flags scheduler;
    std::vector<std::string> models;
    std::uint64_t max_bad_lines = 0;
    std::optional<std::uint64_t> nodes;
    prof::plan_request rq;
    prof::render_options ro;
};

// The profile on the input, or nothing (a skipped gate, an empty pre-pass): the static-config
// case. More than one record is refused: a plan sizes one profile.
std::optional<prof::compute_profile> read_one_profile(const std::string& path) {
    std::optional<prof::compute_profile> profile;
    prof::for_each_record({path}, prof::bad_line_policy(), [&](simdjson::ondemand::object& obj, const prof::record_place&) {
        if (profile)
            throw prof::field_error("a second record: prof-plan sizes one profile (pick one with prof-resolve)");
        profile = prof::read_profile(obj);
    });
    return profile;
}

void add_options(CLI::App& app, config& c) {
    prof::cli::configure(app,
                         "prof-aggregate fits.jsonl | prof-plan --series 5000 --node-cores 16 --node-memory 64GiB "
                         "--deadline 1h --target spark",
                         "reads one profile record (or nothing); writes one plan record, or a rendering");
    app.add_option("file", c.file, "Profile file ('-' = stdin; default stdin)");
    prof::cli::add_count_option(app, "--series", c.rq.series,
                                "Series in the run (every model runs on every series; default: --panel's usable series)")
        ->default_str("");
    app.add_option("--panel", c.panel,
                   "The run's panel of {ts_id, n_obs} lines (prof-sample's input): prices every series by its length")
        ->allow_extra_args(false);
    app.add_option("--models", c.models,
                   "The run's models, NAME or NAME:FAMILY, comma-separated or repeated (default: the profile's)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("--on-unmeasured", c.on_unmeasured,
                   "A model with no ok fit: fail (exit 65), defaults (size it from --default-*) or skip it")
        ->capture_default_str();
    app.add_flag("--strict", c.rq.strict,
                 "Exit 65 when there is no profile, any axis of the plan is assumed, or a family or the totals cannot meet --deadline");

    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines, "--panel lines");
    prof::cli::add_count_option(app, "--node-cores", c.rq.node.cores, "Cores one node may hand out (allocatable)")
        ->required()
        ->default_str("");
    app.add_option("--node-memory", c.node_memory, "Memory one node may hand out (allocatable, e.g. 60GiB)")->required();
    prof::cli::add_count_option(app, "--node-gpus", c.rq.node.gpus, "GPUs per node");
    app.add_option("--node-gpu-memory", c.node_gpu_memory, "Memory of one GPU device (e.g. 80GiB)");
    auto* deadline = app.add_option("--deadline", c.deadline, "Finish within this duration: plan the node count");
    auto* nodes = prof::cli::add_count_option(app, "--nodes", c.nodes, "Run on this many nodes: plan the makespan of whole cells");
    deadline->excludes(nodes);
    app.add_option("--target", c.target, "json (plan record), spark, ray, k8s (container resources), k8s-job "
                                         "(an Indexed Job per family) or table")
        ->capture_default_str()
        ->check(CLI::IsMember({"json", "spark", "ray", "k8s", "k8s-job", "table"}));
    app.add_option("--layout", c.layout, "ray, spark or k8s: how json and table deploy the slots (default: the target's; ray)")
        ->check(CLI::IsMember({"ray", "spark", "k8s"}));
    app.add_option("--max-container-memory", c.max_container_memory,
                   "Largest container one executor or pod may ask (YARN maximum allocation, a LimitRange max)");
    prof::cli::add_count_option(app, "--max-pods-per-node", c.rq.limits.max_pods_per_node,
                                "Pods one node runs at most (kubelet maxPods)");
    prof::add_scheduler_options(app, c.scheduler, c.rq, c.ro);
    prof::cli::add_count_option(app, "--default-cores", c.rq.defaults.cores, "Cores of a slot the profile does not size");
    app.add_option("--default-memory", c.default_memory, "Memory of a slot the profile does not size")
        ->capture_default_str();
    app.add_option("--default-wall", c.default_wall, "Wall time per cell of a model the profile does not time")
        ->capture_default_str();
    app.add_option("--default-gpu-memory", c.default_gpu_memory,
                   "GPU memory of a slot the profile does not size (default: no GPU)");
    prof::cli::add_count_option(app, "--min-fits", c.rq.min_fits, "Fewer ok fits than this marks a family low-confidence");
    prof::cli::add_count_option(app, "--size-classes", c.rq.size_classes,
                                "Size classes per family at most: cells grouped by length, each with its own slot memory (1 = one size)");
}

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Turn one cost profile and the size of a run into resource requests: per family the slot\n"
                 "(cores, memory, GPU share), slots per node, and the node count that meets a deadline or the\n"
                 "makespan on a given number of nodes; rendered as a plan record, Spark properties, Ray task\n"
                 "options, Kubernetes container resources or a table. Work is each model's cost curve in n_obs\n"
                 "summed over the run's lengths (--panel, or the profile's sample record). A model with no ok\n"
                 "fit stops the plan (exit 65) unless --on-unmeasured says what to do. No profile on stdin:\n"
                 "planned from the defaults, every axis assumed.",
                 "prof-plan"};
    add_options(app, c);
    prof::cli::parse(app, argc, argv);
    c.rq.on_unmeasured = prof::parse_unmeasured_policy(c.on_unmeasured);
    prof::add_model_specs(c.rq, c.models);
    prof::check_run_size(app.count("--series") > 0, c.rq.series, !c.panel.empty());
    prof::cli::check_one_stdin({{"the profile", c.file}, {"--panel", c.panel}});

    c.rq.node.memory_bytes = prof::parse_size(c.node_memory, "--node-memory");
    c.rq.node.gpu_memory_bytes = prof::parse_size_if_given(c.node_gpu_memory, "--node-gpu-memory");
    c.rq.deadline_s = prof::parse_duration_if_given(c.deadline, "--deadline");
    c.rq.nodes = c.nodes;
    c.rq.profile_input = c.file;
    prof::set_target(c.rq, c.target, c.layout);
    c.rq.limits.max_container_memory_bytes = prof::parse_size_if_given(c.max_container_memory, "--max-container-memory");
    c.rq.defaults.memory_bytes = prof::parse_size(c.default_memory, "--default-memory");
    c.rq.defaults.wall_s = prof::parse_duration(c.default_wall, "--default-wall");
    c.rq.defaults.gpu_memory_bytes = prof::parse_size_if_given(c.default_gpu_memory, "--default-gpu-memory");
    prof::apply_scheduler_options(c.scheduler, c.target, c.rq, c.ro);
    prof::check_plan_goal(c.rq.deadline_s, c.rq.nodes);

    if (!c.panel.empty()) {
        auto panel = prof::read_panel(c.panel, prof::bad_line_policy(c.max_bad_lines, "line", "--panel: "));
        std::vector<std::uint64_t> lengths;
        for (const auto& s : panel.usable) lengths.push_back(s.n_obs);
        c.rq.panel = prof::distribution_of_lengths(lengths);
    }
    auto profile = read_one_profile(c.file);
    for (const auto& w : profile ? profile->provenance.warnings : std::vector<std::string>{})
        prof::warn("profile: " + w);
    prof::plan_record plan = prof::make_plan(profile ? &*profile : nullptr, c.rq);
    std::string out = prof::render_plan(plan, c.target, c.ro);
    if (c.target == "table") out = prof::printable(out, true);
    for (const auto& w : plan.warnings) (profile ? prof::warn(w) : prof::note(w));  // no profile: a note
    for (const auto& w : prof::family_and_render_warnings(plan, c.target, c.ro)) prof::warn(w);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    prof::cli::emit_line(out);
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-plan", argc, argv, run); }
