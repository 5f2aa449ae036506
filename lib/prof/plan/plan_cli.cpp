// prof-plan's scheduler flags (see plan_cli.hpp).
#include "prof/plan/plan_cli.hpp"

#include "prof/core/cli.hpp"
#include "prof/core/units.hpp"

#include <cmath>

namespace prof {

void add_scheduler_options(CLI::App& app, scheduler_flags& f, plan_request& rq, render_options& ro) {
    app.add_option("--confidence", f.confidence,
                   "Share of resampled runs the work, longest-cell and makespan intervals span (80% = P10 to P90)")
        ->capture_default_str();
    cli::add_count_option(app, "--resamples", rq.resamples,
                          "Resampled runs the intervals are read from (0: none; at most 10000)")
        ->capture_default_str();
    cli::add_count_option(app, "--seed", rq.seed, "Seed of the resamples (the same seed, the same plan)")
        ->capture_default_str();
    app.add_option("--target-width", f.target_width,
                   "Per model with readings: its work interval's width over its P50 and the fits (prof-sample "
                   "--samples) at which it would be this narrow (10% or 0.1)")
        ->type_name("SHARE");
    app.add_option("--min-class-saving", f.min_class_saving,
                   "Share of one size's slot memory x time a split into size classes must save (5% or 0.05)")
        ->capture_default_str();
    app.add_option("--headroom", f.headroom, "Share of --deadline the makespan leaves free for starts and delays (10% or 0.1)")
        ->capture_default_str();
    app.add_flag("--allow-missed-deadline", rq.allow_missed_deadline, "Write a plan that cannot meet --deadline (default: exit 65)");
    app.add_option("--pod-start", f.pod_start, "k8s: seconds from a Job pod's creation to its first cell")->capture_default_str();
    app.add_option("--job-pod-rate", f.job_pod_rate, "k8s: pods per second the Job controller creates (its API QPS)")
        ->capture_default_str();
    app.add_option("--spark-cluster", rq.limits.spark_cluster,
                   "spark: yarn (containers rounded to --yarn-min-allocation, at most --yarn-max-vcores), k8s or standalone")
        ->capture_default_str()
        ->check(CLI::IsMember({"yarn", "k8s", "standalone"}));
    app.add_option("--yarn-min-allocation", f.yarn_min_allocation,
                   "spark on YARN: yarn.scheduler.minimum-allocation-mb, the step containers round up to")
        ->capture_default_str();
    cli::add_count_option(app, "--yarn-max-vcores", rq.limits.yarn_max_vcores,
                          "spark on YARN: yarn.scheduler.maximum-allocation-vcores");
    app.add_option("--spark-allocation", ro.spark_allocation, "spark: static (spark.executor.instances) or dynamic")
        ->capture_default_str()
        ->check(CLI::IsMember({"static", "dynamic"}));
    app.add_option("--spark-gpu-discovery-script", ro.gpu_discovery_script,
                   "spark: the GPU discovery script on the executors (default: a placeholder)");
    app.add_option("--k8s-image", ro.image, "k8s-job: the worker's container image (default: a placeholder)");
    app.add_flag("--cpu-limit", ro.cpu_limit, "k8s: a CPU limit equal to the request, for families with a thread cap");
    app.add_option("--k8s-ttl", f.k8s_ttl, "k8s-job: ttlSecondsAfterFinished, how long a finished Job is kept")
        ->capture_default_str();
    app.add_option("--k8s-node-selector", ro.node_selector, "k8s-job: KEY=VALUE for the pods' nodeSelector (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--k8s-toleration", ro.tolerations,
                   "k8s-job: KEY[=VALUE]:EFFECT the pods tolerate (repeatable; GPU default nvidia.com/gpu:NoSchedule)")
        ->allow_extra_args(false);
    app.add_option("--retry-indexes", f.retry_indexes,
                   "k8s-job: render the retry tier Job for these failed indexes of one family (1,3-5,7)");
    cli::add_count_option(app, "--retry-class", ro.retry_class,
                          "k8s-job, with --retry-indexes: the size class whose Job failed (N of prof-FAMILY-cN)");
}

void apply_scheduler_options(const scheduler_flags& f, const std::string& target, plan_request& rq, render_options& ro) {
    rq.slack.headroom = parse_share(f.headroom, "--headroom");
    rq.confidence = parse_share(f.confidence, "--confidence");
    if (f.target_width) {
        rq.target_width = parse_share(*f.target_width, "--target-width");
        if (*rq.target_width == 0) throw usage_error("--target-width must be more than 0 (10% or 0.1)");
        if (rq.resamples == 0) throw usage_error("--target-width reads the intervals: it needs --resamples above 0");
    }
    rq.min_class_saving = parse_share(f.min_class_saving, "--min-class-saving");
    rq.slack.pod_start_s = parse_duration(f.pod_start, "--pod-start");
    rq.slack.job_pod_rate = parse_double_flag(f.job_pod_rate, "--job-pod-rate");
    rq.limits.yarn_min_allocation_bytes = parse_size(f.yarn_min_allocation, "--yarn-min-allocation");
    ro.ttl_seconds = static_cast<std::uint64_t>(std::ceil(parse_duration(f.k8s_ttl, "--k8s-ttl")));
    if (f.retry_indexes) ro.retry_indexes = parse_index_list(*f.retry_indexes, "--retry-indexes");
    check_render_options(target, ro);
}

}  // namespace prof
