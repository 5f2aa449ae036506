// HTML escaping, scales, ticks and the SVG buffer of prof-report's page.
#include "prof/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prof::report {

namespace {
// The characters HTML gives a meaning to in text and attributes, each with the entity it is
// written as.
constexpr std::string_view html_special = "&<>\"'";
constexpr std::string_view html_entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
}  // namespace

std::string esc(std::string_view text) {
    std::string o;
    o.reserve(text.size());
    std::size_t from = 0;
    for (std::size_t at; (at = text.find_first_of(html_special, from)) != std::string_view::npos; from = at + 1) {
        o.append(text, from, at - from);
        o += html_entity[html_special.find(text[at])];
    }
    o.append(text.substr(from));
    return o;
}

std::string coord(double v) {
    if (!std::isfinite(v)) v = 0;
    std::string s = fmt::format("{:.2f}", v);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s;
}

double scale::at(double v) const {
    double t;
    if (log) t = (std::log10(std::max(v, lo * 1e-3)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    else t = (v - lo) / (hi - lo);
    return px0 + t * (px1 - px0);
}

double scale::value(double px) const {
    double t = (px - px0) / (px1 - px0);
    if (log) return std::pow(10.0, std::log10(lo) + t * (std::log10(hi) - std::log10(lo)));
    return lo + t * (hi - lo);
}

namespace {
// The round step (1, 2 or 5 × 10^k) that cuts `span` into about 5 parts.
double nice_step(double span) {
    double raw = span / 5;
    double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}
}  // namespace

scale length_scale(double lo, double hi, double px0, double px1) {
    lo = std::max(lo, 1.0);
    hi = std::max(hi, lo);
    if (hi / lo >= 20) {
        double l = std::pow(10.0, std::floor(std::log10(lo)));
        double h = std::pow(10.0, std::ceil(std::log10(hi)));
        // Keep a decade's padding only where it does not squash the data.
        if (lo / l > 3) l = lo / 1.3;
        if (h / hi > 3) h = hi * 1.3;
        return scale{l, h, px0, px1, true};
    }
    double step = nice_step(hi);
    return scale{0, std::ceil(hi * 1.02 / step) * step, px0, px1, false};
}

scale zero_based(double max, double px0, double px1, double step_hint) {
    if (!(max > 0) || !std::isfinite(max)) max = 1;
    double step = step_hint > 0 ? step_hint : nice_step(max);
    return scale{0, std::ceil(max * 1.04 / step) * step, px0, px1, false};
}

std::vector<double> ticks(const scale& s) {
    std::vector<double> t;
    if (s.log) {
        int e0 = static_cast<int>(std::floor(std::log10(s.lo))), e1 = static_cast<int>(std::ceil(std::log10(s.hi)));
        bool only_decades = e1 - e0 >= 3;
        for (int e = e0; e <= e1; ++e)
            for (double m : {1.0, 2.0, 5.0}) {
                double v = m * std::pow(10.0, e);
                if ((only_decades && m != 1) || v < s.lo * 0.999 || v > s.hi * 1.001) continue;
                t.push_back(v);
            }
        return t;
    }
    double step = nice_step(s.hi - s.lo);
    for (double v = s.lo; v <= s.hi * (1 + 1e-9); v += step) t.push_back(std::round(v / step) * step);
    return t;
}

namespace {
double byte_unit(double max) {
    double u = 1;
    while (max / u >= 1024 * 1.5 && u < std::pow(1024.0, 4)) u *= 1024;
    return u;
}
}  // namespace

double byte_axis_top(double max) {
    if (!(max > 0)) max = 1;
    double u = byte_unit(max);
    double step = nice_step(max / u) * u;
    return std::ceil(max * 1.04 / step) * step;
}

std::vector<double> byte_ticks(double max) {
    double u = byte_unit(max);
    double step = nice_step(max / u) * u;
    std::vector<double> t;
    for (double v = 0; v <= max * (1 + 1e-9); v += step) t.push_back(v);
    return t;
}

std::string count_label(double v) {
    auto short_num = [](double x) { return coord(std::round(x * 10) / 10); };
    if (v >= 1e6) return short_num(v / 1e6) + "M";
    if (v >= 1e4) return short_num(v / 1e3) + "k";
    return coord(v);
}

std::string seconds_label(double s) {
    if (s == 0) return "0";
    if (s < 1e-3) return coord(s * 1e6) + " µs";
    if (s < 1) return coord(s * 1e3) + " ms";
    if (s < 120) return coord(s) + " s";
    if (s < 7200) return coord(s / 60) + " min";
    return coord(s / 3600) + " h";
}

std::string bytes_label(double b) {
    if (b == 0) return "0";
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double u = byte_unit(b * 1.5 > 1024 ? b : 1);
    int k = 0;
    for (double x = u; x >= 1024; x /= 1024) ++k;
    return coord(b / u) + " " + units[k];
}

svg::svg(int width, int height, std::string_view label) {
    out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                      "role=\"img\" aria-label=\"{}\">\n",
                      width, height, width, height, esc(label));
}

std::string svg::finish() {
    out += "</svg>\n";
    return std::move(out);
}

void svg::line(double x1, double y1, double x2, double y2, std::string_view cls) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"{}\"/>\n", coord(x1), coord(y1), coord(x2),
                       coord(y2), cls);
}

void svg::rect(double x, double y, double w, double h, std::string_view cls, std::string_view title) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{}\"", coord(x), coord(y),
                       coord(std::max(w, 0.0)), coord(std::max(h, 0.0)), cls);
    out += title.empty() ? std::string("/>\n") : fmt::format("><title>{}</title></rect>\n", esc(title));
}

void svg::circle(double x, double y, double r, std::string_view cls, std::string_view title) {
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" class=\"{}\"", coord(x), coord(y), coord(r), cls);
    out += title.empty() ? std::string("/>\n") : fmt::format("><title>{}</title></circle>\n", esc(title));
}

void svg::cross(double x, double y, double r, std::string_view cls, std::string_view title) {
    out += fmt::format("<path d=\"M{} {}L{} {}M{} {}L{} {}\" class=\"{}\"", coord(x - r), coord(y - r), coord(x + r),
                       coord(y + r), coord(x - r), coord(y + r), coord(x + r), coord(y - r), cls);
    out += title.empty() ? std::string("/>\n") : fmt::format("><title>{}</title></path>\n", esc(title));
}

void svg::text(double x, double y, std::string_view s, std::string_view cls) {
    if (cls.empty()) out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", coord(x), coord(y), esc(s));
    else out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"{}\">{}</text>\n", coord(x), coord(y), cls, esc(s));
}

void svg::path(const std::vector<std::pair<double, double>>& pts, std::string_view cls) {
    if (pts.size() < 2) return;
    std::string d;
    for (std::size_t i = 0; i < pts.size(); ++i)
        d += fmt::format("{}{} {}", i ? "L" : "M", coord(pts[i].first), coord(pts[i].second));
    out += fmt::format("<path d=\"{}\" class=\"{}\"/>\n", d, cls);
}

void svg::y_axis(const scale& y, const std::vector<double>& at, const std::vector<std::string>& labels, double x0, double x1) {
    for (std::size_t i = 0; i < at.size(); ++i) {
        double py = y.at(at[i]);
        line(x0, py, x1, py, "grid");
        text(x0 - 4, py + 3.5, labels[i], "yl");
    }
    line(x0, y.px0, x0, y.px1, "axis");
}

void svg::x_axis(const scale& x, const std::vector<double>& at, const std::vector<std::string>& labels, double y) {
    line(x.px0, y, x.px1, y, "axis");
    for (std::size_t i = 0; i < at.size(); ++i) {
        double px = x.at(at[i]);
        line(px, y, px, y + 4, "axis");
        text(px, y + 15, labels[i], "xl");
    }
}

}  // namespace prof::report
