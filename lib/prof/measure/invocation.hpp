// The measure area owns running fits as real processes and reading what they cost: spawn and
// the launcher, cgroups, the host, measure. This part: what prof-measure's command line asks
// for, checked in one place, the setup it implies, and time(1)'s rule for its exit status.
#pragma once

#include "prof/measure/cgroup.hpp"
#include "prof/measure/measure.hpp"
#include "prof/measure/trace.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prof {

// prof-measure's flags as given (durations and sizes still text).
struct measure_invocation {
    std::vector<std::string> files;
    std::string run_template, worker_cmd;
    std::vector<std::string> command;  // the words after "--"
    bool dash_dash = false;            // "--" was on the command line
    std::string ts_id, model_type, family;
    std::optional<std::uint64_t> n_obs;
    unsigned threads = 1;
    unsigned jobs = 1;  // --jobs: fits (workers) measured at once, each on its own CPU set
    std::string timeout, child_output, trace;
    std::optional<std::string> host;
    bool quiet = false, ready = false, no_cgroup = false;
    std::string memory_limit, worker_scope, grace = "5s";  // worker_scope "": not given (model)
    std::optional<std::uint64_t> warmup, replay;  // --warmup, --replay as given (worker mode only)
    bool replay_alone = false;  // --replay-alone (worker mode only)
    std::optional<std::uint64_t> remeasure_busy;  // --remeasure-busy as given (--run and --worker only)
    std::string ready_timeout = "5m";
    std::uint64_t max_bad_lines = 0;
};

// "--" ends prof-measure's options, time(1) style: the words after it go to `command` (and
// dash_dash is set); returns the count of arguments before it, the ones to parse as options.
int split_command(int argc, char** argv, measure_invocation& m);

// Exactly one of -- CMD, --run, --worker, and only the flags that mode reads; throws
// usage_error (64) naming the conflict (--jobs above 1: not with -- CMD, --threads 0 or
// --worker-scope run). Warns when --threads is above the CPUs this process
// may use. Returns the worker scope.
worker_scope check_invocation(const measure_invocation& m);

// Worker mode's defaults: one warm-up run per worker and model (a worker's first cell of a
// model pays its imports and pools), and the three runs of replay_cells (the second heaviest
// cell, the heaviest, the heaviest again).
inline constexpr unsigned default_warmup = 1, default_replay = 3;
// --warmup and --replay as they apply: the defaults in worker mode, 0 in the other modes.
std::pair<unsigned, unsigned> warmup_and_replay(const measure_invocation& m);

// --remeasure-busy's default: on a quiet host no reading is contended and nothing runs again;
// on a busy one two more attempts give a cell three chances at a quiet moment while a host
// that stays busy costs at most three times the cell's time. 
inline constexpr unsigned default_remeasure_busy = 2;
// --remeasure-busy as it applies: the default with --run and --worker, 0 with -- CMD (one
// command, whose stdin is read once).
unsigned remeasure_busy(const measure_invocation& m);

// The fits' options from the flags, checked in the order the flags are read: --timeout (> 0),
// --ready-timeout, --grace, --child-output (opened for appending; 73 when it cannot be), the
// directory of --trace (writable, 73 otherwise), --memory-limit (> 0).
struct measure_setup {
    measure_options options;
    double ready_timeout_s = 300;
};
measure_setup measure_setup_from(const measure_invocation& m);

// The run's cgroups unless --no-cgroup: registered with the launcher (removed even if
// prof-measure is killed). None can be created: --memory-limit is unavailable (69); otherwise
// a note says what measures instead (unless --quiet). prof-measure calls it through
// cgroups_on_demand: at start with --memory-limit, else at the first fit.
std::unique_ptr<cgroup_run> open_run_cgroups(const measure_invocation& m, bool memory_limit);

// The one cell of -- CMD: model_type defaults to the command's base name, family to the model.
cell command_cell(const measure_invocation& m);

// The --run template or --worker command as words; throws usage_error when it holds none.
std::vector<std::string> command_words(const std::string& text, const char* what);

// time(1)'s rule for prof-measure -- CMD: 128 + the signal's number when the fit was killed
// by one, else its exit code, else 0 for an ok fit and 1 for a failed one.
int time_exit_status(const measured_fit& fit);

// Fails before any work when FILE's directory is missing or not writable (exit 73).
void check_writable_dir(const std::string& path, const char* flag);

// The --trace file, written however the run ends: write() at the normal end (a trace that
// cannot be written is exit 73), the destructor after an error (a failure is a warning).
class trace_file {
public:
    explicit trace_file(std::string path) : path_(std::move(path)) {}
    ~trace_file();
    trace_file(const trace_file&) = delete;
    trace_file& operator=(const trace_file&) = delete;
    chrome_trace& trace() { return trace_; }
    void write();

private:
    std::string path_;
    chrome_trace trace_;
    bool written_ = false;
};

}  // namespace prof
