// The Polars reader of the spans area: profile rows (node, start, end) in integer
// microseconds, as JSON Lines objects or as CSV.
#pragma once

#include "prof/spans/span_set.hpp"

#include <string>
#include <string_view>

namespace prof {

// Polars profile rows (node, start, end) in integer microseconds, as JSON Lines objects. Integer
// fields (quoted integers accepted) below 9e15 in magnitude; end < start is bad input naming the
// line. Throws input_error("SOURCE:LINE: what") (exit 65) on bad data.
span_set read_polars_jsonl(std::string_view text, const std::string& source);
// The same rows as CSV with a header naming node, start and end (any order, other columns
// ignored; RFC 4180 quoting, so a node name may hold commas).
span_set read_polars_csv(std::string_view text, const std::string& source);

// For format detection: whether `line` is a CSV header naming the node, start and end columns;
// whether it is a JSON object with a "node" member.
bool polars_csv_header(std::string_view line);
bool polars_jsonl_row(std::string_view line);

}  // namespace prof
