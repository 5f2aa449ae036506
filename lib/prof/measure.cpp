// Measuring fits as processes and through a warm worker (see measure.hpp).
#include "prof/measure.hpp"

#include "prof/diag.hpp"
#include "prof/json_out.hpp"
#include "prof/units.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

namespace prof {

namespace {

// Passes a child's stderr through to ours while remembering its last non-empty line.
struct stderr_tee {
    std::string partial, last;
    void feed(const char* p, std::size_t n) {
        std::size_t off = 0;
        while (off < n) {
            ssize_t w = ::write(2, p + off, n - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += static_cast<std::size_t>(w);
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (p[i] == '\n') {
                if (!trimmed(partial).empty()) last = std::string(trimmed(partial));
                partial.clear();
            } else if (partial.size() < 4096) {
                partial.push_back(p[i]);
            }
        }
    }
    std::string last_line() const { return trimmed(partial).empty() ? last : std::string(trimmed(partial)); }
    static std::string_view trimmed(std::string_view s) {
        while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        return s;
    }
};

// Reads what is available now; false at end of file.
bool drain(int fd, stderr_tee& tee) {
    char buf[8192];
    for (;;) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r > 0) {
            tee.feed(buf, static_cast<std::size_t>(r));
            continue;
        }
        if (r == 0) return false;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

// {"ready":true} and nothing that says otherwise.
bool is_ready_line(const std::string& line) {
    bool ready = false;
    try {
        parse_object_text(line, [&](simdjson::ondemand::object& obj) {
            for (auto field : obj) {
                std::string_view k = field.unescaped_key();
                if (k == "ready") ready = read_bool(field.value(), k).value_or(false);
            }
        });
    } catch (const field_error&) {
        return false;
    }
    return ready;
}

measured_fit base_record(const cell& c, const measure_options& o) {
    measured_fit f;
    f.ts_id = c.ts_id;
    f.model_type = c.model_type;
    f.family = c.family;
    f.n_obs = c.n_obs;
    if (o.threads > 0) f.intraop_threads = o.threads;
    f.host_cpu_count = static_cast<std::uint64_t>(get_nprocs());
    f.host = o.host;
    f.measured_at = format_rfc3339(now_ns());
    if (o.nvml) f.gpu_method = "nvml-poll";
    return f;
}

std::string fit_label(const cell& c) {
    return c.ts_id.empty() ? c.model_type : c.model_type + " on " + c.ts_id;
}

void report_leftovers(std::size_t n, const cell& c) {
    if (n > 0) warn(fmt::format("{} process(es) left behind by the fit of {} were killed", n, fit_label(c)));
}

void forward_and_throw(pid_t pgid, int pidfd, int sig) {
    kill(-pgid, sig);
    pollfd pfd{pidfd, POLLIN, 0};
    if (poll(&pfd, 1, 5000) <= 0) kill(-pgid, SIGKILL);
    wait_child(pgid);
    kill_group_leftovers(pgid);
    reap_orphans();
    close(pidfd);
    throw interrupted(sig);
}

}  // namespace

interrupted::interrupted(int s)
    : error(static_cast<exit_code>(128 + s),
            fmt::format("interrupted by {}: the fit in progress was stopped", signal_name(s))),
      sig(s) {}

std::string describe_failure(std::optional<int> exit_status, std::optional<int> sig, bool timed_out, double timeout_s,
                             const std::string& last_line) {
    std::string why;
    if (timed_out) why = fmt::format("timeout after {} s", format_double(timeout_s));
    else if (sig) why = "killed by " + signal_name(*sig);
    else if (exit_status) why = fmt::format("exit {}", *exit_status);
    else why = "failed";
    if (!timed_out && !last_line.empty()) why += ": " + last_line;
    return why;
}

measured_fit measure_process(const std::vector<std::string>& argv, const cell& c, const measure_options& o) {
    measured_fit f = base_record(c, o);
    f.rss_method = "rusage";
    f.rss_peak_reset = false;
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) != 0) throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));
    child_options co;
    co.argv = argv;
    co.threads = o.threads;
    co.stdin_fd = o.inherit_stdin ? 0 : -1;
    co.stdout_fd = o.child_output_fd;
    co.stderr_fd = errp[1];
    spawned_child ch;
    try {
        ch = spawn_child(co);
    } catch (const unavailable_error& e) {
        close(errp[0]);
        close(errp[1]);
        f.ok = false;
        f.error = e.what();
        f.exit_code = std::string(e.what()).find("No such file") != std::string::npos ? 127 : 126;
        return f;
    }
    close(errp[1]);
    double t0 = ch.started_at;
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    stderr_tee tee;
    gpu_peak_tracker gpu{o.nvml, {}, false};
    bool timed_out = false, err_open = true;
    std::size_t max_procs = 1;
    double deadline = o.timeout_s > 0 ? t0 + o.timeout_s : 0;
    // The first /proc scan waits one interval: a short fit's wall must not include it.
    double next_sample = t0 + o.sample_interval_s;
    double t1 = 0;
    for (;;) {
        double now = monotonic_seconds();
        if (now >= next_sample) {
            auto members = group_members(ch.pid);
            max_procs = std::max(max_procs, members.size());
            gpu.sample(members);
            next_sample = now + o.sample_interval_s;
        }
        double wait = next_sample - now;
        if (deadline > 0 && !timed_out) wait = std::min(wait, deadline - now);
        pollfd pfds[3] = {{ch.pidfd, POLLIN, 0}, {err_open ? errp[0] : -1, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        int r = poll(pfds, 3, std::max(0, static_cast<int>(wait * 1000 + 0.5)));
        if (r < 0 && errno != EINTR) break;
        if (pfds[1].revents) err_open = drain(errp[0], tee);
        if (pending_signal()) {
            close(errp[0]);
            forward_and_throw(ch.pid, ch.pidfd, take_pending_signal());
        }
        if (pfds[0].revents & POLLIN) {
            t1 = monotonic_seconds();
            break;
        }
        if (deadline > 0 && !timed_out && monotonic_seconds() >= deadline) {
            timed_out = true;
            kill(-ch.pid, SIGKILL);
        }
    }
    child_exit ex = wait_child(ch.pid);
    int status = ex.status;
    close(ch.pidfd);
    if (err_open) err_open = drain(errp[0], tee);
    std::vector<pid_t> gone = kill_group_leftovers(ch.pid);
    for (pid_t p : reap_orphans())
        if (std::find(gone.begin(), gone.end(), p) == gone.end()) gone.push_back(p);
    std::size_t left = gone.size();
    if (err_open && left > 0) {
        // The killed leftovers held the pipe; read what they wrote until it closes.
        pollfd pfd{errp[0], POLLIN, 0};
        while (err_open && poll(&pfd, 1, 500) > 0) err_open = drain(errp[0], tee);
    }
    close(errp[0]);
    report_leftovers(left, c);
    if (max_procs > 1)
        warn(fmt::format("the fit of {} ran {} processes at once: rusage reads the largest single one, so "
                         "process_rss_bytes under-reads; measure it with --worker, or in one process",
                         fit_label(c), max_procs));

    f.wall_s = t1 - t0;
    f.cpu_s = ex.user_s + ex.system_s;
    f.process_rss_bytes = ex.maxrss_kib * 1024;
    if (o.nvml) f.peak_gpu_bytes = gpu.any_reading ? gpu.peak : std::nullopt;
    std::optional<int> code, sig;
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
        f.exit_code = *code;
    } else if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
        f.signal = signal_name(*sig);
    }
    f.ok = !timed_out && code && *code == 0;
    if (!f.ok) f.error = describe_failure(code, sig, timed_out, o.timeout_s, tee.last_line());
    return f;
}

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
    co.stdin_fd = in[0];
    co.stdout_fd = o_.child_output_fd;
    co.stderr_fd = 2;
    co.extra_fds = {{rep[1], 3}};
    co.extra_env = {{"PROF_REPLY_FD", "3"}};
    try {
        child_ = spawn_child(co);
    } catch (...) {
        for (int fd : {in[0], in[1], rep[0], rep[1]}) close(fd);
        throw;
    }
    close(in[0]);
    close(rep[1]);
    in_fd_ = in[1];
    reply_fd_ = rep[0];
    fcntl(in_fd_, F_SETFL, O_NONBLOCK);
    fcntl(reply_fd_, F_SETFL, O_NONBLOCK);
    reply_buf_.clear();
    alive_ = true;
    if (!wait_ready_) return;
    // Optional handshake: a worker built on prof_worker.py writes {"ready":true} on fd 3 once its
    // imports are done, so the import never lands in the first cell's reading.
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
            stop(0.5);
            throw interrupted(s);
        }
        if (pfds[0].revents) {
            char buf[4096];
            ssize_t r = ::read(reply_fd_, buf, sizeof buf);
            if (r > 0) reply_buf_.append(buf, static_cast<std::size_t>(r));
            else if (r == 0) pfds[1].revents = POLLIN;  // reply pipe closed: treat as death
        }
        if ((pfds[1].revents & POLLIN) && !read_reply_line(line)) {
            int code = -1, sig = 0;
            reap_dead(&code, &sig);
            throw unavailable_error(fmt::format("worker '{}' {} before it was ready (its stderr, above, says why)", command_text(),
                                                sig ? "was killed by " + signal_name(sig) : fmt::format("exited with status {}", code)));
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

bool warm_worker::read_reply_line(std::string& line) {
    auto nl = reply_buf_.find('\n');
    if (nl == std::string::npos) return false;
    line = reply_buf_.substr(0, nl);
    reply_buf_.erase(0, nl + 1);
    return true;
}

void warm_worker::reap_dead(int* exit_status, int* sig) {
    int status = wait_child(child_.pid).status;
    if (WIFEXITED(status)) *exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) *sig = WTERMSIG(status);
    kill_group_leftovers(child_.pid);
    reap_orphans();
    for (int* fd : {&in_fd_, &reply_fd_, &child_.pidfd}) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
    }
    alive_ = false;
}

void warm_worker::stop(double grace_s) {
    if (!alive_) return;
    close(in_fd_);
    in_fd_ = -1;
    pollfd pfd{child_.pidfd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(grace_s * 1000)) <= 0) kill(-child_.pid, SIGKILL);
    int code = 0, sig = 0;
    reap_dead(&code, &sig);
}

measured_fit warm_worker::measure(const cell& c) {
    if (!alive_) start();
    measured_fit f = base_record(c, o_);
    f.rss_method = "proc";
    pid_t pid = child_.pid;
    // Stale lines (a worker that answered twice) must not be taken as this cell's reply.
    {
        char buf[4096];
        ssize_t r;
        while ((r = ::read(reply_fd_, buf, sizeof buf)) > 0) reply_buf_.append(buf, static_cast<std::size_t>(r));
        std::string stale;
        while (read_reply_line(stale))
            if (stale.find("\"ready\"") == std::string::npos)
                warn(fmt::format("worker sent a reply no cell asked for (ignored): {}", stale.substr(0, 200)));
    }
    auto rss_before = proc_status_bytes(pid, "VmRSS");
    bool reset = reset_peak_rss(pid);
    auto cpu_before = process_cpu_seconds(pid);
    std::string line = write_cell(c) + "\n";
    gpu_peak_tracker gpu{o_.nvml, {}, false};
    double t0 = monotonic_seconds();
    double deadline = o_.timeout_s > 0 ? t0 + o_.timeout_s : 0;
    bool write_failed = false, timed_out = false;
    // The worker's stdin is non-blocking: a worker that stops reading must not stall the timeout
    // or a signal behind a full pipe.
    for (std::size_t off = 0; off < line.size();) {
        ssize_t w = ::write(in_fd_, line.data() + off, line.size() - off);
        if (w > 0) {
            off += static_cast<std::size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            double left = deadline > 0 ? deadline - monotonic_seconds() : -1;
            if (deadline > 0 && left <= 0) {
                timed_out = true;
                break;
            }
            pollfd pfds[3] = {{in_fd_, POLLOUT, 0}, {child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
            poll(pfds, 3, left < 0 ? -1 : static_cast<int>(left * 1000) + 1);
            if (pending_signal()) {
                int s = take_pending_signal();
                kill(-pid, s);
                stop(2.0);
                throw interrupted(s);
            }
            if (pfds[1].revents & POLLIN) {
                write_failed = true;
                break;
            }
            continue;
        }
        write_failed = true;  // EPIPE: the worker is gone (SIGPIPE is ignored here)
        break;
    }
    double next_sample = t0 + o_.sample_interval_s;  // never a /proc scan or NVML query inside a short cell
    std::string reply;
    bool got = false, died = write_failed;
    double t1 = 0;
    while (!got && !died && !timed_out) {
        double now = monotonic_seconds();
        if (o_.nvml && now >= next_sample) {
            gpu.sample(group_members(pid));
            next_sample = now + o_.sample_interval_s;
        }
        double wait = o_.nvml ? next_sample - now : 1.0;
        if (deadline > 0) wait = std::min(wait, deadline - now);
        pollfd pfds[3] = {{reply_fd_, POLLIN, 0}, {child_.pidfd, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        int r = poll(pfds, 3, std::max(0, static_cast<int>(wait * 1000 + 0.5)));
        if (r < 0 && errno != EINTR) break;
        if (pending_signal()) {
            int s = take_pending_signal();
            kill(-pid, s);
            stop(2.0);
            throw interrupted(s);
        }
        if (pfds[0].revents) {
            char buf[4096];
            ssize_t n = ::read(reply_fd_, buf, sizeof buf);
            if (n > 0) reply_buf_.append(buf, static_cast<std::size_t>(n));
            while (read_reply_line(reply)) {
                if (reply.find("\"ready\"") != std::string::npos && reply.find("\"ok\"") == std::string::npos) continue;
                got = true;
                t1 = monotonic_seconds();
                break;
            }
            if (!got && n == 0) died = true;
        }
        if (!got && (pfds[1].revents & POLLIN)) died = true;
        if (!got && !died && deadline > 0 && monotonic_seconds() >= deadline) {
            timed_out = true;
            break;
        }
    }
    if (got) {
        auto cpu_after = process_cpu_seconds(pid);
        auto hwm = proc_status_bytes(pid, "VmHWM");
        f.wall_s = t1 - t0;
        if (cpu_before && cpu_after) f.cpu_s = *cpu_after - *cpu_before;
        f.process_rss_bytes = hwm;
        if (hwm && rss_before && reset) f.peak_rss_bytes = *hwm > *rss_before ? *hwm - *rss_before : 0;
        f.rss_peak_reset = reset;
        if (o_.nvml) f.peak_gpu_bytes = gpu.any_reading ? gpu.peak : std::nullopt;
        // The reply: {"ok":true} or {"ok":false,"error":"..."}; other fields are ignored.
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
        return f;
    }
    f.ok = false;
    f.rss_peak_reset = reset;
    if (timed_out) {
        f.wall_s = monotonic_seconds() - t0;
        kill(-pid, SIGKILL);
        int code = 0, sig = 0;
        reap_dead(&code, &sig);
        f.error = describe_failure(std::nullopt, std::nullopt, true, o_.timeout_s, "");
        return f;
    }
    int code = -1, sig = 0;
    reap_dead(&code, &sig);
    if (sig) f.signal = signal_name(sig);
    else if (code >= 0) f.exit_code = code;
    f.error = "worker died mid-cell: " + describe_failure(code >= 0 && !sig ? std::optional(code) : std::nullopt,
                                                          sig ? std::optional(sig) : std::nullopt, false, 0, "");
    return f;
}

}  // namespace prof
