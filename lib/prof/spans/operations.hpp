// prof-spans' operations over query_profile lines read from files: the staleness verdict and
// the fit, with what they say on stderr; the cached profile of a plan; and the --rows value
// they and the build take.
#pragma once

#include "prof/io/cache.hpp"
#include "prof/spans/spans.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace prof {

// The --rows value: nullopt when not given (""), else a non-negative integer (positive unless
// allow_zero); usage_error naming the text otherwise.
std::optional<std::uint64_t> rows_option(const std::string& text, bool allow_zero);

// 0 when every profile can price `rows` on `engine_version`, else 1 (exit_code::negative) with
// a note per stale profile saying why; 1 with a note when there is no profile at all.
int stale_verdict(const std::vector<located_query_profile>& profiles, std::uint64_t rows,
                  const std::string& engine_version, double factor);

// fit_query_profiles over the profiles read (its warnings said). No profile at all is exit 65,
// as one row count is: a fit of nothing must not pass as a quiet success. A run whose own
// estimate is beyond double range is input_error naming its line; a refused fit is exit 65.
query_profile fit_located_profiles(std::vector<located_query_profile> profiles);

// prof-spans estimate: `emit` gets one number per profile, in order, fixed_seconds +
// per_row_seconds x rows, each with its caveat noted on stderr (estimate_caveat); a profile whose
// estimate is beyond double range stops it (input_error naming its line) after the ones before
// it. No profile at all is exit 65: nothing priced the query.
void estimate_lines(const std::vector<located_query_profile>& profiles, std::uint64_t rows,
                    const std::function<void(const std::string&)>& emit);

// What an estimate at `rows` should say of itself, or nullopt: a fit whose coefficient was
// clamped to 0 (per_row_seconds 0 prices every row count alike; fixed_seconds 0 is the origin,
// not a measured start-up), and a fit used beyond the row counts it was fitted over.
std::optional<std::string> estimate_caveat(const query_profile& p, std::uint64_t rows);

// The query_profile record cached for `plan_key` on `host`, or nullopt with a note saying there
// is none. Throws what profile_cache::get throws.
std::optional<std::string> cached_query_profile(const profile_cache& cache, const std::string& plan_key,
                                                const std::string& host);

}  // namespace prof
