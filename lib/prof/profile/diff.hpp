// Comparing two cost profiles (prof-diff): per model and per family, what changed between an
// old run's evidence and a new one's, and a regression gate for CI.
//
// Model rows compare the raw evidence (no margin): median wall and CPU seconds, the mean wall
// one series takes on the model's cost curve (both sides priced over the same lengths, so a
// model that got slower on long series only is seen), max process RSS, max GPU peak, max
// effective cores. Family rows compare the sized slot values a plan
// would deploy (slot cores, slot RSS, slot GPU bytes, planning wall per cell), which also move
// when the margins move. The gate reads the model rows only, so a margin change alone never
// fails it:
//   slower  median_wall_s or curve_wall_s_per_series  new / old > 1 + max_slower
//   bigger  max_process_rss_bytes, max_peak_gpu_bytes or oom_floor_bytes (the memory a model's
//           OOM kills prove it needs)  new / old > 1 + max_bigger, or the snapped core count
//           (max(1, ceil(max_effective_cores - 0.05))) went up by more than that ratio, or the
//           model was killed for memory in NEW and never in OLD
// A model whose gated axis was measured in OLD and is null in NEW (it failed, or it is gone)
// fails the gate on that axis: no evidence cannot show it is not slower or bigger.
// Noise: a slower axis past its ratio fails only when the two samples' spreads do not overlap:
// with at least 2 readings on each side, NEW's P10 above OLD's P90 of the axis over 200
// resamples of each side's fits (seed 1; the median, or the curve priced over the common
// lengths). Overlapping ones are a warning, not a regression; a side without readings (an older
// profile) keeps the ratio rule alone.
#pragma once

#include "prof/profile/profile.hpp"

#include <optional>
#include <string>
#include <vector>

namespace prof {

// Ratios as fractions: 0.2 = "fail when 20 % slower". nullopt = that gate is off.
struct diff_gate {
    std::optional<double> max_slower, max_bigger;
};

// One axis of one row. ratio = new / old when both are finite and > 0.
struct axis_change {
    std::string axis;  // the profile field's name, e.g. "median_wall_s"
    std::optional<double> old_value, new_value, ratio;
    // "same", "up", "down", "lost" (measured in old, null in new), "gained" (null in old), "none"
    std::string change;
    bool regression = false;  // this axis failed the gate
};

struct row_diff {
    std::string name, family;  // family: the model's family in NEW (OLD's if removed); "" on family rows
    std::string presence;      // "both", "added" (only in new), "removed" (only in old)
    std::uint64_t old_n_ok = 0, new_n_ok = 0;
    std::vector<axis_change> axes;
};

struct profile_diff {
    std::string old_label, new_label;  // what each side is: a file name or run:<id>
    profile_provenance old_provenance, new_provenance;
    diff_gate gate;
    // What curve_wall_s_per_series was priced over: "new sample", "old sample", "new measured
    // lengths", "old measured lengths", or "" (neither side has a curve).
    std::string lengths_source;
    std::vector<row_diff> models, families;  // sorted by name
    std::vector<std::string> regressions;    // one sentence per failed gate check
    std::vector<std::string> warnings;       // e.g. margins differ
    bool passed() const { return regressions.empty(); }
};

// Compares two profiles. Pure. Throws usage_error when a gate ratio is negative or not finite.
profile_diff diff_profiles(const compute_profile& old_profile, const compute_profile& new_profile,
                           const diff_gate& gate, std::string old_label, std::string new_label);

// The one profile record in FILE or "-" (stdin). Throws input_error (65) on a malformed line
// or a second record, and error(65) when there is no record: a diff needs both sides.
compute_profile read_single_profile(const std::string& path);

// Reads a gate ratio: a fraction ("0.2", at most 1) or a percentage ("20%", any size); throws
// usage_error naming `flag` otherwise (negative, not finite, not a number, a bare number above 1,
// which is most often a percentage without its sign).
double parse_gate_ratio(const std::string& text, const std::string& flag);

// One `diff` record (no '\n'), keys in the order of prof-records(5).
std::string write_diff(const profile_diff& d);
// The people's view: a header per side, one line per changed axis, the verdict.
std::string format_diff_table(const profile_diff& d);

}  // namespace prof
