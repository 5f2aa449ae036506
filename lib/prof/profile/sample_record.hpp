// The `sample` record's schemas (defined in sample_record.cpp; the shapes in sample.hpp and
// curve.hpp).
#pragma once

#include "prof/profile/sample.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<length_bin>& length_bin_schema();
const record_schema<model_spec>& model_spec_schema();
const record_schema<sample_record>& sample_schema();

}  // namespace prof
