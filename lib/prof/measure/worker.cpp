// warm_worker: one long-lived worker process that fits cell after cell, each read through its
// cgroup, /proc or its own reply (see measure.hpp).
#include "prof/measure/measure.hpp"

#include "prof/measure/fit_common.hpp"
#include "prof/measure/cgroup.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/limits.hpp"
#include "prof/core/units.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_out.hpp"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <map>
#include <sys/sysinfo.h>
#include <tuple>
#include <sys/wait.h>
#include <unistd.h>

namespace prof {

using namespace measure_detail;

// ---- warm_worker ------------------------------------------------------------------------

warm_worker::warm_worker(std::vector<std::string> argv, measure_options o, bool wait_ready, double ready_timeout_s)
    : argv_(std::move(argv)), o_(std::move(o)), wait_ready_(wait_ready), ready_timeout_s_(ready_timeout_s) {}

warm_worker::~warm_worker() {
    try {
        stop(pending_signal() ? 0.5 : 5.0);
    } catch (...) {
    }
}

void warm_worker::start() {
    int in[2], rep[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0)
        throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));
    child_options co;
    co.argv = argv_;
    co.threads = o_.threads;
    co.cpus = o_.cpus;
    co.stdin_fd = in[0];
    co.stdout_fd = o_.child_output_fd;
    co.stderr_fd = 2;
    co.extra_fds = {{rep[1], 3}};
    co.extra_env = {{"PROF_REPLY_FD", "3"}};
    try {
        if (cgroup_run* cgroups = run_cgroups(o_)) {
            cg_ = cgroups->new_cell();
            if (o_.memory_limit_bytes) applied_limit_ = cg_->set_memory_limit(*o_.memory_limit_bytes);
            co.cgroup_procs = cg_->procs_files();
        }
        child_ = spawn_child(co);
    } catch (...) {
        for (int fd : {in[0], in[1], rep[0], rep[1]}) close(fd);
        cg_.reset();
        throw;
    }
    close(in[0]);
    close(rep[1]);
    in_fd_ = in[1];
    reply_fd_ = rep[0];
    for (int fd : {in_fd_, reply_fd_}) fcntl(fd, F_SETFL, O_NONBLOCK);
    replies_.clear();
    served_.clear();
    lifetime_peak_ = 0;
    max_n_obs_.reset();
    alive_ = true;
    if (wait_ready_) await_ready();
}

// Optional handshake: a worker built on prof_worker.py writes {"ready":true} on fd 3 once its
// imports are done, so the import never lands in the first cell's reading.
void warm_worker::await_ready() {
    double deadline = monotonic_seconds() + ready_timeout_s_;
    std::string line;
    while (!read_reply_line(line)) {
        double left = deadline - monotonic_seconds();
        if (left <= 0) {
            stop(0);
            throw unavailable_error(fmt::format("worker '{}' sent no ready line within {} s (--ready expects "
                                                "{{\"ready\":true}} on descriptor 3)", command_text(), format_double(ready_timeout_s_)));
        }
        pollfd pfds[3] = {{reply_fd_, POLLIN, 0}, {child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        poll(pfds, 3, static_cast<int>(left * 1000) + 1);
        if (pending_signal()) {
            int s = take_pending_signal();
            kill(-child_.pid, s);
            stop(o_.stop_grace_s);
            throw interrupted(s);
        }
        if (pfds[0].revents) {
            char buf[4096];
            ssize_t r = ::read(reply_fd_, buf, sizeof buf);
            if (r > 0) replies_.append(buf, static_cast<std::size_t>(r));
            if (r == 0 && !ends_within(child_.pidfd, closed_channel_grace_s)) {
                stop(0);
                throw unavailable_error(closed_before_ready(command_text()));
            }
            if (r == 0) pfds[1].revents = POLLIN;  // the worker closed its reply pipe as it ended
        }
        if ((pfds[1].revents & POLLIN) && !read_reply_line(line)) {
            int code = -1, sig = 0;
            reap_dead(&code, &sig);
            throw unavailable_error(fmt::format("worker '{}' {} before it was ready (its stderr, above, says why{})",
                                                command_text(),
                                                sig ? "was killed by " + signal_name(sig) : fmt::format("exited with status {}", code),
                                                command_text().find("python") != std::string::npos
                                                    ? "; a Python worker that cannot import prof_worker needs "
                                                      "PYTHONPATH=<checkout>/python, or <PREFIX>/share/prof after make install"
                                                    : ""));
        }
        if (!line.empty()) break;
    }
    if (!is_ready_line(line)) {
        stop(0);
        throw unavailable_error(fmt::format("worker '{}' wrote '{}' on descriptor 3 before it was ready; --ready "
                                            "expects {{\"ready\":true}}", command_text(), line.substr(0, 120)));
    }
}

std::string warm_worker::command_text() const {
    std::string out;
    for (const auto& w : argv_) out += (out.empty() ? "" : " ") + w;
    return out;
}

bool warm_worker::read_reply_line(std::string& line) { return replies_.take(line); }

void warm_worker::reap_dead(int* exit_status, int* sig, cgroup_reading* last) {
    // The launcher's wait blocks until the worker ends: one still running (a closed descriptor
    // is no proof of death) is killed first, so no wait here can outlast a timeout or a signal.
    if (!ends_within(child_.pidfd, 0)) {
        kill(-child_.pid, SIGKILL);
        if (cg_) cg_->kill_all();
    }
    int status = wait_child(child_.pid).status;
    if (WIFEXITED(status)) *exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) *sig = WTERMSIG(status);
    kill_group_leftovers(child_.pid);
    if (cg_) cg_->kill_all();
    reap_orphans();
    if (cg_) {
        if (last) *last = cg_->read();  // the CPU and OOM kills of the whole tree, to its end
        cg_.reset();
    }
    for (int* fd : {&in_fd_, &reply_fd_, &child_.pidfd}) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
    }
    alive_ = false;
}

void warm_worker::stop(double grace_s, cgroup_reading* last) {
    if (!alive_) return;
    close(in_fd_);
    in_fd_ = -1;
    // Waits out the grace, but a (further) signal to prof-measure cuts it short.
    double until = monotonic_seconds() + grace_s;
    for (;;) {
        double left = until - monotonic_seconds();
        pollfd pfds[2] = {{child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        if (left <= 0 || poll(pfds, 2, static_cast<int>(left * 1000) + 1) <= 0 || pfds[1].revents) {
            if (!(pfds[0].revents & POLLIN)) {
                kill(-child_.pid, SIGKILL);
                if (cg_) cg_->kill_all();
            }
            break;
        }
        if (pfds[0].revents & POLLIN) break;
    }
    int code = 0, sig = 0;
    reap_dead(&code, &sig, last);
}

// One cell through the warm worker: the readings taken before it was sent, and how the wait for
// its reply ended.
struct warm_worker::cell_run {
    measured_fit f;
    pid_t pid = 0;
    std::optional<std::uint64_t> rss_before;
    bool reset = false;     // the worker's VmHWM was reset: its peak is this cell's
    bool cg_reset = false;  // the cgroup's peak was reset: the tree's peak is this cell's
    cgroup_reading cg_before;
    std::optional<double> cpu_before;
    double t0 = 0, t1 = 0, deadline = 0;  // t1: when the reply arrived; deadline 0: none
    bool got = false, died = false, timed_out = false;
    bool oom_seen = false;  // the worker's cgroup counted an OOM kill mid-cell: its tree was killed
    // The worker closed its stdin or its reply descriptor: when (0: open), which, and whether it
    // then kept running past closed_channel_grace_s (it can send no reply: it is killed).
    double closed_at = 0;
    const char* closed = "";
    bool reply_eof = false, channel_closed = false;
    std::string killed_why;  // why a worker still running was killed mid-cell (channel_closed)
    int stop_sig = 0;  // the signal prof-measure received mid-cell
    std::optional<double> cpu_at_signal;
    std::string reply;

    void take_signal() {
        stop_sig = take_pending_signal();
        cpu_at_signal = process_cpu_seconds(pid);
    }
    // The cgroup's counters over this cell: the peak since the reset, CPU and OOM kills as deltas.
    void apply_cgroup(const cgroup_reading& after, const char* method) {
        if (!cg_reset) {
            // No per-cell peak in this group: the /proc reading stands for memory; a worker that
            // is gone has no CPU reading of its own left, the group's is its CPU to its end.
            if (!got) apply_cpu(after);
            return;
        }
        f.rss_method = method;
        f.cgroup_peak_bytes = after.peak_bytes;
        // As in process mode, the larger of the tree's reading and the worker process's own.
        if (after.peak_bytes) f.process_rss_bytes = std::max(*after.peak_bytes, f.process_rss_bytes.value_or(0));
        if (after.peak_bytes && cg_before.current_bytes) {
            std::uint64_t marginal = *after.peak_bytes > *cg_before.current_bytes ? *after.peak_bytes - *cg_before.current_bytes : 0;
            f.peak_rss_bytes = std::max(marginal, f.peak_rss_bytes.value_or(0));
        }
        f.page_cache_bytes = after.page_cache_bytes;
        apply_cpu(after);
        f.rss_peak_reset = true;
    }
    void apply_cpu(const cgroup_reading& after) {
        if (after.cpu_ns && cg_before.cpu_ns) f.cpu_s = static_cast<double>(*after.cpu_ns - *cg_before.cpu_ns) * 1e-9;
    }
    void apply_oom(const cgroup_reading& after) {
        bool killed = oom_seen || after.oom_kills.value_or(0) > cg_before.oom_kills.value_or(0);
        f.oom_killed = oom_verdict(killed, f.memory_limit_bytes.has_value());
    }
};

namespace {

// The worker's reply: {"ok":true} or {"ok":false,"error":"..."}; other fields are ignored. A
// reply that is not such an object makes the fit ok:false with the reply's start as the error.
void read_worker_reply(const std::string& reply, measured_fit& f) {
    try {
        std::optional<bool> ok;
        std::optional<std::string> err;
        parse_object_text(reply, [&](simdjson::ondemand::object& obj) {
            for (auto field : obj) {
                std::string_view k = field.unescaped_key();
                if (k == "ok") ok = read_bool(field.value(), k);
                else if (k == "error") err = read_string(field.value(), k);
            }
        });
        if (!ok) throw field_error("field 'ok': missing");
        f.ok = *ok;
        if (!f.ok) f.error = err.value_or("worker replied ok:false without an error");
    } catch (const field_error&) {
        f.ok = false;
        f.error = fmt::format("malformed reply from the worker: {}", reply.substr(0, 200));
    }
}

}  // namespace

measured_fit warm_worker::measure(const cell& c, std::string_view phase) {
    if (!alive_) start();
    cell_run r;
    r.f = base_record(c, o_);
    r.f.phase = phase;
    r.f.cold = served(c.model_type) == 0;
    r.f.rss_method = "proc";
    if (cg_ && o_.memory_limit_bytes) r.f.memory_limit_bytes = applied_limit_;
    r.pid = child_.pid;
    drain_stale_replies();
    read_before(r);
    std::string line = write_cell(c);
    // A run beside the sample says so, so a worker that records its own fits can leave it out.
    if (phase != fit_phase_sample) line.insert(line.size() - 1, fmt::format(",\"phase\":\"{}\"", phase));
    line += '\n';
    gpu_peak_tracker gpu{gpu_reader(o_), {}, false};
    pressure_meter pressure;
    pressure.bind(child_.pid);
    r.t0 = monotonic_seconds();
    r.deadline = o_.timeout_s > 0 ? r.t0 + o_.timeout_s : 0;
    send_cell(r, line);
    wait_for_reply(r, gpu, pressure);
    pressure.finish(r.f);
    r.f.rss_peak_reset = r.reset;
    measured_fit f = r.got ? finish_replied(r, c, gpu) : finish_unreplied(r);
    pressure.settle(f);
    settle_history(f);
    return f;
}

std::uint64_t warm_worker::served(const std::string& model) const {
    auto it = served_.find(model);
    return it == served_.end() ? 0 : it->second;
}

// Stale lines (a worker that answered twice) must not be taken as this cell's reply.
void warm_worker::drain_stale_replies() {
    char buf[4096];
    ssize_t r;
    while ((r = ::read(reply_fd_, buf, sizeof buf)) > 0) replies_.append(buf, static_cast<std::size_t>(r));
    std::string stale;
    while (read_reply_line(stale))
        if (stale.find("\"ready\"") == std::string::npos)
            warn(fmt::format("worker sent a reply no cell asked for (ignored): {}", stale.substr(0, 200)));
}

void warm_worker::read_before(cell_run& r) {
    r.rss_before = proc_status_bytes(r.pid, "VmRSS");
    // The high-water marks since the last reset (the previous cell and the time after it, or the
    // worker's start and its imports), read before they are reset: the worker's lifetime peak.
    keep_lifetime_peak(proc_status_bytes(r.pid, "VmHWM"));
    r.reset = reset_peak_rss(r.pid);
    r.cg_before = cg_ ? cg_->read() : cgroup_reading{};
    keep_lifetime_peak(r.cg_before.peak_bytes);
    // The worker's cgroup: its high-water mark reset to what it holds now, so this cell's peak is
    // the whole tree's (the worker and any process it starts) during this cell alone.
    r.cg_reset = cg_ && cg_->reset_peak();
    r.cpu_before = process_cpu_seconds(r.pid);
}

void warm_worker::keep_lifetime_peak(std::optional<std::uint64_t> bytes) {
    if (bytes && *bytes > lifetime_peak_) lifetime_peak_ = *bytes;
}

// The worker's lifetime peak through the end of the cell, and the count of cells of its model.
void warm_worker::settle_history(measured_fit& f) {
    keep_lifetime_peak(f.process_rss_bytes);
    keep_lifetime_peak(f.cgroup_peak_bytes);
    if (lifetime_peak_ > 0) f.worker_peak_bytes = lifetime_peak_;
    if (f.n_obs && (!max_n_obs_ || *f.n_obs > *max_n_obs_)) max_n_obs_ = f.n_obs;
    f.worker_max_n_obs = max_n_obs_;
    ++served_[f.model_type];
}

// The worker's stdin is non-blocking: a worker that stops reading must not stall the timeout or
// a signal behind a full pipe. Sets died (the worker is gone), timed_out or stop_sig on failure.
void warm_worker::send_cell(cell_run& r, const std::string& line) {
    for (std::size_t off = 0; off < line.size() && !r.stop_sig;) {
        ssize_t w = ::write(in_fd_, line.data() + off, line.size() - off);
        if (w > 0) {
            off += static_cast<std::size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            double left = r.deadline > 0 ? r.deadline - monotonic_seconds() : -1;
            if (r.deadline > 0 && left <= 0) {
                r.timed_out = true;
                return;
            }
            pollfd pfds[3] = {{in_fd_, POLLOUT, 0}, {child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
            poll(pfds, 3, left < 0 ? -1 : static_cast<int>(left * 1000) + 1);
            if (pending_signal()) {
                r.take_signal();
                return;
            }
            if (pfds[1].revents & POLLIN) {
                r.died = true;
                return;
            }
            continue;
        }
        if (w < 0 && errno == EPIPE) {  // SIGPIPE is ignored here; a closed stdin is no proof of death
            r.closed_at = monotonic_seconds();
            r.closed = "its stdin";
            return;
        }
        r.died = true;
        return;
    }
}

// Until the reply, the worker's death, the deadline or a signal: samples the GPU peak of the
// worker's processes and the CPU pressure every interval.
void warm_worker::wait_for_reply(cell_run& r, gpu_peak_tracker& gpu, pressure_meter& pressure) {
    double next_sample = r.t0 + o_.sample_interval_s;  // never a /proc scan or NVML query inside a short cell
    while (!r.got && !r.died && !r.timed_out && !r.stop_sig && !r.channel_closed) {
        double now = monotonic_seconds();
        if (now >= next_sample) {
            std::vector<pid_t> members;
            if (cg_) for (int p : cg_->members()) members.push_back(p);
            if (gpu.reader) {
                if (!cg_) members = group_members(r.pid);
                gpu.sample(members);
            }
            pressure.sample();
            if (cg_ && left_its_cgroup(r.pid, members)) {
                r.channel_closed = true;  // the worker is killed and the cell fails with this reason
                r.killed_why = left_cgroup_error;
                break;
            }
            if (cg_ && cg_->oom_kills().value_or(0) > r.cg_before.oom_kills.value_or(0)) {
                // A process of the worker's tree was killed for memory: the cell ends now, the
                // worker and all it started with it (a pool waiting on the dead child never replies).
                r.oom_seen = r.died = true;
                kill(-r.pid, SIGKILL);
                cg_->kill_all();
                break;
            }
            next_sample = now + o_.sample_interval_s;
        }
        double wait = next_sample - now;
        if (r.deadline > 0) wait = std::min(wait, r.deadline - now);
        if (r.closed_at > 0) wait = std::min(wait, r.closed_at + closed_channel_grace_s - now);
        pollfd pfds[3] = {{r.reply_eof ? -1 : reply_fd_, POLLIN, 0}, {child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        int n_ready = poll(pfds, 3, std::max(0, static_cast<int>(wait * 1000 + 0.5)));
        if (n_ready < 0 && errno != EINTR) break;
        if (pending_signal()) {
            r.take_signal();
            break;
        }
        if (pfds[0].revents) {
            char buf[4096];
            ssize_t n = ::read(reply_fd_, buf, sizeof buf);
            if (n > 0) replies_.append(buf, static_cast<std::size_t>(n));
            if (replies_.pending() > max_line_bytes() + 1) {  // a reply line past the limit: no reply
                r.channel_closed = true;
                r.killed_why = "its reply line grew past the line limit: " + line_too_long_message();
                break;
            }
            while (read_reply_line(r.reply)) {
                if (r.reply.find("\"ready\"") != std::string::npos && r.reply.find("\"ok\"") == std::string::npos) continue;
                r.got = true;
                r.t1 = monotonic_seconds();
                break;
            }
            if (!r.got && n == 0) {
                r.reply_eof = true;
                if (r.closed_at == 0) r.closed_at = monotonic_seconds(), r.closed = "descriptor 3 (its replies)";
            }
        }
        if (!r.got && (pfds[1].revents & POLLIN)) r.died = true;
        if (!r.got && !r.died && r.closed_at > 0 && monotonic_seconds() >= r.closed_at + closed_channel_grace_s) {
            r.channel_closed = true;
            r.killed_why = fmt::format("it closed {} mid-cell and kept running: no reply could come", r.closed);
            break;
        }
        if (!r.got && !r.died && r.deadline > 0 && monotonic_seconds() >= r.deadline) {
            r.timed_out = true;
            break;
        }
    }
    // A reply from a worker outside its cgroup (it left before the first sample, or between two)
    // is no measurement under the limit: checked once per cell, after its wall is taken.
    if (r.got && cg_) {
        std::vector<pid_t> members;
        for (int p : cg_->members()) members.push_back(p);
        if (left_its_cgroup(r.pid, members)) {
            r.got = false;
            r.channel_closed = true;
            r.killed_why = left_cgroup_error;
        }
    }
}

// The worker replied: the readings after the cell, a leak warning, and the reply's verdict.
measured_fit warm_worker::finish_replied(cell_run& r, const cell& c, const gpu_peak_tracker& gpu) {
    measured_fit& f = r.f;
    auto cpu_after = process_cpu_seconds(r.pid);
    auto hwm = proc_status_bytes(r.pid, "VmHWM");
    auto rss_after = proc_status_bytes(r.pid, "VmRSS");
    auto rss_before = r.rss_before;
    f.wall_s = r.t1 - r.t0;
    if (r.cpu_before && cpu_after) f.cpu_s = *cpu_after - *r.cpu_before;
    f.process_rss_bytes = hwm;
    if (hwm && rss_before && r.reset) f.peak_rss_bytes = *hwm > *rss_before ? *hwm - *rss_before : 0;
    if (cg_) {
        cgroup_reading after = cg_->read();
        r.apply_cgroup(after, run_cgroups(o_)->method());
        r.apply_oom(after);
        if (after.current_bytes && r.cg_before.current_bytes) rss_after = after.current_bytes, rss_before = r.cg_before.current_bytes;
    }
    if (gpu.reader) f.peak_gpu_bytes = gpu.any_reading ? gpu.peak : std::nullopt;
    if (rss_before && rss_after && *rss_after > *rss_before + o_.leak_warn_bytes) {
        const std::string what = fmt::format("the worker still holds {} MiB more after the cell of {} than before it "
                                             "(a leak or a cache): ",
                                             (*rss_after - *rss_before) >> 20, fit_label(c));
        // Under --worker-scope model the worker is the model's own: what it keeps is the model's.
        if (o_.worker_per_model)
            warn(what + fmt::format("its later cells' process_rss_bytes include it; this worker serves {} alone, so "
                                    "the growth is its own (a per-process worker, --run, measures each cell fresh)",
                                    c.model_type));
        else
            warn(what + fmt::format("later cells' process_rss_bytes include it; measure {} with --worker-scope model",
                                    c.model_type));
    }
    read_worker_reply(r.reply, f);
    return std::move(f);
}

measured_fit warm_worker::finish_unreplied(cell_run& r) {
    measured_fit& f = r.f;
    f.ok = false;
    cgroup_reading last;
    const char* method = cg_ ? run_cgroups(o_)->method() : "";
    if (r.stop_sig) {
        // Stop the worker as the signal would have: its group, SIGKILL after the grace.
        kill(-r.pid, r.stop_sig);
        f.wall_s = monotonic_seconds() - r.t0;
        if (r.cpu_before && r.cpu_at_signal) f.cpu_s = *r.cpu_at_signal - *r.cpu_before;
        stop(o_.stop_grace_s, &last);
        f.process_rss_bytes.reset();  // the worker is gone: only its cgroup still knows its peak
        f.peak_rss_bytes.reset();
        if (r.cg_before.cpu_ns) r.apply_cgroup(last, method);
        r.apply_oom(last);
        f.error = interrupted_error(r.stop_sig, false);
        throw interrupted(r.stop_sig, f);
    }
    if (r.timed_out || r.channel_closed) {
        f.wall_s = monotonic_seconds() - r.t0;
        kill(-r.pid, SIGKILL);
        if (cg_) cg_->kill_all();
        int code = 0, sig = 0;
        reap_dead(&code, &sig, &last);
        if (r.cg_before.cpu_ns) r.apply_cgroup(last, method);
        r.apply_oom(last);
        f.error = r.timed_out ? describe_failure(std::nullopt, std::nullopt, true, o_.timeout_s, "")
                              : "worker killed: " + r.killed_why;
        return std::move(f);
    }
    f.wall_s = monotonic_seconds() - r.t0;  // to when its death (or its OOM kill) was seen
    int code = -1, sig = 0;
    reap_dead(&code, &sig, &last);
    if (r.cg_before.cpu_ns) r.apply_cgroup(last, method);  // the group outlives the worker: its peak and CPU to the end
    r.apply_oom(last);
    if (sig) f.signal = signal_name(sig);
    else if (code >= 0) f.exit_code = code;
    f.error = "worker died mid-cell: " + describe_failure(code >= 0 && !sig ? std::optional(code) : std::nullopt,
                                                          sig ? std::optional(sig) : std::nullopt, false, 0, "");
    *f.error += oom_error_suffix(f);
    return std::move(f);
}

}  // namespace prof
