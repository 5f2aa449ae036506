// Child processes for measurement (see spawn.hpp).
#include "prof/spawn.hpp"

#include "prof/errors.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace prof {

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) words.push_back(std::move(cur));
            cur.clear();
            in_word = false;
        } else if (c == '\'') {
            auto end = text.find('\'', i + 1);
            if (end == std::string::npos) throw usage_error("unterminated ' in command template: " + text);
            cur.append(text, i + 1, end - i - 1);
            i = end;
            in_word = true;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < text.size() && text[j] != '"'; ++j) {
                if (text[j] == '\\' && j + 1 < text.size() && std::strchr("\"\\$`", text[j + 1])) ++j;
                cur.push_back(text[j]);
            }
            if (j >= text.size()) throw usage_error("unterminated \" in command template: " + text);
            i = j;
            in_word = true;
        } else if (c == '\\') {
            if (i + 1 < text.size()) cur.push_back(text[++i]);
            in_word = true;
        } else {
            cur.push_back(c);
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(cur));
    return words;
}

std::string substitute_cell(const std::string& word, const cell& c) {
    std::string out;
    for (std::size_t i = 0; i < word.size();) {
        if (word[i] == '{') {
            auto close = word.find('}', i);
            if (close != std::string::npos) {
                std::string_view name(word.data() + i + 1, close - i - 1);
                const std::string* val = nullptr;
                std::string n_obs;
                if (name == "ts_id") val = &c.ts_id;
                else if (name == "model_type") val = &c.model_type;
                else if (name == "family") val = &c.family;
                else if (name == "n_obs") {
                    n_obs = c.n_obs ? std::to_string(*c.n_obs) : "";
                    val = &n_obs;
                }
                if (val) {
                    out += *val;
                    i = close + 1;
                    continue;
                }
            }
        }
        out.push_back(word[i++]);
    }
    return out;
}

const std::vector<std::string>& thread_pool_variables() {
    static const std::vector<std::string> vars = {
        "OMP_NUM_THREADS",      "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",  "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",  "NUMEXPR_MAX_THREADS",  "BLIS_NUM_THREADS", "GOTO_NUM_THREADS",
        "POLARS_MAX_THREADS",   "RAYON_NUM_THREADS",    "TF_NUM_INTRAOP_THREADS", "NUMBA_NUM_THREADS",
    };
    return vars;
}

std::vector<int> pick_cpus(unsigned n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
    for (int cpu = 0; cpu < CPU_SETSIZE && out.size() < n; ++cpu)
        if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
    return out;
}

unsigned allowed_cpu_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
    return static_cast<unsigned>(CPU_COUNT(&set));
}

double monotonic_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

spawned_child spawn_child(const child_options& opts) {
    if (opts.argv.empty()) throw usage_error("empty command");
    // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
    std::vector<std::string> env_store;
    auto overridden = [&](const std::string& entry) {
        auto eq = entry.find('=');
        std::string key = entry.substr(0, eq);
        if (opts.threads > 0)
            for (const auto& v : thread_pool_variables())
                if (v == key) return true;
        for (const auto& [k, v] : opts.extra_env)
            if (k == key) return true;
        return false;
    };
    for (char** e = environ; *e; ++e)
        if (!overridden(*e)) env_store.emplace_back(*e);
    if (opts.threads > 0)
        for (const auto& v : thread_pool_variables()) env_store.push_back(v + "=" + std::to_string(opts.threads));
    for (const auto& [k, v] : opts.extra_env) env_store.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_store = opts.argv;
    for (auto& s : argv_store) argv.push_back(s.data());
    argv.push_back(nullptr);
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    bool set_affinity = false;
    if (opts.threads > 0) {
        for (int c : pick_cpus(opts.threads)) CPU_SET(c, &cpus);
        set_affinity = CPU_COUNT(&cpus) > 0;
    }
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));

    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(errpipe[0]);
        close(errpipe[1]);
        throw unavailable_error(fmt::format("cannot fork: {}", std::strerror(err)));
    }
    if (pid == 0) {
        setpgid(0, 0);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaction(s, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        int in = opts.stdin_fd >= 0 ? opts.stdin_fd : open("/dev/null", O_RDONLY);
        if (in >= 0 && in != 0) dup2(in, 0);
        if (opts.stdout_fd != 1) dup2(opts.stdout_fd, 1);
        if (opts.stderr_fd != 2) dup2(opts.stderr_fd, 2);
        for (const auto& [from, to] : opts.extra_fds) {
            if (from == to) fcntl(to, F_SETFD, 0);
            else dup2(from, to);
        }
        if (set_affinity) sched_setaffinity(0, sizeof cpus, &cpus);
        execvpe(argv[0], argv.data(), envp.data());
        int err = errno;
        ssize_t ignored = write(errpipe[1], &err, sizeof err);
        (void)ignored;
        _exit(err == ENOENT ? 127 : 126);
    }
    setpgid(pid, pid);  // also in the parent: no race with a signal sent to the group
    close(errpipe[1]);
    int child_err = 0;
    ssize_t r;
    do {
        r = read(errpipe[0], &child_err, sizeof child_err);
    } while (r < 0 && errno == EINTR);
    close(errpipe[0]);
    if (r == static_cast<ssize_t>(sizeof child_err)) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        throw unavailable_error(fmt::format("cannot run '{}': {}", opts.argv[0], std::strerror(child_err)));
    }
    spawned_child c;
    c.pid = pid;
    c.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (c.pidfd < 0) {
        int err = errno;
        kill(-pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        throw unavailable_error(fmt::format("pidfd_open: {} (Linux 5.3 or later is needed)", std::strerror(err)));
    }
    fcntl(c.pidfd, F_SETFD, FD_CLOEXEC);
    return c;
}

namespace {
struct proc_stat {
    pid_t pid;
    char state;
    pid_t ppid, pgrp;
};

// Every process's state, parent and group, from /proc/*/stat.
std::vector<proc_stat> scan_processes() {
    std::vector<proc_stat> out;
    DIR* d = opendir("/proc");
    if (!d) return out;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300];
        std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[512];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        // "pid (comm) state ppid pgrp ...": comm may hold spaces or ')', so parse after the last ')'.
        char* rp = std::strrchr(buf, ')');
        proc_stat ps{static_cast<pid_t>(std::atoi(e->d_name)), '?', 0, 0};
        int ppid, pgrp;
        if (rp && std::sscanf(rp + 1, " %c %d %d", &ps.state, &ppid, &pgrp) == 3) {
            ps.ppid = ppid;
            ps.pgrp = pgrp;
            out.push_back(ps);
        }
    }
    closedir(d);
    return out;
}
}  // namespace

std::vector<pid_t> group_members(pid_t pgid) {
    std::vector<pid_t> out;
    for (const auto& p : scan_processes())
        if (p.pgrp == pgid && p.state != 'Z') out.push_back(p.pid);
    return out;
}

std::vector<pid_t> kill_group_leftovers(pid_t pgid) {
    if (kill(-pgid, 0) != 0) return {};  // the usual case: the group is empty, no /proc scan
    std::vector<pid_t> members = group_members(pgid);
    kill(-pgid, SIGKILL);
    return members;
}

std::optional<std::uint64_t> proc_status_bytes(pid_t pid, const char* field) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return std::nullopt;
    buf[n] = '\0';
    std::size_t flen = std::strlen(field);
    for (char* line = buf; line && *line;) {
        if (std::strncmp(line, field, flen) == 0 && line[flen] == ':') {
            unsigned long long kib = 0;
            if (std::sscanf(line + flen + 1, " %llu", &kib) == 1) return static_cast<std::uint64_t>(kib) * 1024;
            return std::nullopt;
        }
        line = std::strchr(line, '\n');
        if (line) ++line;
    }
    return std::nullopt;
}

std::vector<pid_t> reap_orphans(pid_t keep) {
    std::vector<pid_t> total;
    for (int pass = 0; pass < 3; ++pass) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) break;  // ECHILD: no child at all
        std::vector<pid_t> orphans;
        pid_t self = getpid();
        for (const auto& p : scan_processes())
            if (p.ppid == self && p.pid != keep) orphans.push_back(p.pid);
        if (orphans.empty()) break;
        for (pid_t p : orphans) {
            kill(p, SIGKILL);
            int status;
            while (waitpid(p, &status, 0) < 0 && errno == EINTR) {
            }
        }
        total.insert(total.end(), orphans.begin(), orphans.end());
        usleep(10000);  // let the killed ones' own children re-parent before the next pass
    }
    return total;
}

bool reset_peak_rss(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/clear_refs", static_cast<int>(pid));
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

std::optional<double> process_cpu_seconds(pid_t pid) {
    clockid_t cid;
    if (clock_getcpuclockid(pid, &cid) != 0) return std::nullopt;
    timespec ts{};
    if (clock_gettime(cid, &ts) != 0) return std::nullopt;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- supervisor signals -----------------------------------------------------------------

namespace {
int g_sigpipe[2] = {-1, -1};
volatile sig_atomic_t g_pending = 0;

void on_signal(int sig) {
    int saved = errno;
    g_pending = sig;
    unsigned char b = static_cast<unsigned char>(sig);
    ssize_t ignored = write(g_sigpipe[1], &b, 1);
    (void)ignored;
    errno = saved;
}
}  // namespace

void install_supervisor_signals() {
    if (g_sigpipe[0] >= 0) return;
    if (pipe2(g_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0)
        throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;  // a record write is never cut by EINTR; poll() still wakes (EINTR)
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, nullptr);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int signal_pipe_fd() { return g_sigpipe[0]; }
int pending_signal() { return g_pending; }
int take_pending_signal() {
    unsigned char b;
    while (g_sigpipe[0] >= 0 && read(g_sigpipe[0], &b, 1) == 1) {
    }
    int s = g_pending;
    g_pending = 0;
    return s;
}

}  // namespace prof
