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

// --size-classes: at most this many classes per family by default.
inline constexpr std::uint64_t default_size_classes = 4;
// The bound on --size-classes (more classes than this buy nothing a scheduler can use).
inline constexpr std::uint64_t max_size_classes = 16;
// --min-class-saving: the share of one size's slot memory x time a split into classes must save
// (and each class beyond the fewest must earn) before the plan asks the scheduler for more units.
inline constexpr double default_min_class_saving = 0.05;

// The plan's intervals (--confidence, --resamples, --seed): each model's measured fits are
// resampled with replacement --resamples times (the bootstrap, seeded: the same seed gives the
// same plan), every resampled run is priced and scheduled whole-cell on the planned slots, and
// the intervals are read from the results at the confidence asked (0.8: P10 to P90).
inline constexpr double default_confidence = 0.8;
inline constexpr std::uint64_t default_resamples = 200;
inline constexpr std::uint64_t max_resamples = 10000;
inline constexpr std::uint64_t default_seed = 1;
struct plan_interval {
    double low_s = 0, p50_s = 0, high_s = 0;  // the (1 − c)/2 quantile, the median, the (1 + c)/2 one
};

// How many fits a model's work interval needs (--target-width): its own work over the run
// (margin applied) resampled as the plan's intervals are, its width relative to its P50 at the
// fits it has, and the fits at which it would reach the target. The bootstrap width shrinks
// about as 1/sqrt(n): fits_needed = ceil(n_fits × (width / target)²).
struct model_sample_width {
    std::string model_type;
    std::uint64_t n_fits = 0;        // the readings resampled
    plan_interval work_interval;     // the model's work over the run
    double width = 0;                // (high_s − low_s) / p50_s
    std::uint64_t fits_needed = 0;
    bool narrow_enough = false;      // width <= the target: fits_needed <= n_fits
};

// Static configuration: what an axis takes when the profile has no value for it.
struct plan_defaults {
    std::uint64_t cores = 1;
    std::uint64_t memory_bytes = 4ULL << 30;         // 4 GiB
    double wall_s = 60;                              // per cell
    std::optional<std::uint64_t> gpu_memory_bytes;   // an unmeasured GPU axis on a GPU node; null:
                                                     // one whole device; 0: no GPU (still assumed)
};

// Limits of the cluster beyond one node's resources. A deployment unit (a Spark executor, a
// Kubernetes pod) that would pass one is made smaller or refused, naming the limit.
struct cluster_limits {
    std::optional<std::uint64_t> max_container_memory_bytes;  // --max-container-memory: the largest
                                                              // container one unit may ask (YARN's
                                                              // yarn.scheduler.maximum-allocation-mb,
                                                              // a LimitRange max); null = the node
    std::uint64_t max_pods_per_node = 110;                    // --max-pods-per-node: kubelet's maxPods
    // Spark's cluster manager (--spark-cluster): "yarn" rounds every container up to a multiple
    // of yarn_min_allocation_bytes and refuses one above yarn_max_vcores (YARN's
    // ResourceCalculator.normalize and SchedulerUtils.validateResourceRequest, with
    // yarn-default.xml's yarn.scheduler.minimum-allocation-mb 1024 and
    // yarn.scheduler.maximum-allocation-vcores 4); "k8s" and "standalone" take the sizes as asked.
    std::string spark_cluster = "yarn";
    std::uint64_t yarn_min_allocation_bytes = 1ULL << 30;     // --yarn-min-allocation
    std::uint64_t yarn_max_vcores = 4;                        // --yarn-max-vcores
};

// What the plan keeps free between its makespan and a deadline, and what starting a unit costs.
struct plan_slack {
    // --headroom: the share of --deadline the planned makespan leaves free for what the fits'
    // walls do not hold (pod and worker start, image pulls, the scheduler's own delays): the
    // node count is the fewest whose makespan is within deadline x (1 - headroom).
    double headroom = 0.1;
    // k8s layout (one pod per Job index): --pod-start, the seconds from a pod's creation to its
    // worker's first cell (scheduling, container start, Python imports), added to every index;
    // --job-pod-rate, the pods per second the Job controller creates (kube-controller-manager's
    // --kube-api-qps, 20 by default): index j starts no earlier than j / rate.
    double pod_start_s = 10;
    double job_pod_rate = 20;
};

// The Spark driver's container in cluster deploy mode (spark.driver.memory 1g + its overhead
// max(384 MiB, 10%), spark.driver.cores 1): it runs on one of the plan's nodes (as YARN's
// ApplicationMaster, or a driver pod) and takes that node's share.
inline constexpr std::uint64_t spark_driver_memory_bytes = (1024ULL + 384) << 20;
inline constexpr std::uint64_t spark_driver_cores = 1;

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
    // its model's cold start (the profile's cold_start_s): priced by cold_start_work. Otherwise
    // the workers stay warm and each slot pays each model's once (warm_cold_starts).
    bool cold_start_per_process = false;
    cluster_limits limits;
    unmeasured_policy on_unmeasured = unmeasured_policy::fail;
    bool strict = false;                     // exit 65 when an axis is assumed or there is no profile
    bool allow_missed_deadline = false;      // write a plan that misses --deadline (else exit 65)
    plan_slack slack;
    std::uint64_t size_classes = default_size_classes;  // --size-classes K (1 = one size)
    double min_class_saving = default_min_class_saving; // --min-class-saving, a share in [0, 1)
    double confidence = default_confidence;           // --confidence, in (0, 1)
    std::uint64_t resamples = default_resamples;      // --resamples; 0: no resampling (points only)
    std::uint64_t seed = default_seed;                // --seed
    std::optional<double> target_width;               // --target-width: per model the fits its work
                                                      // interval needs (family_plan::sample_widths)
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

// The cold starts when the workers stay warm between cells (every target but k8s-job): each
// slot pays each model's cold_start_s once, on its first cell of that model, so a class of
// `cells` cells on S slots adds Σ_m min(S, cells / models) × cold_start_s(m) × time margin of
// work (each class its own slots: the classes run one after another), and every slot starts its
// cells later by the cold starts of the models it runs (at most the largest min(models, cells
// it runs) of them): the makespan grows by that, not by the work's share. The slots follow the
// node count, so both are priced in the schedule. Here: per model of the family its
// cold_start_s × time_margin (a model without one: 0), largest first; empty when no model has one.
std::vector<double> warm_cold_starts(const std::vector<model_in_family>& models, double time_margin);

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
    std::uint64_t reserved_units = 0;        // spark: executors the driver's container displaces
                                             // on the one node it runs on (runners in all =
                                             // units_per_node x nodes - reserved_units)
    std::optional<std::uint64_t> container_bytes;  // spark on YARN: the container YARN grants,
                                             // unit_memory_bytes rounded up to a multiple of
                                             // yarn_min_allocation_bytes; null elsewhere
    double unit_start_s = 0;                 // k8s: seconds priced to start each work item's pod
    std::optional<std::uint64_t> retry_unit_memory_bytes;  // k8s: the retry tier's pod memory,
                                             // oom_floor_bytes(unit_memory_bytes), whole MiB
    std::optional<std::uint64_t> retry_units_per_node;     // k8s: retry pods one node holds
    std::optional<std::uint64_t> retry_items;  // k8s: the indexes the profile's OOM-kill share
                                             // expects killed: ceil(work_items x (1 - (1 - s)^k))
    std::optional<double> retry_makespan_s;  // k8s: the retry Job over them on the same nodes:
                                             // ceil(retry_items / retry pods) x (item + start)
    std::string limited_by;                  // what bounds slots per node: "cores", "memory",
                                             // "gpus", "executor memory", "max-container-memory",
                                             // "max-pods-per-node"
};

// One size class of a family: the family's cells whose series length lies in [n_obs_min,
// n_obs_max], run on slots of their own memory. The family's cells in the run's length order
// (series by (n_obs, ts_id), each series' models in the order of the family's models) are
// cut into classes at series boundaries: class c holds cells [first_cell, first_cell + cells).
// Units: bytes, seconds; slot_gib_hours = slot_rss_bytes / 2^30 × work_s / 3600 (the memory the
// class's slots reserve while they run its work).
struct size_class {
    std::optional<std::uint64_t> n_obs_min, n_obs_max;  // null: the run's lengths are unknown
    std::uint64_t first_cell = 0, cells = 0;
    std::uint64_t slot_cores = 0, slot_rss_bytes = 0;
    std::uint64_t slots_per_node = 0;                   // under the layout
    family_layout layout;
    double work_s = 0, longest_cell_s = 0;              // margin applied
    // The class's own cold starts in work_s: when every work item starts its processes afresh,
    // cold_start_work over its work items; when the workers stay warm, each of the class's slots
    // pays each model's once (warm_cold_starts); null when no model has a cold start to price
    // (for warm workers; k8s-job always prices them).
    std::optional<double> cold_start_work_s;
    std::uint64_t slots = 0, waves = 0;                 // on the family's nodes
    double makespan_s = 0;                              // whole cells on those slots (schedule_makespan)
    double slot_gib_hours = 0;
};

// One bin of the run's lengths, as the class choice sees it: its work (seconds, the family's
// models together) and the slot memory a class whose longest series lies in this bin needs
// (bytes; non-decreasing from bin to bin, as the memory curve is).
struct length_cost {
    double work_s = 0;
    std::uint64_t slot_rss_bytes = 0;
};
// The classes of bins sorted by length, as the end (exclusive) of each class's bins: the
// partition into at most `max_classes` runs of consecutive bins that minimises slot memory ×
// time, Σ over classes of (its last bin's slot_rss_bytes × its bins' work), exactly (dynamic
// programming over the bins: O(max_classes × bins²)). Of the optimal partitions into 1, 2, ...
// classes the one with the fewest classes is taken whose cost exceeds the best's by at most
// `min_saving` × the one-class cost and, when it has more than one class, saves at least
// `min_saving` × the one-class cost: a split that saves less costs scheduler units and a tail
// for nothing (min_saving 0: the best partition, fewest classes among equals). Ties go to the
// earlier boundary. Empty for no bins.
std::vector<std::size_t> choose_size_classes(const std::vector<length_cost>& bins, std::uint64_t max_classes,
                                             double min_saving = default_min_class_saving);

// One family's share of the plan. Units: bytes, seconds.
struct family_plan {
    std::vector<std::string> models;                 // the run's models in the family, sorted
    std::uint64_t slot_cores = 0;
    std::uint64_t slot_rss_bytes = 0;
    std::optional<std::uint64_t> slot_gpu_bytes;     // null: the slot asks no GPU
    std::optional<double> gpu_fraction;              // 1 / floor(device memory / slot_gpu_bytes)
    std::optional<std::uint64_t> intraop_threads;    // the thread cap the fits ran under
    std::uint64_t slots_per_node = 0;                // under the layout: units × slots per unit
                                                     // (a node with the Spark driver holds fewer:
                                                     // layout.reserved_units)
    family_layout layout;
    std::uint64_t cells = 0;                         // series × models
    double work_s = 0;                               // predict_family_work's, margin applied,
                                                     // plus cold_start_work_s
    double longest_cell_s = 0;                       // the longest single cell, margin applied
    std::string longest_cell_model;
    std::optional<std::uint64_t> longest_cell_n_obs;
    std::string wall_estimator;                      // curve | median | default | mixed
    // The cold starts in work_s (margin applied): one per process when every work item starts
    // its processes afresh (cold_start_work), else one per slot and model (warm_cold_starts, on
    // the family's nodes, class by class); null for warm workers when no model has a cold start.
    std::optional<double> cold_start_work_s;
    // The largest of its models' beside_slowdown (the profile's: their walls beside a
    // neighbour over their walls alone) that priced its walls: a slot with fewer cores than the
    // node shares it, and every wall of such a model (work, classes, intervals) is its measured
    // wall times its own slowdown when that is above 1. Null (absent) when none applied: the
    // slot takes the whole node, or no model measured one above 1.
    std::optional<double> beside_slowdown;
    std::optional<std::uint64_t> oom_floor_bytes;    // memory proven needed by an OOM kill
    std::vector<std::string> unmeasured_models;      // sized from the defaults (--on-unmeasured defaults)
    std::uint64_t nodes = 0;                         // the nodes the family uses
    std::uint64_t slots = 0;                         // slots_per_node × nodes
    std::uint64_t waves = 0;                         // rounds of whole cells a slot runs at most:
                                                     // ceil(cells / slots) for one-cell items
    double makespan_s = 0;                           // whole cells: see schedule_makespan; warm
                                                     // workers start later by their cold starts
    double makespan_lower_s = 0;                     // max(work_s / slots, longest_cell_s)
    std::optional<bool> meets_deadline;              // null without --deadline: makespan_bound_s
                                                     // within the planned deadline
    // The intervals of work_s, longest_cell_s and makespan_s (on `nodes`) over the resampled
    // runs; a run with no resampled model has each the point three times.
    plan_interval work_interval, longest_cell_interval, makespan_interval;
    double makespan_bound_s = 0;                     // max(makespan_s, makespan_interval.high_s):
                                                     // what the deadline and the nodes are held to
    std::vector<std::string> resampled_models;       // the models whose fits were resampled
    std::vector<std::string> cores_from_cap_models;  // every reading contended: sized on the thread
                                                     // cap's cores, not the short reading
    std::vector<model_sample_width> sample_widths;   // --target-width only: each resampled model
    // The size classes the family runs as, ordered by length (one when --size-classes 1, when
    // the run's lengths are unknown, or when more would not save): each with its own slot
    // memory, run one after another on the family's nodes; makespan_s, waves and the nodes
    // above are theirs summed. slot_rss_bytes and layout above are the one size every cell
    // fits (the last class's, or more).
    std::vector<size_class> size_classes;
    double one_size_slot_gib_hours = 0;              // slot_rss_bytes × work_s, in GiB-hours
    double slot_gib_hours = 0;                       // Σ over the classes
    double size_class_saving = 0;                    // 1 − slot_gib_hours / one_size_slot_gib_hours
    axis_basis basis;
    std::uint64_t n_ok = 0;                          // ok fits behind the family's numbers
    double failure_share = 0;                        // failed fits / fits in the profile, OOM kills
                                                     // included (0 without a profile)
    std::uint64_t max_failed_items = 0;              // k8s: maxFailedIndexes, the failed indexes
                                                     // the Job tolerates (see failed_items_allowance)
    bool low_confidence = false;                     // n_ok < min_fits
    std::vector<std::string> warnings;
};

// The fields a family shares with each of its size classes, each the same quantity for its own
// cells: the slot (cores, memory) and its layout, the cells with their work and longest cell,
// and their schedule on the family's nodes (slots, waves, makespan). Copied from a family to the
// one class it runs as at one size, and from a class to the family a rendering draws it as.
template <class To, class From>
void copy_slot_and_schedule(To& to, const From& from) {
    to.slot_cores = from.slot_cores;
    to.slot_rss_bytes = from.slot_rss_bytes;
    to.slots_per_node = from.slots_per_node;
    to.layout = from.layout;
    to.cells = from.cells;
    to.work_s = from.work_s;
    to.longest_cell_s = from.longest_cell_s;
    to.slots = from.slots;
    to.waves = from.waves;
    to.makespan_s = from.makespan_s;
}

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
    plan_slack slack;
    std::optional<double> planned_deadline_s;        // deadline_s x (1 - headroom): what the
                                                     // makespans are held to
    std::uint64_t size_classes = default_size_classes;  // --size-classes: at most this many per family
    double min_class_saving = default_min_class_saving; // --min-class-saving: a split saves this share
    double confidence = default_confidence;             // --confidence
    std::uint64_t resamples = default_resamples;        // --resamples
    std::uint64_t seed = default_seed;                  // --seed
    std::optional<double> target_width;                 // --target-width; absent from the record without it
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
    std::optional<bool> meets_deadline;  // makespan_bound_s within the planned deadline
    // Over the resampled runs, each the families' sum (the longest cell their maximum), one
    // after another on `nodes` as makespan_s.
    plan_interval work_interval, longest_cell_interval, makespan_interval;
    double makespan_bound_s = 0;    // max(makespan_s, makespan_interval.high_s)
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
//   margin) | default; gpu = ceil(max_peak_gpu × memory margin) (0: none) | on a node with
//   GPUs --default-gpu-memory, else one whole device (warned, assumed) | none on a CPU node;
//   rss is at least oom_floor_bytes(oom_limit_bytes) when a fit was killed for memory;
//   work and the longest cell from predict_family_work.
// Per family: the slot is the max over its models; gpu_fraction = 1 / floor(device memory /
// slot_gpu_bytes); the node's slots = min over cores, memory and GPUs, then deployed under the
// layout; work_s and longest_cell_s from predict_family_work.
// Nodes and makespans come from waves of whole cells over the slots the layout deploys
// (schedule_makespan): with a deadline the fewest nodes that meet it, never more than one
// wave of cells needs; with --nodes the given count, again never more than the cells need.
// Cold starts: per process under request.cold_start_per_process (cold_start_work), else per
// slot and model (warm_cold_starts), in the work and the makespan and their intervals.
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
// With `start_s` > 0 every item also pays that start before its first cell: D = rounds ×
// longest_s + start_s, and work_s grows by items × start_s.
double schedule_makespan(std::uint64_t cells, double work_s, double longest_s, std::uint64_t cells_per_item,
                         std::uint64_t slots_per_runner, std::uint64_t runners, double start_s = 0);

// The failed indexes a k8s Job of `items` indexes tolerates (maxFailedIndexes) when a share
// `share` of its cells fail on their own: each index of `cells_per_item` cells fails with
// probability q = 1 - (1 - share)^cells_per_item, and the allowance is the binomial mean plus
// four standard deviations, plus 10 for the failures no sample saw, rounded up, at most `items`
// (so the Job stops only when failures run far past what the profile measured).
std::uint64_t failed_items_allowance(std::uint64_t items, std::uint64_t cells_per_item, double share);

// The makespan of `items` work items of at most `item_s` seconds on `pods` pods, each item paying
// `start_s` before its first cell and created no faster than `rate` per second, given
// `without_rate_s`, schedule_makespan's bound with the start: max(without_rate_s +
// (min(items, pods) - 1) / rate, (items - 1) / rate + start_s + item_s): the first round of pods
// is created over (pods - 1) / rate, and when the rate binds the last index is created at
// (items - 1) / rate. Used by the k8s layout's pricing; exposed for the tests.
double rate_limited_makespan(double without_rate_s, std::uint64_t items, std::uint64_t pods, double item_s,
                             double start_s, double rate);

// Kubernetes' bound on an Indexed Job's completions.
inline constexpr std::uint64_t k8s_max_indexed_completions = 100000;

// Options of the renderings that are not plan numbers.
struct render_options {
    std::string spark_allocation = "static";   // "static" | "dynamic"
    std::optional<std::string> gpu_discovery_script;  // spark.executor.resource.gpu.discoveryScript
    std::string image;                         // k8s-job: the container image (placeholder if empty)
    bool cpu_limit = false;                    // k8s: a CPU limit, only with a recorded thread cap
    std::uint64_t ttl_seconds = 86400;         // k8s-job: ttlSecondsAfterFinished
    std::vector<std::string> node_selector;    // k8s-job: KEY=VALUE, the pods' nodeSelector
    std::vector<std::string> tolerations;      // k8s-job: KEY[=VALUE]:EFFECT; a GPU family
                                               // tolerates nvidia.com/gpu:NoSchedule unless given
    std::optional<std::vector<std::uint64_t>> retry_indexes;  // k8s-job: render the retry tier
                                               // Job for these failed indexes of one family
    std::optional<std::uint64_t> retry_class;  // k8s-job: the size class (from 1, the N of
                                               // prof-FAMILY-cN) whose Job the indexes are of
};

// The exit code a k8s-job worker gives when a fit of its index failed on its own (the fit's
// failure is recorded in its output; retrying it would fail again): the Job's
// podFailurePolicy fails the index at once (FailIndex), as it does for 137 (OOM-killed: the
// retry tier takes those indexes at a larger size).
inline constexpr int k8s_fit_failed_exit = 3;

// The placeholder discovery script: where Spark's own example script lies in its distribution.
inline constexpr std::string_view spark_gpu_discovery_placeholder = "/opt/spark/examples/src/main/scripts/getGpusResources.sh";
inline constexpr std::string_view k8s_image_placeholder = "REPLACE-WITH-YOUR-WORKER-IMAGE";

// "10%" or "0.1": a share in [0, 1); throws usage_error naming `flag`.
double parse_share(const std::string& text, std::string_view flag);
// "1,3-5,7" (the form of a Job's status.failedIndexes) or "3,1": sorted, distinct indexes.
// Throws usage_error naming `flag` on anything else.
std::vector<std::uint64_t> parse_index_list(const std::string& text, std::string_view flag);
// Checks the rendering options against the target: --retry-indexes only with k8s-job,
// --retry-class only with --retry-indexes and from 1,
// --k8s-node-selector KEY=VALUE, --k8s-toleration KEY[=VALUE]:EFFECT with EFFECT NoSchedule,
// PreferNoSchedule or NoExecute. Throws usage_error.
void check_render_options(const std::string& target, const render_options& o);

// Renderings; each one is computed from the plan record alone (and the options).
std::string write_plan(const plan_record& p);         // one JSON line, no '\n'
// A plan record read back by its schema (what prof-report draws): each field's type checked,
// field_error naming its path. The run's limits and slack (max_container_memory_bytes,
// headroom, ...) are written from the request and not read back: they stay at their defaults.
plan_record read_plan(simdjson::ondemand::object& obj);
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
