// prof-report's diff section: the gate's verdict, then per model and family the axes that moved,
// each with both sides' values and the ratio drawn on a log scale around 1.
#include "prof/report/page.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prof::report {

namespace {

bool ends_with(std::string_view s, std::string_view x) { return s.size() >= x.size() && s.substr(s.size() - x.size()) == x; }

// A value in the axis's unit (from its name: _s seconds, _bytes bytes, else a count).
std::string axis_value(const std::string& axis, std::optional<double> v) {
    if (!v) return html_seconds(std::nullopt);
    if (ends_with(axis, "_s") || axis.find("_s_per_") != std::string::npos) return html_seconds(v);
    if (ends_with(axis, "_bytes")) return html_bytes(static_cast<std::uint64_t>(*v));
    return html_number(v);
}

// The ratio new / old as a bar from 1 on a log scale over [1/4, 4].
std::string ratio_bar(std::optional<double> ratio, bool regression) {
    if (!ratio || !(*ratio > 0)) return "";
    svg g(120, 14, fmt::format("ratio {:.3g}", *ratio));
    scale x{0.25, 4, 2, 118, true};
    double r = std::clamp(*ratio, 0.25, 4.0);
    double a = x.at(1), b = x.at(r);
    g.rect(std::min(a, b), 3, std::max(std::abs(b - a), 1.5), 8, regression ? "failbar" : (r >= 1 ? "peak" : "sched"));
    g.line(a, 0, a, 14, "axis");
    std::string s = g.finish();
    s.pop_back();                              // inline in a table cell
    return "<svg class=\"inline\"" + s.substr(4);  // sized as drawn, not shrunk to the cell

}

std::string rows_table(const std::vector<diff_row>& rows, bool models) {
    std::string o = fmt::format("<table>\n<tr><th>{}</th><th class=\"l\">presence</th><th>ok fits old → new</th>"
                                "<th class=\"l\">axis</th><th>old</th><th>new</th><th>new / old</th><th></th>"
                                "<th class=\"l\">change</th></tr>\n", models ? "model" : "family");
    for (const auto& r : rows) {
        std::vector<const diff_axis*> moved;
        for (const auto& a : r.axes)
            if (a.change != "same" && a.change != "none") moved.push_back(&a);
        std::string head = fmt::format("<td>{}{}</td><td class=\"l\">{}</td><td>{} → {}</td>", esc(r.name),
                                       models ? " <small>(" + esc(r.family) + ")</small>" : "", esc(r.presence), r.old_n_ok, r.new_n_ok);
        if (moved.empty()) {
            o += "<tr>" + head + "<td class=\"l\" colspan=\"6\"><span class=\"null\">nothing moved</span></td></tr>\n";
            continue;
        }
        for (std::size_t i = 0; i < moved.size(); ++i) {
            const diff_axis& a = *moved[i];
            o += fmt::format("<tr{}>{}<td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}{}</td></tr>\n",
                             a.regression ? " class=\"regression\"" : "", i ? "<td></td><td></td><td></td>" : head, esc(a.axis),
                             axis_value(a.axis, a.old_value), axis_value(a.axis, a.new_value), html_number(a.ratio),
                             ratio_bar(a.ratio, a.regression), esc(a.change), a.regression ? " <span class=\"bad\">regression</span>" : "");
        }
    }
    return o + "</table>\n";
}

std::string side_text(const diff_side_view& s) {
    return fmt::format("<code>{}</code> {} {}{}{}", esc(s.label), basis_badge(s.basis), esc(s.source),
                       s.run_id ? ", run " + esc(*s.run_id) : "", s.measured_at ? ", measured " + esc(*s.measured_at) : "");
}

std::string gate_text(const diff_view& d) {
    auto pct = [](std::optional<double> r) { return r ? fmt::format("{:g}%", *r * 100) : std::string("off"); };
    std::string o = d.passed ? "<p class=\"verdict v-pass\">Gate passed</p>\n" : "<p class=\"verdict v-fail\">Gate failed</p>\n";
    o += fmt::format("<p>Old: {}.<br>New: {}.<br>Gate: slower by at most {}, bigger by at most {}; curves priced over {}.</p>\n",
                     side_text(d.old_side), side_text(d.new_side), pct(d.max_slower), pct(d.max_bigger),
                     esc(d.curve_lengths.value_or("no curve on either side")));
    if (!d.regressions.empty() || !d.warnings.empty()) {
        o += "<ul class=\"warnings\">\n";
        for (const auto& r : d.regressions) o += "<li class=\"warn\"><b>regression:</b> " + esc(r) + "</li>\n";
        for (const auto& w : d.warnings) o += "<li class=\"warn\">" + esc(w) + "</li>\n";
        o += "</ul>\n";
    }
    return o;
}

}  // namespace

std::string diff_section(const placed<diff_view>& dd, std::size_t index) {
    const diff_view& d = dd.record;
    std::string o = section_head("diff", "Diff", index, esc(dd.where));
    o += gate_text(d);
    o += "<h3>Models: what moved (raw values)</h3>\n" + rows_table(d.models, true);
    o += "<h3>Families: what moved (sized slots; never gated)</h3>\n" + rows_table(d.families, false);
    return o + "</section>\n";
}

}  // namespace prof::report
