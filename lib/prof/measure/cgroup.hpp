// Measuring a fit tree-wide through the memory and CPU cgroups: a group per cell (process
// mode) or per worker (reset between cells), the kernel's own counters read from it, and an
// optional memory limit applied through it, as a fleet's container applies one.
//
// Where the counters come from:
//   cgroup v2: memory.peak, memory.current, memory.stat (file, shmem), memory.events
//              (oom_kill), memory.max and memory.swap.max, cpu.stat (usage_usec).
//   cgroup v1: memory.max_usage_in_bytes, memory.usage_in_bytes, memory.stat (total_cache,
//              total_shmem), memory.oom_control (oom_kill), memory.limit_in_bytes and
//              memory.memsw.limit_in_bytes, cpuacct.usage (nanoseconds).
// Kernel Documentation/admin-guide/cgroup-v2.rst and cgroup-v1/memory.rst, cpuacct.rst.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

enum class cgroup_version { v1, v2 };

// One hierarchy line of /proc/self/cgroup ("4:memory:/a/b" or "0::/a/b").
struct cgroup_membership {
    std::vector<std::string> controllers;  // empty for the v2 line
    std::string path;                       // this process's group, from the hierarchy root
};
std::vector<cgroup_membership> parse_proc_cgroup(std::string_view text);

// One cgroup mount of /proc/self/mountinfo.
struct cgroup_mount {
    std::string root;         // the hierarchy path mounted (not "/" inside a cgroup namespace)
    std::string mount_point;
    bool v2 = false;
    std::vector<std::string> controllers;  // v1: from the super options ("memory", "cpuacct")
};
std::vector<cgroup_mount> parse_cgroup_mounts(std::string_view mountinfo);

// "key value" lines (memory.stat, cpu.stat, memory.events, memory.oom_control): the value of
// `key`, nullopt when absent or not a number.
std::optional<std::uint64_t> stat_value(std::string_view text, std::string_view key);

// The counters of one group, read at one moment. Every field is nullopt when its file could
// not be read.
struct cgroup_reading {
    std::optional<std::uint64_t> peak_bytes;        // high-water of memory charged to the group
    std::optional<std::uint64_t> current_bytes;     // memory charged now
    std::optional<std::uint64_t> page_cache_bytes;  // file-backed page cache charged now (shmem excluded)
    std::optional<std::uint64_t> cpu_ns;            // CPU of every task that ever ran in the group
    std::optional<std::uint64_t> oom_kills;         // processes the kernel killed for the group's limit
};

// The group of one cell or one worker, under the run's directory. Removed (its processes
// killed first) by remove() or the destructor.
class cgroup_cell {
public:
    cgroup_cell(cgroup_version v, std::string memory_dir, std::string cpu_dir);
    ~cgroup_cell();
    cgroup_cell(const cgroup_cell&) = delete;
    cgroup_cell& operator=(const cgroup_cell&) = delete;

    cgroup_version version() const { return version_; }
    // The cgroup.procs files a child writes "0" to before exec, to join the group.
    std::vector<std::string> procs_files() const;
    // Sets the memory limit (v1: limit and memory+swap limit; v2: memory.max, swap.max 0).
    // Returns the limit the kernel applied (rounded down to whole pages). Throws
    // unavailable_error when the kernel refuses it.
    std::uint64_t set_memory_limit(std::uint64_t bytes);
    // Resets the memory high-water mark to what is charged now (worker mode, between cells);
    // false when this kernel cannot (cgroup v2 before Linux 6.12).
    bool reset_peak();
    cgroup_reading read() const;
    // Processes of the group the kernel's OOM killer has killed so far (v2 memory.events
    // oom_kill, hierarchical: any OOM kill, the group's limit's, an ancestor's or the host's;
    // v1 memory.oom_control oom_kill, Linux 4.13 or later); nullopt when unreadable. Cheap
    // enough to read every sampling interval.
    std::optional<std::uint64_t> oom_kills() const;
    // Process ids in the group now.
    std::vector<int> members() const;
    // SIGKILL to every process in the group until it is empty (bounded); returns how many
    // distinct processes were killed.
    std::size_t kill_all();
    // Kills what is left and removes the directories. Safe to call twice.
    void remove();

private:
    cgroup_version version_;
    std::string memory_dir_, cpu_dir_;  // v2: the same directory
    int peak_fd_ = -1;                  // v2: memory.peak, kept open (its reset is per descriptor)
    bool removed_ = false;
};

// The leaf a v2 group's processes are moved into so that controllers can be enabled on it.
inline constexpr const char* cgroup_leaf_name = "prof.leaf";

// What to do where no v2 group can be delegated to prof-measure: the systemd-run command
// (with --user and "as root" only for a process that is not root) and the container setting.
// systemd.resource-control(5) "Delegate="; cgroup-v2.rst "Delegation".
std::string cgroup_delegation_advice(bool as_root);

// The run's own groups: prof-measure.<pid> under this process's memory (and CPU accounting)
// group. Cell groups are created inside it.
class cgroup_run {
public:
    // Probes cgroup v2, then v1 (memory, and cpuacct where mounted). nullptr with `why` set
    // when no group can be made. On v2 (memory offered to our group, memory.peak present), in
    // this order, the first that works (cgroup-v2.rst, "no internal process" rule, Delegation):
    //   1. below our own group (it holds no process, or it is the hierarchy's root);
    //   2. below its parent, when our group is the prof.leaf an earlier run made;
    //   3. below our own group after moving every process in it (ours too) into its leaf
    //      prof.leaf, where our group is writable (delegated); `notice` says so;
    //   4. below the nearest ancestor that has memory in its cgroup.subtree_control and lets
    //      us create a group; `notice` says the fits run outside our group.
    // Otherwise `why` says which step failed, why, and cgroup_delegation_advice.
    static std::unique_ptr<cgroup_run> open(std::string* why, std::string* notice = nullptr);
    ~cgroup_run();
    cgroup_run(const cgroup_run&) = delete;
    cgroup_run& operator=(const cgroup_run&) = delete;

    cgroup_version version() const { return version_; }
    const char* method() const { return version_ == cgroup_version::v2 ? "cgroup-v2" : "cgroup-v1"; }
    bool has_cpu() const { return !cpu_dir_.empty(); }
    // The run's directories (for the launcher, which empties and removes them at the end).
    std::vector<std::string> dirs() const;
    // A new, empty group for one cell or worker. Throws unavailable_error when mkdir fails.
    std::unique_ptr<cgroup_cell> new_cell();

private:
    cgroup_run(cgroup_version v, std::string memory_dir, std::string cpu_dir)
        : version_(v), memory_dir_(std::move(memory_dir)), cpu_dir_(std::move(cpu_dir)) {}
    cgroup_version version_;
    std::string memory_dir_, cpu_dir_;
    std::atomic<std::uint64_t> next_{0};  // new_cell may be called from several threads
};

}  // namespace prof
