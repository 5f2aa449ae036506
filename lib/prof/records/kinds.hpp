// The schema of every record kind (the tables live beside each kind's reader and writer in
// lib/prof/records/): what the readers, the writers and scripts/records-check share.
#pragma once

#include "prof/linkrate.hpp"
#include "prof/profile.hpp"
#include "prof/records.hpp"
#include "prof/spans.hpp"
#include "prof/records/schema.hpp"

namespace prof {

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

}  // namespace prof
