// prof-report's page: the document, its style sheet, the provenance at the top, and the number
// cells every section uses.
#include "prof/report/report.hpp"

#include "prof/profile/profile_record.hpp"
#include "prof/report/page.hpp"

#include "prof/core/units.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace prof::report {

std::string html_seconds(std::optional<double> s) {
    if (!s) return "<span class=\"null\" title=\"null\">—</span>";
    return fmt::format("<span title=\"{} s\">{}</span>", *s, esc(human_seconds(*s)));
}

std::string html_bytes(std::optional<std::uint64_t> b) {
    if (!b) return "<span class=\"null\" title=\"null\">—</span>";
    return fmt::format("<span title=\"{} bytes\">{}</span>", *b, esc(human_bytes(double(*b))));
}

std::string html_number(std::optional<double> v) {
    if (!v) return "<span class=\"null\" title=\"null\">—</span>";
    return fmt::format("<span title=\"{}\">{:.3g}</span>", *v, *v);
}

std::string html_count(std::optional<std::uint64_t> v) {
    if (!v) return "<span class=\"null\" title=\"null\">—</span>";
    return fmt::format("{}", *v);
}

std::string html_bool(std::optional<bool> v, std::string_view yes, std::string_view no) {
    if (!v) return "<span class=\"null\" title=\"null\">—</span>";
    return *v ? fmt::format("<span class=\"good\">{}</span>", yes) : fmt::format("<span class=\"bad\">{}</span>", no);
}

std::string basis_badge(std::string_view basis) {
    std::string cls = basis == "measured" ? "b-measured" : basis == "reference" ? "b-reference" : "b-assumed";
    return fmt::format("<span class=\"badge {}\">{}</span>", cls, esc(basis));
}

std::string joined(const std::vector<std::string>& items) {
    std::string o;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) o += i + 1 == items.size() ? " and " : ", ";
        o += items[i];
    }
    return o;
}

std::string section_head(std::string_view id, std::string_view title, std::size_t index, std::string_view note_html) {
    return fmt::format("<section id=\"{}-{}\">\n<h2>{} {} <small>({})</small></h2>\n", id, index, title, index, note_html);
}

std::string html_table(const std::vector<column>& columns, const std::vector<std::vector<std::string>>& rows) {
    auto cell = [](std::string_view tag, bool text, std::string_view html) {
        return fmt::format("<{}{}>{}</{}>", tag, text ? " class=\"l\"" : "", html, tag);
    };
    std::string o = "<table>\n<tr>";
    for (const auto& c : columns) o += cell("th", c.text, esc(c.heading));
    o += "</tr>\n";
    for (const auto& r : rows) {
        o += "<tr>";
        for (std::size_t i = 0; i < r.size(); ++i) o += cell("td", i < columns.size() && columns[i].text, r[i]);
        o += "</tr>\n";
    }
    return o + "</table>\n";
}

std::vector<memory_point> measured_memory(const std::vector<std::string>& models, const compute_profile* profile,
                                          const report_inputs& in) {
    std::vector<memory_point> out;
    auto wanted = [&](const std::string& m) { return std::find(models.begin(), models.end(), m) != models.end(); };
    for (const auto& pf : in.fits) {
        const measured_fit& f = pf.record;
        if (!wanted(f.model_type) || f.phase != fit_phase_sample || !f.n_obs || !*f.n_obs) continue;
        std::optional<std::uint64_t> b = f.process_rss_bytes;
        if (!f.ok && f.oom_killed.value_or(false) && f.memory_limit_bytes) b = f.memory_limit_bytes;
        if (!b || !*b) continue;
        out.push_back({*f.n_obs, *b, !f.ok,
                       fmt::format("{} {} (n_obs {}): {}{}", f.model_type, f.ts_id, *f.n_obs, human_bytes(double(*b)),
                                   f.ok ? "" : " — failed: " + f.error.value_or("no error text"))});
    }
    if (!out.empty() || !profile) return out;
    for (const auto& [name, m] : profile->models) {
        if (!wanted(name)) continue;
        for (const auto& pt : m.wall_curve)
            if (pt.max_process_rss_bytes)
                out.push_back({pt.n_obs, *pt.max_process_rss_bytes, false,
                               fmt::format("{} curve point n_obs {}–{} ({} fits): {}", name, pt.n_obs_min, pt.n_obs_max,
                                           pt.n_fits, human_bytes(double(*pt.max_process_rss_bytes)))});
    }
    return out;
}

const compute_profile* profile_of(const plan_record& plan, const report_inputs& in) {
    std::string want;
    {
        json_writer w;
        write_provenance(w, plan.provenance);
        want = w.take();
    }
    for (const auto& p : in.profiles) {
        json_writer w;
        write_provenance(w, p.record.provenance);
        if (w.take() == want) return &p.record;
    }
    return in.profiles.size() == 1 ? &in.profiles.front().record : nullptr;
}

namespace {

const char* style_sheet() {
    return R"(<style>
:root{color-scheme:light}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2937;background:#fff;margin:0}
main{max-width:1040px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:2px solid #e5e7eb;padding-bottom:4px}
h3{font-size:16px;margin:22px 0 6px}p{margin:6px 0}
nav a{margin-right:14px;color:#1f5fbf}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #e5e7eb;padding:3px 9px;text-align:right;vertical-align:top}
td{white-space:nowrap}td.l{white-space:normal}
th{background:#f3f4f6;font-weight:600}td:first-child,th:first-child{text-align:left}
td.l,th.l{text-align:left}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;color:#fff}
.b-measured{background:#15803d}.b-reference{background:#1f5fbf}.b-assumed{background:#c2410c}
.good{color:#15803d;font-weight:600}.bad{color:#b91c1c;font-weight:600}.null{color:#9ca3af}
.warn{color:#92400e;background:#fffbeb;border-left:3px solid #f59e0b;padding:4px 8px;margin:4px 0;list-style:none}
ul.warnings{padding:0;margin:6px 0}
.verdict{font-size:16px;font-weight:600;padding:6px 10px;border-radius:6px;display:inline-block}
.v-pass{background:#dcfce7;color:#166534}.v-fail{background:#fee2e2;color:#991b1b}
tr.regression td{background:#fef2f2}
figure{margin:12px 0 20px}figcaption{color:#4b5563;font-size:13px;max-width:760px}
.legend span.sw{display:inline-block;width:12px;height:12px;margin:0 4px -2px 10px;border-radius:2px}
.sw-fit{background:#374151}.sw-wall{background:#1f5fbf}.sw-mem{background:#7b3fb5}.sw-fail{background:#d62728}
.sw-cont{border:2px solid #f28e2b;box-sizing:border-box}.sw-len{background:#b08d57}.sw-slot{background:#2a9d3a}
.sw-sched{background:#138d90}.sw-dl{background:#e11d48}
svg{max-width:100%;height:auto;font:11px system-ui,"DejaVu Sans",sans-serif;display:block}
svg text{fill:#374151}svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .t{font-weight:600;font-size:12px}
svg .r{text-anchor:end}svg .m{text-anchor:middle}svg .w{fill:#fff;font-weight:600}
svg .grid{stroke:#eef0f3}svg .axis{stroke:#6b7280}
svg .wall{stroke:#1f5fbf;stroke-width:2.5;fill:none}svg .mem{stroke:#7b3fb5;stroke-width:2.5;fill:none}
svg .ext{stroke-dasharray:6 4;stroke-width:1.8}
svg .cpt{fill:#1f5fbf;stroke:#fff;stroke-width:1.5}svg .mpt{fill:#7b3fb5;stroke:#fff;stroke-width:1.5}
svg .fit{fill:#374151;fill-opacity:.7}svg .cont{fill:none;stroke:#f28e2b;stroke-width:2}
svg .fail{stroke:#d62728;stroke-width:2.2;fill:none}svg .len{fill:#b08d57}
svg .slot{stroke:#2a9d3a;stroke-width:3}svg .onesize{stroke:#2a9d3a;stroke-width:1.5;stroke-dasharray:5 4}
svg .cls{fill:#2a9d3a;fill-opacity:.16;stroke:#2a9d3a;stroke-width:2.5}
svg .peak{fill:#7b3fb5}svg .replay{stroke:#111827;stroke-width:2.5}svg .replay.ext{stroke:#6b7280;stroke-width:1.2}svg .floor{stroke:#d62728;stroke-width:2;stroke-dasharray:4 3}
svg .sched{fill:#138d90}svg .schedup{fill:#138d90;fill-opacity:.35}svg .sep{stroke:#fff;stroke-width:2}svg .ivl{stroke:#0b3d3e;stroke-width:1.5}
svg .dl{stroke:#e11d48;stroke-width:2.5}svg .pdl{stroke:#e11d48;stroke-width:1.5;stroke-dasharray:5 3}
svg .unit{fill:#138d90;stroke:#fff;stroke-width:2}svg .slotdiv{stroke:#fff;stroke-width:1;stroke-dasharray:2 2}
svg .munit{fill:#7b3fb5;fill-opacity:.8;stroke:#fff;stroke-width:2}svg .idle{fill:#eef0f3;stroke:#d1d5db}
svg .failbar{fill:#d62728}svg.inline{display:inline-block;max-width:none;width:120px;height:14px;vertical-align:middle}
</style>
)";
}

std::string provenance_row(const std::string& what, const std::string& where, const profile_provenance& pv) {
    std::string sig = pv.signature ? pv.signature->dump() : "";
    return fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
                       "<td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\"><code>{}</code></td></tr>\n",
                       esc(what), esc(where), basis_badge(pv.basis), esc(pv.source), esc(pv.run_id.value_or("—")),
                       esc(pv.measured_at.value_or("—")), esc(sig.empty() ? "—" : sig));
}

std::string warnings_list(const std::string& what, const std::vector<std::string>& ws) {
    std::string o;
    for (const auto& w : ws) o += fmt::format("<li class=\"warn\">{}: {}</li>\n", esc(what), esc(w));
    return o;
}

std::string provenance_section(const report_inputs& in) {
    if (in.profiles.empty() && in.plans.empty()) return {};
    std::string o = "<section id=\"provenance\">\n<h2>Provenance</h2>\n"
                    "<p>Where each profile's and plan's numbers came from: <b>measured</b> on this run's own sample, "
                    "<b>reference</b> (another run's harvest or the shipped baseline) or <b>assumed</b> (no evidence: "
                    "static defaults).</p>\n<table>\n<tr><th>record</th><th class=\"l\">read from</th><th class=\"l\">basis</th>"
                    "<th class=\"l\">source</th><th class=\"l\">run</th><th class=\"l\">measured at</th>"
                    "<th class=\"l\">data signature</th></tr>\n";
    std::string warn;
    for (std::size_t i = 0; i < in.profiles.size(); ++i) {
        std::string what = fmt::format("profile {}", i + 1);
        o += provenance_row(what, in.profiles[i].where, in.profiles[i].record.provenance);
        warn += warnings_list(what, in.profiles[i].record.provenance.warnings);
    }
    for (std::size_t i = 0; i < in.plans.size(); ++i) {
        std::string what = fmt::format("plan {}", i + 1);
        o += provenance_row(what, in.plans[i].where, in.plans[i].record.provenance);
        warn += warnings_list(what, in.plans[i].record.provenance.warnings);
    }
    o += "</table>\n";
    if (!warn.empty()) o += "<ul class=\"warnings\">\n" + warn + "</ul>\n";
    return o + "</section>\n";
}

std::string header(const report_inputs& in) {
    std::vector<std::string> counts;
    auto count = [&](std::size_t n, const char* one, const char* many) {
        if (n) counts.push_back(fmt::format("{} {}", n, n == 1 ? one : many));
    };
    count(in.profiles.size(), "profile", "profiles");
    count(in.plans.size(), "plan", "plans");
    count(in.diffs.size(), "diff", "diffs");
    count(in.fits.size(), "fit", "fits");
    count(in.sample ? 1 : 0, "sample record", "sample records");
    std::vector<std::string> sources;
    for (const auto& s : in.sources) sources.push_back("<code>" + esc(s) + "</code>");
    std::string nav;
    for (std::size_t i = 0; i < in.profiles.size(); ++i) nav += fmt::format("<a href=\"#profile-{}\">profile {}</a>", i + 1, i + 1);
    if (in.profiles.empty() && !in.fits.empty()) nav += "<a href=\"#fits\">fits</a>";
    for (std::size_t i = 0; i < in.plans.size(); ++i) nav += fmt::format("<a href=\"#plan-{}\">plan {}</a>", i + 1, i + 1);
    for (std::size_t i = 0; i < in.diffs.size(); ++i) nav += fmt::format("<a href=\"#diff-{}\">diff {}</a>", i + 1, i + 1);
    return fmt::format("<header>\n<h1>prof report</h1>\n<p>{} read from {}.</p>\n<nav>{}</nav>\n</header>\n", joined(counts),
                       joined(sources), nav);
}

}  // namespace

std::string render_report(const report_inputs& in) {
    if (in.records() == 0) return {};
    std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
                    "<title>prof report</title>\n";
    o += style_sheet();
    o += "</head>\n<body>\n<main>\n";
    o += header(in);
    o += provenance_section(in);
    for (std::size_t i = 0; i < in.profiles.size(); ++i) o += profile_section(in.profiles[i], i + 1, in);
    if (in.profiles.empty() && !in.fits.empty()) o += fits_only_section(in);
    for (std::size_t i = 0; i < in.plans.size(); ++i) o += plan_section(in.plans[i], i + 1, in);
    for (std::size_t i = 0; i < in.diffs.size(); ++i) o += diff_section(in.diffs[i], i + 1);
    o += "</main>\n</body>\n</html>\n";
    return o;
}

}  // namespace prof::report
