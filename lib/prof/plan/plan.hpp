// prof-plan's arithmetic: a profile plus the size of the run become per-family slots, their
// deployment under a scheduler's layout, node counts or makespans of whole cells, and the
// scheduler renderings (Spark properties, Ray task options, Kubernetes resources or an Indexed
// Job, a table).
#pragma once

#include "prof/profile/curve.hpp"
#include "prof/profile/profile.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// The machine one node of the fleet offers: its allocatable resources (what a scheduler may
// hand out: Kubernetes' node allocatable, YARN's NodeManager resource, a Ray node's resources),
// not its capacity.
struct node_shape {
    std::uint64_t cores = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t gpus = 0;                          // devices per node
    std::optional<std::uint64_t> gpu_memory_bytes;   // per device; set iff gpus > 0
};

// Static configuration: what an axis takes when the profile has no value for it.
struct plan_defaults {
    std::uint64_t cores = 1;
    std::uint64_t memory_bytes = 4ULL << 30;         // 4 GiB
    double wall_s = 60;                              // per cell
    std::optional<std::uint64_t> gpu_memory_bytes;   // null: an unmeasured GPU axis asks no GPU
};

// Limits of the cluster beyond one node's resources. A deployment unit (a Spark executor, a
// Kubernetes pod) that would pass one is made smaller or refused, naming the limit.
struct cluster_limits {
    std::optional<std::uint64_t> max_container_memory_bytes;  // --max-container-memory: the largest
                                                              // container one unit may ask (YARN's
                                                              // yarn.scheduler.maximum-allocation-mb,
                                                              // a LimitRange max); null = the node
    std::uint64_t max_pods_per_node = 110;                    // --max-pods-per-node: kubelet's maxPods
};

// How the slots become deployment units, one per target family:
//   "ray"   one Ray task per slot, packed by Ray on num_cpus, memory and num_gpus (the default,
//           and the layout of --target json and table unless --layout says otherwise);
//   "spark" executors of several task slots each, every executor heap + overhead inside the
//           node and under --max-container-memory;
//   "k8s"   pods of one or more slots each (a GPU pod holds one whole device), at most
//           --max-pods-per-node per node.
inline constexpr std::string_view plan_layouts[] = {"ray", "spark", "k8s"};

// The layout a target renders: spark → spark, k8s and k8s-job → k8s, ray → ray; json and table
// take `layout` (empty = ray). Throws usage_error when `layout` contradicts the target.
std::string layout_for_target(const std::string& target, const std::string& layout);

// What --target asks of the request: its layout (layout_for_target) and, for k8s-job, whose
// every Job index starts fresh processes, the cold starts priced (cold_start_per_process).
struct plan_request;
void set_target(plan_request& request, const std::string& target, const std::string& layout);

// --models NAME or NAME:FAMILY (each parsed by parse_model_spec, naming --models in its errors):
// appends NAME to request.models and, where a family is given, records it in model_families.
struct plan_request;
void add_model_specs(plan_request& request, const std::vector<std::string>& specs);

// What prof-plan does with a model of the run that has no ok fit in a non-empty profile (a
// dropped model, one killed every time, one the profile lacks): stop with exit 65 naming it
// (fail), size it from the --default-* values in its declared family (defaults), or plan the
// run without it (skip).
enum class unmeasured_policy { fail, defaults, skip };
// "fail" | "defaults" | "skip"; throws usage_error otherwise.
unmeasured_policy parse_unmeasured_policy(const std::string& text);

// The run to size. Exactly one of deadline_s and nodes is set.
struct plan_request {
    std::uint64_t series = 0;                // series in the run; 0 = the panel's usable series
    std::vector<std::string> models;         // the run's models; empty = every model of the
                                             // profile, its dropped models included
    std::map<std::string, std::string> model_families;  // --models NAME:FAMILY, for a model
                                                        // the profile does not place
    std::optional<length_distribution> panel;  // --panel: the run's lengths (any series count)
    node_shape node;
    std::optional<double> deadline_s;        // --deadline
    std::optional<std::uint64_t> nodes;      // --nodes
    plan_defaults defaults;
    std::uint64_t min_fits = 3;              // fewer ok fits in a family = low confidence
    std::string layout = "ray";              // one of plan_layouts
    // Every work item starts its processes afresh (k8s-job: a pod per Job index), so each pays
    // its model's cold start (the profile's cold_start_s): priced by cold_start_work.
    bool cold_start_per_process = false;
    cluster_limits limits;
    unmeasured_policy on_unmeasured = unmeasured_policy::fail;
    bool strict = false;                     // exit 65 when an axis is assumed or there is no profile
    std::string profile_input = "-";         // where the profile was read: '-' (stdin) or a file,
                                             // as the no-profile messages name it
};

// The run's series lengths as the plan prices them. `lengths` (scaled to the run's series)
// comes from --panel, else from the profile's sample record; with neither, a harvested
// profile's curves price each model over its own fits (every cell of that run was measured:
// from_fits), and any other profile falls back to median × series.
struct run_lengths {
    std::optional<length_distribution> lengths;
    bool from_fits = false;
    std::string source = "none";  // panel | sample | harvest | none
};
run_lengths lengths_for_run(const compute_profile* profile, const plan_request& request, std::uint64_t series);

// One family's work over the run (time margin applied). Per model: with a curve and known
// lengths, Σ over the run's lengths of curve_wall_at (predict_model_work); else series ×
// median_wall_s; a model with no measured wall takes series × the default wall. The longest
// cell is the most one cell takes: on the curve at the run's longest series, else the median
// (which can miss it: estimator says which rule priced each model).
struct model_in_family {
    std::string name;
    const model_cost* cost = nullptr;  // null: sized from the defaults
};
struct family_work {
    double work_s = 0;
    double longest_cell_s = 0;
    std::string longest_model;
    std::optional<std::uint64_t> longest_n_obs;  // null when not priced from a curve
    std::string estimator;                       // curve | median | default | mixed
    std::vector<std::string> warnings;           // extrapolation, lengths past the measured ones
};
family_work predict_family_work(const std::vector<model_in_family>& models, const run_lengths& lengths,
                                std::uint64_t series, double time_margin, double default_wall_s);

// The work a family's cold starts add when every work item starts its processes afresh:
// one cold start per process of an item (items × slots per item, at most one per cell), each
// the mean over the family's models of their cold_start_s (a model without one: 0), times the
// time margin. The longest cell grows by the largest cold start (margin applied).
struct cold_start_cost {
    double work_s = 0, longest_extra_s = 0;
};
cold_start_cost cold_start_work(const std::vector<model_in_family>& models, std::uint64_t cells,
                                std::uint64_t processes, double time_margin);

// Where each axis of a family's slot came from: "measured" | "reference" | "assumed"
// (the profile's provenance.basis, or assumed where a model of the family took a default).
struct axis_basis {
    std::string cores, memory, gpu, wall;
};

// How one family's slots are deployed on one node (see plan_layouts). Bytes; counts.
struct family_layout {
    std::string unit;                        // "task" (ray), "executor" (spark), "pod" (k8s)
    std::uint64_t slots_per_unit = 1;        // task slots one unit runs at once
    std::uint64_t units_per_node = 0;
    std::uint64_t unit_cores = 0;            // cores one unit asks: slots_per_unit × slot_cores
    std::uint64_t unit_memory_bytes = 0;     // memory one unit asks: ray the slot; k8s the pod's
                                             // request (whole MiB); spark heap + overhead
    std::optional<double> unit_gpus;         // GPUs one unit asks: ray num_gpus (a multiple of
                                             // 0.0001, Ray's resource precision); spark and k8s
                                             // whole devices; null without a GPU
    std::optional<std::uint64_t> slots_per_device;  // slots one device holds under this layout
    std::optional<std::uint64_t> heap_bytes;        // spark: spark.executor.memory
    std::optional<std::uint64_t> overhead_bytes;    // spark: spark.executor.memoryOverhead
    std::uint64_t cells_per_item = 1;        // cells in one work item: 1 (a Ray task, a Spark
                                             // partition); on k8s one Job index, a multiple of
                                             // slots_per_unit (more rounds once the cells pass
                                             // an Indexed Job's 100000 completions)
    std::uint64_t work_items = 0;            // ceil(cells / cells_per_item)
    std::string limited_by;                  // what bounds slots per node: "cores", "memory",
                                             // "gpus", "executor memory", "max-container-memory",
                                             // "max-pods-per-node"
};

// One family's share of the plan. Units: bytes, seconds.
struct family_plan {
    std::vector<std::string> models;                 // the run's models in the family, sorted
    std::uint64_t slot_cores = 0;
    std::uint64_t slot_rss_bytes = 0;
    std::optional<std::uint64_t> slot_gpu_bytes;     // null: the slot asks no GPU
    std::optional<double> gpu_fraction;              // 1 / floor(device memory / slot_gpu_bytes)
    std::optional<std::uint64_t> intraop_threads;    // the thread cap the fits ran under
    std::uint64_t slots_per_node = 0;                // under the layout: units × slots per unit
    family_layout layout;
    std::uint64_t cells = 0;                         // series × models
    double work_s = 0;                               // predict_family_work's, margin applied
    double longest_cell_s = 0;                       // the longest single cell, margin applied
    std::string longest_cell_model;
    std::optional<std::uint64_t> longest_cell_n_obs;
    std::string wall_estimator;                      // curve | median | default | mixed
    // The cold starts in work_s (margin applied) when every work item starts its processes
    // afresh (cold_start_work); null when the target keeps its workers warm.
    std::optional<double> cold_start_work_s;
    std::optional<std::uint64_t> oom_floor_bytes;    // memory proven needed by an OOM kill
    std::vector<std::string> unmeasured_models;      // sized from the defaults (--on-unmeasured defaults)
    std::uint64_t nodes = 0;                         // the nodes the family uses
    std::uint64_t slots = 0;                         // slots_per_node × nodes
    std::uint64_t waves = 0;                         // rounds of whole cells a slot runs at most:
                                                     // ceil(cells / slots) for one-cell items
    double makespan_s = 0;                           // whole cells: see schedule_makespan
    double makespan_lower_s = 0;                     // max(work_s / slots, longest_cell_s)
    std::optional<bool> meets_deadline;              // null without --deadline
    axis_basis basis;
    std::uint64_t n_ok = 0;                          // ok fits behind the family's numbers
    bool low_confidence = false;                     // n_ok < min_fits
    std::vector<std::string> warnings;
};

// The run as asked, kept in the record so every rendering is computed from the record alone.
struct plan_run {
    std::uint64_t series = 0;
    std::vector<std::string> models;                 // sorted
    std::vector<std::string> skipped_models;         // --on-unmeasured skip left these out
    std::string length_source = "none";              // run_lengths::source
    std::optional<std::uint64_t> max_n_obs;          // the run's longest series, when known
    std::optional<double> deadline_s;
    std::optional<std::uint64_t> nodes;              // as given with --nodes
    std::uint64_t min_fits = 3;
    std::string layout = "ray";
    cluster_limits limits;
};

// Across families, run one after another on the same nodes.
struct plan_totals {
    std::uint64_t cells = 0;
    double work_s = 0;
    std::uint64_t nodes = 0;        // deadline: the fewest nodes whose summed makespans meet it;
                                    // each family then runs on min(nodes, what its cells use);
                                    // when none meets it, every family keeps its own count
    double longest_cell_s = 0;      // over families
    double makespan_s = 0;          // Σ family makespans on that many nodes
    double makespan_lower_s = 0;    // Σ family lower bounds
    std::optional<bool> meets_deadline;
};

// The `plan` record.
struct plan_record {
    profile_provenance provenance;   // the profile's (static config: basis assumed, source none)
    node_shape node;
    plan_run run;
    std::map<std::string, family_plan> families;
    plan_totals totals;
    std::vector<std::string> warnings;  // plan-wide: the static-config case, unknown models
};

// The plan's goal: exactly one of a deadline (positive, finite: the plan finds the node count)
// and a node count (positive: the plan finds the makespan). Throws usage_error otherwise.
void check_plan_goal(const std::optional<double>& deadline_s, const std::optional<std::uint64_t>& nodes);

// prof-plan's size of the run: --series N (given, N must be positive), else --panel FILE.
// Throws usage_error naming both otherwise.
void check_run_size(bool series_given, std::uint64_t series, bool panel_given);

// Sizes the run. `profile` null = no profile on the input: the static-config case, every axis
// assumed (request.models must then name the run's models).
// Per model of the run (a model the profile lacks forms a family of its own name, assumed), by
// size_slot with the --default-* values as its fallback:
//   cores = snap_cores(max_effective_cores) | default; rss = ceil(max_process_rss × memory
//   margin) | default; gpu = ceil(max_peak_gpu × memory margin) | default GPU | none;
//   rss is at least oom_floor_bytes(oom_limit_bytes) when a fit was killed for memory;
//   work and the longest cell from predict_family_work.
// Per family: the slot is the max over its models; gpu_fraction = 1 / floor(device memory /
// slot_gpu_bytes); the node's slots = min over cores, memory and GPUs, then deployed under the
// layout; work_s and longest_cell_s from predict_family_work.
// Nodes and makespans come from waves of whole cells over the slots the layout deploys
// (schedule_makespan): with a deadline the fewest nodes that meet it, never more than one
// wave of cells needs; with --nodes the given count, again never more than the cells need.
// A model with no ok fit in a non-empty profile follows request.on_unmeasured: fail throws
// prof::error(data_err) naming it, its family, its first error and the three choices.
// Throws usage_error (64) on a bad request or a default that does not fit the node, and
// prof::error(data_err) (65) when a measured slot does not fit one node or one unit under a
// cluster limit, naming both numbers and the limit, and under request.strict when there is
// no profile, any axis of a family is assumed, or a family or the totals cannot meet the
// deadline (without strict both are in the record, meets_deadline false, with a warning).
plan_record make_plan(const compute_profile* profile, const plan_request& request);

// The makespan of `cells` whole cells of `work_s` seconds in all, none longer than
// `longest_s`, on `runners` runners of `slots_per_runner` slots each; a runner takes a work
// item of `cells_per_item` cells (a multiple of slots_per_runner), runs it in
// ceil(cells_per_item / slots_per_runner) rounds, and takes the next item when it is done;
// items are handed out in any order:
//   cells_per_item == 1 (Ray tasks, Spark task slots, one-slot pods):
//     min(waves × longest_s, (work_s − longest_s) / runners + longest_s), waves =
//     ceil(cells / runners); both are upper bounds of any list schedule (the second is
//     Graham's), and the first is exact for equal cells;
//   otherwise (a pod of several slots per Job index, an index lasting at most
//   D = rounds × longest_s, rounds = ceil(cells_per_item / slots_per_runner)):
//     min(ceil(ceil(cells / cells_per_item) / runners) × D, (work_s − D) / runners + D), the
//     second Graham's bound over the indexes (a free pod takes the next pending index, and the
//     indexes' durations sum to at most work_s).
double schedule_makespan(std::uint64_t cells, double work_s, double longest_s, std::uint64_t cells_per_item,
                         std::uint64_t slots_per_runner, std::uint64_t runners);

// Kubernetes' bound on an Indexed Job's completions.
inline constexpr std::uint64_t k8s_max_indexed_completions = 100000;

// Options of the renderings that are not plan numbers.
struct render_options {
    std::string spark_allocation = "static";   // "static" | "dynamic"
    std::optional<std::string> gpu_discovery_script;  // spark.executor.resource.gpu.discoveryScript
    std::string image;                         // k8s-job: the container image (placeholder if empty)
    bool cpu_limit = false;                    // k8s: a CPU limit, only with a recorded thread cap
};

// The placeholder discovery script: where Spark's own example script lies in its distribution.
inline constexpr std::string_view spark_gpu_discovery_placeholder = "/opt/spark/examples/src/main/scripts/getGpusResources.sh";
inline constexpr std::string_view k8s_image_placeholder = "REPLACE-WITH-YOUR-WORKER-IMAGE";

// Renderings; each one is computed from the plan record alone (and the options).
std::string write_plan(const plan_record& p);         // one JSON line, no '\n'
std::string render_spark(const plan_record& p, const render_options& o = {});  // spark-defaults.conf lines
std::string render_ray(const plan_record& p);         // a comment line, then one JSON line
std::string render_k8s(const plan_record& p, const render_options& o = {});    // YAML: container resources
std::string render_k8s_job(const plan_record& p, const render_options& o = {});  // YAML: an Indexed Job per family
std::string render_plan_table(const plan_record& p);  // for people
// What the operator should hear about a rendering beyond the plan's own warnings: under
// --cpu-limit on k8s and k8s-job, a family whose thread cap is above its slot's cores (each
// worker runs more threads than the limit lets it use: CFS throttles it).
std::vector<std::string> render_warnings(const plan_record& p, const std::string& target, const render_options& o = {});
// The warnings prof-plan prints after the plan-wide ones: each family's, as "family 'NAME': W",
// then render_warnings'.
std::vector<std::string> family_and_render_warnings(const plan_record& p, const std::string& target,
                                                    const render_options& o = {});
// The rendering --target names: json, spark, ray, k8s, k8s-job or table.
std::string render_plan(const plan_record& p, const std::string& target, const render_options& o = {});

// spark.task.resource.gpu.amount for `tasks_per_device` tasks on one device: Spark 3.x counts
// floor(1.0 / amount) tasks per device in double arithmetic, and the double nearest 1/k can
// give k − 1 (1/93: 1 / 0.010752688172043012 = 92.99999999999999). The largest double not above
// 1/k for which floor(1.0 / amount) == k; written with format_double it reads back the same
// double. Never above 1/k, so a rule that scales the amount and truncates (Spark 4's fixed-point
// amounts) counts at least k too. 1 for one task per device.
double spark_task_gpu_amount(std::uint64_t tasks_per_device);

// The JVM side of one Spark executor of `tasks` task slots: heap = max(1 GiB, 64 MiB × tasks),
// so that Spark's unified memory ((heap − 300 MiB) × 0.6, of which each of N running tasks is
// guaranteed 1/(2N)) grows with the tasks; base overhead = max(384 MiB, 10% of the heap), Spark's
// own default for spark.executor.memoryOverhead. Both in whole MiB.
std::uint64_t spark_executor_heap_bytes(std::uint64_t tasks);
std::uint64_t spark_executor_base_overhead_bytes(std::uint64_t heap_bytes);

}  // namespace prof
