// Measurement cgroups (see cgroup.hpp).
#include "prof/measure/cgroup.hpp"

#include "prof/core/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace prof {

namespace {

std::optional<std::string> read_text(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (r == 0) break;
        out.append(buf, static_cast<std::size_t>(r));
    }
    ::close(fd);
    return out;
}

// 0 on success, else errno.
int write_text(const std::string& path, std::string_view text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t w = ::write(fd, text.data(), text.size());
    int err = w == static_cast<ssize_t>(text.size()) ? 0 : (w < 0 ? errno : EIO);
    ::close(fd);
    return err;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<std::uint64_t> read_u64(const std::string& path) {
    auto t = read_text(path);
    return t ? parse_u64(*t) : std::nullopt;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

bool has(const std::vector<std::string>& v, std::string_view x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The directory of group `path` in a hierarchy mounted at m (whose root may be a subgroup).
std::optional<std::string> dir_in_mount(const cgroup_mount& m, const std::string& path) {
    if (m.root == "/") return m.mount_point + (path == "/" ? "" : path);
    if (path == m.root) return m.mount_point;
    if (path.compare(0, m.root.size() + 1, m.root + "/") == 0) return m.mount_point + path.substr(m.root.size());
    return std::nullopt;  // our group is outside what is mounted
}

void remove_dir(const std::string& dir) {
    for (int tries = 0; tries < 50; ++tries) {
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
        if (errno != EBUSY) return;
        usleep(10000);
    }
}

std::string run_dir_name() { return fmt::format("prof-measure.{}", static_cast<int>(getpid())); }

}  // namespace

std::vector<cgroup_membership> parse_proc_cgroup(std::string_view text) {
    std::vector<cgroup_membership> out;
    for (auto line : split(text, '\n')) {
        auto c1 = line.find(':');
        if (c1 == std::string_view::npos) continue;
        auto c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        cgroup_membership m;
        std::string_view ctl = line.substr(c1 + 1, c2 - c1 - 1);
        if (!ctl.empty())
            for (auto c : split(ctl, ',')) m.controllers.emplace_back(c);
        m.path = std::string(line.substr(c2 + 1));
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<cgroup_mount> parse_cgroup_mounts(std::string_view mountinfo) {
    // "36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory"
    std::vector<cgroup_mount> out;
    for (auto line : split(mountinfo, '\n')) {
        auto dash = line.find(" - ");
        if (dash == std::string_view::npos) continue;
        auto left = split(line.substr(0, dash), ' ');
        auto right = split(line.substr(dash + 3), ' ');
        if (left.size() < 5 || right.size() < 3) continue;
        cgroup_mount m;
        if (right[0] == "cgroup2") m.v2 = true;
        else if (right[0] != "cgroup") continue;
        m.root = std::string(left[3]);
        m.mount_point = std::string(left[4]);
        if (!m.v2)
            for (auto opt : split(right[2], ',')) m.controllers.emplace_back(opt);
        out.push_back(std::move(m));
    }
    return out;
}

std::optional<std::uint64_t> stat_value(std::string_view text, std::string_view key) {
    for (auto line : split(text, '\n')) {
        if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ' ')
            return parse_u64(line.substr(key.size() + 1));
    }
    return std::nullopt;
}

// ---- cgroup_cell ------------------------------------------------------------------------

cgroup_cell::cgroup_cell(cgroup_version v, std::string memory_dir, std::string cpu_dir)
    : version_(v), memory_dir_(std::move(memory_dir)), cpu_dir_(std::move(cpu_dir)) {
    if (version_ == cgroup_version::v2) {
        // Writable (a per-descriptor reset) from Linux 6.12; read-only before.
        std::string peak = memory_dir_ + "/memory.peak";
        peak_fd_ = ::open(peak.c_str(), O_RDWR | O_CLOEXEC);
        if (peak_fd_ < 0) peak_fd_ = ::open(peak.c_str(), O_RDONLY | O_CLOEXEC);
    }
}

cgroup_cell::~cgroup_cell() {
    try {
        remove();
    } catch (...) {
    }
}

std::vector<std::string> cgroup_cell::procs_files() const {
    std::vector<std::string> out{memory_dir_ + "/cgroup.procs"};
    if (!cpu_dir_.empty() && cpu_dir_ != memory_dir_) out.push_back(cpu_dir_ + "/cgroup.procs");
    return out;
}

std::uint64_t cgroup_cell::set_memory_limit(std::uint64_t bytes) {
    std::string v = std::to_string(bytes);
    int err;
    if (version_ == cgroup_version::v2) {
        err = write_text(memory_dir_ + "/memory.max", v);
        if (err == 0) {
            write_text(memory_dir_ + "/memory.swap.max", "0");  // absent without swap accounting
            write_text(memory_dir_ + "/memory.oom.group", "1");  // the whole group, as a container
        }
    } else {
        err = write_text(memory_dir_ + "/memory.limit_in_bytes", v);
        if (err == 0) write_text(memory_dir_ + "/memory.memsw.limit_in_bytes", v);  // absent without swap accounting
    }
    if (err != 0)
        throw unavailable_error(fmt::format("--memory-limit: the kernel refused a limit of {} bytes on {}: {}", bytes,
                                            memory_dir_, std::strerror(err)));
    // What the kernel applied (it rounds down to whole pages).
    auto applied = read_u64(memory_dir_ + (version_ == cgroup_version::v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    return applied.value_or(bytes);
}

bool cgroup_cell::reset_peak() {
    if (version_ == cgroup_version::v1) return write_text(memory_dir_ + "/memory.max_usage_in_bytes", "0") == 0;
    if (peak_fd_ < 0) return false;
    return ::pwrite(peak_fd_, "reset\n", 6, 0) == 6;
}

cgroup_reading cgroup_cell::read() const {
    cgroup_reading r;
    auto stat = read_text(memory_dir_ + "/memory.stat");
    if (version_ == cgroup_version::v2) {
        if (peak_fd_ >= 0) {
            char buf[64];
            ssize_t n = ::pread(peak_fd_, buf, sizeof buf - 1, 0);
            if (n > 0) r.peak_bytes = parse_u64(std::string_view(buf, static_cast<std::size_t>(n)));
        }
        r.current_bytes = read_u64(memory_dir_ + "/memory.current");
        if (stat) {
            auto file = stat_value(*stat, "file"), shmem = stat_value(*stat, "shmem");
            if (file) r.page_cache_bytes = *file - std::min(*file, shmem.value_or(0));
        }
        if (auto cs = read_text(cpu_dir_ + "/cpu.stat"))
            if (auto us = stat_value(*cs, "usage_usec")) r.cpu_ns = *us * 1000;
    } else {
        r.peak_bytes = read_u64(memory_dir_ + "/memory.max_usage_in_bytes");
        r.current_bytes = read_u64(memory_dir_ + "/memory.usage_in_bytes");
        if (stat) {
            auto cache = stat_value(*stat, "total_cache"), shmem = stat_value(*stat, "total_shmem");
            if (cache) r.page_cache_bytes = *cache - std::min(*cache, shmem.value_or(0));
        }
        if (!cpu_dir_.empty()) r.cpu_ns = read_u64(cpu_dir_ + "/cpuacct.usage");
    }
    r.oom_kills = oom_kills();
    return r;
}

std::optional<std::uint64_t> cgroup_cell::oom_kills() const {
    if (version_ == cgroup_version::v2) {
        auto ev = read_text(memory_dir_ + "/memory.events");
        return ev ? stat_value(*ev, "oom_kill") : std::nullopt;
    }
    auto oc = read_text(memory_dir_ + "/memory.oom_control");
    return oc ? stat_value(*oc, "oom_kill") : std::nullopt;
}

std::vector<int> cgroup_cell::members() const {
    std::vector<int> out;
    auto t = read_text(memory_dir_ + "/cgroup.procs");
    if (!t) return out;
    for (auto line : split(*t, '\n'))
        if (auto v = parse_u64(line)) out.push_back(static_cast<int>(*v));
    return out;
}

std::size_t cgroup_cell::kill_all() {
    std::vector<int> killed;
    for (int round = 0; round < 200; ++round) {
        auto pids = members();
        if (pids.empty()) break;
        for (int p : pids) {
            ::kill(p, SIGKILL);
            if (std::find(killed.begin(), killed.end(), p) == killed.end()) killed.push_back(p);
        }
        usleep(2000);
    }
    return killed.size();
}

void cgroup_cell::remove() {
    if (removed_) return;
    removed_ = true;
    kill_all();
    if (peak_fd_ >= 0) ::close(peak_fd_);
    peak_fd_ = -1;
    remove_dir(memory_dir_);
    if (!cpu_dir_.empty() && cpu_dir_ != memory_dir_) remove_dir(cpu_dir_);
}

// ---- cgroup_run -------------------------------------------------------------------------

namespace {

std::string parent_of(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }
std::string base_of(const std::string& dir) { return dir.substr(dir.rfind('/') + 1); }
bool lists(const std::optional<std::string>& text, std::string_view word) {
    if (!text) return false;
    for (auto w : split(*text, ' '))
        if (w == word || (w.size() == word.size() + 1 && w.substr(0, word.size()) == word && w.back() == '\n')) return true;
    return false;
}

// prof-measure.PID with the memory controller below `dir`, where `dir` offers memory and has
// it (or can be given it) in cgroup.subtree_control. The run's directory, or the errno of the
// step that failed and what it was.
struct v2_attempt {
    std::optional<std::string> run;
    int err = 0;
    std::string step;
};
v2_attempt make_v2_run(const std::string& dir, const std::string& name) {
    v2_attempt a;
    if (!lists(read_text(dir + "/cgroup.controllers"), "memory")) {
        a.err = ENOENT, a.step = fmt::format("{} is not offered the memory controller by its parent", dir);
        return a;
    }
    if (!lists(read_text(dir + "/cgroup.subtree_control"), "memory"))
        if (int err = write_text(dir + "/cgroup.subtree_control", "+memory")) {
            a.err = err, a.step = fmt::format("writing +memory to {}/cgroup.subtree_control", dir);
            return a;
        }
    std::string run = dir + "/" + name;
    if (::mkdir(run.c_str(), 0755) != 0) {
        a.err = errno, a.step = fmt::format("creating {}", run);
        return a;
    }
    if (write_text(run + "/cgroup.subtree_control", "+memory") != 0 || ::access((run + "/memory.peak").c_str(), R_OK) != 0) {
        remove_dir(run);
        a.err = ENOTSUP, a.step = "reading memory.peak (Linux 5.19 or later is needed)";
        return a;
    }
    a.run = run;
    return a;
}

std::vector<int> procs_of(const std::string& dir) {
    std::vector<int> out;
    if (auto t = read_text(dir + "/cgroup.procs"))
        for (auto line : split(*t, '\n'))
            if (auto v = parse_u64(line)) out.push_back(static_cast<int>(*v));
    return out;
}

// Moves every process of `dir` into its leaf `dir`/prof.leaf, as a container runtime or
// systemd does before it enables controllers on a group that holds processes (the "no internal
// process" rule, cgroup-v2.rst). Processes forked meanwhile are moved in later rounds. Returns
// how many were moved, or the errno and step that failed (the moved ones are put back).
struct leaf_move {
    std::size_t moved = 0;
    int err = 0;
    std::string step;
};
leaf_move move_into_leaf(const std::string& dir) {
    leaf_move m;
    std::string leaf = dir + "/" + cgroup_leaf_name;
    if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
        m.err = errno, m.step = fmt::format("creating {}", leaf);
        return m;
    }
    std::vector<int> moved;
    for (int round = 0; round < 20; ++round) {
        auto pids = procs_of(dir);
        if (pids.empty()) break;
        for (int p : pids) {
            int err = write_text(leaf + "/cgroup.procs", std::to_string(p));
            if (err == ESRCH) continue;  // exited meanwhile
            if (err != 0) {
                m.err = err, m.step = fmt::format("moving process {} into {}", p, leaf);
                for (int q : moved) write_text(dir + "/cgroup.procs", std::to_string(q));
                if (procs_of(leaf).empty()) remove_dir(leaf);
                return m;
            }
            moved.push_back(p);
        }
    }
    m.moved = moved.size();
    return m;
}

}  // namespace

std::string cgroup_delegation_advice(bool as_root) {
    return fmt::format("run prof-measure in a cgroup delegated to it: {}systemd-run {}--scope -p Delegate=yes prof-measure ...; "
                       "in a container, a cgroup namespace of its own with /sys/fs/cgroup mounted read-write (docker run "
                       "--cgroupns=private, a privileged pod)",
                       as_root ? "" : "as root, or for your user ", as_root ? "" : "--user ");
}

namespace {

// Step 4 of cgroup_run::open: prof-measure.PID below the nearest ancestor of `own` (up to the
// mount point) that has memory in its cgroup.subtree_control and lets us create a group.
std::optional<std::string> ancestor_run(const std::string& own, const std::string& mount_point, const std::string& name) {
    for (std::string dir = own; dir != mount_point && dir.size() > mount_point.size();) {
        dir = parent_of(dir);
        if (!lists(read_text(dir + "/cgroup.subtree_control"), "memory")) continue;
        std::string run = dir + "/" + name;
        if (::mkdir(run.c_str(), 0755) != 0) continue;
        if (write_text(run + "/cgroup.subtree_control", "+memory") == 0 && ::access((run + "/memory.peak").c_str(), R_OK) == 0)
            return run;
        remove_dir(run);
    }
    return std::nullopt;
}

// The v2 steps of cgroup_run::open for our group `own` (which is offered memory): the run's
// directory, or nullopt with `why` saying what failed and what to do.
std::optional<std::string> place_v2_run(const std::string& own, const std::string& mount_point, const std::string& name,
                                        std::string& why, std::string* notice) {
    auto tell = [&](std::string n) {
        if (notice) *notice = std::move(n);
    };
    // 1. Below our own group, where it holds no process or is the hierarchy's root.
    auto a = make_v2_run(own, name);
    if (a.run) return a.run;
    // 2. Our group is the leaf a previous run moved the processes into: its parent is ours.
    if (a.err == EBUSY && own != mount_point && base_of(own) == cgroup_leaf_name)
        if (auto p = make_v2_run(parent_of(own), name); p.run) return p.run;
    // 3. Our group holds processes and is delegated to us (writable): its processes, ours
    //    included, go into a leaf of their own, and the controllers are enabled on it.
    std::string leaf_why;
    if (a.err == EBUSY) {
        auto m = move_into_leaf(own);
        if (m.err == 0) {
            auto b = make_v2_run(own, name);
            if (b.run) {
                tell(fmt::format("cgroup v2: {} held processes, so its {} process(es) (prof-measure's included) were moved "
                                 "into {}/{} to enable the memory controller on it; they stay there, under the same limits",
                                 own, m.moved, own, cgroup_leaf_name));
                return b.run;
            }
            leaf_why = fmt::format("{}: {}", b.step, std::strerror(b.err));
        } else {
            leaf_why = fmt::format("{}: {}", m.step, std::strerror(m.err));
        }
    }
    // 4. The nearest ancestor with the memory controller that lets us create a group: the
    //    fits run beside our group, not in it.
    if (auto run = ancestor_run(own, mount_point, name)) {
        tell(fmt::format("cgroup v2: the fits run in {}, beside prof-measure's own cgroup {}, which holds processes and "
                         "cannot be given the memory controller ({}); limits set on {} do not apply to them",
                         *run, own, leaf_why.empty() ? a.step + ": " + std::strerror(a.err) : leaf_why, own));
        return run;
    }
    if (a.err == EACCES || a.err == EPERM || a.err == EROFS)
        why = fmt::format("cgroup v2: {} is not delegated to prof-measure ({}: {}), nor is an ancestor with the memory "
                          "controller writable; {}",
                          own, a.step, std::strerror(a.err), cgroup_delegation_advice(geteuid() == 0));
    else if (a.err == EBUSY)
        why = fmt::format("cgroup v2: {} holds processes, so the memory controller cannot be enabled below it, and they "
                          "cannot be moved into a leaf ({}), nor is an ancestor with the memory controller writable; {}",
                          own, leaf_why, cgroup_delegation_advice(geteuid() == 0));
    else
        why = fmt::format("cgroup v2: {}: {}", a.step, std::strerror(a.err));
    return std::nullopt;
}

}  // namespace

std::unique_ptr<cgroup_run> cgroup_run::open(std::string* why, std::string* notice) {
    auto fail = [&](std::string w) -> std::unique_ptr<cgroup_run> {
        if (why) *why = std::move(w);
        return nullptr;
    };
    auto self = read_text("/proc/self/cgroup");
    auto mi = read_text("/proc/self/mountinfo");
    if (!self || !mi) return fail("/proc/self/cgroup or /proc/self/mountinfo cannot be read");
    auto groups = parse_proc_cgroup(*self);
    auto mounts = parse_cgroup_mounts(*mi);
    std::string name = run_dir_name();
    std::string v2_why;

    // cgroup v2: memory must be available to our group, with memory.peak (place_v2_run).
    const cgroup_membership* v2m = nullptr;
    for (const auto& g : groups)
        if (g.controllers.empty()) v2m = &g;
    const cgroup_mount* v2mount = nullptr;
    for (const auto& m : mounts)
        if (m.v2) v2mount = &m;
    auto own = v2m && v2mount ? dir_in_mount(*v2mount, v2m->path) : std::nullopt;
    if (own && lists(read_text(*own + "/cgroup.controllers"), "memory")) {
        if (auto run = place_v2_run(*own, v2mount->mount_point, name, v2_why, notice))
            return std::unique_ptr<cgroup_run>(new cgroup_run(cgroup_version::v2, *run, *run));
    } else if (own) {
        v2_why = fmt::format("cgroup v2: {} is not offered the memory controller", *own);
    }

    // cgroup v1: a memory hierarchy (required) and a cpuacct one (CPU; else rusage or /proc).
    auto v1_dir = [&](const char* controller) -> std::optional<std::string> {
        for (const auto& m : mounts) {
            if (m.v2 || !has(m.controllers, controller)) continue;
            for (const auto& g : groups)
                if (has(g.controllers, controller)) return dir_in_mount(m, g.path);
        }
        return std::nullopt;
    };
    auto mem = v1_dir("memory");
    if (!mem) return fail(v2_why.empty() ? "no memory cgroup is mounted" : v2_why);
    std::string mem_run = *mem + "/" + name;
    if (::mkdir(mem_run.c_str(), 0755) != 0)
        return fail(fmt::format("cannot create {}: {}", mem_run, std::strerror(errno)));
    std::string cpu_run;
    if (auto cpu = v1_dir("cpuacct")) {
        cpu_run = *cpu + "/" + name;
        if (cpu_run == mem_run) {
            // memory and cpuacct mounted together: one directory serves both
        } else if (::mkdir(cpu_run.c_str(), 0755) != 0) {
            cpu_run.clear();
        }
    }
    return std::unique_ptr<cgroup_run>(new cgroup_run(cgroup_version::v1, mem_run, cpu_run));
}

cgroup_run::~cgroup_run() {
    remove_dir(memory_dir_);
    if (!cpu_dir_.empty() && cpu_dir_ != memory_dir_) remove_dir(cpu_dir_);
}

std::vector<std::string> cgroup_run::dirs() const {
    std::vector<std::string> out{memory_dir_};
    if (!cpu_dir_.empty() && cpu_dir_ != memory_dir_) out.push_back(cpu_dir_);
    return out;
}

std::unique_ptr<cgroup_cell> cgroup_run::new_cell() {
    std::string leaf = fmt::format("/cell-{}", next_++);
    std::string mem = memory_dir_ + leaf;
    if (::mkdir(mem.c_str(), 0755) != 0 && errno != EEXIST)
        throw unavailable_error(fmt::format("cannot create the cgroup {}: {}", mem, std::strerror(errno)));
    std::string cpu;
    if (!cpu_dir_.empty()) {
        cpu = cpu_dir_ == memory_dir_ ? mem : cpu_dir_ + leaf;
        if (cpu != mem && ::mkdir(cpu.c_str(), 0755) != 0 && errno != EEXIST) {
            int err = errno;
            remove_dir(mem);
            throw unavailable_error(fmt::format("cannot create the cgroup {}: {}", cpu, std::strerror(err)));
        }
    }
    return std::make_unique<cgroup_cell>(version_, mem, cpu);
}

}  // namespace prof
