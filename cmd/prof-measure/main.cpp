// prof-measure: run each cell as a real process (or through a warm worker) and measure it.
#include "prof/measure/cgroup.hpp"
#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"
#include "prof/measure/measure.hpp"
#include "prof/measure/invocation.hpp"
#include "prof/measure/spawn.hpp"

#include <fmt/format.h>

namespace {

void add_options(CLI::App& app, prof::measure_invocation& c) {
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
    app.add_option("--jobs", c.jobs, "Measure up to N fits (workers) at once, each on its own CPU set of --threads CPUs "
                                     "and in its own cgroup; records keep the input order")
        ->capture_default_str();
    app.add_option("--timeout", c.timeout, "Kill a fit's process group after DURATION (e.g. 30s, 5m)");
    app.add_option("--child-output", c.child_output, "Append the fits' stdout to FILE (default: stderr)");
    app.add_option("--trace", c.trace, "Write the run as a Chrome trace (Perfetto) to FILE");
    prof::cli::add_host_option(app, c.host);
    app.add_flag("--ready", c.ready, "Wait for the worker's {\"ready\":true} line on descriptor 3 before the first cell");
    app.add_option("--ready-timeout", c.ready_timeout, "How long --ready waits")->capture_default_str();
    app.add_option("--memory-limit", c.memory_limit,
                   "Run each fit (each worker) under a memory limit of SIZE through its cgroup, as a container would; "
                   "an OOM kill is recorded");
    app.add_option("--grace", c.grace, "After SIGINT/SIGTERM/SIGHUP, how long the fit may take to stop before SIGKILL")
        ->capture_default_str();
    app.add_flag("--no-cgroup", c.no_cgroup, "Measure with rusage (process mode) or /proc (worker mode) even where a "
                                             "cgroup can be created");
    app.add_option("--worker-scope", c.worker_scope, "One worker per model (default), per family, or for the whole run: "
                                                     "model|family|run");
    prof::cli::add_count_option(app, "--warmup", c.warmup, "Warm-up runs of each model's first cell in a worker, "
                                                           "recorded as phase warmup (default 1; --worker only)");
    prof::cli::add_count_option(app, "--replay", c.replay, "Runs of each model's heaviest cells replayed back to back "
                                                           "when its worker ends, as phase replay (default 3; 0 = none; "
                                                           "--worker only)");
    app.add_flag("--replay-alone", c.replay_alone,
                 "Replay in the model's worker alone; by default a second worker replays the same cells beside "
                 "it on CPUs of its own, so the profile reads what a neighbour costs (--worker only)");
    prof::cli::add_count_option(app, "--remeasure-busy", c.remeasure_busy,
                                "Run a cell again, up to N more times, while its reading is contended (CPU "
                                "pressure >= 10% over >= 0.1 s); the least contended attempt counts, the others "
                                "stay as phase superseded (default 2; 0 = once; --run and --worker only)");
    prof::cli::add_quiet_flag(app, c.quiet);
    prof::cli::add_max_bad_lines_option(app, c.max_bad_lines, "cell lines");
}

int run(int argc, char** argv) {
    prof::measure_invocation c;
    int split = prof::split_command(argc, argv, c);
    // The launcher starts as soon as a fit is sure to come, so its start overlaps what comes
    // before the first fit (the cgroups, NVML); a run that measures nothing starts none. With
    // -- CMD nothing has been read yet: a fork of this process is as small as a fresh image.
    if (!c.command.empty()) prof::start_launcher(prof::launcher_start::fork);
    CLI::App app{"Measure real fits: wall, CPU, effective cores, process and marginal RSS, GPU peak.\n"
                 "  prof-measure [--ts-id ID ...] -- CMD ARGS...   one process, one fit record; exits as CMD did\n"
                 "  prof-measure --run 'TEMPLATE' [FILE...]        one process per input cell\n"
                 "  prof-measure --worker 'CMD' [FILE...]          a warm worker serves every cell",
                 "prof-measure"};
    add_options(app, c);
    prof::cli::parse(app, split, argv);
    const prof::worker_scope scope = prof::check_invocation(c);
    prof::measure_setup setup = prof::measure_setup_from(c);
    prof::measure_options& o = setup.options;
    prof::cgroups_on_demand cgroups([&] { return prof::open_run_cgroups(c, o.memory_limit_bytes.has_value()); });
    if (o.memory_limit_bytes) cgroups.get();  // refused now, before any input is read, without a cgroup
    o.cgroups = &cgroups;
    prof::nvml_on_demand nvml;
    o.nvml = &nvml;
    prof::install_supervisor_signals();
    prof::trace_file tg(c.trace);
    double run_start = prof::monotonic_seconds();

    std::vector<prof::measured_fit> fits;
    auto record = [&](const prof::measured_fit& fit, double t) {
        tg.trace().add(fit, (t - run_start) * 1e6, fit.wall_s.value_or(0) * 1e6);
        prof::cli::emit_line(prof::write_fit(fit));
        fits.push_back(fit);
    };
    auto warn_contention = [&] {
        if (auto w = prof::contention_warning(fits)) prof::warn(*w);
    };
    double t = run_start;
    try {
        if (!c.command.empty()) {
            o.inherit_stdin = true;
            auto fit = prof::measure_process(c.command, prof::command_cell(c), o);
            record(fit, t);
            tg.write();
            warn_contention();
            return prof::time_exit_status(fit);
        }

        auto in = prof::read_measure_input(prof::cli::inputs_or_stdin(c.files), c.max_bad_lines);
        if (!in.cells.empty()) prof::start_launcher(prof::launcher_start::exec);
        auto run_words = prof::command_words(c.run_template, "--run: empty command template");
        auto worker_words = prof::command_words(c.worker_cmd, "--worker: empty command");
        auto [warmup, replay] = prof::warmup_and_replay(c);
        prof::cell_loop loop{run_words, worker_words, c.ready, setup.ready_timeout_s, scope, warmup, replay,
                             prof::cli::show_progress(c.quiet), !c.quiet, c.jobs, prof::remeasure_busy(c),
                             !c.replay_alone};
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
