// The run registry's index line: its shape and schema (defined in registry_record.cpp).
#pragma once

#include "prof/resolve/registry.hpp"
#include "prof/records/schema.hpp"

namespace prof {

// One line of a run registry's index.jsonl (no kind: the index never travels on a pipe).
struct registry_index_line {
    std::string run_id;
    std::optional<json_value> signature;     // the run's data signature; null = none
    std::optional<std::string> measured_at;  // RFC 3339 UTC
};

const record_schema<registry_index_line>& registry_index_line_schema();

}  // namespace prof
