// The `link_rate` record's schemas (defined in link_rate_record.cpp; the shapes in linkrate.hpp).
#pragma once

#include "prof/device/linkrate.hpp"
#include "prof/records/schema.hpp"

namespace prof {

const record_schema<link_device>& link_device_schema();
const record_schema<link_rate>& link_rate_schema();

}  // namespace prof
