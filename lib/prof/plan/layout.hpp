// What make_plan's steps share inside the plan area: the text and byte helpers, the layouts of
// a family's slots into each scheduler's units (layout.cpp), and the whole-cell schedule of a
// family's size classes on a number of nodes (schedule.cpp), and the checks of a finished plan
// (checks.cpp). Not a public header: plan.hpp is.
#pragma once

#include "prof/plan/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof::plan_detail {

// "1.5 GiB (1610612736 bytes)".
std::string bytes_text(std::uint64_t b);

inline constexpr std::uint64_t mib = 1ULL << 20;
inline std::uint64_t mib_up(std::uint64_t bytes) { return bytes / mib + (bytes % mib ? 1 : 0); }
inline std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return a / b + (a % b ? 1 : 0); }

// What one node holds of a family's slots on each axis, before any layout.
struct node_axes {
    std::uint64_t by_cores = 0, by_memory = 0;
    std::optional<std::uint64_t> by_gpus;      // gpus × per_device
    std::optional<std::uint64_t> per_device;   // floor(device memory / slot_gpu_bytes)
    std::uint64_t slots() const { return std::min({by_cores, by_memory, by_gpus.value_or(UINT64_MAX)}); }
    std::string limit() const {
        std::uint64_t s = slots();
        if (by_cores == s) return "cores";
        if (by_memory == s) return "memory";
        return "gpus";
    }
};

// The layouts of a family's slots on one node (layout.cpp), filling f.layout.
void layout_ray(family_plan& f, const node_axes& ax, const plan_request& rq);
void layout_spark(const std::string& fname, family_plan& f, const node_axes& ax, const plan_request& rq);
void layout_k8s(const std::string& fname, family_plan& f, const node_axes& ax, const plan_request& rq);
// Throws the right error for a slot axis that does not fit one node: a default is a flag the
// operator gave (64), a measured or reference value is what the data says (65).
[[noreturn]] void slot_too_large(const std::string& family, const std::string& basis, const std::string& what);

// One size class's cells on a number of nodes: the makespan arithmetic of schedule_makespan.
struct class_schedule {
    std::uint64_t cells = 0;
    double work_s = 0, longest_s = 0;
    std::uint64_t per_item = 1;           // cells in one work item
    std::uint64_t slots_per_runner = 1;
    std::uint64_t runners_per_node = 1;   // Ray tasks or Spark task slots; k8s pods
    std::uint64_t reserved_runners = 0;   // runners the Spark driver displaces on its node
    double start_s = 0;                   // k8s: each item's pod start
    double rate = 0;                      // k8s: pods created per second (0 = unbounded)
    // Warm workers (every target whose items do not start their processes afresh, as k8s-job's
    // do and carry theirs in work_s): each slot pays each model's cold start once, on its first
    // cell of that model. Per model of the family, time margin applied, largest first; empty
    // when no model has a cold_start_s (warm_cold_starts).
    std::vector<double> warm_cold_s = {};
    std::uint64_t items() const { return div_up(cells, per_item); }
    std::uint64_t runners(std::uint64_t nodes) const {
        const std::uint64_t all = runners_per_node * nodes;
        return all - std::min(all, reserved_runners);
    }
    // Nodes enough to run every work item at once: more buy nothing.
    std::uint64_t enough_nodes() const { return std::max<std::uint64_t>(1, div_up(items() + reserved_runners, runners_per_node)); }
    // The warm cold starts' work on `nodes` nodes: Σ over models of min(slots, the model's cells)
    // × its cold start, each model holding cells / models of the cells (every series runs every
    // model of the family).
    double cold_work(std::uint64_t nodes) const {
        if (warm_cold_s.empty()) return 0;
        const std::uint64_t slots = runners(nodes) * slots_per_runner;
        double sum = 0;
        for (double c : warm_cold_s) sum += c;
        return static_cast<double>(std::min<std::uint64_t>(slots, cells / warm_cold_s.size())) * sum;
    }
    // How much later the slots finish for their cold starts: a slot runs at most `waves` cells,
    // so it pays at most the largest min(models, waves) of them.
    double cold_delay(std::uint64_t nodes) const {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(warm_cold_s.size(), waves(nodes)));
        double sum = 0;
        for (std::size_t i = 0; i < k; ++i) sum += warm_cold_s[i];
        return sum;
    }
    // schedule_makespan's bound (and the controller's rate), every slot starting its cells
    // cold_delay later.
    double makespan(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        if (r == 0) return std::numeric_limits<double>::infinity();
        const double t = schedule_makespan(cells, work_s, longest_s, per_item, slots_per_runner, r, start_s);
        const double delay = cold_delay(nodes);
        if (rate <= 0) return t + delay;
        const double item_s = static_cast<double>(div_up(per_item, slots_per_runner)) * longest_s;
        return rate_limited_makespan(t, items(), r, item_s, start_s, rate) + delay;
    }
    // Rounds of whole cells every slot runs at most: ceil(items / runners) × rounds per item.
    std::uint64_t waves(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        return r == 0 ? 0 : div_up(items(), r) * div_up(per_item, slots_per_runner);
    }
    double lower_bound(std::uint64_t nodes) const {
        const std::uint64_t r = runners(nodes);
        if (r == 0) return std::numeric_limits<double>::infinity();
        // A pod's time is its start plus its cells spread over its slots. The slot that runs the
        // longest cell pays that model's warm cold start too, at least the smallest.
        const double pod_time = work_s / static_cast<double>(slots_per_runner) + static_cast<double>(items()) * start_s;
        const double cold = warm_cold_s.empty() ? 0.0 : warm_cold_s.back();
        double t = std::max(pod_time / static_cast<double>(r), longest_s + start_s + cold);
        if (rate > 0) t = std::max(t, static_cast<double>(items() - 1) / rate + start_s);
        return t;
    }
};

// One family's cells: its size classes one after another on the same nodes, so every measure
// is the classes' sum (one class: that class's own).
struct family_schedule {
    std::vector<class_schedule> classes;
    double start_s = 0, rate = 0;  // k8s: every class's pod start and pod creation rate
    double work_s = 0;             // the family's work without its warm cold starts
    bool warm() const { return !classes.empty() && !classes.front().warm_cold_s.empty(); }
    double cold_work(std::uint64_t nodes) const {
        double w = 0;
        for (const auto& c : classes) w += c.cold_work(nodes);
        return w;
    }
    std::uint64_t enough_nodes() const {
        std::uint64_t n = 1;
        for (const auto& c : classes) n = std::max(n, c.enough_nodes());
        return n;
    }
    double makespan(std::uint64_t nodes) const {
        double t = 0;
        for (const auto& c : classes) t += c.makespan(nodes);
        return t;
    }
    std::uint64_t waves(std::uint64_t nodes) const {
        std::uint64_t w = 0;
        for (const auto& c : classes) w += c.waves(nodes);
        return w;
    }
    double lower_bound(std::uint64_t nodes) const {
        double t = 0;
        for (const auto& c : classes) t += c.lower_bound(nodes);
        return t;
    }
};

// t within the deadline d, with a relative tolerance of 1e-12, so 3 × (1/3)-style rounding noise
// never buys a whole extra node (the same tolerance the profile applies to bytes).
inline bool within(double t, double d) { return t <= d * (1 + 1e-12); }

// The fewest nodes in [1, enough] whose makespan is within the deadline, or `enough` when none
// is (makespan(n) does not grow with n, so a bisection finds it).
template <class Makespan>
std::uint64_t fewest_nodes(std::uint64_t enough, double deadline_s, const Makespan& makespan) {
    if (!within(makespan(enough), deadline_s)) return enough;
    std::uint64_t lo = 1, hi = enough;
    while (lo < hi) {
        std::uint64_t mid = lo + (hi - lo) / 2;
        if (within(makespan(mid), deadline_s)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}


inline double gib_hours(std::uint64_t bytes, double seconds) {
    return static_cast<double>(bytes) / static_cast<double>(1ULL << 30) * seconds / 3600.0;
}

// The family's slot memory × time over its size classes (slot_gib_hours, each class's already
// set) and size_class_saving against one_size_slot_gib_hours.
inline void sum_slot_gib_hours(family_plan& f) {
    double total = 0;
    for (const auto& c : f.size_classes) total += c.slot_gib_hours;
    f.slot_gib_hours = total;
    f.size_class_saving = f.one_size_slot_gib_hours > 0 ? 1.0 - total / f.one_size_slot_gib_hours : 0.0;
}

// The family's slots, waves and makespans (and each size class's) on f.nodes nodes; with warm
// workers, also the work of their cold starts on those nodes (cold_start_work_s, in work_s and
// in the slot memory x time of the family and of each class).
void fill_schedule(family_plan& f, const family_schedule& sc);

// make_plan's first step (request.cpp): every flag of the request within its range, the goal
// (check_plan_goal) and the layout among plan_layouts. Throws usage_error naming the flag.
void validate_request(const plan_request& rq);

// The deadline the makespans are held to: --deadline less --headroom's share (checks.cpp).
double planned_deadline(const plan_request& rq);
// "the deadline 10.0 min less 10% headroom (9.0 min)", or the deadline alone without headroom.
std::string deadline_text(const plan_request& rq);
// Refuses (65) a plan holding a value the arithmetic could not hold, naming the field.
void check_finite(const plan_record& p);
// --strict: no assumed axis, and every deadline met (65 naming the family).
void check_strict(const plan_record& p, const plan_request& rq);
// A plan that misses its deadline is no plan (65) unless --allow-missed-deadline.
void check_deadline(const plan_record& p, const plan_request& rq);

}  // namespace prof::plan_detail
