// prof-report: profile, plan, diff, fit and sample records → one self-contained HTML page (inline
// SVG and CSS, no script, nothing loaded from anywhere), readable with JavaScript off.
//
// What the page shows, each from the records' own numbers (nothing is re-derived: a curve is
// drawn by the same functions prof-plan prices it with, curve_wall_at and curve_rss_at of
// profile/curve.hpp):
//   provenance     each profile's and plan's basis (measured, reference, assumed), source, run,
//                  time and warnings, at the top;
//   per model      wall seconds and process RSS against series length: the fits as points
//                  (failed ones as crosses, contended ones ringed), the cost and memory curves
//                  through them (dashed where extrapolated), the panel's length distribution
//                  beneath (the profile's sample record);
//   per family     the sized slot against the measured peaks of its models (prof-records(5),
//                  PROFILE: FamilyCost);
//   the plan       each family's size classes against the measured peaks, the slots one node
//                  holds, and the schedule: the families one after another, each between its
//                  makespan_lower_s and makespan_s, against the deadline;
//   a diff         the gate's verdict and, per model and family, the axes that moved.
#pragma once

#include "prof/report/inputs.hpp"

#include <string>

namespace prof::report {

// The whole page, one HTML document ending in '\n'; empty when `in` holds no record.
// Deterministic: the same records give the same bytes (no clock, no host name).
std::string render_report(const report_inputs& in);

}  // namespace prof::report
