// prof-plan's arithmetic (issue 7, SPEC §2 "plan"): a profile plus the size of the run become
// per-family slots, slots per node, node counts or makespans, and the scheduler renderings
// (Spark properties, Ray task options, Kubernetes container resources, a table).
#pragma once

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

// The run to size. Exactly one of deadline_s and nodes is set.
struct plan_request {
    std::uint64_t series = 0;                // series in the run (>= 1)
    std::vector<std::string> models;         // the run's models; empty = every model of the
                                             // profile, its dropped models included
    node_shape node;
    std::optional<double> deadline_s;        // --deadline
    std::optional<std::uint64_t> nodes;      // --nodes
    plan_defaults defaults;
    std::uint64_t min_fits = 3;              // fewer ok fits in a family = low confidence
};

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
    double work_s = 0;                               // series × planning wall per series
    std::uint64_t nodes = 0;                         // computed (deadline) or given (--nodes)
    double makespan_s = 0;                           // work_s / (slots_per_node × nodes): a lower bound
    axis_basis basis;
    std::uint64_t n_ok = 0;                          // ok fits behind the family's numbers
    bool low_confidence = false;                     // n_ok < min_fits
    std::vector<std::string> warnings;
};

// The run as asked, kept in the record so every rendering is computed from the record alone.
struct plan_run {
    std::uint64_t series = 0;
    std::vector<std::string> models;                 // sorted
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
    double makespan_s = 0;        // node_seconds / nodes: a lower bound
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
//   wall per cell = median_wall_s × time margin | default wall.
// Per family: the slot is the max over its models; gpu_fraction = 1 / floor(device memory /
// slot_gpu_bytes); slots_per_node = min over cores, memory and GPUs; work_s = series × Σ
// wall; nodes = ceil(work_s / (slots_per_node × deadline)) (relative tolerance 1e-12), or
// makespan_s = work_s / (slots_per_node × nodes).
// Throws usage_error (64) on a bad request or a default that does not fit the node, and
// prof::error(data_err) (65) when a measured slot does not fit one node, naming both numbers.
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
