// The plan request from the operator's words: the target and its layout, --models specs, the
// unmeasured-model policy, and the checks of the run's size and goal (see plan.hpp).
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

using namespace plan_detail;

std::string layout_for_target(const std::string& target, const std::string& layout) {
    std::string own = target == "spark" ? "spark" : (target == "k8s" || target == "k8s-job") ? "k8s" : target == "ray" ? "ray" : "";
    if (own.empty()) return layout.empty() ? "ray" : layout;
    if (!layout.empty() && layout != own)
        throw usage_error(fmt::format("--target {} lays the slots out for {}, not --layout {}", target, own, layout));
    return own;
}

void set_target(plan_request& rq, const std::string& target, const std::string& layout) {
    rq.layout = layout_for_target(target, layout);
    rq.cold_start_per_process = target == "k8s-job";
}


void add_model_specs(plan_request& rq, const std::vector<std::string>& specs) {
    for (const auto& m : specs) {
        auto spec = parse_model_spec(m, "--models");
        rq.models.push_back(spec.model_type);
        if (m.find(':') != std::string::npos) rq.model_families[spec.model_type] = spec.family;
    }
}

unmeasured_policy parse_unmeasured_policy(const std::string& text) {
    if (text == "fail") return unmeasured_policy::fail;
    if (text == "defaults") return unmeasured_policy::defaults;
    if (text == "skip") return unmeasured_policy::skip;
    throw usage_error(fmt::format("--on-unmeasured: expected defaults, skip or fail, got '{}'", text));
}


void check_run_size(bool series_given, std::uint64_t series, bool panel_given) {
    if (series_given && series == 0)
        throw usage_error("--series must be a positive integer (leave it out to take --panel's usable series)");
    if (series == 0 && !panel_given) throw usage_error("give --series N, or --panel FILE (the run's series)");
}

void check_plan_goal(const std::optional<double>& deadline_s, const std::optional<std::uint64_t>& nodes) {
    if (!deadline_s && !nodes) throw usage_error("give --deadline (to get a node count) or --nodes (to get a makespan)");
    if (deadline_s && nodes)
        throw usage_error("give exactly one of --deadline (to get a node count) and --nodes (to get a makespan)");
    if (deadline_s && !(std::isfinite(*deadline_s) && *deadline_s > 0))
        throw usage_error("--deadline must be a positive duration");
    if (nodes && *nodes == 0) throw usage_error("--nodes must be a positive integer");
}
}  // namespace prof
