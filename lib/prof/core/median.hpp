// The median: one rule for every median prof reports (a model's wall and CPU time, a curve
// point's, a link rate's samples, a warehouse's two middle values read back).
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace prof {

// The median of an even count: the mean of its two middle values, taken as lo + (hi - lo) / 2
// so that it cannot overflow where (lo + hi) / 2 would.
inline double mean_of_middle(double lo, double hi) { return lo + (hi - lo) / 2; }

// The median of the values (odd count: the middle one; even count: mean_of_middle of the two
// middle ones); nullopt when empty. Reorders `v` (nth_element: linear time).
std::optional<double> median(std::vector<double>& v);

// The median of the concatenation of `parts` — the same value median() gives on one vector
// holding them all — without copying them: values must be finite and > 0 (as usable axis
// values are), which order as their bit patterns do, so the two middle values are found by
// radix selection over the patterns (a pass counts them by 11 bits, only the bucket holding
// the middle is kept, and so on; a few dozen values go to nth_element). nullopt when all
// parts are empty.
std::optional<double> median_of_parts(const std::vector<std::span<const double>>& parts);

}  // namespace prof
