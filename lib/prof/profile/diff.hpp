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
// Intervals: each model's two time axes (median_wall_s, curve_wall_s_per_series) are given an
// interval per side from that side's readings (the bootstrap: `resamples` resamples of the
// fits with replacement, seeded, each resample's median, or its curve priced over the common
// lengths per series; the interval spans `confidence` of them, 0.8: P10 to P90). The rule:
// a time axis past its ratio is a regression only when NEW's low end is above OLD's high end
// as well (the intervals are disjoint); past the ratio with overlapping intervals it is a
// warning, not a regression. A side without readings (an older profile, a harvest) or with
// --resamples 0 has no interval: that axis keeps the ratio rule alone, said in a warning when
// it fails. A real 2x slowdown measured on 8 fits lies outside both spreads and still fails;
// a busy host's noise spreads both sides' fits and overlaps. Memory axes are maxima, never
// resampled: their rule is the ratio alone.
#pragma once

#include "prof/profile/profile.hpp"

#include <optional>
#include <string>
#include <vector>

namespace prof {

// Ratios as fractions: 0.2 = "fail when 20 % slower". nullopt = that gate is off. The
// intervals' confidence, resamples and seed default to prof-plan's (--confidence 80 %,
// --resamples 200, --seed 1).
struct diff_gate {
    std::optional<double> max_slower, max_bigger;
    double confidence = 0.8;         // in (0, 1)
    std::uint64_t resamples = 200;   // 0: no intervals, the ratio rule alone; at most max_diff_resamples
    std::uint64_t seed = 1;
};
inline constexpr std::uint64_t max_diff_resamples = 10000;

// One axis of one row. ratio = new / old when both are finite and > 0.
struct axis_change {
    std::string axis;  // the profile field's name, e.g. "median_wall_s"
    std::optional<double> old_value, new_value, ratio;
    // "same", "up", "down", "lost" (measured in old, null in new), "gained" (null in old), "none"
    std::string change;
    bool regression = false;  // this axis failed the gate
    // The axis's interval on each side (median_wall_s and curve_wall_s_per_series of a model
    // with readings on that side; null otherwise), in the axis's unit.
    std::optional<double> old_low, old_high, new_low, new_high;
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

// Compares two profiles. Pure. Throws usage_error when a gate ratio is negative or not finite,
// the confidence is not in (0, 1) or the resamples are more than max_diff_resamples.
profile_diff diff_profiles(const compute_profile& old_profile, const compute_profile& new_profile,
                           const diff_gate& gate, std::string old_label, std::string new_label);

// The one profile record in FILE or "-" (stdin). Throws input_error (65) on a malformed line
// or a second record, and error(65) when there is no record: a diff needs both sides.
compute_profile read_single_profile(const std::string& path);

// Reads a gate ratio: a fraction ("0.2", at most 1) or a percentage ("20%", any size); throws
// usage_error naming `flag` otherwise (negative, not finite, not a number, a bare number above 1,
// which is most often a percentage without its sign).
double parse_gate_ratio(const std::string& text, const std::string& flag);
// Reads --confidence: a share in (0, 1) as a fraction (0.8) or a percentage (80%); throws
// usage_error naming `flag` otherwise.
double parse_confidence(const std::string& text, const std::string& flag);

// One `diff` record (no '\n'), keys in the order of prof-records(5).
std::string write_diff(const profile_diff& d);
// The people's view: a header per side, one line per changed axis, the verdict.
std::string format_diff_table(const profile_diff& d);

}  // namespace prof
