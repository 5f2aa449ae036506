// Drawing primitives of prof-report's page: HTML escaping, axis scales with their ticks, and an
// SVG text buffer. Everything is text: the page carries no script and loads nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prof::report {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string esc(std::string_view text);

// A number written as SVG coordinates are: at most 2 decimals, no trailing zeros ("12.5", "3").
std::string coord(double v);

// A map from a data interval [lo, hi] onto a pixel interval [px0, px1] (px1 < px0 for a y axis,
// whose pixels grow downwards). Logarithmic when `log` (lo > 0 then).
struct scale {
    double lo = 0, hi = 1;
    double px0 = 0, px1 = 1;
    bool log = false;
    double at(double v) const;      // the pixel of v (values outside [lo, hi] map outside)
    double value(double px) const;  // the inverse
};

// The x scale of series lengths: logarithmic when the lengths span a factor of 20 or more (a
// panel of many short series and a few long ones), else linear from 0. `lo` and `hi` are the
// shortest and longest lengths drawn (lo <= hi; lo >= 1).
scale length_scale(double lo, double hi, double px0, double px1);

// A linear scale from 0 to a little above `max` (max <= 0: to 1), with the top at a tick.
scale zero_based(double max, double px0, double px1, double step_hint = 0);

// Where ticks go: for a linear scale 4 to 6 round values (1, 2 or 5 × 10^k apart); for a log
// scale 1, 2 and 5 × 10^k inside [lo, hi] (only the powers of 10 when they are 3 or more).
std::vector<double> ticks(const scale& s);
// Byte ticks at round multiples of a binary unit (KiB, MiB, GiB) below `max`.
std::vector<double> byte_ticks(double max);
// The top of a byte axis: the first byte tick step multiple at or above max.
double byte_axis_top(double max);

// Tick labels: a count ("12", "2k", "1.5M"), seconds ("50 ms", "2 s", "5 min"), bytes ("512 MiB").
std::string count_label(double v);
std::string seconds_label(double s);
std::string bytes_label(double b);

// An SVG document under construction (text appended as written).
struct svg {
    std::string out;
    svg(int width, int height, std::string_view label);  // opens <svg ...> with role="img"
    std::string finish();                                // closes it and returns the text
    void line(double x1, double y1, double x2, double y2, std::string_view cls);
    void rect(double x, double y, double w, double h, std::string_view cls, std::string_view title = {});
    void circle(double x, double y, double r, std::string_view cls, std::string_view title = {});
    void cross(double x, double y, double r, std::string_view cls, std::string_view title = {});
    void text(double x, double y, std::string_view s, std::string_view cls = {});
    // A polyline through the points (x, y); nothing for fewer than 2 points.
    void path(const std::vector<std::pair<double, double>>& pts, std::string_view cls);
    // A left axis with gridlines over [x0, x1] at `at` and its labels, and a bottom axis.
    void y_axis(const scale& y, const std::vector<double>& at, const std::vector<std::string>& labels, double x0, double x1);
    void x_axis(const scale& x, const std::vector<double>& at, const std::vector<std::string>& labels, double y);
};

}  // namespace prof::report
