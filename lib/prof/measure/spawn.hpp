// Starting and watching child processes for measurement: shell-like word splitting without a
// shell, the thread cap (pool variables + CPU affinity), fork/exec with a process group of its
// own through a launcher process, pidfd waiting, /proc readings, and forwarding of
// SIGINT/SIGTERM/SIGHUP.
#pragma once

#include "prof/core/cpus.hpp"
#include "prof/records/records.hpp"

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prof {

// Splits a command template into words as a POSIX shell would for quoting only: blanks
// separate words; '...' is literal; "..." allows \" \\ \$ \` escapes; a backslash outside
// quotes escapes the next character. No expansion of any kind. Throws usage_error on an
// unterminated quote.
std::vector<std::string> split_words(const std::string& text);
// Replaces {ts_id}, {model_type}, {family}, {n_obs}, {params} (the cell's params as JSON,
// shell-quoted, for a word a shell will read: sh -c '...') and {params_json} (the same JSON
// as it is, for a word passed straight to the program) inside one word; {} stands for absent
// params. Other braces are kept. With `shell_script` (the word is a script a shell reads, as
// in sh -c '...') every value is shell-quoted, so a ts_id holding $(...), `...`, ;, |, &&, > or
// a newline is one word of the script, never a command.
std::string substitute_cell(const std::string& word, const cell& c, bool shell_script = false);
// 'TEXT' with every ' written as '\'': one word to a POSIX shell, whatever TEXT holds.
std::string shell_quote(std::string_view text);

// The environment variables that cap a thread pool: OMP, OpenBLAS, MKL, Accelerate (vecLib),
// numexpr, BLIS, GotoBLAS, Polars, Rayon, TBB-less runtimes. All are set to N.
const std::vector<std::string>& thread_pool_variables();
// The first `n` CPUs of this process's allowed set (allowed_cpus, core/cpus.hpp); fewer if
// fewer exist.
std::vector<int> pick_cpus(unsigned n);

struct child_options {
    std::vector<std::string> argv;
    unsigned threads = 1;                 // 0 = no cap
    int stdin_fd = -1;                    // -1 → /dev/null
    int stdout_fd = 2;                    // where the child's stdout goes (never our stdout)
    int stderr_fd = 2;                    // where the child's stderr goes
    std::vector<std::pair<int, int>> extra_fds;  // (our fd, child fd number), e.g. reply → 3
    std::vector<std::pair<std::string, std::string>> extra_env;
    std::vector<std::string> cgroup_procs;  // cgroup.procs files the child joins before exec
    // The CPUs the child is bound to when threads > 0: empty = pick_cpus(threads); a fit run
    // beside others gets its own disjoint set (partition_cpus, core/cpus.hpp).
    std::vector<int> cpus;
};

struct spawned_child {
    pid_t pid = -1;          // also the process group id
    int pidfd = -1;          // readable when the child has exited
    double started_at = 0;   // monotonic_seconds() just before the fork
};

// The launcher: a small process that forks every fit (so a fit's ru_maxrss starts from the
// launcher's footprint, not from prof-measure's, which grows with its input), is their parent
// and child subreaper, and reaps them. When prof-measure ends or is killed (SIGKILL included),
// the launcher kills every fit, every descendant that came back to it, and every process in the
// cgroups given to launcher_own_cgroups (directories it then removes), and exits. Each fit also
// gets PR_SET_PDEATHSIG = SIGKILL. The launcher's parent is the warden, prof-measure's child, a
// subreaper that does the same cleanup when the launcher is killed (with prof-measure or alone):
// a fit's descendants then come back to it. A run that measures nothing need start neither.
//
// How the warden starts: `fork`, a copy of this process, cheap but small only while nothing has
// been read (prof-measure -- CMD, before its options are parsed); `exec` (what first use does),
// a fresh image of this program (posix_spawn of /proc/self/exe) whose footprint is the
// program's own at start whatever this process has read or loaded by then.
enum class launcher_start { fork, exec };
// Starts the launcher unless it runs; safe from several threads. Throws unavailable_error when
// it cannot start.
void start_launcher(launcher_start how = launcher_start::exec);
// Adds directories whose cgroups the launcher empties and removes when it ends. One message,
// not waited for: the launcher reads it before any later request and before it can see
// prof-measure's end, a SIGKILL's included.
void launcher_own_cgroups(const std::vector<std::string>& dirs);
// Closes the launcher's socket and waits for it (and the warden) to finish the cleanup and exit.
void stop_launcher();

// fork + exec (by the launcher) in a new process group, SIGPIPE, the other supervisor signals
// and the signal mask restored to defaults, the thread cap applied, the cgroups joined.
// Throws unavailable_error("cannot run 'X': reason") when exec fails (the child is reaped).
spawned_child spawn_child(const child_options& opts);

// How a child ended, reaped by the launcher: the wait status and its rusage (its waited-for
// descendants included).
struct child_exit {
    bool reaped = false;  // false: no such child (already reaped)
    int status = 0;
    double user_s = 0, system_s = 0;
    std::uint64_t maxrss_kib = 0;
};
// Waits for a child of spawn_child (blocks until it has exited).
child_exit wait_child(pid_t pid);

// Process ids whose process group is `pgid` (a scan of /proc/*/stat).
std::vector<pid_t> group_members(pid_t pgid);
// Kills every process left in the group with SIGKILL (reaping is reap_orphans' job: with the
// subreaper flag they come back to us); returns their pids.
std::vector<pid_t> kill_group_leftovers(pid_t pgid);

// Kills and reaps the processes re-parented to the launcher (a fit's descendants that left
// its process group, e.g. with setsid, and were orphaned) other than fits not yet waited for
// and the processes in their groups (fits measured side by side keep theirs); returns their
// pids. Safe from several threads: the launcher takes one request at a time.
std::vector<pid_t> reap_orphans();

// One process as /proc/PID/stat gives it: its state letter, parent and process group.
struct proc_stat {
    pid_t pid;
    char state;
    pid_t ppid, pgrp;
};
// Every process's state, parent and group, from /proc/*/stat (those that end while it reads are
// left out).
std::vector<proc_stat> scan_processes();

// /proc/PID/status fields in bytes ("VmRSS", "VmHWM"); nullopt when unreadable.
std::optional<std::uint64_t> proc_status_bytes(pid_t pid, const char* field);
// Writes "5" to /proc/PID/clear_refs: resets the peak RSS (VmHWM) to the current RSS (kernel
// Documentation/filesystems/proc.rst, "clear_refs"). False when refused.
bool reset_peak_rss(pid_t pid);
// CPU time of all threads of `pid` in seconds, nanosecond resolution (clock_getcpuclockid).
std::optional<double> process_cpu_seconds(pid_t pid);

double monotonic_seconds();

// "SIGKILL" etc.
std::string signal_name(int sig);

// SIGINT/SIGTERM/SIGHUP are caught and written to a self-pipe per thread; SIGPIPE is ignored
// (a supervisor must not die with a dead worker); this process becomes the child subreaper
// (prctl PR_SET_CHILD_SUBREAPER), so a fit's orphans come back to it. Call once, before any
// thread that watches a fit starts. Every thread sees every signal: each has its own pipe and
// its own count of the signals it has taken.
void install_supervisor_signals();
int signal_pipe_fd();          // this thread's pipe: readable when a signal arrived
int take_pending_signal();     // the signal number, 0 if none (drains this thread's pipe)
int pending_signal();          // without taking it

}  // namespace prof
