// The plan request and render options from the operator's words: the target and its layout,
// --models specs, the unmeasured-model policy, shares and index lists, and the checks of the
// run's size, its goal, the whole request and the render options (see plan.hpp).
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

namespace {
constexpr std::uint64_t max_node_gpus = 1024;
}  // namespace

void plan_detail::validate_request(const plan_request& rq) {
    if (rq.series == 0 && !rq.panel) throw usage_error("--series must be a positive integer (or give --panel)");
    if (rq.panel && rq.panel->bins.empty()) throw usage_error("--panel: the panel holds no usable series");
    if (rq.node.cores == 0) throw usage_error("--node-cores must be a positive integer");
    if (rq.node.memory_bytes == 0) throw usage_error("--node-memory must be more than 0 bytes");
    if (rq.node.gpus > 0 && (!rq.node.gpu_memory_bytes || *rq.node.gpu_memory_bytes == 0))
        throw usage_error("--node-gpus needs --node-gpu-memory (the memory of one device)");
    if (rq.node.gpus == 0 && rq.node.gpu_memory_bytes)
        throw usage_error("--node-gpu-memory needs --node-gpus (devices per node)");
    // No node holds more (the largest, an NVL72 rack, is 72): a bigger count is a typo, and the
    // slot arithmetic stays far from 64-bit overflow.
    if (rq.node.gpus > max_node_gpus)
        throw usage_error(fmt::format("--node-gpus must be at most {}, not {}", max_node_gpus, rq.node.gpus));
    check_plan_goal(rq.deadline_s, rq.nodes);
    if (rq.defaults.cores == 0) throw usage_error("--default-cores must be a positive integer");
    if (rq.defaults.memory_bytes == 0) throw usage_error("--default-memory must be more than 0 bytes");
    if (!(std::isfinite(rq.defaults.wall_s) && rq.defaults.wall_s > 0))
        throw usage_error("--default-wall must be a positive duration");
    if (std::find(std::begin(plan_layouts), std::end(plan_layouts), rq.layout) == std::end(plan_layouts))
        throw usage_error(fmt::format("--layout must be ray, spark or k8s, not '{}'", rq.layout));
    if (rq.limits.max_container_memory_bytes && *rq.limits.max_container_memory_bytes == 0)
        throw usage_error("--max-container-memory must be more than 0 bytes");
    if (rq.limits.max_pods_per_node == 0) throw usage_error("--max-pods-per-node must be a positive integer");
    if (!(rq.slack.headroom >= 0 && rq.slack.headroom < 1))
        throw usage_error("--headroom must be a share of the deadline in [0, 1) (0.1 = 10%)");
    if (!(std::isfinite(rq.slack.pod_start_s) && rq.slack.pod_start_s >= 0))
        throw usage_error("--pod-start must be a duration of 0 or more");
    if (!(std::isfinite(rq.slack.job_pod_rate) && rq.slack.job_pod_rate > 0))
        throw usage_error("--job-pod-rate must be a positive number of pods per second");
    if (rq.limits.spark_cluster != "yarn" && rq.limits.spark_cluster != "k8s" && rq.limits.spark_cluster != "standalone")
        throw usage_error(fmt::format("--spark-cluster must be yarn, k8s or standalone, not '{}'", rq.limits.spark_cluster));
    if (rq.limits.yarn_min_allocation_bytes == 0) throw usage_error("--yarn-min-allocation must be more than 0 bytes");
    if (rq.limits.yarn_max_vcores == 0) throw usage_error("--yarn-max-vcores must be a positive integer");
    if (rq.size_classes == 0 || rq.size_classes > max_size_classes)
        throw usage_error(fmt::format("--size-classes must be 1 (one size) to {}, not {}", max_size_classes, rq.size_classes));
    if (!(std::isfinite(rq.min_class_saving) && rq.min_class_saving >= 0 && rq.min_class_saving < 1))
        throw usage_error("--min-class-saving must be a share from 0 to below 100%");
    if (!(rq.confidence > 0 && rq.confidence < 1)) throw usage_error("--confidence must be a share in (0, 1) (80% or 0.8)");
    if (rq.resamples > max_resamples)
        throw usage_error(fmt::format("--resamples must be 0 (no intervals) to {}, not {}", max_resamples, rq.resamples));
}

double parse_share(const std::string& text, std::string_view flag) {
    const bool percent = !text.empty() && text.back() == '%';
    double v = parse_double_flag(percent ? std::string_view(text).substr(0, text.size() - 1) : std::string_view(text), flag);
    if (percent) v /= 100;
    if (!(v >= 0 && v < 1)) throw usage_error(fmt::format("{}: '{}' is not a share in [0, 1) (10% or 0.1)", flag, text));
    return v;
}

std::vector<std::uint64_t> parse_index_list(const std::string& text, std::string_view flag) {
    std::set<std::uint64_t> out;
    auto number = [&](std::string_view t) {
        std::uint64_t v = 0;
        auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
            throw usage_error(fmt::format("{}: '{}' is not an index (give indexes as 1,3-5,7)", flag, t));
        return v;
    };
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        const auto dash = item.find('-');
        const std::uint64_t lo = number(item.substr(0, dash));
        const std::uint64_t hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
        if (hi < lo || hi - lo >= k8s_max_indexed_completions)
            throw usage_error(fmt::format("{}: '{}' is not a range of at most {} indexes", flag, item, k8s_max_indexed_completions));
        for (std::uint64_t i = lo; i <= hi; ++i) out.insert(i);
        if (out.size() > k8s_max_indexed_completions)
            throw usage_error(fmt::format("{}: more than {} indexes", flag, k8s_max_indexed_completions));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return {out.begin(), out.end()};
}

void check_render_options(const std::string& target, const render_options& o) {
    if (o.retry_indexes && target != "k8s-job")
        throw usage_error(fmt::format("--retry-indexes renders a retry Job: give it with --target k8s-job, not {}", target));
    if (o.retry_class && !o.retry_indexes)
        throw usage_error("--retry-class names the size class whose Job failed: give it with --retry-indexes");
    if (o.retry_class && *o.retry_class == 0)
        throw usage_error("--retry-class: size classes count from 1 (the N of prof-FAMILY-cN)");
    for (const auto& kv : o.node_selector)
        if (kv.find('=') == std::string::npos || kv.front() == '=')
            throw usage_error(fmt::format("--k8s-node-selector: expected KEY=VALUE, got '{}'", kv));
    for (const auto& t : o.tolerations) {
        const auto colon = t.rfind(':');
        const std::string effect = colon == std::string::npos ? "" : t.substr(colon + 1);
        if (colon == 0 || colon == std::string::npos || t.front() == '=' ||
            (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute"))
            throw usage_error(fmt::format(
                "--k8s-toleration: expected KEY[=VALUE]:EFFECT with EFFECT NoSchedule, PreferNoSchedule or NoExecute, "
                "got '{}'",
                t));
    }
}

}  // namespace prof
