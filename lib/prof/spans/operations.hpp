// prof-spans' operations over query_profile lines read from files: the staleness verdict and
// the fit, with what they say on stderr; the cached profile of a plan; and the --rows value
// they and the build take.
#pragma once

#include "prof/resolve/cache.hpp"
#include "prof/spans/spans.hpp"

#include <cstdint>
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

// fit_query_profiles over the profiles read (its warnings said), nullopt when there are none.
// A run whose own estimate is beyond double range is input_error naming its line; a refused fit
// is exit 65.
std::optional<query_profile> fit_located_profiles(std::vector<located_query_profile> profiles);

// The query_profile record cached for `plan_key` on `host`, or nullopt with a note saying there
// is none. Throws what profile_cache::get throws.
std::optional<std::string> cached_query_profile(const profile_cache& cache, const std::string& plan_key,
                                                const std::string& host);

}  // namespace prof
