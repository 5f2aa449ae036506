// What measuring a fit as a process (measure.cpp) and through a warm worker (worker.cpp) share:
// the fit record's start, the readiness handshake, the OOM verdict and the error texts. Not a
// public header: measure.hpp is.
#pragma once

#include "prof/measure/measure.hpp"

#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

namespace prof::measure_detail {

// How long a worker that closed its stdin or its reply descriptor has to end on its own (a worker
// exiting closes both a moment before it is a zombie) before it is taken as alive and killed.
inline constexpr double closed_channel_grace_s = 1.0;

measured_fit base_record(const cell& c, const measure_options& o);

std::string fit_label(const cell& c);

nvml_reader* gpu_reader(const measure_options& o);

cgroup_run* run_cgroups(const measure_options& o);

// Whether the process behind `pidfd` has ended, or ends within `seconds` (0: now).
bool ends_within(int pidfd, double seconds);

// Why a worker that closed its reply descriptor before its ready line, and kept running, was killed.
std::string closed_before_ready(const std::string& command);

// {"ready":true} and nothing that says otherwise.
bool is_ready_line(const std::string& line);

// The error of a fit stopped because prof-measure itself was signalled.
std::string interrupted_error(int sig, bool killed);

// oom_killed: true when the kernel killed a process of the fit's cgroup for memory (under our
// limit, or under no limit of ours: a container's or the host's), false under a limit without
// a kill, null without a limit or a kill.
std::optional<bool> oom_verdict(bool killed, bool limited);

// The " (out of memory: ...)" that ends the error of an OOM-killed fit.
std::string oom_error_suffix(const measured_fit& f);

// The error of a fit (or a worker) whose process left the cgroup it was started in: past that
// point neither --memory-limit nor the cgroup's readings covered it.
extern const char* left_cgroup_error;

// Whether `pid`, a process that should be in the group whose members are `members`, is alive
// outside it (moved itself out by writing to another group's cgroup.procs). A process that is
// exiting has left cgroup.procs already and is not counted.
bool left_its_cgroup(pid_t pid, const std::vector<pid_t>& members);

}  // namespace prof::measure_detail
