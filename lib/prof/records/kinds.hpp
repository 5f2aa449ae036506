// The schema of every record kind (the tables live beside each kind's reader and writer in
// lib/prof/records/): what the readers, the writers and scripts/records-check share.
#pragma once

#include "prof/records.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<cell>& cell_schema();
const record_schema<measured_fit>& fit_schema();

}  // namespace prof
