// Measuring real fits (SPEC §2 "fit", §2 "The warm-worker protocol"): one process per cell
// (rusage of the waited child, as time(1) reports) or a warm worker that serves many cells
// (/proc VmHWM after a clear_refs reset, CPU of all threads in nanoseconds).
#pragma once

#include "prof/errors.hpp"
#include "prof/nvml.hpp"
#include "prof/records.hpp"
#include "prof/spawn.hpp"

#include <optional>
#include <string>
#include <vector>

namespace prof {

struct measure_options {
    unsigned threads = 1;          // the thread cap; 0 = none (intraop_threads null)
    double timeout_s = 0;          // 0 = no limit; else the fit's process group is killed
    int child_output_fd = 2;       // where the fit's stdout goes: our stderr, or --child-output
    std::string host;              // host identity for the records
    nvml_reader* nvml = nullptr;   // null → peak_gpu_bytes stays null (not measured)
    double sample_interval_s = 0.05;  // process-count and GPU polling while a fit runs
    bool inherit_stdin = false;    // process mode: the child reads our stdin (prof-measure -- CMD)
};

// The error text of a failed fit (SPEC §2): "exit 3: <last stderr line>", "killed by SIGKILL",
// "timeout after 30 s".
std::string describe_failure(std::optional<int> exit_status, std::optional<int> signal, bool timed_out,
                             double timeout_s, const std::string& last_stderr_line);

// Thrown when SIGINT/SIGTERM/SIGHUP reached prof-measure: the signal was forwarded to the fit's
// process group, the fit reaped, and nothing half-written. Exit status 128 + signal.
struct interrupted : error {
    explicit interrupted(int sig);
    int sig;
};

// Runs argv as one process for cell `c` and measures it: wall (monotonic, fork to reap), CPU
// (ru_utime + ru_stime), process_rss_bytes (ru_maxrss, KiB → bytes), peak_rss_bytes null.
// A command that cannot be started gives ok=false with the reason (exit_code 127 or 126).
// Processes the fit leaves in its group are killed and reported on stderr; a fit seen running
// several processes at once is reported too (rusage reads the largest single process).
measured_fit measure_process(const std::vector<std::string>& argv, const cell& c, const measure_options& o);

// A worker started once and fed cells on stdin; replies on descriptor 3 (PROF_REPLY_FD=3).
// Dies or times out mid-cell → that cell is ok=false, and the worker is restarted for the next.
class warm_worker {
public:
    warm_worker(std::vector<std::string> argv, measure_options o, bool wait_ready, double ready_timeout_s);
    ~warm_worker();
    warm_worker(const warm_worker&) = delete;
    warm_worker& operator=(const warm_worker&) = delete;

    measured_fit measure(const cell& c);
    // Closes the worker's stdin, waits up to `grace_s` for it to exit, then kills its group.
    void stop(double grace_s = 5.0);
    pid_t pid() const { return child_.pid; }

private:
    void start();
    void reap_dead(int* exit_status, int* sig);
    bool read_reply_line(std::string& line);  // one complete line from the reply buffer
    std::string command_text() const;         // the worker command, for messages
    std::vector<std::string> argv_;
    measure_options o_;
    bool wait_ready_;
    double ready_timeout_s_;
    spawned_child child_;
    int in_fd_ = -1, reply_fd_ = -1;
    std::string reply_buf_;
    bool alive_ = false;
};

}  // namespace prof
