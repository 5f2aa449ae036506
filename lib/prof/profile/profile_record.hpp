// The `profile` record's schemas (defined in profile_record.cpp; the shapes in profile.hpp and
// curve.hpp).
#pragma once

#include "prof/profile/profile.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<profile_provenance>& provenance_schema();
const record_schema<curve_point>& curve_point_schema();
const record_schema<fit_reading>& fit_reading_schema();
const record_schema<thread_cap_count>& thread_cap_schema();
const record_schema<model_cost>& model_cost_schema();
const record_schema<family_cost>& family_cost_schema();
const record_schema<compute_profile>& profile_schema();

}  // namespace prof
