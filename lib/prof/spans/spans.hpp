// The query_profile record: its line, reading and writing, and the cache key it is stored under.
// The rest of the spans area (readers, interval arithmetic, the query_profile model) lives in
// lib/prof/spans/, whose headers this one includes for the tools.
#pragma once

#include "prof/spans/chrome.hpp"
#include "prof/spans/duckdb.hpp"
#include "prof/spans/formats.hpp"
#include "prof/spans/intervals.hpp"
#include "prof/spans/polars.hpp"
#include "prof/spans/query_model.hpp"
#include "prof/spans/span_set.hpp"

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// A query_profile line as read, with where it was read (for messages).
struct located_query_profile {
    query_profile profile;
    std::string source;  // the path, "<stdin>" for "-"
    std::size_t line = 0;
};
// Every query_profile line of `paths` ("-" = stdin), in order. Up to max_bad_lines malformed
// lines are skipped (one warning with their count); the next is input_error naming its line.
std::vector<located_query_profile> read_query_profile_lines(const std::vector<std::string>& paths,
                                                            std::size_t max_bad_lines);
// finite_estimate(p.profile, rows), its refusal as input_error naming the profile's line.
double located_estimate(const located_query_profile& p, std::uint64_t rows);

std::string write_query_profile(const query_profile& p);
// Reads a query_profile record (kind checked); throws field_error naming the field.
query_profile read_query_profile(simdjson::ondemand::object& obj);
// Cache key of a query profile: (plan_key, host); the engine version is staleness, not key.
std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host);
// The key a stored query_profile text names by its own fields (the ProfileCache's record_key for
// "query_profile"); throws field_error when the text is no query_profile.
std::vector<std::string> query_profile_record_key(std::string_view text);

}  // namespace prof
