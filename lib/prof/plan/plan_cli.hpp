// prof-plan's scheduler flags (slack, Spark's cluster manager, the Kubernetes Job's extras),
// declared once for the program and turned into the request and render options.
#pragma once

#include "prof/plan/plan.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace prof {

// The flags' text as given, parsed by apply_scheduler_options after CLI11 has run.
struct scheduler_flags {
    std::string headroom = "10%", pod_start = "10s", job_pod_rate = "20", yarn_min_allocation = "1GiB";
    std::string k8s_ttl = "1d";
    std::optional<std::string> retry_indexes;  // absent: not given ('' is given, and refused)
    std::string min_class_saving = "5%";
    std::string confidence = "80%";
    std::optional<std::string> target_width;  // absent: not given ('' is given, and refused)
};

// Declares --confidence, --resamples, --seed, --target-width, --min-class-saving, --headroom, --allow-missed-deadline, --pod-start, --job-pod-rate, --spark-cluster,
// --yarn-min-allocation, --yarn-max-vcores, --spark-allocation, --spark-gpu-discovery-script,
// --k8s-image, --cpu-limit, --k8s-ttl, --k8s-node-selector, --k8s-toleration,
// --retry-indexes and --retry-class on `app`, bound to `flags`, `rq` and `ro`.
void add_scheduler_options(CLI::App& app, scheduler_flags& flags, plan_request& rq, render_options& ro);

// Parses the flags' text into `rq` and `ro` and checks them against `target`; throws
// usage_error naming the flag (parse_share, parse_duration, parse_size, parse_index_list,
// check_render_options).
void apply_scheduler_options(const scheduler_flags& flags, const std::string& target, plan_request& rq,
                             render_options& ro);

}  // namespace prof
