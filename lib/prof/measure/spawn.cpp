// Child processes for measurement (see spawn.hpp).
#include "prof/measure/spawn.hpp"

#include "prof/core/errors.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <atomic>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

std::string shell_quote(std::string_view text) {
    std::string out = "'";
    for (char ch : text) {
        if (ch == '\'') out += "'\\''";
        else out.push_back(ch);
    }
    out += "'";
    return out;
}

std::string substitute_cell(const std::string& word, const cell& c, bool shell_script) {
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
                } else if (name == "params") {
                    n_obs = shell_quote(c.params.value_or("{}"));
                    val = &n_obs;
                } else if (name == "params_json") {
                    n_obs = c.params.value_or("{}");
                    val = &n_obs;
                }
                if (val && shell_script && name != "params") {
                    out += shell_quote(*val);
                    i = close + 1;
                    continue;
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
    std::vector<int> cpus = allowed_cpus();
    if (cpus.size() > n) cpus.resize(n);
    return cpus;
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
//
// Fits measured side by side are watched by threads of their own, and every one of them must
// see a signal: each thread that asks for signal_pipe_fd() gets a pipe of its own from a fixed
// table, and the handler writes to every pipe in use. A thread keeps the count of signals it
// has taken, so a signal is pending for each thread until that thread takes it. Pipes are never
// closed (a handler may be writing to one): a thread that ends hands its slot to the next.

namespace {
constexpr int max_listeners = 256;
struct listener_slot {
    int fds[2] = {-1, -1};
    std::atomic<bool> taken{false};
    std::atomic<bool> active{false};  // the handler writes to it
};
listener_slot g_slots[max_listeners];
bool g_installed = false;
std::atomic<unsigned> g_count{0};  // signals received
std::atomic<int> g_last{0};        // the last one's number
static_assert(std::atomic<unsigned>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "a signal handler may use only lock-free atomics");

void on_signal(int sig) {
    int saved = errno;
    g_last.store(sig);
    g_count.fetch_add(1);
    unsigned char b = static_cast<unsigned char>(sig);
    for (auto& slot : g_slots)
        if (slot.active.load()) {
            ssize_t ignored = write(slot.fds[1], &b, 1);
            (void)ignored;
        }
    errno = saved;
}

// This thread's slot in the table (taken at its first use, given back when it ends) and the
// signals it has taken.
struct thread_listener {
    int slot = -1;
    unsigned seen = 0;
    ~thread_listener() {
        if (slot < 0) return;
        g_slots[slot].active.store(false);
        g_slots[slot].taken.store(false);
    }
    int fd() {
        if (slot >= 0) return g_slots[slot].fds[0];
        if (!g_installed) return -1;
        for (int i = 0; i < max_listeners; ++i) {
            bool expected = false;
            if (!g_slots[i].taken.compare_exchange_strong(expected, true)) continue;
            // The pipe of slot i is made once (by the thread that first takes it) and kept.
            if (g_slots[i].fds[0] < 0 && pipe2(g_slots[i].fds, O_CLOEXEC | O_NONBLOCK) != 0) {
                g_slots[i].taken.store(false);
                throw error(exit_code::software, fmt::format("pipe: {}", std::strerror(errno)));
            }
            drain(g_slots[i].fds[0]);
            g_slots[i].active.store(true);
            slot = i;
            return g_slots[i].fds[0];
        }
        throw error(exit_code::software, "more than 256 threads watch for signals");
    }
    static void drain(int fd) {
        unsigned char b;
        while (fd >= 0 && read(fd, &b, 1) == 1) {
        }
    }
};
thread_local thread_listener t_listener;
}  // namespace

void install_supervisor_signals() {
    if (g_installed) return;
    g_installed = true;
    (void)t_listener.fd();  // the main thread's pipe, before the first signal can come
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

int signal_pipe_fd() { return t_listener.fd(); }
int pending_signal() { return g_count.load() != t_listener.seen ? g_last.load() : 0; }
int take_pending_signal() {
    if (t_listener.slot >= 0) thread_listener::drain(g_slots[t_listener.slot].fds[0]);
    unsigned n = g_count.load();
    int s = n != t_listener.seen ? g_last.load() : 0;
    t_listener.seen = n;
    return s;
}


}  // namespace prof
