// prof-measure: run each cell as a real process (or through a warm worker) and measure it.
#include "prof/cgroup.hpp"
#include "prof/cli.hpp"
#include "prof/diag.hpp"
#include "prof/errors.hpp"
#include "prof/fsutil.hpp"
#include "prof/host.hpp"
#include "prof/json_in.hpp"
#include "prof/measure.hpp"
#include "prof/trace.hpp"
#include "prof/units.hpp"

#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace {

struct config {
    std::vector<std::string> files;
    std::string run_template, worker_cmd;
    std::vector<std::string> command;  // after "--"
    std::string ts_id, model_type, family;
    std::optional<std::uint64_t> n_obs;
    unsigned threads = 1;
    std::string timeout, child_output, trace;
    std::optional<std::string> host;
    bool quiet = false, ready = false, no_cgroup = false;
    std::string memory_limit, worker_scope = "run", grace = "5s";
    std::string ready_timeout = "5m";
    std::uint64_t max_bad_lines = 0;
};

struct trace_guard {  // writes the trace whatever way the run ends
    std::string path;
    prof::chrome_trace trace;
    bool written = false;
    void write() {  // the normal end: a trace that cannot be written is exit 73
        written = true;
        if (!path.empty()) prof::write_file_atomic(path, trace.render());
    }
    ~trace_guard() {
        if (written || path.empty()) return;
        try {
            prof::write_file_atomic(path, trace.render());
        } catch (const std::exception& e) {
            prof::warn(e.what());
        }
    }
};

// Fails before any work when FILE's directory is missing or not writable (exit 73).
void check_writable_dir(const std::string& path, const char* flag) {
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (::access(dir.c_str(), W_OK) != 0)
        throw prof::cant_create_error(fmt::format("{}: cannot write '{}': {}", flag, path, std::strerror(errno)));
}

int run(int argc, char** argv) {
    // First of all, before the options are parsed, NVML is loaded or any input is read: every
    // fit is forked by the launcher, whose footprint is ours as it is now.
    prof::start_launcher();
    config c;
    // "--" ends prof-measure's options; what follows is the one command to measure (time(1) style).
    int split = argc;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    for (int i = split + 1; i < argc; ++i) c.command.emplace_back(argv[i]);

    CLI::App app{"Measure real fits: wall, CPU, effective cores, process and marginal RSS, GPU peak.\n"
                 "  prof-measure [--ts-id ID ...] -- CMD ARGS...   one process, one fit record; exits as CMD did\n"
                 "  prof-measure --run 'TEMPLATE' [FILE...]        one process per input cell\n"
                 "  prof-measure --worker 'CMD' [FILE...]          a warm worker serves every cell",
                 "prof-measure"};
    prof::cli::configure(app, "prof-sample --panel panel.jsonl --model theta --mode always | prof-measure --worker "
                              "'python3 my_worker.py' --ready --trace prepass.json | prof-aggregate",
                         "reads cell records; writes fit records");
    app.add_option("files", c.files, "Cell record files ('-' = stdin; default stdin)");
    app.add_option("--run", c.run_template,
                   "Command template run once per cell; {ts_id} {model_type} {family} {n_obs} are substituted "
                   "in each word, never through a shell");
    app.add_option("--worker", c.worker_cmd, "Warm worker command: cells on its stdin, replies on descriptor 3");
    app.add_option("--ts-id", c.ts_id, "With -- CMD: the ts_id to record");
    app.add_option("--model-type", c.model_type, "With -- CMD: the model_type to record (default: CMD's name)");
    app.add_option("--family", c.family, "With -- CMD: the family to record (default: the model type)");
    prof::cli::add_count_option(app, "--n-obs", c.n_obs, "With -- CMD: the n_obs to record");
    app.add_option("--threads", c.threads, "Thread cap: pool variables set to N and the fit bound to N CPUs; 0 = no cap")
        ->capture_default_str();
    app.add_option("--timeout", c.timeout, "Kill a fit's process group after DURATION (e.g. 30s, 5m)");
    app.add_option("--child-output", c.child_output, "Append the fits' stdout to FILE (default: stderr)");
    app.add_option("--trace", c.trace, "Write the run as a Chrome trace (Perfetto) to FILE");
    app.add_option("--host", c.host, "Host identity for the records (default: $PROF_HOST, else the hostname)");
    app.add_flag("--ready", c.ready, "Wait for the worker's {\"ready\":true} line on descriptor 3 before the first cell");
    app.add_option("--ready-timeout", c.ready_timeout, "How long --ready waits")->capture_default_str();
    app.add_option("--memory-limit", c.memory_limit,
                   "Run each fit (each worker) under a memory limit of SIZE through its cgroup, as a container would; "
                   "an OOM kill is recorded");
    app.add_option("--grace", c.grace, "After SIGINT/SIGTERM/SIGHUP, how long the fit may take to stop before SIGKILL")
        ->capture_default_str();
    app.add_flag("--no-cgroup", c.no_cgroup, "Measure with rusage (process mode) or /proc (worker mode) even where a "
                                             "cgroup can be created");
    app.add_option("--worker-scope", c.worker_scope, "One worker for the whole run, per family, or per model: run|family|model")
        ->capture_default_str();
    app.add_flag("--quiet", c.quiet, "No progress and no summary line on stderr");
    prof::cli::add_count_option(app, "--max-bad-lines", c.max_bad_lines,
                                "Skip up to N malformed cell lines (counted on stderr)");
    prof::cli::parse(app, split, argv);

    int modes = !c.command.empty() + !c.run_template.empty() + !c.worker_cmd.empty();
    if (split < argc && c.command.empty()) throw prof::usage_error("nothing to run after '--'");
    if (modes != 1) throw prof::usage_error("give exactly one of: -- CMD ARGS..., --run 'TEMPLATE', --worker 'CMD'");
    if (!c.command.empty() && !c.files.empty()) throw prof::usage_error("-- CMD measures one command and reads no cells");
    if (c.command.empty() && (!c.ts_id.empty() || !c.model_type.empty() || !c.family.empty() || c.n_obs))
        throw prof::usage_error("--ts-id, --model-type, --family and --n-obs describe the one fit of -- CMD; "
                                "with --run or --worker they come from the cells");
    if (c.worker_cmd.empty() && c.ready) throw prof::usage_error("--ready applies to --worker only");
    auto scope = prof::parse_worker_scope(c.worker_scope);
    if (c.worker_cmd.empty() && scope != prof::worker_scope::run) throw prof::usage_error("--worker-scope applies to --worker only");
    if (c.no_cgroup && !c.memory_limit.empty()) throw prof::usage_error("--memory-limit is applied through a cgroup: not with --no-cgroup");
    if (c.threads > prof::allowed_cpu_count())
        prof::warn(fmt::format("--threads {} is more than the {} CPUs this process may use: the fits are bound to "
                               "all {}, and pool variables say {}",
                               c.threads, prof::allowed_cpu_count(), prof::allowed_cpu_count(), c.threads));

    prof::measure_options o;
    o.threads = c.threads;
    o.host = prof::host_identity(c.host);
    if (!c.timeout.empty()) {
        o.timeout_s = prof::parse_duration(c.timeout, "--timeout");
        if (o.timeout_s <= 0) throw prof::usage_error("--timeout must be positive");
    }
    double ready_timeout = prof::parse_duration(c.ready_timeout, "--ready-timeout");
    o.stop_grace_s = prof::parse_duration(c.grace, "--grace");
    if (!c.child_output.empty()) {
        o.child_output_fd = ::open(c.child_output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (o.child_output_fd < 0)
            throw prof::cant_create_error(fmt::format("cannot open '{}': {}", c.child_output, std::strerror(errno)));
    }
    if (!c.trace.empty()) check_writable_dir(c.trace, "--trace");
    if (!c.memory_limit.empty()) {
        o.memory_limit_bytes = prof::parse_size(c.memory_limit, "--memory-limit");
        if (*o.memory_limit_bytes == 0) throw prof::usage_error("--memory-limit must be positive");
    }
    std::unique_ptr<prof::cgroup_run> cgroups;
    if (!c.no_cgroup) {
        std::string why;
        cgroups = prof::cgroup_run::open(&why);
        if (cgroups) {
            for (const auto& d : cgroups->dirs()) prof::launcher_own_cgroup(d);  // removed even if we are killed
        } else if (o.memory_limit_bytes) {
            throw prof::unavailable_error("--memory-limit needs a memory cgroup, and none can be created here: " + why);
        } else if (!c.quiet) {
            prof::note(fmt::format("no cgroup ({}): measuring with {}, which does not count a fit's child processes", why,
                                   c.worker_cmd.empty() ? "rusage" : "/proc"));
        }
    }
    o.cgroups = cgroups.get();
    std::string nvml_why;
    auto nvml = prof::nvml_reader::open(&nvml_why);
    o.nvml = nvml.get();
    prof::install_supervisor_signals();
    trace_guard tg;
    tg.path = c.trace;
    double run_start = prof::monotonic_seconds();

    std::vector<prof::measured_fit> fits;
    auto record = [&](const prof::measured_fit& fit, double t) {
        tg.trace.add(fit, (t - run_start) * 1e6, fit.wall_s.value_or(0) * 1e6);
        prof::cli::emit_line(prof::write_fit(fit));
        fits.push_back(fit);
    };
    auto warn_contention = [&] {
        if (auto w = prof::contention_warning(fits)) prof::warn(*w);
    };
    double t = run_start;
    try {
        if (!c.command.empty()) {
            prof::cell one{c.ts_id, c.model_type.empty() ? c.command[0].substr(c.command[0].rfind('/') + 1) : c.model_type, "", c.n_obs};
            one.family = c.family.empty() ? one.model_type : c.family;
            o.inherit_stdin = true;
            auto fit = prof::measure_process(c.command, one, o);
            record(fit, t);
            tg.write();
            warn_contention();
            if (fit.signal) {
                int sig = 0;
                for (int s = 1; s < 65; ++s)
                    if (prof::signal_name(s) == *fit.signal) sig = s;
                return 128 + sig;
            }
            if (fit.exit_code) return static_cast<int>(*fit.exit_code);
            return fit.ok ? 0 : 1;
        }

        auto in = prof::read_measure_input(prof::cli::inputs_or_stdin(c.files), c.max_bad_lines);
        bool progress = !c.quiet && isatty(2);
        std::vector<std::string> run_words = c.run_template.empty() ? std::vector<std::string>{} : prof::split_words(c.run_template);
        if (!c.run_template.empty() && run_words.empty()) throw prof::usage_error("--run: empty command template");
        std::vector<std::string> worker_words;
        if (!c.worker_cmd.empty()) {
            worker_words = prof::split_words(c.worker_cmd);
            if (worker_words.empty()) throw prof::usage_error("--worker: empty command");
        }
        prof::cell_loop loop{run_words, worker_words, c.ready, ready_timeout, scope, progress, !c.quiet};
        prof::measure_cells(in, loop, o, [](const std::string& line) { prof::cli::emit_line(line); },
                            [&](const prof::measured_fit& fit, double start) {
                                t = start;
                                record(fit, start);
                            },
                            &t);
    } catch (const prof::interrupted& e) {
        // The fit that was running is recorded as stopped, then prof-measure exits 128 + n.
        if (e.partial) record(*e.partial, t);
        warn_contention();
        throw;
    }
    tg.write();
    warn_contention();
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-measure", argc, argv, run); }
