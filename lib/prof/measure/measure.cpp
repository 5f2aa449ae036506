// Measuring fits as processes, and the run of every cell in order (see measure.hpp).
#include "prof/measure/measure.hpp"

#include "prof/measure/fit_common.hpp"
#include "prof/core/limits.hpp"

#include "prof/measure/cgroup.hpp"
#include "prof/core/diag.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_out.hpp"
#include "prof/core/units.hpp"

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

namespace measure_detail {

// Whether the process behind `pidfd` has ended, or ends within `seconds` (0: now).
bool ends_within(int pidfd, double seconds) {
    if (pidfd < 0) return true;
    double until = monotonic_seconds() + seconds;
    for (;;) {
        pollfd p{pidfd, POLLIN, 0};
        int n = poll(&p, 1, std::max(0, static_cast<int>((until - monotonic_seconds()) * 1000 + 0.5)));
        if (n > 0) return true;
        if (n == 0 || errno != EINTR) return false;
    }
}

// Why a worker that closed its reply descriptor before its ready line, and kept running, was killed.
std::string closed_before_ready(const std::string& command) {
    return fmt::format("worker '{}' closed descriptor 3 before it was ready and kept running; it was killed (replies "
                       "go to descriptor 3, PROF_REPLY_FD)", command);
}

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

nvml_reader* gpu_reader(const measure_options& o) { return o.nvml ? o.nvml->get() : nullptr; }
cgroup_run* run_cgroups(const measure_options& o) { return o.cgroups ? o.cgroups->get() : nullptr; }

measured_fit base_record(const cell& c, const measure_options& o) {
    measured_fit f;
    f.ts_id = c.ts_id;
    f.model_type = c.model_type;
    f.family = c.family;
    f.family_named = c.family_named;
    f.n_obs = c.n_obs;
    if (c.params) f.params_digest = params_digest(*c.params);
    if (o.threads > 0) f.intraop_threads = o.threads;
    f.host_cpu_count = static_cast<std::uint64_t>(get_nprocs());
    f.host = o.host;
    f.measured_at = format_rfc3339(now_ns());
    if (gpu_reader(o)) f.gpu_method = "nvml-poll";
    return f;
}

std::string fit_label(const cell& c) {
    return c.ts_id.empty() ? c.model_type : c.model_type + " on " + c.ts_id;
}

// A process already on its way out: a zombie, exiting (PF_EXITING in /proc/PID/stat's flags),
// or with SIGKILL pending (/proc/PID/status SigPnd or ShdPnd). The kernel's OOM killer with
// memory.oom.group, or our own kill of a group, leaves processes so for a moment after the fit's
// main process is reaped: they did not outlive the fit. proc(5); include/linux/sched.h.
// /proc/PID/stat after the command name: "S ppid pgrp session tty tpgid flags ...".
struct proc_stat_fields {
    char state = '?';
    long pgrp = 0;
    unsigned long flags = 0;
};
std::optional<proc_stat_fields> read_proc_stat_fields(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    FILE* f = std::fopen(path, "re");
    if (!f) return std::nullopt;
    char buf[1024];
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    std::string_view st(buf, n);
    auto close_paren = st.rfind(')');
    if (close_paren == std::string_view::npos || close_paren + 2 >= st.size()) return std::nullopt;
    std::string_view rest = st.substr(close_paren + 2);
    proc_stat_fields out;
    out.state = rest[0];
    std::vector<std::string_view> fields;
    for (std::size_t at = 0; at < rest.size() && fields.size() < 7;) {
        auto sp = rest.find(' ', at);
        fields.push_back(rest.substr(at, sp == std::string_view::npos ? std::string_view::npos : sp - at));
        at = sp == std::string_view::npos ? rest.size() : sp + 1;
    }
    if (fields.size() < 7) return std::nullopt;
    std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), out.pgrp);
    std::from_chars(fields[6].data(), fields[6].data() + fields[6].size(), out.flags);
    return out;
}

bool process_is_dying(pid_t pid) {
    auto st = read_proc_stat_fields(pid);
    if (!st) return true;  // gone already
    if (st->state == 'Z' || st->state == 'X' || st->state == 'x') return true;
    constexpr unsigned long pf_exiting = 0x4;
    if (st->flags & pf_exiting) return true;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    FILE* f = std::fopen(path, "re");
    if (!f) return true;
    char line[256];
    bool kill_pending = false;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "SigPnd:", 7) != 0 && std::strncmp(line, "ShdPnd:", 7) != 0) continue;
        unsigned long long mask = std::strtoull(line + 7, nullptr, 16);
        if (mask & (1ULL << (SIGKILL - 1))) kill_pending = true;
    }
    std::fclose(f);
    return kill_pending;
}

// The processes of process group `pgid` that are dying (zombies included) now.
std::vector<pid_t> dying_in_group(pid_t pgid) {
    std::vector<pid_t> out;
    if (kill(-pgid, 0) != 0) return out;  // the usual case: the group is empty, no /proc scan
    DIR* d = opendir("/proc");
    if (!d) return out;
    while (dirent* e = readdir(d)) {
        pid_t p = 0;
        auto [end, ec] = std::from_chars(e->d_name, e->d_name + std::strlen(e->d_name), p);
        if (ec != std::errc() || *end != '\0') continue;
        auto st = read_proc_stat_fields(p);
        if (st && st->pgrp == pgid && process_is_dying(p)) out.push_back(p);
    }
    closedir(d);
    return out;
}

// How long a fit's processes get, after it exits, to end by themselves before the ones still
// running are killed as left behind: a process pool's workers (joblib's loky, multiprocessing)
// notice their parent is gone and exit within moments; those are no leftover to report.
constexpr double leftover_grace_s = 1.0;

// Waits, up to leftover_grace_s, while a process of the fit's group `pgid` or of its cgroup
// still runs (not dying). Returns at once when none does, the usual case.
void await_own_exit(pid_t pgid, cgroup_cell* cg) {
    const double until = monotonic_seconds() + leftover_grace_s;
    for (;;) {
        bool running = false;
        if (kill(-pgid, 0) == 0)
            for (pid_t p : group_members(pgid))
                if (!process_is_dying(p)) running = true;
        if (!running && cg)
            for (int p : cg->members())
                if (!process_is_dying(p)) running = true;
        if (!running || monotonic_seconds() >= until) return;
        usleep(10000);
    }
}

void report_leftovers(std::size_t n, const cell& c) {
    if (n > 0) warn(fmt::format("{} process(es) left behind by the fit of {} were killed", n, fit_label(c)));
}

// The error of a fit stopped because prof-measure itself was signalled.
std::string interrupted_error(int sig, bool killed) {
    return fmt::format("interrupted: prof-measure received {} and stopped the fit{}", signal_name(sig),
                       killed ? " (SIGKILL after the grace period)" : "");
}

// What supervising a running fit saw: when it ended, and whether it was stopped.
struct fit_watch {
    double t1 = 0;
    bool timed_out = false, killed = false, err_open = true;
    int stop_sig = 0;  // the signal prof-measure received and forwarded
    bool oom_seen = false;  // the fit's cgroup counted an OOM kill: the rest of the tree was killed
    bool left_cgroup = false;  // the fit's process moved itself out of its cgroup: its tree was killed
    std::size_t max_procs = 1;
};

// The error of a fit (or a worker) whose process left the cgroup it was started in: past that
// point neither --memory-limit nor the cgroup's readings covered it.
const char* left_cgroup_error =
    "it moved itself out of its cgroup, where neither --memory-limit nor the cgroup's memory and CPU "
    "readings cover it";

// Whether `pid`, a process that should be in the group whose members are `members`, is alive
// outside it (moved itself out by writing to another group's cgroup.procs). A process that is
// exiting has left cgroup.procs already and is not counted.
bool left_its_cgroup(pid_t pid, const std::vector<pid_t>& members) {
    return std::find(members.begin(), members.end(), pid) == members.end() && !process_is_dying(pid);
}

// Waits for the fit in `ch` to end: samples its processes (count, GPU, CPU pressure) every
// interval, tees its stderr, kills its tree at the timeout, forwards a signal prof-measure
// received and escalates to SIGKILL after the grace (at once on a second signal). An OOM kill
// counted in the fit's cgroup ends the fit too: on cgroup v1 (and on v2 without
// memory.oom.group) the kernel kills one process, and a parent waiting on it (joblib, a
// multiprocessing pool) could wait forever.
fit_watch watch_fit(const spawned_child& ch, cgroup_cell* cg, int err_fd, stderr_tee& tee, gpu_peak_tracker& gpu,
                    pressure_meter& pressure, const measure_options& o) {
    fit_watch w;
    const double t0 = ch.started_at;
    double kill_at = 0;  // when the forwarded signal escalates to SIGKILL
    double deadline = o.timeout_s > 0 ? t0 + o.timeout_s : 0;
    // The first /proc scan waits one interval: a short fit's wall must not include it.
    double next_sample = t0 + o.sample_interval_s;
    auto kill_tree = [&] {
        kill(-ch.pid, SIGKILL);
        if (cg) cg->kill_all();
        w.killed = true;
    };
    for (;;) {
        double now = monotonic_seconds();
        if (now >= next_sample) {
            std::vector<pid_t> members;
            if (cg) for (int p : cg->members()) members.push_back(p);
            else members = group_members(ch.pid);
            w.max_procs = std::max(w.max_procs, members.size());
            gpu.sample(members);
            pressure.sample();
            if (cg && !w.oom_seen && !w.killed && cg->oom_kills().value_or(0) > 0) {
                w.oom_seen = true;
                kill_tree();
            }
            if (cg && !w.killed && left_its_cgroup(ch.pid, members)) {
                w.left_cgroup = true;
                kill_tree();
            }
            next_sample = now + o.sample_interval_s;
        }
        double wait = next_sample - now;
        if (deadline > 0 && !w.timed_out) wait = std::min(wait, deadline - now);
        if (w.stop_sig && !w.killed) wait = std::min(wait, kill_at - now);
        pollfd pfds[3] = {{ch.pidfd, POLLIN, 0}, {w.err_open ? err_fd : -1, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
        int r = poll(pfds, 3, std::max(0, static_cast<int>(wait * 1000 + 0.5)));
        if (r < 0 && errno != EINTR) break;
        if (pfds[1].revents) w.err_open = drain(err_fd, tee);
        if (pending_signal()) {
            int sig = take_pending_signal();
            if (!w.stop_sig) {
                // Stop the fit as the signal would have: its group first, SIGKILL after the grace.
                w.stop_sig = sig;
                kill(-ch.pid, sig);
                kill_at = monotonic_seconds() + o.stop_grace_s;
            } else if (!w.killed) {
                kill_tree();  // a second signal: no more grace
            }
        }
        if (pfds[0].revents & POLLIN) {
            w.t1 = monotonic_seconds();
            break;
        }
        now = monotonic_seconds();
        if (deadline > 0 && !w.timed_out && !w.stop_sig && now >= deadline) {
            w.timed_out = true;
            kill_tree();
        }
        if (w.stop_sig && !w.killed && now >= kill_at) kill_tree();
    }
    return w;
}

// After the fit's exit: kills and reaps what it left behind (its group, orphans, members still
// in its cgroup), reads the rest of its stderr (the leftovers held the pipe), closes it, and
// says how many were left.
void clean_up_fit(pid_t pid, cgroup_cell* cg, int err_fd, bool err_open, stderr_tee& tee, const cell& c) {
    if (err_open) err_open = drain(err_fd, tee);
    await_own_exit(pid, cg);
    // Those already dying when the fit ended (killed with it, or ending by themselves within
    // the grace) did not outlive it.
    std::vector<pid_t> dying = dying_in_group(pid);
    if (cg)
        for (int p : cg->members())
            if (process_is_dying(p)) dying.push_back(p);
    std::vector<pid_t> gone = kill_group_leftovers(pid);
    for (pid_t p : reap_orphans())
        if (std::find(gone.begin(), gone.end(), p) == gone.end()) gone.push_back(p);
    if (cg)
        for (int p : cg->members())  // still in the fit's cgroup: left behind too
            if (std::find(gone.begin(), gone.end(), p) == gone.end()) gone.push_back(p);
    if (cg && cg->kill_all() > 0) reap_orphans();
    std::size_t left = 0;
    for (pid_t p : gone)
        if (std::find(dying.begin(), dying.end(), p) == dying.end()) ++left;
    if (err_open && left > 0) {
        pollfd pfd{err_fd, POLLIN, 0};
        while (err_open && poll(&pfd, 1, 500) > 0) err_open = drain(err_fd, tee);
    }
    close(err_fd);
    report_leftovers(left, c);
}

// oom_killed: true when the kernel killed a process of the fit's cgroup for memory (under our
// limit, or under no limit of ours: a container's or the host's), false under a limit without
// a kill, null without a limit or a kill.
std::optional<bool> oom_verdict(bool killed, bool limited) {
    if (killed) return true;
    if (limited) return false;
    return std::nullopt;
}

// The " (out of memory: ...)" that ends the error of an OOM-killed fit.
std::string oom_error_suffix(const measured_fit& f) {
    if (!f.oom_killed.value_or(false)) return {};
    if (f.memory_limit_bytes) return fmt::format(" (out of memory: the {}-byte --memory-limit)", *f.memory_limit_bytes);
    return " (out of memory: the kernel's OOM killer, under a limit prof-measure did not set)";
}

// The CPU and memory a fit used: rusage, then its cgroup's readings where it had one (read
// after the leftovers are gone: their CPU up to the kill is the fit's). The cgroup is removed.
void read_costs(measured_fit& f, const child_exit& ex, cgroup_cell* cg) {
    f.cpu_s = ex.user_s + ex.system_s;
    f.process_rss_bytes = ex.maxrss_kib * 1024;
    if (!cg) return;
    cgroup_reading rd = cg->read();
    // The larger of the tree's peak and the largest process's: pages of a binary or library
    // already cached are charged to the group that first read them, not to this one.
    f.cgroup_peak_bytes = rd.peak_bytes;
    if (rd.peak_bytes) f.process_rss_bytes = std::max(*rd.peak_bytes, f.process_rss_bytes.value_or(0));
    f.page_cache_bytes = rd.page_cache_bytes;
    if (rd.cpu_ns) f.cpu_s = static_cast<double>(*rd.cpu_ns) * 1e-9;
    f.oom_killed = oom_verdict(rd.oom_kills.value_or(0) > 0, f.memory_limit_bytes.has_value());
    cg->remove();
}

// ok, exit_code or signal, and the error text from how the fit ended; throws interrupted when
// prof-measure's own signal stopped it.
void settle_fit(measured_fit& f, int status, const fit_watch& w, const measure_options& o, const stderr_tee& tee) {
    std::optional<int> code, sig;
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
        f.exit_code = *code;
    } else if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
        f.signal = signal_name(*sig);
    }
    f.ok = !w.timed_out && !w.stop_sig && code && *code == 0;
    if (w.stop_sig) {
        f.error = interrupted_error(w.stop_sig, w.killed);
        throw interrupted(w.stop_sig, f);
    }
    if (!f.ok) {
        f.error = describe_failure(code, sig, w.timed_out, o.timeout_s, tee.last_line());
        *f.error += oom_error_suffix(f);
    }
    if (w.left_cgroup) f.error = std::string("killed: ") + left_cgroup_error;
}

}  // namespace measure_detail

using namespace measure_detail;

interrupted::interrupted(int s, std::optional<measured_fit> fit)
    : error(static_cast<exit_code>(128 + s),
            fmt::format("interrupted by {}: the fit in progress was stopped", signal_name(s))),
      sig(s), partial(std::move(fit)) {}

std::string describe_failure(std::optional<int> exit_status, std::optional<int> sig, bool timed_out, double timeout_s,
                             const std::string& last_line) {
    std::string why;
    if (timed_out) why = fmt::format("timeout after {} s", format_double(timeout_s));
    else if (sig) why = "killed by " + signal_name(*sig);
    else if (exit_status) why = fmt::format("exit {}", *exit_status);
    else why = "failed";
    if (!timed_out && !last_line.empty()) why += ": " + last_line;
    return why + python_path_hint(last_line);
}

std::string python_path_hint(std::string_view text) {
    for (const char* module : {"No module named 'prof_worker'", "No module named 'prof_record'"})
        if (text.find(module) != std::string_view::npos)
            return " (Python finds prof's modules through PYTHONPATH: PYTHONPATH=<checkout>/python, or "
                   "<PREFIX>/share/prof after make install)";
    return {};
}

measured_fit measure_process(const std::vector<std::string>& argv, const cell& c, const measure_options& o) {
    measured_fit f = base_record(c, o);
    f.cold = true;  // a process of its own: every cell starts cold
    cgroup_run* cgroups = run_cgroups(o);
    f.rss_method = cgroups ? cgroups->method() : "rusage";
    f.rss_peak_reset = false;
    std::unique_ptr<cgroup_cell> cg;
    if (cgroups) {
        cg = cgroups->new_cell();
        if (o.memory_limit_bytes) f.memory_limit_bytes = cg->set_memory_limit(*o.memory_limit_bytes);
    }
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) != 0) throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));
    child_options co;
    co.argv = argv;
    co.threads = o.threads;
    co.cpus = o.cpus;
    co.stdin_fd = o.inherit_stdin ? 0 : -1;
    co.stdout_fd = o.child_output_fd;
    co.stderr_fd = errp[1];
    if (cg) co.cgroup_procs = cg->procs_files();
    spawned_child ch;
    pressure_meter pressure;
    try {
        ch = spawn_child(co);
        pressure.bind(ch.pid);
    } catch (const unavailable_error& e) {
        close(errp[0]);
        close(errp[1]);
        std::string what = e.what();
        if (what.find("cgroup") != std::string::npos) throw;  // not the fit's failure: ours
        f.ok = false;
        f.error = what;
        f.exit_code = what.find("No such file") != std::string::npos ? 127 : 126;
        f.memory_limit_bytes.reset();
        return f;
    }
    close(errp[1]);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    stderr_tee tee;
    gpu_peak_tracker gpu{gpu_reader(o), {}, false};
    const fit_watch w = watch_fit(ch, cg.get(), errp[0], tee, gpu, pressure, o);
    pressure.finish(f);
    child_exit ex = wait_child(ch.pid);
    close(ch.pidfd);
    clean_up_fit(ch.pid, cg.get(), errp[0], w.err_open, tee, c);
    if (!cg && w.max_procs > 1)
        warn(fmt::format("the fit of {} ran {} processes at once: rusage reads the largest single one, so "
                         "process_rss_bytes under-reads; measure it where a memory cgroup can be created{}, "
                         "or in one process",
                         fit_label(c), w.max_procs,
                         o.no_cgroup_on_purpose ? " (without --no-cgroup)"
                         : geteuid() == 0       ? " (the note above says why none could be here)"
                                                : " (as root, or in a delegated cgroup: " + cgroup_delegation_advice(false) + ")"));
    f.wall_s = w.t1 - ch.started_at;
    read_costs(f, ex, cg.get());
    pressure.settle(f);
    if (gpu.reader) f.peak_gpu_bytes = gpu.any_reading ? gpu.peak : std::nullopt;
    settle_fit(f, ex.status, w, o, tee);
    return f;
}

// ---- the run ----------------------------------------------------------------------------

std::vector<std::size_t> shell_script_words(const std::vector<std::string>& words) {
    static const char* const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"};
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string_view base(words[i]);
        if (auto slash = base.rfind('/'); slash != std::string_view::npos) base.remove_prefix(slash + 1);
        if (std::find(std::begin(shells), std::end(shells), base) == std::end(shells)) continue;
        // The shell's options up to its first operand; with -c (alone or in a cluster: -ec,
        // -xc) that operand is the script. Options after -o take a name.
        bool dash_c = false;
        std::size_t j = i + 1;
        for (; j < words.size() && words[j].size() > 1 && (words[j][0] == '-' || words[j][0] == '+') && words[j] != "--"; ++j) {
            if (words[j][0] == '-' && words[j][1] != '-' && words[j].find('c') != std::string::npos) dash_c = true;
            if (words[j] == "-o" || words[j] == "+o" || words[j] == "-O" || words[j] == "+O") ++j;
        }
        if (j < words.size() && words[j] == "--") ++j;
        if (dash_c && j < words.size()) out.push_back(j);
        break;
    }
    return out;
}

std::vector<std::string> cell_argv(const std::vector<std::string>& words, const cell& c) {
    std::vector<std::size_t> scripts = shell_script_words(words);
    std::vector<std::string> argv;
    for (std::size_t i = 0; i < words.size(); ++i)
        argv.push_back(substitute_cell(words[i], c, std::find(scripts.begin(), scripts.end(), i) != scripts.end()));
    return argv;
}

measured_fit measure_cell_process(const std::vector<std::string>& words, const cell& c, const measure_options& o) {
    std::vector<std::string> argv = cell_argv(words, c);
    for (const auto& a : argv)
        if (a.find('\0') != std::string::npos) {
            // exec would cut the argument at the NUL: the fit would run on another ts_id than
            // its record names.
            measured_fit f = base_record(c, o);
            f.ok = false;
            f.error = "not run: a cell field holds a NUL byte, which no command-line argument can carry";
            return f;
        }
    return measure_process(argv, c, o);
}

measure_input read_measure_input(const std::vector<std::string>& files, std::size_t max_bad_lines) {
    measure_input in;
    // A line naming another kind is not a cell: kept whole, to be written through.
    auto other_kind = [&](std::string_view text) {
        if (text.find("\"kind\"") == std::string_view::npos) return false;
        std::optional<std::string> kind;
        parse_object_text(text, [&](simdjson::ondemand::object& obj) {
            for (auto field : obj)
                if (field.unescaped_key().value() == "kind") kind = read_string(field.value(), "kind");
        });
        if (!kind || *kind == "cell") return false;
        in.passthrough.emplace_back(text);
        in.passthrough_at.push_back(in.cells.size());
        return true;
    };
    bad_line_policy policy(max_bad_lines, "cell line");
    in.bad_lines = for_each_record(files, policy,
                                   [&](simdjson::ondemand::object& obj, const record_place&) { in.cells.push_back(read_cell(obj)); },
                                   other_kind)
                       .bad_lines;
    return in;
}

worker_scope parse_worker_scope(const std::string& text) {
    if (text == "run") return worker_scope::run;
    if (text == "family") return worker_scope::family;
    if (text == "model") return worker_scope::model;
    throw usage_error(fmt::format("--worker-scope: expected run, family or model, found '{}'", text));
}

std::string scope_key(const cell& c, worker_scope scope) {
    switch (scope) {
        case worker_scope::family: return c.family;
        case worker_scope::model: return c.model_type;
        default: return "";
    }
}

std::vector<std::size_t> measure_order(const std::vector<cell>& cells, worker_scope scope) {
    std::vector<std::size_t> order(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) order[i] = i;
    if (scope == worker_scope::run) return order;
    std::vector<std::string> first_seen;
    std::vector<std::size_t> group(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
        std::string k = scope_key(cells[i], scope);
        auto it = std::find(first_seen.begin(), first_seen.end(), k);
        group[i] = static_cast<std::size_t>(it - first_seen.begin());
        if (it == first_seen.end()) first_seen.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return group[a] < group[b]; });
    return order;
}

std::optional<std::string> contention_warning(const std::vector<measured_fit>& fits) {
    std::vector<const measured_fit*> busy;
    std::size_t counted = 0;
    for (const auto& f : fits) {
        if (f.phase == fit_phase_superseded) continue;
        ++counted;
        if (contended(f)) busy.push_back(&f);
    }
    if (busy.empty()) return std::nullopt;
    std::string names;
    for (std::size_t i = 0; i < busy.size() && i < 5; ++i)
        names += fmt::format("{}{} ({:.0f}%)", i ? ", " : "", fit_label(cell{busy[i]->ts_id, busy[i]->model_type, "", {}}),
                             *busy[i]->cpu_pressure * 100);
    if (busy.size() > 5) names += fmt::format(" and {} more", busy.size() - 5);
    return fmt::format("{} of {} fits were measured on a busy host (CPU pressure at least {:.0f}% of their wall time): {}; "
                       "their wall_s reads long and effective_cores short. Measure them again on an idle host, or "
                       "run fewer jobs beside prof-measure",
                       busy.size(), counted, contended_cpu_pressure * 100, names);
}

std::vector<std::size_t> replay_cells(std::vector<sampled_cell> cells, unsigned replay) {
    if (replay == 0 || cells.empty()) return {};
    std::sort(cells.begin(), cells.end(), [](const sampled_cell& a, const sampled_cell& b) {
        return std::tuple(a.rss_bytes.value_or(0), a.n_obs.value_or(0), a.index) <
               std::tuple(b.rss_bytes.value_or(0), b.n_obs.value_or(0), b.index);
    });
    const std::size_t ahead = std::min<std::size_t>(replay - 1, cells.size());
    std::vector<std::size_t> out;
    for (std::size_t i = cells.size() - ahead; i < cells.size(); ++i) out.push_back(cells[i].index);
    out.push_back(cells.back().index);
    return out;
}

}  // namespace prof
