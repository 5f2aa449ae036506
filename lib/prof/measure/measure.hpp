// Measuring real fits (the fit record; the warm-worker protocol of prof-measure(1)): one
// process per cell (rusage of the waited child, as time(1) reports) or a warm worker that
// serves many cells (/proc VmHWM after a clear_refs reset, CPU of all threads in nanoseconds).
#pragma once

#include "prof/measure/reply_lines.hpp"
#include "prof/measure/cgroup.hpp"
#include "prof/core/errors.hpp"
#include "prof/device/nvml.hpp"
#include "prof/records/records.hpp"
#include "prof/measure/spawn.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace prof {


// NVML, opened when the first fit is measured: a run that measures none never searches for
// libnvidia-ml nor initialises it. Tried once; null from then on when NVML is unavailable.
class nvml_on_demand {
public:
    nvml_reader* get();

private:
    bool tried_ = false;
    std::unique_ptr<nvml_reader> reader_;
};

// The run's cgroups (cgroup.hpp), opened by `open` when the first fit is measured, so a run
// that measures none makes no directory. Opened once; null from then on when `open` gave none.
class cgroups_on_demand {
public:
    explicit cgroups_on_demand(std::function<std::unique_ptr<cgroup_run>()> open) : open_(std::move(open)) {}
    cgroup_run* get();

private:
    std::function<std::unique_ptr<cgroup_run>()> open_;
    bool tried_ = false;
    std::unique_ptr<cgroup_run> run_;
};

struct measure_options {
    unsigned threads = 1;          // the thread cap; 0 = none (intraop_threads null)
    double timeout_s = 0;          // 0 = no limit; else the fit's process group is killed
    int child_output_fd = 2;       // where the fit's stdout goes: our stderr, or --child-output
    std::string host;              // host identity for the records
    nvml_on_demand* nvml = nullptr;  // null, or NVML unavailable → peak_gpu_bytes stays null (not measured)
    double sample_interval_s = 0.05;  // process-count and GPU polling while a fit runs
    bool inherit_stdin = false;    // process mode: the child reads our stdin (prof-measure -- CMD)
    cgroups_on_demand* cgroups = nullptr;  // null, or none opened → rusage (process mode) or /proc (worker mode)
    bool no_cgroup_on_purpose = false;     // --no-cgroup: the fallback was chosen, not imposed
    std::optional<std::uint64_t> memory_limit_bytes;  // applied through the cgroup; needs cgroups
    double stop_grace_s = 5.0;     // a signalled fit gets this long before SIGKILL
    // Worker mode: the worker holding more than this after a cell than before it is reported.
    std::uint64_t leak_warn_bytes = 64u << 20;
    // The CPUs the fit (the worker) is bound to under the thread cap: empty = the first
    // `threads` allowed CPUs; under --jobs, the set of the thread that runs it.
    std::vector<int> cpus;
    // Worker mode: each worker serves one model (--worker-scope model), so that warning cannot
    // advise giving the model a worker of its own.
    bool worker_per_model = false;
};

// The error text of a failed fit: "exit 3: <last stderr line>", "killed by SIGKILL",
// "timeout after 30 s".
// " (PYTHONPATH ...)" when a fit's last stderr line says Python could not import prof_worker or
// prof_record (a forgotten PYTHONPATH), else "".
std::string python_path_hint(std::string_view text);
std::string describe_failure(std::optional<int> exit_status, std::optional<int> signal, bool timed_out,
                             double timeout_s, const std::string& last_stderr_line);

// Thrown when SIGINT/SIGTERM/SIGHUP reached prof-measure: the signal was forwarded to the fit's
// process group (SIGKILL after stop_grace_s, or at a second signal), the fit and its whole tree
// stopped and reaped, and nothing half-written. `partial` is the record of the fit that was
// running: ok=false, the error saying so, the child's signal, wall and CPU up to its end.
// Exit status 128 + signal.
struct interrupted : error {
    explicit interrupted(int sig, std::optional<measured_fit> partial = std::nullopt);
    int sig;
    std::optional<measured_fit> partial;
};

// The host's CPU pressure over one fit, 0 to 1. For a fit bound to fewer CPUs than
// prof-measure may use (--threads, --jobs): the share of those CPUs' time that other tasks took
// (their busy jiffies in /proc/stat less the fit's own CPU time, two ticks per CPU allowed for
// the sampling clock) or the hypervisor stole, whichever is larger ("cpu-set"); the fit's own
// threads waiting for each other inside its set are the cap at work, not a busy host. Otherwise
// /proc/pressure/cpu "some" (the share of wall time in which at least one runnable task waited
// for a CPU: "psi"), else from /proc/stat: the larger of the steal share and the share of samples
// in which more tasks were runnable than CPUs exist ("proc-stat"); these two count every task
// on the host, the fit's own threads included.
// One CPU's jiffies from /proc/stat's "cpuN" line, or a set's summed.
struct cpu_jiffies {
    std::uint64_t total = 0, busy = 0, steal = 0;  // busy: user nice system irq softirq (not steal)
    bool present = false;
};
class pressure_meter {
public:
    pressure_meter();   // the starting reading
    void bind(pid_t pid);  // the fit's process, once started: its CPU set decides the method
    void sample();      // a run-queue sample while the fit runs (the /proc/stat method only)
    void finish(measured_fit& f);  // the end: sets cpu_pressure and pressure_method (null when unreadable)
    // For a bound fit, once f.cpu_s is known: replaces them with the cpu-set reading.
    void settle(measured_fit& f) const;

private:
    double t0_, t1_ = 0;
    std::optional<std::uint64_t> psi0_;
    std::optional<std::uint64_t> total0_, steal0_;
    std::size_t samples_ = 0, busy_ = 0;
    std::vector<int> set_;  // the bound fit's CPUs; empty: not bound narrower than ours
    cpu_jiffies set0_;                 // their jiffies summed at bind, and at finish (unreadable: none)
    std::optional<cpu_jiffies> set1_;
};
// "some avg10=... total=N" of /proc/pressure/cpu: N (microseconds).
std::optional<std::uint64_t> psi_some_total_us(std::string_view text);
// /proc/stat: the first "cpu" line's jiffies summed and its steal column; procs_running; each
// "cpuN" line's jiffies (index N; a CPU with no line has all zero and present false).
struct proc_stat_cpu {
    std::uint64_t total = 0, steal = 0, procs_running = 0;
    std::vector<cpu_jiffies> cpus;
};
std::optional<proc_stat_cpu> parse_proc_stat(std::string_view text);

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

    // Measures one cell; the record's phase is `phase` (fit_phase_*), cold when the worker has
    // served no cell of its model yet, and worker_peak_bytes its lifetime peak so far.
    measured_fit measure(const cell& c, std::string_view phase = fit_phase_sample);
    // Cells of `model` this worker (this start of it: a restart begins again at 0) has measured.
    std::uint64_t served(const std::string& model) const;
    // Closes the worker's stdin, waits up to `grace_s` for it to exit (a signal to prof-measure
    // cuts the wait short), then kills its group and cgroup. `last` gets the cgroup's final
    // counters.
    void stop(double grace_s = 5.0, cgroup_reading* last = nullptr);
    pid_t pid() const { return child_.pid; }

private:
    // One cell's readings before it is sent and how the wait for its reply ended (measure.cpp).
    struct cell_run;
    void start();
    void await_ready();  // the {"ready":true} line (--ready), within ready_timeout_s_
    void drain_stale_replies();            // takes and warns about replies no cell asked for
    void read_before(cell_run& r);         // the worker's and its cgroup's readings, peaks reset
    void send_cell(cell_run& r, const std::string& line);  // the cell line, within the deadline
    void wait_for_reply(cell_run& r, gpu_peak_tracker& gpu, pressure_meter& pressure);
    measured_fit finish_replied(cell_run& r, const cell& c, const gpu_peak_tracker& gpu);
    measured_fit finish_unreplied(cell_run& r);  // interrupted, timed out or died mid-cell
    void reap_dead(int* exit_status, int* sig, cgroup_reading* last = nullptr);
    bool read_reply_line(std::string& line);  // one complete line from the reply buffer
    void keep_lifetime_peak(std::optional<std::uint64_t> bytes);
    void settle_history(measured_fit& f);
    std::string command_text() const;         // the worker command, for messages
    std::vector<std::string> argv_;
    measure_options o_;
    bool wait_ready_;
    double ready_timeout_s_;
    spawned_child child_;
    std::unique_ptr<cgroup_cell> cg_;  // the worker's group (tree-wide counters), when cgroups are used
    std::uint64_t applied_limit_ = 0;  // the memory limit the kernel applied to cg_
    int in_fd_ = -1, reply_fd_ = -1;
    reply_lines replies_;
    bool alive_ = false;
    std::map<std::string, std::uint64_t> served_;  // cells measured per model since the start
    std::uint64_t lifetime_peak_ = 0;  // the largest high-water mark read since the start
    std::optional<std::uint64_t> max_n_obs_;  // the longest n_obs served since the start
};

// ---- the run ----------------------------------------------------------------------------

// The indexes of the words of a --run template that a shell reads as a script: the operand
// after -c (alone or in a cluster such as -ec) of the first word naming a shell (sh, bash,
// dash, zsh, ksh, mksh, ash, yash, posh; by its last path component), so `sh -c '...'`,
// `env X=1 bash -ec '...'` and `timeout 60 sh -c '...'` are all seen. At most one.
std::vector<std::size_t> shell_script_words(const std::vector<std::string>& words);
// One cell's argv from the template's words: substitute_cell on each word, shell-quoting every
// value inside a shell script word (shell_script_words).
std::vector<std::string> cell_argv(const std::vector<std::string>& words, const cell& c);
// One cell through --run: measure_process of cell_argv, except that a cell whose fields put a
// NUL byte into an argument is not run (exec would cut the argument there, and the fit would
// run on another ts_id than its record names): its fit is ok:false saying so.
measured_fit measure_cell_process(const std::vector<std::string>& words, const cell& c, const measure_options& o);

// prof-measure's input in order: cells, and every other record (a JSON object whose kind is a
// string other than "cell", such as prof-sample's sample record), kept as its line to be
// written through unchanged.
struct measure_input {
    std::vector<cell> cells;
    std::vector<std::string> passthrough;  // the lines, in input order
    // For each pass-through line, how many cells preceded it (its place among the fits).
    std::vector<std::size_t> passthrough_at;
    std::size_t bad_lines = 0;
};
// Reads FILES ('-' = stdin) through for_each_record (io/input.hpp), --max-bad-lines applying to
// all of them; skipped lines end with "skipped N malformed cell line(s)" on stderr.
measure_input read_measure_input(const std::vector<std::string>& files, std::size_t max_bad_lines);

// --worker-scope: one warm worker for the whole run, one per family, or one per model.
enum class worker_scope { run, family, model };
worker_scope parse_worker_scope(const std::string& text);  // throws usage_error
// The order the cells are measured (and their fits written) in: the input order for run;
// for family and model, the cells grouped by that key, groups in the order of their first
// cell, cells in input order within a group. Returns indices into `cells`.
std::vector<std::size_t> measure_order(const std::vector<cell>& cells, worker_scope scope);
// The key cell `c` is grouped by under `scope` ("" for run).
std::string scope_key(const cell& c, worker_scope scope);

// How prof-measure runs its cells: one process per cell (run_words, a --run template) or warm
// workers (worker_words), one per scope group.
struct cell_loop {
    std::vector<std::string> run_words, worker_words;
    bool wait_ready = false;
    double ready_timeout_s = 300;
    worker_scope scope = worker_scope::run;
    // Worker mode: warm-up runs of each model's first cell in a worker before it is measured
    // (left out of the profile), and the cells of each model replayed back to back when its
    // worker ends (replay_cells).
    unsigned warmup = 0, replay = 0;
    bool progress = false;  // a progress line on stderr (a terminal)
    bool summary = true;    // the closing "N cells measured, F failed" line on stderr, terminal or not
    // --jobs: how many fits (process mode) or workers (worker mode, one per scope group; a
    // scope of run has one group, so one at a time) run at once, each thread bound to its own
    // CPU set (fit_cpu_sets). 1: one after another, as ever.
    unsigned jobs = 1;
    // --remeasure-busy: a cell of the sample whose ok reading is contended runs again, up to
    // this many more times (cell_runner's remeasured in run.cpp says which attempt counts).
    // 0: every cell once.
    unsigned remeasure_busy = 0;
    // Worker mode: the replay runs in a second worker of the model beside the first, each on
    // its own CPU set, where the machine holds one (cell_runner's replay_beside in run.cpp);
    // false (--replay-alone): in the first worker alone.
    bool replay_beside = false;
};

// The most other fits that ran beside each fit: begin() when a fit starts, end() with its id
// when it ends gives the largest number of other fits running at any moment in between.
// Safe from several threads.
class overlap_tracker {
public:
    std::size_t begin();
    std::uint64_t end(std::size_t id);

private:
    std::mutex mutex_;
    std::size_t next_ = 0;
    std::map<std::size_t, std::uint64_t> running_;  // id -> most others seen so far
};

// The CPU sets of --jobs N under a thread cap of `threads` CPUs: partition_cpus (core/cpus.hpp)
// over this process's allowed CPUs and the kernel's topology, at most `jobs` sets. Fewer when
// the machine holds fewer (a warning says so); empty when not even one whole set fits (the
// fits then run one at a time on the first `threads` CPUs, as under --jobs 1).
std::vector<std::vector<int>> fit_cpu_sets(unsigned threads, unsigned jobs);
// The CPUs a second worker replays on beside a fit bound by `o` (its cpus, else pick_cpus of
// its thread cap): a set of the thread cap's size on whole cores sharing no core with the
// first's (partition_cpus over the CPUs this process may use). Empty without a thread cap or
// when the machine holds no such set.
std::vector<int> beside_cpu_set(const measure_options& o);
// A model's ok fit of the sample in one worker: the cell's index in the input, its reading.
struct sampled_cell {
    std::size_t index = 0;
    std::optional<std::uint64_t> rss_bytes;  // process_rss_bytes
    std::optional<std::uint64_t> n_obs;
};
// The cells --replay N runs again, in order, after a worker's last cell of a model: the
// model's N - 1 heaviest sampled cells (by process_rss_bytes, then n_obs, then input order),
// lightest first, then the heaviest once more, so the heaviest cell runs right after the next
// heaviest and right after itself. Input indices; empty for N = 0.
std::vector<std::size_t> replay_cells(std::vector<sampled_cell> cells, unsigned replay);

// Measures the cells of `in` in measure_order, writing each pass-through line with `pass` (in
// place for scope run, else all before the first fit) and each fit with `record` (its start
// time, monotonic). `*started` is set to each cell's start before it runs, so a caller that
// catches interrupted knows when the stopped fit began.
// With loop.jobs above 1 (process mode, or workers of a scope other than run) up to that many
// fits run at once, one thread each with its own CPU set; the records still come out in the
// order above (a fit's record waits for those before it), each with concurrent_fits. A signal
// stops every fit in flight; their records and every record finished before come out, then
// interrupted is thrown without a partial record (it was written already).
void measure_cells(const measure_input& in, const cell_loop& loop, const measure_options& o,
                   const std::function<void(const std::string&)>& pass,
                   const std::function<void(const measured_fit&, double)>& record, double* started);

// The warning for fits measured on a busy host (cpu_pressure >= contended_cpu_pressure),
// naming up to five of them; nullopt when there were none. Superseded attempts are not
// counted: a cell named is one whose counted reading is contended.
std::optional<std::string> contention_warning(const std::vector<measured_fit>& fits);

}  // namespace prof
