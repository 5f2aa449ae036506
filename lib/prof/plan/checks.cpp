// What make_plan checks of the plan it made: the deadline as planned (less --headroom), values
// that overflowed, --strict, and a missed deadline (see layout.hpp).
#include "prof/plan/layout.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_out.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace prof::plan_detail {

// The deadline the makespans are held to: --deadline less --headroom's share.
double planned_deadline(const plan_request& rq) { return *rq.deadline_s * (1 - rq.slack.headroom); }

// "the deadline 10.0 min less 10% headroom (9.0 min)", or the deadline alone without headroom.
std::string deadline_text(const plan_request& rq) {
    if (rq.slack.headroom == 0) return "the deadline " + human_seconds(*rq.deadline_s);
    return fmt::format("the deadline {} less {}% headroom ({})", human_seconds(*rq.deadline_s),
                       format_double(rq.slack.headroom * 100), human_seconds(planned_deadline(rq)));
}

// A number the arithmetic could not hold: infinite, NaN, or saturated at the largest double
// (work and curve sums saturate rather than wrap). prof-records(5) documents these fields as
// always a number, so a plan that holds one is refused, never written with null or 1.8e308.
bool overflowed(double v) { return !(std::isfinite(v) && v < std::numeric_limits<double>::max()); }
bool overflowed(const std::optional<double>& v) { return v && overflowed(*v); }

void check_finite(const plan_record& p) {
    auto refuse = [](const std::string& where, std::string_view field) {
        throw error(exit_code::data_err,
                    fmt::format("{}: field '{}' overflows (no finite number of seconds or GiB-hours holds it): "
                                "no plan; check --series, --panel and the profile's times",
                                where, field));
    };
    for (const auto& [name, f] : p.families) {
        const std::string where = fmt::format("family '{}'", name);
        for (const auto& [field, v] : {std::pair<std::string_view, double>{"work_s", f.work_s},
                                       {"longest_cell_s", f.longest_cell_s},
                                       {"makespan_s", f.makespan_s},
                                       {"makespan_lower_s", f.makespan_lower_s},
                                       {"one_size_slot_gib_hours", f.one_size_slot_gib_hours},
                                       {"slot_gib_hours", f.slot_gib_hours},
                                       {"size_class_saving", f.size_class_saving}})
            if (overflowed(v)) refuse(where, field);
        if (overflowed(f.cold_start_work_s)) refuse(where, "cold_start_work_s");
        for (std::size_t i = 0; i < f.size_classes.size(); ++i) {
            const size_class& c = f.size_classes[i];
            for (const auto& [field, v] : {std::pair<std::string_view, double>{"work_s", c.work_s},
                                           {"longest_cell_s", c.longest_cell_s},
                                           {"makespan_s", c.makespan_s},
                                           {"slot_gib_hours", c.slot_gib_hours}})
                if (overflowed(v)) refuse(fmt::format("{} size class {}", where, i + 1), field);
        }
    }
    for (const auto& [field, v] : {std::pair<std::string_view, double>{"work_s", p.totals.work_s},
                                   {"longest_cell_s", p.totals.longest_cell_s},
                                   {"makespan_s", p.totals.makespan_s},
                                   {"makespan_lower_s", p.totals.makespan_lower_s}})
        if (overflowed(v)) refuse("totals", field);
}

// --strict: no assumed axis, and every deadline met.
void check_strict(const plan_record& p, const plan_request& rq) {
    std::vector<std::string> assumed;
    for (const auto& [name, f] : p.families) {
        std::vector<std::string> axes;
        if (f.basis.cores == "assumed") axes.push_back("cores");
        if (f.basis.memory == "assumed") axes.push_back("memory");
        if (f.basis.gpu == "assumed" && (f.slot_gpu_bytes || rq.node.gpus > 0)) axes.push_back("gpu");
        if (f.basis.wall == "assumed") axes.push_back("wall");
        if (!axes.empty()) assumed.push_back(fmt::format("family '{}' ({})", name, fmt::join(axes, ", ")));
    }
    const std::string& basis = p.provenance.basis;
    if (basis == "assumed" && assumed.empty()) assumed.push_back(fmt::format("the profile (basis {})", basis));
    if (!assumed.empty())
        throw error(exit_code::data_err,
                    fmt::format("--strict: assumed axes in {}: measure them, or plan without --strict", fmt::join(assumed, ", ")));
    for (const auto& [name, f] : p.families)
        if (f.meets_deadline == false)
            for (const auto& w : f.warnings)
                if (w.rfind("cannot meet", 0) == 0)
                    throw error(exit_code::data_err, fmt::format("--strict: family '{}' {}", name, w));
    if (p.totals.meets_deadline == false)
        throw error(exit_code::data_err,
                    fmt::format("--strict: the families one after another on {} node(s) take {}, past {}: no plan "
                                "meets it; raise --deadline or plan the families apart (--models)",
                                p.totals.nodes, human_seconds(p.totals.makespan_s), deadline_text(rq)));
}

// A plan that misses its deadline is no plan (exit 65) unless --allow-missed-deadline.
void check_deadline(const plan_record& p, const plan_request& rq) {
    if (rq.allow_missed_deadline) return;
    const std::string how = "; or write it anyway with --allow-missed-deadline";
    for (const auto& [name, f] : p.families)
        if (f.meets_deadline == false)
            for (const auto& w : f.warnings)
                if (w.rfind("cannot meet", 0) == 0)
                    throw error(exit_code::data_err, fmt::format("family '{}' {}{}", name, w, how));
    if (p.totals.meets_deadline == false)
        throw error(exit_code::data_err,
                    fmt::format("the families one after another on {} node(s) take {}, past {}: no plan meets it; "
                                "raise --deadline or plan the families apart (--models){}",
                                p.totals.nodes, human_seconds(p.totals.makespan_s), deadline_text(rq), how));
}

}  // namespace prof::plan_detail
