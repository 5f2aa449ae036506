// The `cell` and `fit` records' schemas (defined in fit_record.cpp; the shapes in records.hpp).
#pragma once

#include "prof/records/records.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<cell>& cell_schema();
const record_schema<measured_fit>& fit_schema();

}  // namespace prof
