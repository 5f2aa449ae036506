// The schema of every record kind (the tables live beside each kind's reader and writer in
// lib/prof/records/): what the readers, the writers and scripts/records-check share.
#pragma once

#include "prof/profile/diff.hpp"
#include "prof/device/linkrate.hpp"
#include "prof/plan/plan.hpp"
#include "prof/profile/profile.hpp"
#include "prof/records/records.hpp"
#include "prof/measure/sample.hpp"
#include "prof/spans/spans.hpp"
#include "prof/records/schema.hpp"

namespace prof {

// One line of a run registry's index.jsonl (no kind: the index never travels on a pipe).
struct registry_index_line {
    std::string run_id;
    std::optional<json_value> signature;     // the run's data signature; null = none
    std::optional<std::string> measured_at;  // RFC 3339 UTC
};

const record_schema<cell>& cell_schema();
const record_schema<measured_fit>& fit_schema();
const record_schema<link_device>& link_device_schema();
const record_schema<link_rate>& link_rate_schema();
const record_schema<query_node>& query_node_schema();
const record_schema<query_fit_point>& query_fit_point_schema();
const record_schema<query_profile>& query_profile_schema();
const record_schema<profile_provenance>& provenance_schema();
const record_schema<curve_point>& curve_point_schema();
const record_schema<model_cost>& model_cost_schema();
const record_schema<family_cost>& family_cost_schema();
const record_schema<compute_profile>& profile_schema();
const record_schema<node_shape>& node_shape_schema();
const record_schema<plan_run>& plan_run_schema();
const record_schema<family_layout>& family_layout_schema();
const record_schema<axis_basis>& axis_basis_schema();
const record_schema<size_class>& size_class_schema();
const record_schema<family_plan>& family_plan_schema();
const record_schema<plan_totals>& plan_totals_schema();
const record_schema<plan_record>& plan_schema();
const record_schema<length_bin>& length_bin_schema();
const record_schema<model_spec>& model_spec_schema();
const record_schema<sample_record>& sample_schema();
schema_description diff_side_description();  // diff.old and diff.new (a view, not a member)
const record_schema<profile_diff>& diff_gate_schema();
const record_schema<axis_change>& axis_change_schema();
const record_schema<row_diff>& diff_model_row_schema();
const record_schema<row_diff>& diff_family_row_schema();
const record_schema<profile_diff>& diff_schema();
const record_schema<registry_index_line>& registry_index_line_schema();

}  // namespace prof
