// Whole-cell schedules: a family's size classes on a number of nodes, the makespan of cells on
// runners, pod-rate limits and the failed-index allowance (see layout.hpp and plan.hpp).
#include "prof/plan/layout.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"
#include "prof/io/json_out.hpp"
#include "prof/profile/sample.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace prof {
namespace plan_detail {

void fill_schedule(family_plan& f, const family_schedule& sc) {
    // The one size's slots (the Spark driver's node runs fewer executors).
    const std::uint64_t units = f.layout.units_per_node * f.nodes;
    f.slots = (units - std::min(units, f.layout.reserved_units)) * f.layout.slots_per_unit;
    family_layout& L = f.layout;
    if (L.retry_items && L.retry_units_per_node && sc.classes.size() == 1) {  // the retry tier: one-size Jobs
        const class_schedule& one = sc.classes.front();
        const double item_s = static_cast<double>(div_up(one.per_item, one.slots_per_runner)) * one.longest_s + one.start_s;
        L.retry_makespan_s = static_cast<double>(div_up(*L.retry_items, *L.retry_units_per_node * f.nodes)) * item_s;
    }
    f.waves = sc.waves(f.nodes);
    f.makespan_s = sc.makespan(f.nodes);
    f.makespan_lower_s = sc.lower_bound(f.nodes);
    for (std::size_t k = 0; k < f.size_classes.size() && k < sc.classes.size(); ++k) {
        size_class& c = f.size_classes[k];
        c.slots = sc.classes[k].runners(f.nodes) * sc.classes[k].slots_per_runner;
        c.waves = sc.classes[k].waves(f.nodes);
        c.makespan_s = sc.classes[k].makespan(f.nodes);
    }
    if (!sc.warm()) return;
    // Warm workers: the cold starts' work follows the slots, so it is set here, from the
    // schedule's work without them (this runs again when the totals move the nodes).
    for (std::size_t k = 0; k < f.size_classes.size() && k < sc.classes.size(); ++k) {
        size_class& c = f.size_classes[k];
        c.cold_start_work_s = sc.classes[k].cold_work(f.nodes);
        c.work_s = sc.classes[k].work_s + *c.cold_start_work_s;
        c.slot_gib_hours = gib_hours(c.slot_rss_bytes, c.work_s);
    }
    f.cold_start_work_s = sc.cold_work(f.nodes);
    f.work_s = sc.work_s + *f.cold_start_work_s;
    f.one_size_slot_gib_hours = gib_hours(f.slot_rss_bytes, f.work_s);
    sum_slot_gib_hours(f);
}


}  // namespace plan_detail

using namespace plan_detail;

double schedule_makespan(std::uint64_t cells, double work_s, double longest_s, std::uint64_t cells_per_item,
                         std::uint64_t slots_per_runner, std::uint64_t runners, double start_s) {
    if (cells == 0 || runners == 0 || cells_per_item == 0 || slots_per_runner == 0) return 0;
    const double items = static_cast<double>(div_up(cells, cells_per_item));
    const double items_per_runner = static_cast<double>(div_up(div_up(cells, cells_per_item), runners));
    const double rounds = static_cast<double>(div_up(cells_per_item, slots_per_runner));
    // Every item pays its start once: it lasts at most rounds × longest_s + start_s, and the
    // items' durations sum to at most work_s + items × start_s.
    work_s += items * start_s;
    const double by_waves = items_per_runner * (rounds * longest_s + start_s);
    // Graham's bound over work items: a free runner takes the next pending item (an Indexed Job
    // hands pending indexes to free pods), an item lasts at most D = rounds × longest_s, and the
    // items' durations sum to at most work_s (an item lasts no longer than its cells in a row),
    // so the makespan is at most Σ/runners + (1 − 1/runners) × D <= (work_s − D)/runners + D.
    const double item_s = rounds * longest_s + start_s;
    const double graham = std::max(0.0, work_s - item_s) / static_cast<double>(runners) + item_s;
    return std::min(by_waves, graham);
}

double rate_limited_makespan(double without_rate_s, std::uint64_t items, std::uint64_t pods, double item_s, double start_s,
                             double rate) {
    if (items == 0 || rate <= 0) return without_rate_s;
    // Index j is created no earlier than j / rate: the first round of pods starts over
    // (pods - 1) / rate, which delays every later round by at most as much; and once the rate
    // binds, a pod is free whenever the next index is created, so the last one ends at most
    // start_s + item_s after its creation.
    const double first_round = static_cast<double>(std::min(items, pods) - 1) / rate;
    return std::max(without_rate_s + first_round, static_cast<double>(items - 1) / rate + start_s + item_s);
}

std::uint64_t failed_items_allowance(std::uint64_t items, std::uint64_t cells_per_item, double share) {
    if (items == 0) return 0;
    share = std::clamp(share, 0.0, 1.0);
    const double q = 1 - std::pow(1 - share, static_cast<double>(std::max<std::uint64_t>(1, cells_per_item)));
    const double n = static_cast<double>(items);
    const double allowance = std::ceil(n * q + 4 * std::sqrt(n * q * (1 - q)) + 10);
    return allowance >= n ? items : static_cast<std::uint64_t>(allowance);
}

}  // namespace prof
