// prof-measure's invocation: checks, setup, exit status (see invocation.hpp).
#include "prof/measure/invocation.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/measure/host.hpp"
#include "prof/measure/spawn.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace prof {

int split_command(int argc, char** argv, measure_invocation& m) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--") == 0) {
            m.dash_dash = true;
            for (int k = i + 1; k < argc; ++k) m.command.emplace_back(argv[k]);
            return i;
        }
    return argc;
}

worker_scope check_invocation(const measure_invocation& m) {
    int modes = !m.command.empty() + !m.run_template.empty() + !m.worker_cmd.empty();
    if (m.dash_dash && m.command.empty()) throw usage_error("nothing to run after '--'");
    if (modes != 1) throw usage_error("give exactly one of: -- CMD ARGS..., --run 'TEMPLATE', --worker 'CMD'");
    if (!m.command.empty() && !m.files.empty()) throw usage_error("-- CMD measures one command and reads no cells");
    if (m.command.empty() && (!m.ts_id.empty() || !m.model_type.empty() || !m.family.empty() || m.n_obs))
        throw usage_error("--ts-id, --model-type, --family and --n-obs describe the one fit of -- CMD; "
                          "with --run or --worker they come from the cells");
    if (m.worker_cmd.empty() && m.ready) throw usage_error("--ready applies to --worker only");
    if (m.worker_cmd.empty() && !m.worker_scope.empty()) throw usage_error("--worker-scope applies to --worker only");
    // Process mode runs the cells in input order; a worker defaults to one per model.
    auto scope = m.worker_cmd.empty()        ? worker_scope::run
                 : m.worker_scope.empty() ? worker_scope::model
                                          : parse_worker_scope(m.worker_scope);
    if (m.worker_cmd.empty() && (m.warmup || m.replay || m.replay_alone))
        throw usage_error(fmt::format("{} applies to --worker only: with --run or -- CMD every cell is a process of "
                                      "its own, which starts cold",
                                      m.warmup ? "--warmup" : m.replay ? "--replay" : "--replay-alone"));
    if (!m.command.empty() && m.remeasure_busy)
        throw usage_error("--remeasure-busy applies to --run and --worker: -- CMD runs once, reading prof-measure's stdin");
    if (m.no_cgroup && !m.memory_limit.empty()) throw usage_error("--memory-limit is applied through a cgroup: not with --no-cgroup");
    if (m.jobs == 0) throw usage_error("--jobs must be at least 1");
    if (m.jobs > 1 && !m.command.empty()) throw usage_error("--jobs applies to --run and --worker: -- CMD is one fit");
    if (m.jobs > 1 && m.threads == 0)
        throw usage_error("--jobs above 1 needs a thread cap (--threads N): each fit runs on a CPU set of that size");
    if (m.jobs > 1 && scope == worker_scope::run && !m.worker_cmd.empty())
        throw usage_error("--jobs above 1 with --worker runs one worker per scope group at once: not with "
                          "--worker-scope run (one worker serves every cell)");
    if (m.threads > allowed_cpu_count())
        warn(fmt::format("--threads {} is more than the {} CPUs this process may use: the fits are bound to "
                         "all {}, and pool variables say {}",
                         m.threads, allowed_cpu_count(), allowed_cpu_count(), m.threads));
    return scope;
}

std::pair<unsigned, unsigned> warmup_and_replay(const measure_invocation& m) {
    if (m.worker_cmd.empty()) return {0, 0};
    auto count = [](std::optional<std::uint64_t> v, unsigned fallback) {
        return v ? static_cast<unsigned>(std::min<std::uint64_t>(*v, 1u << 20)) : fallback;
    };
    return {count(m.warmup, default_warmup), count(m.replay, default_replay)};
}

unsigned remeasure_busy(const measure_invocation& m) {
    if (!m.command.empty()) return 0;
    return m.remeasure_busy ? static_cast<unsigned>(std::min<std::uint64_t>(*m.remeasure_busy, 1000))
                            : default_remeasure_busy;
}

measure_setup measure_setup_from(const measure_invocation& m) {
    measure_setup s;
    measure_options& o = s.options;
    o.threads = m.threads;
    o.no_cgroup_on_purpose = m.no_cgroup;
    o.host = host_identity(m.host);
    if (!m.timeout.empty()) {
        o.timeout_s = parse_duration(m.timeout, "--timeout");
        if (o.timeout_s <= 0) throw usage_error("--timeout must be positive");
    }
    s.ready_timeout_s = parse_duration(m.ready_timeout, "--ready-timeout");
    o.stop_grace_s = parse_duration(m.grace, "--grace");
    if (!m.child_output.empty()) {
        o.child_output_fd = ::open(m.child_output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (o.child_output_fd < 0)
            throw cant_create_error(fmt::format("cannot open '{}': {}", m.child_output, std::strerror(errno)));
    }
    if (!m.trace.empty()) check_writable_dir(m.trace, "--trace");
    if (!m.memory_limit.empty()) {
        o.memory_limit_bytes = parse_size(m.memory_limit, "--memory-limit");
        if (*o.memory_limit_bytes == 0) throw usage_error("--memory-limit must be positive");
    }
    return s;
}

std::unique_ptr<cgroup_run> open_run_cgroups(const measure_invocation& m, bool memory_limit) {
    if (m.no_cgroup) return nullptr;
    // The launcher first: the directories are handed to it as soon as they exist, so a SIGKILL
    // between their making and the first fit leaves none behind.
    start_launcher();
    std::string why, notice;
    auto cgroups = cgroup_run::open(&why, &notice);
    if (cgroups) {
        launcher_own_cgroups(cgroups->dirs());  // removed even if we are killed
        if (!notice.empty() && !m.quiet) note(notice);
    } else if (memory_limit) {
        throw unavailable_error("--memory-limit needs a memory cgroup, and none can be created here: " + why);
    } else if (!m.quiet) {
        note(fmt::format("no cgroup ({}): measuring with {}, which does not count a fit's child processes", why,
                         m.worker_cmd.empty() ? "rusage" : "/proc"));
    }
    return cgroups;
}

cell command_cell(const measure_invocation& m) {
    const std::string& cmd = m.command.at(0);
    cell one{m.ts_id, m.model_type.empty() ? cmd.substr(cmd.rfind('/') + 1) : m.model_type, "", m.n_obs};
    one.family = m.family.empty() ? one.model_type : m.family;
    one.family_named = !m.family.empty();
    return one;
}

std::vector<std::string> command_words(const std::string& text, const char* what) {
    if (text.empty()) return {};
    auto words = split_words(text);
    if (words.empty()) throw usage_error(what);
    return words;
}

int time_exit_status(const measured_fit& fit) {
    if (fit.signal) {
        int sig = 0;
        for (int s = 1; s < 65; ++s)
            if (signal_name(s) == *fit.signal) sig = s;
        return 128 + sig;
    }
    if (fit.exit_code) return static_cast<int>(*fit.exit_code);
    return fit.ok ? 0 : 1;
}

void check_writable_dir(const std::string& path, const char* flag) {
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (::access(dir.c_str(), W_OK) != 0)
        throw cant_create_error(fmt::format("{}: cannot write '{}': {}", flag, path, std::strerror(errno)));
}

void trace_file::write() {
    written_ = true;
    if (!path_.empty()) write_file_atomic(path_, trace_.render());
}

trace_file::~trace_file() {
    if (written_ || path_.empty()) return;
    try {
        write_file_atomic(path_, trace_.render());
    } catch (const std::exception& e) {
        warn(e.what());
    }
}

}  // namespace prof
