// The `query_profile` record's schemas (defined in query_profile_record.cpp; the shapes in
// query_model.hpp).
#pragma once

#include "prof/spans/query_model.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<query_node>& query_node_schema();
const record_schema<query_fit_point>& query_fit_point_schema();
const record_schema<query_profile>& query_profile_schema();

}  // namespace prof
