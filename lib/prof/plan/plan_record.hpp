// The `plan` record's schemas (defined in plan_record.cpp; the shapes in plan.hpp).
#pragma once

#include "prof/plan/plan.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<node_shape>& node_shape_schema();
const record_schema<plan_run>& plan_run_schema();
const record_schema<family_layout>& family_layout_schema();
const record_schema<axis_basis>& axis_basis_schema();
const record_schema<size_class>& size_class_schema();
const record_schema<family_plan>& family_plan_schema();
const record_schema<plan_totals>& plan_totals_schema();
const record_schema<plan_interval>& plan_interval_schema();
const record_schema<model_sample_width>& model_sample_width_schema();
const record_schema<plan_record>& plan_schema();

}  // namespace prof
