// What the plan area's unit tests share: models and profiles with exact margins, the bare
// request whose arithmetic the hand computations follow, and the error text of a call.
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_out.hpp"
#include "prof/plan/plan.hpp"
#include "prof/profile/test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include <functional>

namespace {


constexpr std::uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;

inline prof::model_cost model(std::string name, std::string family, std::uint64_t n_ok, std::optional<double> eff,
                       std::optional<std::uint64_t> rss, std::optional<std::uint64_t> gpu, std::optional<double> wall,
                       std::optional<std::uint64_t> threads = 1) {
    return prof::test::model_of(std::move(name), std::move(family),
                                {.n_ok = n_ok, .max_effective_cores = eff, .max_process_rss_bytes = rss,
                                 .max_peak_gpu_bytes = gpu, .median_wall_s = wall, .intraop_threads = threads});
}

// Margins 1.25 (memory and time) are exact in binary, so the expected values below are exact.
inline prof::compute_profile profile_of(std::vector<prof::model_cost> models) {
    return prof::test::profile_of(std::move(models), 1.25, 1.25);
}

// The schedulers' bare arithmetic, which the hand computations below follow: no headroom, no
// pod start, no controller rate, no YARN rounding or driver; a missed deadline is written (the
// defaults have tests of their own).
inline prof::plan_request bare_request() {
    prof::plan_request rq;
    rq.slack.headroom = 0;
    rq.slack.pod_start_s = 0;
    rq.slack.job_pod_rate = 1e12;
    rq.limits.spark_cluster = "standalone";
    rq.allow_missed_deadline = true;
    return rq;
}

// A node of `cores` cores and `memory_bytes` memory, with no GPU.
inline prof::node_shape cpu_node(std::uint64_t cores, std::uint64_t memory_bytes) {
    return {cores, memory_bytes, 0, std::nullopt};
}

// The parts of a run a test sets, each left as the base request has it when not given.
struct run_parts {
    std::optional<std::uint64_t> series = {};
    std::optional<prof::node_shape> node = {};
    std::optional<std::string> layout = {};
    std::optional<double> deadline_s = {};
    std::optional<std::uint64_t> nodes = {};
};

// `base` (the defaults unless given) with the run's size, node, layout and goal set from `r`.
inline prof::plan_request request_of(const run_parts& r,
                                     prof::plan_request base = prof::plan_request()) {
    if (r.series) base.series = *r.series;
    if (r.node) base.node = *r.node;
    if (r.layout) base.layout = *r.layout;
    if (r.deadline_s) base.deadline_s = r.deadline_s;
    if (r.nodes) base.nodes = r.nodes;
    return base;
}

inline prof::plan_request cpu_request() {
    prof::plan_request rq = bare_request();
    rq.series = 1000;
    rq.node.cores = 16;
    rq.node.memory_bytes = 64 * GiB;
    rq.deadline_s = 60;
    return rq;
}

// 100 series on 3 nodes of 24 cores, 256 GiB and two 16 GiB devices.
inline prof::plan_request gpu_request() {
    prof::plan_request rq = bare_request();
    rq.series = 100;
    rq.node = {24, 256 * GiB, 2, 16 * GiB};
    rq.nodes = 3;
    return rq;
}

// Two statistical models: theta 1 core (1.0000005 snaps to 1), 100 MiB, 0.25 s; arima 1.9 → 2
// cores, 200 MiB, 0.5 s.
inline prof::compute_profile statistical() {
    return profile_of({model("theta", "statistical", 5, 1.0000005, 100 * MiB, std::nullopt, 0.25),
                       model("arima", "statistical", 5, 1.9, 200 * MiB, std::nullopt, 0.5)});
}

inline std::string error_text(const std::function<void()>& fn, int* code = nullptr) {
    try {
        fn();
    } catch (const prof::error& e) {
        if (code) *code = static_cast<int>(e.code());
        return e.what();
    }
    return "(no error)";
}

// The error `fn` throws as "CODE: MESSAGE" (the exit code it maps to, then its text), or "(no
// error)": the code and the message in one comparison.
inline std::string coded_error(const std::function<void()>& fn) {
    int code = 0;
    std::string text = error_text(fn, &code);
    return code ? std::to_string(code) + ": " + text : text;
}



// ets on a sample of 12, 203 and 2284 observations: 0.006, 0.049 and 0.292 s (margin 1.25).
inline prof::compute_profile curved() {
    auto m = model("ets", "statistical", 8, 1.0, 100 * MiB, std::nullopt, 0.006);
    m.max_n_obs = 2284;
    m.wall_curve = {{12, 12, 12, 6, 0.006, 0.006, std::nullopt}, {203, 203, 203, 1, 0.049, 0.049, std::nullopt},
                    {2284, 2284, 2284, 1, 0.292, 0.292, std::nullopt}};
    return profile_of({m});
}
inline prof::length_distribution panel_of(std::vector<std::uint64_t> lengths) { return prof::distribution_of_lengths(lengths); }

}  // namespace
