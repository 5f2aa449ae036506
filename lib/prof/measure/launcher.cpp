// The launcher: a small process, started once a fit is sure to come, that forks every fit (so a
// fit starts from its footprint, not prof-measure's), its warden, and prof-measure's side of
// the socket between them (see spawn.hpp).
#include "prof/measure/spawn.hpp"
#include "prof/core/errors.hpp"
#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <spawn.h>
#include <malloc.h>
#include <mutex>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace prof {

// ---- the launcher -----------------------------------------------------------------------
//
// A fit forked by prof-measure itself would start its ru_maxrss at prof-measure's own
// high-water mark (the kernel folds the forking image's peak into the child's at exec), and
// prof-measure grows with its input. So every fit is forked by the launcher, whose memory stays
// what the program's is at start: a copy of prof-measure forked before anything is read, or a
// fresh image of the program exec'd later (start_launcher_locked); either is started only once
// a fit is sure to come, so a run that measures nothing pays for no process. It is the parent
// and the child subreaper of every fit, and the only process that waits for them.
// prof-measure talks to it over a socket pair: spawn (descriptors travel as SCM_RIGHTS), wait
// (status and rusage) and reap (orphans). When the socket closes — prof-measure ended, or was
// killed with SIGKILL — the launcher kills every fit, every descendant that came back to it
// and every process in the run's cgroups, removes those cgroups, reaps, and exits. Each fit
// also has PR_SET_PDEATHSIG = SIGKILL, so a fit whose launcher is killed dies with it.
//
// The launcher is not prof-measure's child but its grandchild: between them sits the warden, a
// process that only waits for the launcher to end. It is the launcher's parent and a child
// subreaper too, so when the launcher is killed (with prof-measure or alone, SIGKILL included)
// every fit's descendant that loses its parent comes back to the warden, which kills and reaps
// them, empties and removes the cgroups the launcher reported to it, and exits. Nothing but
// the warden's own death with the other two can leave a fit's process or cgroup behind.

namespace {

enum class op : std::uint32_t { spawn = 1, wait = 2, reap = 3, own_cgroup = 4 };

struct msg_header {
    std::uint32_t op, nfds;
    std::uint64_t len;
};

// Length-prefixed fields, written and read in the same order.
struct wire {
    std::string buf;
    std::size_t pos = 0;
    void put_u64(std::uint64_t v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void put_f64(double v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void put_str(std::string_view s) {
        put_u64(s.size());
        buf.append(s);
    }
    void put_strs(const std::vector<std::string>& v) {
        put_u64(v.size());
        for (const auto& s : v) put_str(s);
    }
    template <class T>
    T get() {
        T v{};
        if (pos + sizeof v > buf.size()) throw std::runtime_error("launcher message cut short");
        std::memcpy(&v, buf.data() + pos, sizeof v);
        pos += sizeof v;
        return v;
    }
    std::uint64_t u64() { return get<std::uint64_t>(); }
    double f64() { return get<double>(); }
    std::string str() {
        std::uint64_t n = u64();
        if (pos + n > buf.size()) throw std::runtime_error("launcher message cut short");
        std::string s = buf.substr(pos, n);
        pos += n;
        return s;
    }
    std::vector<std::string> strs() {
        std::vector<std::string> v(u64());
        for (auto& s : v) s = str();
        return v;
    }
};

// Moves all n bytes by `io` (::read or ::write), again after EINTR; false on an error or at
// the end of the file.
template <class P, class Io>
bool transfer_all(Io io, int fd, P* p, std::size_t n) {
    while (n > 0) {
        ssize_t done = io(fd, p, n);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return false;
        p += done;
        n -= static_cast<std::size_t>(done);
    }
    return true;
}

bool write_all(int fd, const char* p, std::size_t n) { return transfer_all(::write, fd, p, n); }

bool read_all(int fd, char* p, std::size_t n) { return transfer_all(::read, fd, p, n); }

// One message: the header (with the descriptors attached) then the payload.
bool send_msg(int sock, op o, const std::string& payload, const std::vector<int>& fds) {
    msg_header h{static_cast<std::uint32_t>(o), static_cast<std::uint32_t>(fds.size()), payload.size()};
    iovec iov{&h, sizeof h};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    std::vector<char> ctl(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(fds.size(), 1)));
    if (!fds.empty()) {
        m.msg_control = ctl.data();
        m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t w;
    do {
        w = sendmsg(sock, &m, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return false;
    if (static_cast<std::size_t>(w) < sizeof h &&
        !write_all(sock, reinterpret_cast<const char*>(&h) + w, sizeof h - static_cast<std::size_t>(w)))
        return false;
    return write_all(sock, payload.data(), payload.size());
}

// False at end of file (the other side is gone).
bool recv_msg(int sock, msg_header& h, std::string& payload, std::vector<int>& fds) {
    fds.clear();
    iovec iov{&h, sizeof h};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 16)];
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    ssize_t r;
    do {
        r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    } while (r < 0 && errno == EINTR);
    if (r <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            const int* p = reinterpret_cast<const int*>(CMSG_DATA(c));
            fds.assign(p, p + n);
        }
    if (static_cast<std::size_t>(r) < sizeof h &&
        !read_all(sock, reinterpret_cast<char*>(&h) + r, sizeof h - static_cast<std::size_t>(r)))
        return false;
    payload.resize(h.len);
    return read_all(sock, payload.data(), payload.size());
}

// What the fit's process reports on the exec pipe when it cannot start.
struct start_failure {
    std::int32_t stage;  // 1 exec, 2 joining a cgroup, 3 the launcher already gone
    std::int32_t err;
};

// ---- the launcher process itself ----

std::vector<pid_t> g_live;           // fits spawned and not yet waited for
std::vector<std::string> g_cgroup_roots;
int g_warden_fd = -1;                // the launcher's end of the pipe to the warden

bool is_live(pid_t p) { return std::find(g_live.begin(), g_live.end(), p) != g_live.end(); }

// Whether `p` is in the process group of a fit still running: a process whose parent ended
// mid-fit comes back to the launcher, yet belongs to that fit while it runs (fits measured side
// by side: one ending must not take another's processes with it).
bool in_live_group(pid_t p) {
    pid_t g = getpgid(p);
    return g > 0 && is_live(g);
}

// This process's children: /proc/self/task/TID/children (one small read) where the kernel has
// it, else a scan of every process's parent.
std::vector<pid_t> own_children() {
    std::vector<pid_t> out;
    pid_t self = getpid();
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(self));
    if (FILE* f = std::fopen(path, "re")) {
        int pid;
        while (std::fscanf(f, "%d", &pid) == 1) out.push_back(pid);
        std::fclose(f);
        return out;
    }
    for (const auto& p : scan_processes())
        if (p.ppid == self) out.push_back(p.pid);
    return out;
}

// Kills and reaps this process's children that are not live fits (descendants re-parented to
// it, the subreaper), pass after pass while their own children come back.
std::vector<pid_t> launcher_reap_orphans() {
    std::vector<pid_t> total;
    for (int pass = 0; pass < 3; ++pass) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) break;  // ECHILD: no child at all
        std::vector<pid_t> orphans;
        for (pid_t p : own_children())
            if (!is_live(p) && !in_live_group(p)) orphans.push_back(p);
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

// Everything in the cgroup directory `dir` (and its subdirectories) gets SIGKILL until it is
// empty; then the directories are removed, deepest first.
void kill_and_remove_cgroup(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> subs;
    while (dirent* e = readdir(d))
        if (e->d_type == DT_DIR && e->d_name[0] != '.') subs.push_back(dir + "/" + e->d_name);
    closedir(d);
    for (const auto& s : subs) kill_and_remove_cgroup(s);
    for (int round = 0; round < 200; ++round) {
        FILE* f = std::fopen((dir + "/cgroup.procs").c_str(), "re");
        if (!f) break;
        bool any = false;
        int pid;
        while (std::fscanf(f, "%d", &pid) == 1) {
            kill(pid, SIGKILL);
            any = true;
        }
        std::fclose(f);
        if (!any) break;
        // Reap what is ours so the group empties; others die on their own.
        int status;
        while (waitpid(-1, &status, WNOHANG) > 0) {
        }
        usleep(5000);
    }
    for (int tries = 0; tries < 100 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++tries) usleep(10000);
}

// The end: prof-measure is gone or done. Nothing it started may survive it.
[[noreturn]] void launcher_shutdown() {
    for (pid_t p : g_live) {
        kill(-p, SIGKILL);
        kill(p, SIGKILL);
    }
    for (const auto& root : g_cgroup_roots) kill_and_remove_cgroup(root);
    // Reap everything until no child is left: killed fits, then the descendants that come
    // back to the subreaper as their parents die.
    for (;;) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD) break;
        for (pid_t p : own_children()) kill(p, SIGKILL);
        int status;
        pid_t r;
        while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
        }
        if (r < 0 && errno == ECHILD) break;
        usleep(2000);
    }
    for (const auto& root : g_cgroup_roots) kill_and_remove_cgroup(root);
    _exit(0);
}

// One spawn request as the launcher received it, its argv and environment as exec takes them
// (built before the fork, so the child allocates nothing).
struct spawn_request {
    std::vector<std::string> argv_s, envp_s, cgroup_procs;
    std::vector<char*> argv, envp;
    cpu_set_t cpus;
    std::vector<int> targets;  // the descriptor each passed fd becomes in the child
};

void read_spawn_request(wire& in, spawn_request& rq) {
    rq.argv_s = in.strs();
    rq.envp_s = in.strs();
    rq.cgroup_procs = in.strs();
    std::uint64_t ncpus = in.u64();
    CPU_ZERO(&rq.cpus);
    for (std::uint64_t k = 0; k < ncpus; ++k) CPU_SET(static_cast<int>(in.u64()), &rq.cpus);
    rq.targets.resize(in.u64());
    for (auto& t : rq.targets) t = static_cast<int>(in.u64());
    for (auto& a : rq.argv_s) rq.argv.push_back(a.data());
    rq.argv.push_back(nullptr);
    for (auto& e : rq.envp_s) rq.envp.push_back(e.data());
    rq.envp.push_back(nullptr);
}

// In the forked child: dies with the launcher, leads its own process group, joins its cgroups,
// restores default signal handling and an empty mask, puts the passed descriptors in place
// (stdin from /dev/null unless one is passed), binds to the CPUs and execs. A failure is
// written to err_fd as a start_failure (stage 1 exec, 2 cgroup, 3 parent gone).
[[noreturn]] void exec_child(const spawn_request& rq, const std::vector<int>& fds, int err_fd, pid_t parent) {
    auto fail = [&](int stage, int err) {
        start_failure sf{stage, err};
        ssize_t ignored = ::write(err_fd, &sf, sizeof sf);
        (void)ignored;
        _exit(err == ENOENT && stage == 1 ? 127 : 126);
    };
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) fail(3, ESRCH);
    setpgid(0, 0);
    for (const auto& path : rq.cgroup_procs) {
        int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) fail(2, errno);
        if (::write(fd, "0", 1) != 1) fail(2, errno);
        close(fd);
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGQUIT}) sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Move every descriptor out of the way first, so no dup2 overwrites one still needed.
    std::vector<int> high(fds.size());
    for (std::size_t i = 0; i < fds.size(); ++i) high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100);
    bool have_stdin = false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
        dup2(high[i], rq.targets[i]);  // dup2 clears close-on-exec on the target
        if (rq.targets[i] == 0) have_stdin = true;
    }
    if (!have_stdin) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != 0) dup2(null, 0);
    }
    if (CPU_COUNT(&rq.cpus) > 0) sched_setaffinity(0, sizeof rq.cpus, &rq.cpus);
    execvpe(rq.argv[0], rq.argv.data(), rq.envp.data());
    fail(1, errno);
    _exit(126);  // not reached: fail() exits
}

void launcher_spawn(int sock, wire& in, std::vector<int>& fds) {
    spawn_request rq;
    read_spawn_request(in, rq);
    wire out;
    int errpipe[2];
    if (fds.size() != rq.targets.size() || pipe2(errpipe, O_CLOEXEC) != 0) {
        out.put_u64(0);
        out.put_f64(0);
        out.put_u64(3);
        out.put_u64(static_cast<std::uint64_t>(fds.size() != rq.targets.size() ? EINVAL : errno));
        for (int fd : fds) close(fd);
        send_msg(sock, op::spawn, out.buf, {});
        return;
    }
    pid_t self = getpid();
    double t_fork = monotonic_seconds();
    pid_t pid = fork();
    if (pid == 0) exec_child(rq, fds, errpipe[1], self);
    int fork_err = errno;
    close(errpipe[1]);
    for (int fd : fds) close(fd);
    start_failure sf{0, 0};
    if (pid < 0) {
        sf = {3, fork_err};
    } else {
        setpgid(pid, pid);  // also here: no race with a signal sent to the group
        ssize_t r;
        do {
            r = ::read(errpipe[0], &sf, sizeof sf);
        } while (r < 0 && errno == EINTR);
        if (r == static_cast<ssize_t>(sizeof sf)) {
            int status;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        } else {
            sf = {0, 0};
            g_live.push_back(pid);
        }
    }
    close(errpipe[0]);
    out.put_u64(static_cast<std::uint64_t>(sf.stage == 0 ? pid : 0));
    out.put_f64(t_fork);
    out.put_u64(static_cast<std::uint64_t>(sf.stage));
    out.put_u64(static_cast<std::uint64_t>(sf.err));
    send_msg(sock, op::spawn, out.buf, {});
}

// Blocks until the fit `pid` ends, watching the socket meanwhile: prof-measure sends nothing
// while it waits for the reply, so the socket turning readable means it is gone (killed, even by
// SIGKILL), and the launcher shuts down, killing the fit, instead of waiting for it for ever.
void wait_watching_socket(int sock, pid_t pid) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) return;  // already reaped, or no pidfd: wait4 alone
    for (;;) {
        pollfd p[2] = {{pidfd, POLLIN, 0}, {sock, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[0].revents) break;
        if (!p[1].revents) continue;
        char c;
        ssize_t r = recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) launcher_shutdown();
        if (r > 0) break;  // a message before the reply breaks the protocol: wait4 alone
    }
    close(pidfd);
}

void launcher_wait(int sock, wire& in) {
    pid_t pid = static_cast<pid_t>(in.u64());
    if (is_live(pid)) wait_watching_socket(sock, pid);
    int status = 0;
    rusage ru{};
    pid_t r;
    do {
        r = wait4(pid, &status, 0, &ru);
    } while (r < 0 && errno == EINTR);
    g_live.erase(std::remove(g_live.begin(), g_live.end(), pid), g_live.end());
    wire out;
    out.put_u64(r == pid ? 1 : 0);
    out.put_u64(static_cast<std::uint64_t>(status));
    out.put_f64(static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6);
    out.put_f64(static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6);
    out.put_u64(static_cast<std::uint64_t>(ru.ru_maxrss));
    send_msg(sock, op::wait, out.buf, {});
}

// Only the descriptors in `keep` (moved to 3, 4, ...) and stderr stay open: holding
// prof-measure's stdout or stdin would keep a pipe open after prof-measure ends. Each kept
// descriptor is close-on-exec; returns their new numbers.
std::vector<int> keep_only(std::vector<int> keep) {
    // Out of the way first (of 0 and 1 too: with stdin closed, a socket can be descriptor 0).
    for (int& fd : keep) fd = fcntl(fd, F_DUPFD_CLOEXEC, 64);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (null > 2) close(null);
    }
    for (std::size_t i = 0; i < keep.size(); ++i) {
        int want = 3 + static_cast<int>(i);
        dup3(keep[i], want, O_CLOEXEC);
        keep[i] = want;
    }
    close_range(3 + static_cast<unsigned>(keep.size()), ~0U, 0);
    return keep;
}

// Tells the warden about cgroup directories (length-prefixed, as the wire writes them; a pipe
// write of at most PIPE_BUF bytes is atomic, and a longer one is never interleaved: the
// launcher is the only writer).
void tell_warden(const std::vector<std::string>& dirs) {
    if (g_warden_fd < 0) return;
    wire w;
    w.put_strs(dirs);
    write_all(g_warden_fd, w.buf.data(), w.buf.size());
}

// The launcher's and the warden's start: a process group of their own (a job-control signal or
// a kill of prof-measure's group leaves them alive to clean up after it), the terminal and
// termination signals ignored, SIGCHLD at its default, nothing blocked, and orphans of their
// descendants reparented to them (a subreaper).
void become_reaper() {
    setpgid(0, 0);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU}) sigaction(s, &ign, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

[[noreturn]] void launcher_main(int sock, int warden_fd) {
    std::vector<int> kept = keep_only({sock, warden_fd});
    sock = kept[0];
    g_warden_fd = kept[1];
    become_reaper();
    // Large requests (a long argv) come and go: keep them out of the heap, so the launcher's
    // footprint, which every fit starts from, does not keep their high-water mark.
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_TRIM_THRESHOLD, 64 * 1024);
    msg_header h{};
    std::vector<int> fds;
    for (;;) {
        wire in;
        if (!recv_msg(sock, h, in.buf, fds)) launcher_shutdown();
        try {
            switch (static_cast<op>(h.op)) {
                case op::spawn: launcher_spawn(sock, in, fds); break;
                case op::wait: launcher_wait(sock, in); break;
                case op::reap: {
                    wire out;
                    auto gone = launcher_reap_orphans();
                    out.put_u64(gone.size());
                    for (pid_t p : gone) out.put_u64(static_cast<std::uint64_t>(p));
                    send_msg(sock, op::reap, out.buf, {});
                    break;
                }
                case op::own_cgroup: {  // no reply: prof-measure does not wait for it
                    std::vector<std::string> dirs = in.strs();
                    tell_warden(dirs);
                    for (auto& dir : dirs) g_cgroup_roots.push_back(std::move(dir));
                    break;
                }
                default: launcher_shutdown();
            }
        } catch (...) {
            launcher_shutdown();
        }
        in.buf = std::string();
        malloc_trim(0);  // give back what the request used: the next fit starts from this footprint
    }
}

// The warden: waits for the launcher (its only child) to end, reading the cgroup directories
// it reports until the pipe closes, then kills and reaps every process that came back to it
// and empties and removes those directories. After a clean end the launcher has done all of
// this already and the warden finds nothing; after the launcher was killed it does the
// launcher's cleanup in its place.
[[noreturn]] void warden_main(pid_t launcher, int from_launcher) {
    from_launcher = keep_only({from_launcher})[0];
    become_reaper();
    std::string got;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(from_launcher, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the launcher is gone (it holds the only write end)
        got.append(buf, static_cast<std::size_t>(n));
    }
    close(from_launcher);
    wire in;
    in.buf = std::move(got);
    while (in.pos < in.buf.size()) {
        try {
            for (auto& dir : in.strs()) g_cgroup_roots.push_back(std::move(dir));
        } catch (const std::exception&) {
            break;  // a message cut short by the launcher's death: the rest is unknown
        }
    }
    int status;
    while (waitpid(launcher, &status, 0) < 0 && errno == EINTR) {
    }
    launcher_shutdown();  // g_live is empty here: every child that came back is killed
}

// The environment variable that makes a fresh image of this program the warden, naming the
// descriptor that holds its end of prof-measure's socket.
constexpr const char* k_warden_env = "PROF_MEASURE_WARDEN_FD";
constexpr int k_warden_sock_fd = 3;

// The warden's start, in the copy start_launcher_locked forks or the image it execs: named as
// prof-measure is (ps and pgrep show three prof-measure processes, not "exe"), it forks the
// launcher and waits for it.
[[noreturn]] void warden_start(const char* name, int sock) {
    unsetenv(k_warden_env);
    prctl(PR_SET_NAME, name, 0, 0, 0);
    int to_warden[2];
    if (pipe2(to_warden, O_CLOEXEC) != 0) _exit(70);  // prof-measure's first call says the launcher is gone
    pid_t launcher = fork();
    if (launcher < 0) _exit(70);
    if (launcher == 0) {
        close(to_warden[0]);
        launcher_main(sock, to_warden[1]);
    }
    close(sock);
    close(to_warden[1]);
    warden_main(launcher, to_warden[0]);
}

// Runs before main in every program linking the launcher (prof-measure, the unit tests), as
// glibc calls an ELF constructor with main's arguments, and first of the program's own
// initialisers (priority 101): an image started as the warden becomes it here, before the rest
// of the program's start touches memory the fits would start from; any other start returns.
__attribute__((constructor(101))) void become_warden_if_asked(int argc, char** argv, char**) {
    const char* fd = getenv(k_warden_env);
    if (fd == nullptr || std::atoi(fd) != k_warden_sock_fd) return;
    warden_start(argc > 0 ? argv[0] : "prof-measure", k_warden_sock_fd);
}

// ---- prof-measure's side ----

struct launcher_handle {
    pid_t pid = -1;  // the warden: prof-measure's child, the launcher's parent
    int sock = -1;
    ~launcher_handle() { stop(); }
    void stop() {
        if (sock < 0) return;
        close(sock);
        sock = -1;
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        pid = -1;
    }
};
launcher_handle g_launcher;

// One request and its reply at a time: fits measured side by side share the one launcher.
std::mutex g_call_mutex;

// Starts the warden (and through it the launcher), with g_call_mutex held. Forked, it is a
// copy of this process as it is now, which is small only while nothing has been read. Exec'd,
// it is a fresh image of this program: posix_spawn does not copy this process's page tables (it
// shares them until the exec), and the image holds nothing of what this process read, parsed or
// loaded, so the launcher's footprint, which every fit starts from, is the program's own at
// start whenever it is started; the exec and the image's dynamic linking cost about a
// millisecond of CPU more than a fork.
void start_launcher_locked(launcher_start how) {
    if (g_launcher.sock >= 0) return;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        throw error(exit_code::software, fmt::format("socketpair: {}", std::strerror(errno)));
    char name[16] = {};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = -1;
    int err = 0;
    if (how == launcher_start::fork) {
        pid = fork();
        if (pid == 0) {
            close(sv[0]);
            warden_start(name, sv[1]);
        }
        if (pid < 0) err = errno;
    } else {
        // The warden's end becomes its descriptor 3; one already numbered 3 is moved first,
        // since a dup2 onto itself would leave it close-on-exec.
        if (sv[1] == k_warden_sock_fd) {
            int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, k_warden_sock_fd + 1);
            close(sv[1]);
            sv[1] = moved;
        }
        char* argv[] = {name, nullptr};
        std::vector<char*> envp;
        std::string marker = fmt::format("{}={}", k_warden_env, k_warden_sock_fd);
        for (char** e = environ; *e; ++e) envp.push_back(*e);
        envp.push_back(marker.data());
        envp.push_back(nullptr);
        posix_spawn_file_actions_t acts;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&acts);
        posix_spawn_file_actions_adddup2(&acts, sv[1], k_warden_sock_fd);
        posix_spawnattr_init(&attr);
        // A process group of its own from the start: a terminal's ^C reaches prof-measure
        // alone, never the warden before it has set its signals up.
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        err = posix_spawn(&pid, "/proc/self/exe", &acts, &attr, argv, envp.data());
        posix_spawn_file_actions_destroy(&acts);
        posix_spawnattr_destroy(&attr);
    }
    close(sv[1]);
    if (err != 0) {
        close(sv[0]);
        throw unavailable_error(fmt::format("cannot start the launcher: {}", std::strerror(err)));
    }
    g_launcher.pid = pid;
    g_launcher.sock = sv[0];
}

int launcher_sock() {
    if (g_launcher.sock < 0) start_launcher_locked(launcher_start::exec);
    return g_launcher.sock;
}

wire call(op o, const std::string& payload, const std::vector<int>& fds) {
    std::lock_guard<std::mutex> lock(g_call_mutex);
    int sock = launcher_sock();
    msg_header h{};
    wire reply;
    std::vector<int> got;
    if (!send_msg(sock, o, payload, fds) || !recv_msg(sock, h, reply.buf, got))
        throw error(exit_code::software, "the launcher process that starts the fits is gone");
    return reply;
}

}  // namespace

void start_launcher(launcher_start how) {
    std::lock_guard<std::mutex> lock(g_call_mutex);
    start_launcher_locked(how);
}

void stop_launcher() { g_launcher.stop(); }

void launcher_own_cgroups(const std::vector<std::string>& dirs) {
    wire req;
    req.put_strs(dirs);
    std::lock_guard<std::mutex> lock(g_call_mutex);
    if (!send_msg(launcher_sock(), op::own_cgroup, req.buf, {}))
        throw error(exit_code::software, "the launcher process that starts the fits is gone");
}

spawned_child spawn_child(const child_options& opts) {
    if (opts.argv.empty()) throw usage_error("empty command");
    std::vector<std::string> env;
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
        if (!overridden(*e)) env.emplace_back(*e);
    if (opts.threads > 0)
        for (const auto& v : thread_pool_variables()) env.push_back(v + "=" + std::to_string(opts.threads));
    for (const auto& [k, v] : opts.extra_env) env.push_back(k + "=" + v);
    wire req;
    req.put_strs(opts.argv);
    req.put_strs(env);
    req.put_strs(opts.cgroup_procs);
    std::vector<int> cpus;
    if (opts.threads > 0) cpus = opts.cpus.empty() ? pick_cpus(opts.threads) : opts.cpus;
    req.put_u64(cpus.size());
    for (int c : cpus) req.put_u64(static_cast<std::uint64_t>(c));
    std::vector<int> fds;
    std::vector<int> targets;
    if (opts.stdin_fd >= 0) {
        fds.push_back(opts.stdin_fd);
        targets.push_back(0);
    }
    fds.push_back(opts.stdout_fd);
    targets.push_back(1);
    fds.push_back(opts.stderr_fd);
    targets.push_back(2);
    for (const auto& [from, to] : opts.extra_fds) {
        fds.push_back(from);
        targets.push_back(to);
    }
    req.put_u64(targets.size());
    for (int t : targets) req.put_u64(static_cast<std::uint64_t>(t));
    wire rep = call(op::spawn, req.buf, fds);
    pid_t pid = static_cast<pid_t>(rep.u64());
    double t_fork = rep.f64();
    int stage = static_cast<int>(rep.u64()), err = static_cast<int>(rep.u64());
    if (stage == 1) throw unavailable_error(fmt::format("cannot run '{}': {}", opts.argv[0], std::strerror(err)));
    if (stage == 2) throw unavailable_error(fmt::format("cannot move '{}' into its cgroup: {}", opts.argv[0], std::strerror(err)));
    if (stage != 0 || pid <= 0) throw unavailable_error(fmt::format("cannot fork: {}", std::strerror(err)));
    spawned_child c;
    c.pid = pid;
    c.started_at = t_fork;
    c.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (c.pidfd < 0) {
        int e = errno;
        kill(-pid, SIGKILL);
        wait_child(pid);
        throw unavailable_error(fmt::format("pidfd_open: {} (Linux 5.3 or later is needed)", std::strerror(e)));
    }
    fcntl(c.pidfd, F_SETFD, FD_CLOEXEC);
    return c;
}

child_exit wait_child(pid_t pid) {
    wire req;
    req.put_u64(static_cast<std::uint64_t>(pid));
    wire rep = call(op::wait, req.buf, {});
    child_exit e;
    e.reaped = rep.u64() == 1;
    e.status = static_cast<int>(rep.u64());
    e.user_s = rep.f64();
    e.system_s = rep.f64();
    e.maxrss_kib = rep.u64();
    return e;
}

std::vector<pid_t> reap_orphans() {
    if (g_launcher.sock < 0) return {};
    wire rep = call(op::reap, "", {});
    std::vector<pid_t> out(rep.u64());
    for (auto& p : out) p = static_cast<pid_t>(rep.u64());
    return out;
}

}  // namespace prof
