// What prof-report draws, read from its input records: profiles (read by the profile record's own
// reader), fit and sample records, and the fields of plan and diff records the page shows (read
// here, each checked for its type, since no other prof program reads those two kinds back).
#pragma once

#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/profile/profile.hpp"
#include "prof/records/records.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prof::report {

// Where a record was read, as a diagnostic names it: "plan.json:1", "<stdin>:3".
template <class T>
struct placed {
    std::string where;
    T record;
};

// A family's layout (prof-records(5), PLAN, "A family's layout"), the fields drawn.
struct plan_layout {
    std::string unit;
    std::uint64_t slots_per_unit = 0, units_per_node = 0, unit_cores = 0, unit_memory_bytes = 0;
    std::uint64_t reserved_units = 0;
    std::string limited_by;
};

// One size class of a planned family.
struct plan_size_class {
    std::optional<std::uint64_t> n_obs_min, n_obs_max;
    std::uint64_t first_cell = 0, cells = 0, slot_cores = 0, slot_rss_bytes = 0, slots_per_node = 0;
    plan_layout layout;
    double work_s = 0, longest_cell_s = 0;
    std::uint64_t slots = 0, waves = 0;
    double makespan_s = 0;
};

// One planned family (plan.families.*).
struct plan_family {
    std::string family;
    std::vector<std::string> models;
    std::uint64_t slot_cores = 0, slot_rss_bytes = 0;
    std::optional<std::uint64_t> slot_gpu_bytes;
    std::uint64_t slots_per_node = 0;
    plan_layout layout;
    std::uint64_t cells = 0;
    double work_s = 0, longest_cell_s = 0;
    std::string longest_cell_model, wall_estimator;
    std::optional<std::uint64_t> longest_cell_n_obs, oom_floor_bytes;
    std::uint64_t nodes = 0, slots = 0, waves = 0;
    double makespan_s = 0, makespan_lower_s = 0;
    std::optional<bool> meets_deadline;
    std::vector<plan_size_class> size_classes;
    double size_class_saving = 0;
    std::string basis_cores, basis_memory, basis_gpu, basis_wall;
    std::uint64_t n_ok = 0;
    double failure_share = 0;
    bool low_confidence = false;
    std::vector<std::string> warnings;
};

// A plan record, the fields the page shows.
struct plan_view {
    profile_provenance provenance;
    std::uint64_t node_cores = 0, node_memory_bytes = 0, node_gpus = 0;
    std::optional<std::uint64_t> node_gpu_memory_bytes;
    std::uint64_t series = 0;
    std::vector<std::string> models;
    std::string layout, length_source;
    std::optional<std::uint64_t> max_n_obs, nodes_given;
    std::optional<double> deadline_s, planned_deadline_s;
    double headroom = 0;
    std::vector<plan_family> families;  // sorted by family, as the record's map is
    std::uint64_t total_cells = 0, total_nodes = 0;
    double total_work_s = 0, total_longest_cell_s = 0, total_makespan_s = 0, total_makespan_lower_s = 0;
    std::optional<bool> total_meets_deadline;
    std::vector<std::string> warnings;
};

// One axis of a diff row: the record's values as written.
struct diff_axis {
    std::string axis;
    std::optional<double> old_value, new_value, ratio;
    std::string change;
    bool regression = false;
};
struct diff_row {
    std::string name, family, presence;
    std::uint64_t old_n_ok = 0, new_n_ok = 0;
    std::vector<diff_axis> axes;
};
struct diff_side_view {
    std::string label, basis, source;
    std::optional<std::string> run_id, measured_at;
};
// A diff record, the fields the page shows.
struct diff_view {
    diff_side_view old_side, new_side;
    std::optional<double> max_slower, max_bigger;
    bool passed = true;
    std::optional<std::string> curve_lengths;
    std::vector<diff_row> models, families;
    std::vector<std::string> regressions, warnings;
};

// A sample record's length distribution (prof-records(5) SAMPLE), from the record or a profile's
// copy of it.
struct length_bar {
    std::uint64_t n_obs_min = 0, n_obs_max = 0, n_series = 0;
};
struct sample_view {
    std::string where;
    std::uint64_t n_series = 0, n_obs_min = 0, n_obs_max = 0;
    std::vector<length_bar> lengths;
};

// Every record of the input, in input order within each kind.
struct report_inputs {
    std::vector<std::string> sources;  // the inputs as named ("<stdin>" for "-")
    std::vector<placed<compute_profile>> profiles;
    std::vector<placed<measured_fit>> fits;
    std::optional<sample_view> sample;  // the first sample record read
    std::vector<placed<plan_view>> plans;
    std::vector<placed<diff_view>> diffs;
    std::size_t records() const { return profiles.size() + fits.size() + plans.size() + diffs.size() + (sample ? 1 : 0); }
};

// Reads one record of any kind prof-report draws into `in`. Throws field_error (which the
// record loop turns into "SOURCE:LINE: ...", exit 65) for a kind it does not draw and for a
// field of the wrong type.
void add_record(report_inputs& in, simdjson::ondemand::object& obj, const record_place& at);

// Reads INPUTS through for_each_record (every malformed line is an error: a page drawn from part
// of its input would mislead).
report_inputs read_inputs(const std::vector<std::string>& inputs);

// The length distribution a sample record (or a profile's copy) holds. Throws field_error.
sample_view read_sample_view(const json_value& v, std::string where);
// The plan and diff views of a record's JSON. Throw field_error naming the field.
plan_view read_plan_view(const json_value& v);
diff_view read_diff_view(const json_value& v);

}  // namespace prof::report
