// The `diff` record's schemas (defined in diff_record.cpp; the shapes in diff.hpp).
#pragma once

#include "prof/profile/diff.hpp"
#include "prof/records/schema.hpp"

namespace prof {

schema_description diff_side_description();  // diff.old and diff.new (a view, not a member)
const record_schema<profile_diff>& diff_gate_schema();
const record_schema<axis_change>& axis_change_schema();
const record_schema<row_diff>& diff_model_row_schema();
const record_schema<row_diff>& diff_family_row_schema();
const record_schema<profile_diff>& diff_schema();

}  // namespace prof
