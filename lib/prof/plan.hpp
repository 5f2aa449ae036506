// prof-plan's arithmetic (issue 7, SPEC §2 "plan"): a profile plus the size of the run become
// per-family slots, slots per node, node counts or makespans, and the scheduler renderings
// (Spark properties, Ray task options, Kubernetes container resources, a table).
#pragma once

#include "prof/curve.hpp"
#include "prof/profile.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prof {

// The machine one node of the fleet offers (give its allocatable resources, not its capacity).
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
    unmeasured_policy on_unmeasured = unmeasured_policy::fail;
    bool strict = false;                     // exit 65 when an axis is assumed or there is no profile
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

// Where each axis of a family's slot came from: "measured" | "reference" | "assumed"
// (the profile's provenance.basis, or assumed where a model of the family took a default).
struct axis_basis {
    std::string cores, memory, gpu, wall;
};

// One family's share of the plan (SPEC §2 "plan", per family). Units: bytes, seconds.
struct family_plan {
    std::vector<std::string> models;                 // the run's models in the family, sorted
    std::uint64_t slot_cores = 0;
    std::uint64_t slot_rss_bytes = 0;
    std::optional<std::uint64_t> slot_gpu_bytes;     // null: the slot asks no GPU
    std::optional<double> gpu_fraction;              // 1 / floor(device memory / slot_gpu_bytes)
    std::optional<std::uint64_t> intraop_threads;    // the thread cap the fits ran under
    std::uint64_t slots_per_node = 0;
    std::uint64_t cells = 0;                         // series × models
    double work_s = 0;                               // predict_family_work's, margin applied
    double longest_cell_s = 0;                       // the longest single cell, margin applied
    std::string longest_cell_model;
    std::optional<std::uint64_t> longest_cell_n_obs;
    std::string wall_estimator;                      // curve | median | default | mixed
    std::optional<std::uint64_t> oom_floor_bytes;    // memory proven needed by an OOM kill
    std::vector<std::string> unmeasured_models;      // sized from the defaults (--on-unmeasured defaults)
    std::uint64_t nodes = 0;                         // computed (deadline) or given (--nodes)
    double makespan_s = 0;                           // max(work_s / (slots_per_node × nodes),
                                                     // longest_cell_s): a lower bound
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
};

// Across families, run one after another on the same nodes.
struct plan_totals {
    std::uint64_t cells = 0;
    double work_s = 0;
    double node_seconds = 0;      // Σ work_s / slots_per_node
    std::uint64_t nodes = 0;      // deadline: ceil(node_seconds / deadline); else --nodes
    double longest_cell_s = 0;    // over families
    double makespan_s = 0;        // max(node_seconds / nodes, longest_cell_s): a lower bound
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

// Sizes the run (issue 7 "Arithmetic"). `profile` null = no profile on stdin: the static-
// config case, every axis assumed (request.models must then name the run's models).
// Per model of the run (a model the profile lacks forms a family of its own name, assumed):
//   cores = snap_cores(max_effective_cores) | default; rss = ceil(max_process_rss × memory
//   margin) | default; gpu = ceil(max_peak_gpu × memory margin) | default GPU | none;
//   rss is at least oom_floor_bytes(oom_limit_bytes) when a fit was killed for memory;
//   work and the longest cell from predict_family_work.
// Per family: the slot is the max over its models; gpu_fraction = 1 / floor(device memory /
// slot_gpu_bytes); slots_per_node = min over cores, memory and GPUs; nodes = ceil(work_s /
// (slots_per_node × deadline)) (relative tolerance 1e-12), or makespan_s = max(work_s /
// (slots_per_node × nodes), longest_cell_s).
// A model with no ok fit in a non-empty profile follows request.on_unmeasured: fail throws
// prof::error(data_err) naming it, its family, its first error and the three choices.
// Throws usage_error (64) on a bad request or a default that does not fit the node, and
// prof::error(data_err) (65) when a measured slot does not fit one node, naming both numbers,
// and under request.strict when there is no profile or any axis of a family is assumed.
plan_record make_plan(const compute_profile* profile, const plan_request& request);

// Nodes that finish work_s within deadline_s at slots_per_node slots each:
// max(1, ceil(work_s / (slots_per_node × deadline_s))), the ceiling taken with a relative
// tolerance of 1e-12 so rounding noise never buys a whole extra node.
std::uint64_t nodes_for_deadline(double work_s, std::uint64_t slots_per_node, double deadline_s);

// Renderings (issue 7 "Targets"); each one is computed from the plan record alone.
std::string write_plan(const plan_record& p);         // one JSON line, no '\n'
std::string render_spark(const plan_record& p);       // spark-defaults.conf lines
std::string render_ray(const plan_record& p);         // one JSON line: family → task options
std::string render_k8s(const plan_record& p);         // YAML documents: container resources
std::string render_plan_table(const plan_record& p);  // for people

// The JVM side of one Spark executor in render_spark's layout: a modest heap and Spark's own
// default overhead rule, max(384 MiB, 10% of the heap).
inline constexpr std::uint64_t spark_executor_heap_bytes = 1ULL << 30;
inline constexpr std::uint64_t spark_executor_overhead_bytes = 384ULL << 20;

}  // namespace prof
