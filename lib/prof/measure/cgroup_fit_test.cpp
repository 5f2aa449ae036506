// Ground truth for prof-measure through a cgroup: process trees against the cgroup's own counters,
// --memory-limit and OOM kills, signals mid-fit, cgroup v2 delegation, and warm-up and replay.
#include "prof/measure/measure_test_support.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>

namespace {

// What a measurement cgroup made by this process is: its version, where prof-measure.PID
// directories are made (for a child prof-measure too: after a first run moved this process into
// prof.leaf, a child's run goes to the leaf's parent, where this one's went), and whether its
// peak can be reset per cell (v1; v2 from Linux 6.12). Probed once; tests that need a cgroup,
// or one version, or the reset, say so and are skipped (and counted) where it is missing.
struct cgroup_probe {
    bool ok = false;
    cgroup_version version = cgroup_version::v1;
    std::string parent;  // where prof-measure.PID is made
    bool peak_resettable = false;
};
const cgroup_probe& probe_cgroup() {
    static const cgroup_probe p = [] {
        cgroup_probe out;
        std::string why, notice;
        auto run = cgroup_run::open(&why, &notice);
        // Probed while the test cases register (doctest::skip), before doctest can report.
        if (!run) {
            std::fprintf(stderr, "measure tests: no cgroup: %s\n", why.c_str());
            return out;
        }
        if (!notice.empty()) std::fprintf(stderr, "measure tests: %s\n", notice.c_str());
        out.ok = true;
        out.version = run->version();
        std::string dir = run->dirs().at(0);
        out.parent = dir.substr(0, dir.rfind('/'));
        out.peak_resettable = run->new_cell()->reset_peak();
        std::fprintf(stderr, "measure tests: measurement cgroups: %s below %s, peak %sresettable\n", run->method(),
                     out.parent.c_str(), out.peak_resettable ? "" : "not ");
        return out;
    }();
    return p;
}
bool cgroup_available() { return probe_cgroup().ok; }
bool cgroup_v2_available() { return probe_cgroup().ok && probe_cgroup().version == cgroup_version::v2; }

bool cgroup_peak_resettable() { return probe_cgroup().ok && probe_cgroup().peak_resettable; }

// The kernel's own peak for a command run in a fresh cgroup that this test creates itself.
std::uint64_t cgroup_peak_of(const std::string& command) {
    auto run = cgroup_run::open(nullptr);
    REQUIRE(run);
    auto cell = run->new_cell();
    std::string join;
    for (const auto& f : cell->procs_files()) join += "echo $$ > " + f + "; ";
    auto r = sh("sh -c '" + join + "exec " + command + "'");
    CHECK(r.status == 0);
    auto peak = cell->read().peak_bytes;
    REQUIRE(peak);
    return *peak;
}

// Directories named prof-measure.* left where prof-measure makes them (v1 or v2).
std::size_t leftover_cgroups() {
    REQUIRE(!probe_cgroup().parent.empty());
    auto r = sh("ls -d '" + probe_cgroup().parent + "'/prof-measure.* 2>/dev/null | wc -l");
    return static_cast<std::size_t>(std::atoi(r.out.c_str()));
}

const double mib = 1048576.0;

}  // namespace

TEST_CASE("a parent forking 4 children that each touch 100 MiB reads >= 400 MiB tree-wide, as the cgroup's own counter does" *
          doctest::skip(!cgroup_available())) {
    std::string cmd = helper("forktree") + " 4 100 0.5";
    auto tree = one_fit("-- " + cmd);
    auto rusage = one_fit("--no-cgroup -- " + cmd);
    double kernel = double(cgroup_peak_of(cmd));
    MESSAGE("cgroup method ", double(tree.process_rss_bytes.value()) / mib, " MiB, kernel's own counter ", kernel / mib,
            " MiB, rusage ", double(rusage.process_rss_bytes.value()) / mib, " MiB");
    CHECK(tree.rss_method.value().rfind("cgroup-v", 0) == 0);
    CHECK(double(tree.process_rss_bytes.value()) >= 400 * mib);
    CHECK(double(tree.cgroup_peak_bytes.value()) >= 400 * mib);
    CHECK(std::abs(double(tree.cgroup_peak_bytes.value()) - kernel) <= 0.05 * kernel);
    CHECK(rusage.rss_method.value() == "rusage");
    CHECK(double(rusage.process_rss_bytes.value()) < 150 * mib);  // the largest single process
    CHECK_FALSE(rusage.cgroup_peak_bytes.has_value());
    CHECK(leftover_cgroups() == 0);
}

TEST_CASE("a Python fit using multiprocessing.Pool(2) reads both workers, in process and in worker mode" *
          doctest::skip(!cgroup_available())) {
    // Each pool worker holds 150 MiB while the other does (a barrier), so the tree peaks at
    // >= 300 MiB plus two interpreters; rusage would see one worker.
    std::string code =
        "import multiprocessing as mp\n"
        "def hold(b):\n"
        "    x = bytearray(150 << 20)\n"
        "    b.wait()\n"
        "    return len(x)\n"
        "def fit(cell=None):\n"
        "    if cell is not None and cell['model_type'] != 'pool':\n"
        "        return\n"
        "    with mp.Manager() as m:\n"
        "        b = m.Barrier(2)\n"
        "        with mp.Pool(2) as p:\n"
        "            assert p.map(hold, [b, b]) == [150 << 20] * 2\n";
    std::string path = "/tmp/prof-test-pool-" + std::to_string(getpid()) + ".py";
    std::ofstream(path) << code << "if __name__ == '__main__':\n    import sys\n    if len(sys.argv) > 1:\n"
                        << "        sys.path.insert(0, '" << env_or("PROF_ROOT", ".") << "/python')\n"
                        << "        import prof_worker; prof_worker.serve(fit)\n    else:\n        fit()\n";
    auto proc = one_fit("-- /usr/bin/python3 " + path);
    auto rusage = one_fit("--no-cgroup -- /usr/bin/python3 " + path);
    auto worker = run_cells(cells({"pool", "noop"}), "--worker-scope run --warmup 0 --replay 0 --worker '/usr/bin/python3 " + path + " serve' --ready");
    unlink(path.c_str());
    REQUIRE(worker.size() == 2);
    MESSAGE("process mode ", double(proc.process_rss_bytes.value()) / mib, " MiB (rusage ", double(rusage.process_rss_bytes.value()) / mib,
            " MiB); worker mode ", double(worker[0].process_rss_bytes.value()) / mib, " MiB, marginal ",
            double(worker[0].peak_rss_bytes.value()) / mib, " MiB");
    CHECK(proc.ok);
    CHECK(double(proc.process_rss_bytes.value()) >= 300 * mib);
    CHECK(double(rusage.process_rss_bytes.value()) < 250 * mib);
    CHECK(worker[0].ok);
    if (!cgroup_peak_resettable()) {
        // A v2 kernel before 6.12 cannot reset memory.peak: worker mode says so and reads the
        // worker process alone (proc), as prof-measure(1) documents; the tree-wide worker
        // reading is checked where the reset exists.
        CHECK(worker[0].rss_method.value() == "proc");
        CHECK_FALSE(worker[0].cgroup_peak_bytes.has_value());
        return;
    }
    CHECK(worker[0].rss_method.value().rfind("cgroup-v", 0) == 0);
    CHECK(double(worker[0].peak_rss_bytes.value()) >= 300 * mib);
    // The next cell starts from the reset: the pool is gone, so is its peak.
    CHECK(double(worker[1].peak_rss_bytes.value()) < 50 * mib);
}

TEST_CASE("worker mode through the cgroup: a 300 MiB cell reads its peak within 5% and the reset keeps it out of the next" *
          doctest::skip(!cgroup_peak_resettable())) {
    auto v = run_cells(cells({"alloc300", "noop"}), "--worker-scope run --warmup 0 --replay 0 --worker " + helper("worker"));
    REQUIRE(v.size() == 2);
    MESSAGE("alloc300 marginal ", double(v[0].peak_rss_bytes.value()) / mib, " MiB, noop process ", double(v[1].process_rss_bytes.value()) / mib, " MiB");
    CHECK(v[0].rss_method.value().rfind("cgroup-v", 0) == 0);
    CHECK(std::abs(double(v[0].peak_rss_bytes.value()) - 300 * mib) <= 0.05 * 300 * mib);
    CHECK(double(v[1].process_rss_bytes.value()) < 75 * mib);
    CHECK(v[1].page_cache_bytes.has_value());
}

TEST_CASE("CPU through the cgroup includes a descendant the fit never waited for" * doctest::skip(!cgroup_available())) {
    // The subshell's burner is orphaned at once; sh never waits for it, so rusage misses its
    // 0.3 CPU-seconds, and the cgroup does not. The fit lasts until the burner has finished: sh
    // blocks opening a FIFO the burner's shell opens when it is done, so the waiting itself costs
    // no CPU (a polling loop of `sleep` processes cost more than the burner on a slow kernel),
    // however long a busy host makes the burn take. The burner's shell outlives the fit by a
    // second: had it exited first, its parent (a subreaper) could reap it, and its CPU join
    // the fit's rusage, before the fit's own end is read.
    const std::string fifo = "/tmp/prof-test-orphan-" + std::to_string(getpid());
    auto cmd = [&] {
        std::remove(fifo.c_str());
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        return "-- sh -c '(sh -c \"" + helper("burn") + " 1 0.3; : > " + fifo + "; sleep 1\" &); : < " + fifo + "'";
    };
    auto tree = one_fit(cmd());
    auto rusage = one_fit("--no-cgroup " + cmd());
    std::remove(fifo.c_str());
    MESSAGE("cgroup cpu_s ", tree.cpu_s.value(), ", rusage cpu_s ", rusage.cpu_s.value());
    CHECK(tree.cpu_s.value() >= 0.28);
    CHECK(rusage.cpu_s.value() < tree.cpu_s.value() - 0.25);  // the burner's 0.3 s are missing
}

TEST_CASE("--memory-limit: a fit the kernel kills for it is recorded as an OOM kill with the limit, one within it is not" *
          doctest::skip(!cgroup_available())) {
    auto over = one_fit("--memory-limit 64MiB -- " + helper("alloc") + " 200");
    CHECK_FALSE(over.ok);
    CHECK(over.memory_limit_bytes.value() == 64u << 20);
    CHECK(over.oom_killed.value());
    CHECK(over.signal.value() == "SIGKILL");
    CHECK(over.error.value().find("out of memory") != std::string::npos);
    auto within = one_fit("--memory-limit 256MiB -- " + helper("alloc") + " 50");
    CHECK(within.ok);
    CHECK(within.memory_limit_bytes.value() == 256u << 20);
    CHECK_FALSE(within.oom_killed.value());
    // Worker mode: the worker dies of it mid-cell, is restarted, and the next cell is measured.
    auto v = run_cells(cells({"alloc300", "noop"}), "--worker-scope run --warmup 0 --replay 0 --worker " + helper("worker") + " --memory-limit 128MiB");
    REQUIRE(v.size() == 2);
    CHECK(v[0].oom_killed.value());
    CHECK(v[0].memory_limit_bytes.value() == 128u << 20);
    CHECK(v[0].wall_s.has_value());
    CHECK(v[0].cpu_s.has_value());
    CHECK(v[1].ok);
    CHECK_FALSE(v[1].oom_killed.value());
    auto nolimit = one_fit("-- /bin/true");
    CHECK_FALSE(nolimit.memory_limit_bytes.has_value());
    CHECK_FALSE(nolimit.oom_killed.has_value());
    CHECK(leftover_cgroups() == 0);
}

TEST_CASE("a fit or a worker that moves itself out of its cgroup is killed and recorded as failed, never ok" *
          doctest::skip(!cgroup_available())) {
    // The process writes its own pid into the group prof-measure's processes are in (prof.leaf
    // on cgroup v2), as root may, and then touches 400 MiB, past the 256 MiB limit it escaped.
    const std::string script = "/tmp/prof-test-escape-" + std::to_string(getpid()) + ".sh";
    std::ofstream(script) << "for d in \"$1/prof.leaf\" \"$1\"; do\n"
                             "  [ -f \"$d/cgroup.procs\" ] && echo $$ > \"$d/cgroup.procs\" 2>/dev/null && break\n"
                             "done\nshift\nexec \"$@\"\n";
    const std::string escape = "sh " + script + " " + probe_cgroup().parent + " ";
    auto moved = one_fit("--memory-limit 256MiB -- " + escape + helper("alloc") + " 400 1");
    CHECK_FALSE(moved.ok);
    CHECK(moved.memory_limit_bytes.value() == 256u << 20);
    CHECK(moved.signal.value() == "SIGKILL");
    CHECK(moved.error.value() == "killed: it moved itself out of its cgroup, where neither --memory-limit nor the "
                                 "cgroup's memory and CPU readings cover it");
    // The same fit without the move: killed for the limit, an OOM kill, as it should be.
    auto stayed = one_fit("--memory-limit 256MiB -- " + helper("alloc") + " 400 1");
    CHECK_FALSE(stayed.ok);
    CHECK(stayed.oom_killed.value());
    // A worker that moves itself out before its first cell: the cell (300 MiB, past the limit)
    // fails with the reason and the worker is killed.
    auto v = run_cells(cells({"alloc300"}), "--worker-scope run --warmup 0 --replay 0 --memory-limit 256MiB --worker '" +
                                                escape + helper("worker") + "'");
    unlink(script.c_str());
    REQUIRE(v.size() == 1);
    CHECK_FALSE(v[0].ok);
    CHECK(v[0].error.value() == "worker killed: it moved itself out of its cgroup, where neither --memory-limit nor the "
                                "cgroup's memory and CPU readings cover it");
    CHECK(leftover_cgroups() == 0);
}

TEST_CASE("--memory-limit without a cgroup is refused, never faked") {
    auto r = sh(bin() + "/prof-measure --no-cgroup --memory-limit 64MiB -- /bin/true");
    CHECK(r.status == 64);
    CHECK(r.out.empty());
}

// ---- interrupted cells --------------------------------------------------------------------

TEST_CASE("SIGTERM, SIGINT and SIGHUP mid-fit write an ok:false fit line with the signal and partial wall, then 128+n") {
    for (auto [sig, n] : {std::pair{"TERM", 15}, {"INT", 2}, {"HUP", 1}}) {
        // The duration travels as $1, so this shell's own command line never matches the pattern.
        // The signal comes 0.3 s after the fit is seen running (prof-measure's own start, slow
        // under a sanitizer on a loaded host, is not the fit's wall).
        auto r = sh(fmt::format("sh -c '{}/prof-measure -- sleep \"$1\" & pid=$!; "
                                "for i in $(seq 100); do pgrep -f \"^slee[p] $1\" >/dev/null && break; sleep 0.05; done; "
                                "sleep 0.3; kill -{} $pid; wait $pid; "
                                "echo status=$?; sleep 0.2; pgrep -f \"[s]leep $1\" || echo none-left' sh 61.{}", bin(), sig, n));
        CHECK(r.out.find(fmt::format("status={}", 128 + n)) != std::string::npos);
        CHECK(r.out.find("none-left") != std::string::npos);
        auto nl = r.out.find('\n');
        auto v = fits_of(r.out.substr(0, nl + 1));
        REQUIRE(v.size() == 1);
        CHECK_FALSE(v[0].ok);
        CHECK(v[0].signal.value() == std::string("SIG") + sig);
        CHECK(v[0].error.value().find("interrupted") != std::string::npos);
        CHECK(v[0].wall_s.value() >= 0.3);
        CHECK(v[0].wall_s.value() < 3);
    }
}

TEST_CASE("a fit that ignores SIGTERM is killed after --grace, its whole tree with it, and recorded") {
    std::string lines = cells({"m", "m"});
    std::string path = "/tmp/prof-test-grace-" + std::to_string(getpid());
    std::ofstream(path) << lines;
    auto r = sh(fmt::format("{}/prof-measure --grace 300ms --run 'sh -c \"trap \\\"\\\" TERM; setsid sleep $1 & sleep $2; sleep $2\" sh 62.5 62.75' "
                            "< {} & pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; echo status=$?; sleep 0.3; "
                            "pgrep -f '[s]leep 62.[57]' || echo none-left", bin(), path));
    unlink(path.c_str());
    CHECK(r.out.find("status=143") != std::string::npos);
    CHECK(r.out.find("none-left") != std::string::npos);
    auto v = fits_of(r.out.substr(0, r.out.find('\n') + 1));
    REQUIRE(v.size() == 1);  // the second cell never started
    CHECK(v[0].error.value().find("SIGKILL after the grace period") != std::string::npos);
    CHECK(v[0].signal.value() == "SIGKILL");
}

TEST_CASE("SIGTERM to a worker mid-cell records the cell with its partial wall and CPU, then exits 143") {
    std::string path = "/tmp/prof-test-wterm-" + std::to_string(getpid());
    std::ofstream(path) << cells({"noop", "hang", "noop"});
    auto r = sh(fmt::format("{}/prof-measure --worker-scope run --warmup 0 --replay 0 --worker {} < {} & pid=$!; sleep 0.6; kill -TERM $pid; wait $pid; echo status=$?",
                            bin(), helper("worker"), path));
    unlink(path.c_str());
    CHECK(r.out.find("status=143") != std::string::npos);
    std::string records = r.out.substr(0, r.out.rfind("status="));
    auto v = fits_of(records);
    REQUIRE(v.size() == 2);
    CHECK(v[0].ok);
    CHECK_FALSE(v[1].ok);
    CHECK(v[1].model_type == "hang");
    CHECK(v[1].error.value().find("interrupted: prof-measure received SIGTERM") != std::string::npos);
    CHECK(v[1].wall_s.value() > 0.2);
    CHECK(v[1].cpu_s.has_value());
}

// ---- records passed through, worker scope, params -----------------------------------------

TEST_CASE("records of another kind pass through unchanged and in order; cells of one family get one worker") {
    std::string lines = "{\"kind\":\"sample\",\"n\": 3}\n" + cells({"noop"}) +
                        "{\"kind\":\"cell\",\"ts_id\":\"x\",\"model_type\":\"noop\",\"family\":\"other\"}\n"
                        "{\"kind\":\"note\",\"text\":\"between\"}\n" +
                        "{\"kind\":\"cell\",\"ts_id\":\"y\",\"model_type\":\"noop\"}\n";
    run_result raw;
    run_cells(lines, "--worker-scope run --warmup 0 --replay 0 --worker " + helper("worker"), &raw);
    // In place with one worker for the run.
    std::vector<std::string> kinds;
    for (std::size_t at = 0; at < raw.out.size();) {
        auto nl = raw.out.find('\n', at);
        std::string line = raw.out.substr(at, nl - at);
        kinds.push_back(line.find("\"kind\":\"fit\"") != std::string::npos ? "fit:" + line.substr(line.find("\"ts_id\":") + 9, 2) : line);
        at = nl + 1;
    }
    REQUIRE(kinds.size() == 5);
    CHECK(kinds[0] == "{\"kind\":\"sample\",\"n\": 3}");  // byte for byte, its space included
    CHECK(kinds[1] == "fit:s0");
    CHECK(kinds[2] == "fit:x\"");
    CHECK(kinds[3] == "{\"kind\":\"note\",\"text\":\"between\"}");
    CHECK(kinds[4] == "fit:y\"");
    // --worker-scope family: other records first, then the fits grouped by family in the
    // order of their first cell, each family served by a worker of its own.
    run_cells(lines, "--worker-scope family --warmup 0 --replay 0 --worker 'sh -c \"echo worker-started >&2; exec " + helper("worker") + "\"'", &raw);
    auto v = fits_of(raw.out);
    REQUIRE(v.size() == 3);
    CHECK(v[0].ts_id == "s0");
    CHECK(v[1].ts_id == "y");
    CHECK(v[2].ts_id == "x");
    CHECK(raw.out.find("{\"kind\":\"note\"") < raw.out.find("\"kind\":\"fit\""));
    std::size_t starts = 0;
    for (auto p = raw.err.find("worker-started"); p != std::string::npos; p = raw.err.find("worker-started", p + 1)) ++starts;
    CHECK(starts == 2);
    auto r = sh(bin() + "/prof-measure --worker-scope model --run /bin/true < /dev/null");
    CHECK(r.status == 64);
}

TEST_CASE("a worker that keeps 200 MiB after a cell is reported, naming the model") {
    run_result raw;
    auto v = run_cells(cells({"noop", "keep200", "noop"}), "--worker-scope run --warmup 0 --replay 0 --worker " + helper("worker"), &raw);
    REQUIRE(v.size() == 3);
    CHECK(raw.err.find("after the cell of keep200 on s1") != std::string::npos);
    CHECK(raw.err.find("a leak or a cache") != std::string::npos);
    CHECK(raw.err.find("cell of noop") == std::string::npos);
    CHECK(raw.err.find("measure keep200 with --worker-scope model") != std::string::npos);
}

TEST_CASE("under --worker-scope model the kept memory is the model's own: no advice to use that scope") {
    run_result raw;
    auto v = run_cells(cells({"keep200", "keep200"}), "--worker-scope model --warmup 0 --replay 0 --worker " + helper("worker"), &raw);
    REQUIRE(v.size() == 2);
    CHECK(raw.err.find("after the cell of keep200 on s0") != std::string::npos);
    CHECK(raw.err.find("this worker serves keep200 alone") != std::string::npos);
    CHECK(raw.err.find("--worker-scope model") == std::string::npos);
}

TEST_CASE("params travel to the worker's cell line, to {params} shell-quoted and {params_json} as is, and as a digest on the fit") {
    std::string lines = "{\"kind\":\"cell\",\"ts_id\":\"a\",\"model_type\":\"m\",\"params\":{\"z\":\"it's\",\"a\":[1, 2]}}\n"
                        "{\"kind\":\"cell\",\"ts_id\":\"b\",\"model_type\":\"m\"}\n";
    run_result raw;
    auto v = run_cells(lines, "--run 'sh -c \"printf \\\"%s|\\\" {params} >&2\"'", &raw);
    REQUIRE(v.size() == 2);
    CHECK(raw.err.find("{\"a\":[1,2],\"z\":\"it's\"}|") != std::string::npos);  // through a shell, whole
    CHECK(raw.err.find("{}|") != std::string::npos);                           // no params: {}
    // sha256 of {"a":[1,2],"z":"it's"}, computed with sha256sum
    CHECK(v[0].params_digest.value() == "861686feedd6a75e1f02c1ac82011a0c63397b758c179e2b24996eeb857333b9");
    CHECK_FALSE(v[1].params_digest.has_value());
    run_cells(lines, "--run 'printf %s {params_json}'", &raw);
    CHECK(raw.err.find("{\"a\":[1,2],\"z\":\"it's\"}{}") != std::string::npos);
    // The worker reads the cell line with its params.
    run_cells(lines, "--worker-scope run --warmup 0 --replay 0 --worker 'sh -c \"head -n1 >&2; echo {\\\\\\\"ok\\\\\\\":true} >&3\"'", &raw);
    CHECK(raw.err.find("\"params\":{\"a\":[1,2],\"z\":\"it's\"}") != std::string::npos);
}

TEST_CASE("params_digest is the SHA-256 of the params' canonical text") {
    // Known answers from coreutils' sha256sum: the canonical text of {"z":1,"a":[1,2]}, and FIPS 180-2's "abc".
    CHECK(params_digest("{\"a\":[1,2],\"z\":1}") == "603b715b8b879e0d1d6816dea2cde3b2242f214932b5f9fe606c53e3a01d1042");
    CHECK(params_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("the run's cgroup is made at its first fit: prof-measure still reading its input holds none" *
          doctest::skip(!cgroup_available())) {
    // prof-measure reads a fifo; 0.5 s in, no cell has come and its prof-measure.PID directory must
    // not exist; then one cell of 'sleep 5' is written, and within that fit the directory
    // appears (looked for every 0.1 s for up to 4 s: a slow host, UML under load, takes more
    // than 0.5 s to start the fit). Expected: "none" then "held" (at start, before, it was
    // "held" twice).
    std::string fifo = "/tmp/prof-test-lazy-cg-" + std::to_string(getpid());
    auto r = sh("d='" + probe_cgroup().parent + "'; f=" + fifo +
                "; rm -f $f; mkfifo $f; " + bin() + "/prof-measure -q --run 'sleep 5' < $f > /dev/null & pid=$!; "
                "exec 3> $f; sleep 0.5; if [ -d $d/prof-measure.$pid ]; then echo held; else echo none; fi; "
                "echo '{\"kind\":\"cell\",\"ts_id\":\"s0\",\"model_type\":\"m\"}' >&3; exec 3>&-; "
                "for i in $(seq 40); do [ -d $d/prof-measure.$pid ] && break; sleep 0.1; done; "
                "if [ -d $d/prof-measure.$pid ]; then echo held; else echo none; fi; wait $pid; echo $?; rm -f $f");
    CHECK(r.out == "none\nheld\n0\n");
}

TEST_CASE("SIGKILL of prof-measure leaves no cgroup behind: the launcher empties and removes them" *
          doctest::skip(!cgroup_available())) {
    std::string cell_file = "/tmp/prof-test-kill-cg-" + std::to_string(getpid());
    std::ofstream(cell_file) << cells({"m", "m"});
    CHECK_FALSE(survivors_after_sigkill("--memory-limit 256MiB --run 'sh -c \"setsid sleep $1 & sleep $2\" sh 57.25 58.25' < " + cell_file,
                                        "[s]leep 5[78].25"));
    CHECK_FALSE(survivors_after_sigkill("--worker 'sh -c \"setsid sleep $1 & exec sleep $2\" sh 59.25 60.25' < " + cell_file,
                                        "[s]leep (59|60).25"));
    unlink(cell_file.c_str());
    CHECK(leftover_cgroups() == 0);
}

// Starts prof-measure ARGS in the background and, once the fit is running with both processes
// matching PATTERN started (polled every 0.1 s for up to 30 s: a slow kernel or a busy host can
// take seconds to get there), kills it with SIGKILL together with its launcher: the parent of the
// process matching FIT (a process whose parent is a prof-measure image that is not prof-measure
// itself). Returns "no-launcher" when none was found in time, else whether any process matching
// PATTERN is left a second later.
std::string survivors_after_sigkill_with_launcher(const std::string& args, const std::string& fit,
                                                  const std::string& pattern) {
    auto r = sh(fmt::format(
        "{}/prof-measure {} & pid=$!; l=; i=0; "
        "while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); l=; "
        "for p in $(pgrep -f '{}'); do [ \"$(cat /proc/$p/comm)\" = prof-measure ] && continue; "
        "pp=$(awk '/^PPid:/{{print $2}}' /proc/$p/status); [ \"$pp\" != $pid ] && "
        "[ \"$(cat /proc/$pp/comm 2>/dev/null)\" = prof-measure ] && l=$pp; done; "
        "[ -n \"$l\" ] && [ $(pgrep -f '{}' | wc -l) -ge 2 ] && break; done; "
        "[ -n \"$l\" ] || echo no-launcher; kill -KILL $pid $l; wait $pid; sleep 1; "
        "pgrep -f '{}' >/dev/null && echo survivors || echo none-left",
        bin(), args, fit, pattern, pattern));
    if (r.out.find("no-launcher") != std::string::npos) return "no-launcher";
    return r.out.find("none-left") != std::string::npos ? "none-left" : "survivors";
}

TEST_CASE("SIGKILL of prof-measure and its launcher together leaves no fit and no descendant running") {
    // The fit's children are no children of the launcher: only a process that outlives both
    // (the launcher's parent, their subreaper) can find and kill them.
    CHECK(survivors_after_sigkill_with_launcher("-- sh -c 'setsid sleep \"$1\" & sleep \"$2\"' sh 65.25 66.25",
                                                "^sh -c .* 65.25", "[s]leep 6[56].25") == "none-left");
    std::string cell_file = "/tmp/prof-test-kill2-" + std::to_string(getpid());
    std::ofstream(cell_file) << cells({"m"});
    CHECK(survivors_after_sigkill_with_launcher("--run 'sh -c \"setsid sleep $1 & sleep $2\" sh 67.25 68.25' < " + cell_file,
                                                "^sh -c .* 67.25", "[s]leep 6[78].25") == "none-left");
    CHECK(survivors_after_sigkill_with_launcher("--worker 'sh -c \"setsid sleep $1 & exec sleep $2\" sh 69.25 70.25' < " + cell_file,
                                                "^slee[p] 70.25", "[s]leep (69|70).25") == "none-left");
    unlink(cell_file.c_str());
}

TEST_CASE("SIGKILL of prof-measure and its launcher together leaves no cgroup behind" * doctest::skip(!cgroup_available())) {
    std::string cell_file = "/tmp/prof-test-kill2-cg-" + std::to_string(getpid());
    std::ofstream(cell_file) << cells({"m", "m"});
    CHECK(survivors_after_sigkill_with_launcher("--memory-limit 256MiB --run 'sh -c \"setsid sleep $1 & sleep $2\" sh 71.25 72.25' < " + cell_file,
                                                "^sh -c .* 71.25", "[s]leep 7[12].25") == "none-left");
    CHECK(survivors_after_sigkill_with_launcher("--worker 'sh -c \"setsid sleep $1 & exec sleep $2\" sh 73.25 74.25' < " + cell_file,
                                                "^slee[p] 74.25", "[s]leep 7[34].25") == "none-left");
    unlink(cell_file.c_str());
    CHECK(leftover_cgroups() == 0);
}

// ---- OOM kills, the left-behind report and delegation --------------------------------------

TEST_CASE("an OOM kill of a child whose parent waits on it ends the fit within a second, in process and worker mode" *
          doctest::skip(!cgroup_available())) {
    // A parent that goes on waiting after its child is OOM-killed, as a joblib/loky or
    // multiprocessing parent waits for a dead worker: on cgroup v1 the kernel kills the child
    // alone. The parent writes the time it saw the death (the kill, within a scheduler tick)
    // to `killed`, then sleeps 61.5 s: the hang prof-measure must cut short. The time after
    // prof-measure has exited, in `ended`, must be within a second of it. Where the kernel
    // kills the whole group (v2, memory.oom.group) the parent writes nothing, and the fit
    // simply must not have hung.
    const std::string killed = "/tmp/prof-test-oom-killed-" + std::to_string(getpid()),
                      ended = "/tmp/prof-test-oom-ended-" + std::to_string(getpid());
    auto seconds_in = [](const std::string& path) {
        std::ifstream f(path);
        double t = -1;
        f >> t;
        std::remove(path.c_str());
        return t;
    };
    auto check_ended_soon = [&](double wall, const char* mode) {
        double t_killed = seconds_in(killed), t_ended = seconds_in(ended);
        MESSAGE(std::string(mode), ": wall ", wall, " s; from the parent seeing the kill to prof-measure's exit ",
                t_killed < 0 ? -1 : t_ended - t_killed, " s (-1: the kernel killed the whole group)");
        CHECK(wall < 30);
        if (t_killed >= 0) CHECK(t_ended - t_killed < 1.0);
    };
    std::remove(killed.c_str());
    auto r = sh(bin() + "/prof-measure --memory-limit 64MiB -- sh -c '" + helper("alloc") + " 200; date +%s.%N > " + killed +
                "; sleep 61.5'; date +%s.%N > " + ended);
    auto v = fits_of(r.out);
    REQUIRE_MESSAGE(v.size() == 1, r.err);
    CHECK_FALSE(v[0].ok);
    CHECK(v[0].oom_killed.value());
    CHECK(v[0].signal.value() == "SIGKILL");
    CHECK(v[0].cpu_s.has_value());
    CHECK(r.err.find("left behind") == std::string::npos);
    check_ended_soon(v[0].wall_s.value(), "process mode");
    // Worker mode: the worker waits on its OOM-killed child mid-cell; the cell ends with its
    // wall and CPU so far, the worker is restarted and the next cell measured.
    std::string script = "/tmp/prof-test-oom-worker-" + std::to_string(getpid()) + ".sh";
    std::ofstream(script) << "while read -r line; do\n  case $line in *'\"hog\"'*) " << helper("alloc") << " 200; date +%s.%N > "
                          << killed << "; sleep 61.75;; esac\n  echo '{\"ok\":true}' >&3\ndone\n";
    std::string cell_file = script + ".cells";
    std::ofstream(cell_file) << cells({"hog", "noop"});
    auto raw = sh(bin() + "/prof-measure --memory-limit 64MiB --worker-scope run --warmup 0 --replay 0 --worker 'sh " + script + "' < " + cell_file + "; date +%s.%N > " + ended);
    unlink(script.c_str());
    unlink(cell_file.c_str());
    auto w = fits_of(raw.out);
    REQUIRE_MESSAGE(w.size() == 2, raw.err);
    CHECK_FALSE(w[0].ok);
    CHECK(w[0].oom_killed.value());
    CHECK(w[0].error.value().find("out of memory") != std::string::npos);
    // The second cell came after the first ended: its time is in `ended`'s bound too, so
    // it must be quick (a no-op in a fresh worker).
    check_ended_soon(w[0].wall_s.value(), "worker mode");
    CHECK(w[0].cpu_s.has_value());
    CHECK(w[1].ok);
    CHECK_FALSE(w[1].oom_killed.value());
    CHECK(raw.err.find("left behind") == std::string::npos);
}

TEST_CASE("a fit's tree killed with it under --memory-limit is not reported as left behind; a real leftover still is" *
          doctest::skip(!cgroup_available())) {
    // Three children of 100 MiB under 128 MiB: the kernel kills one (v1) or the whole group
    // (v2, memory.oom.group), prof-measure the rest; none outlived the fit.
    auto r = sh(bin() + "/prof-measure --memory-limit 128MiB -- " + helper("forktree") + " 3 100 2");
    auto v = fits_of(r.out);
    REQUIRE_MESSAGE(v.size() == 1, r.err);
    CHECK(v[0].oom_killed.value());
    CHECK(r.err.find("left behind") == std::string::npos);
    // The control: a process that does outlive the fit is still counted.
    auto left = sh(bin() + "/prof-measure --memory-limit 128MiB -- sh -c 'sleep 63.25 & exit 0'");
    CHECK(left.err.find("1 process(es) left behind") != std::string::npos);
}

TEST_CASE("without a cgroup, the advice for a multi-process fit never says 'as root' to root") {
    auto r = sh(bin() + "/prof-measure --no-cgroup -- " + helper("forktree") + " 2 1 0.3");
    CHECK(r.status == 0);
    CHECK(r.err.find("ran 3 processes at once") != std::string::npos);
    if (geteuid() == 0) CHECK(r.err.find("as root") == std::string::npos);
    CHECK(r.err.find("without --no-cgroup") != std::string::npos);
}

namespace {
// This process's group in the unified hierarchy ("/" for its root), from the "0::" line.
std::string v2_group_of_self() {
    std::ifstream f("/proc/self/cgroup");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    return "";
}
bool in_nonroot_v2_group() { return cgroup_v2_available() && v2_group_of_self() != "/"; }
}  // namespace

TEST_CASE("cgroup v2 from a group holding processes: they move into its prof.leaf and the fits are measured below it" *
          doctest::skip(!in_nonroot_v2_group())) {
    // This process was in such a group (CG2_CGROUP, a session scope, a container's namespace
    // root); probing moved it, with the rest of the group, into prof.leaf.
    std::string own = v2_group_of_self();
    CHECK(own.size() > 10);
    CHECK(own.substr(own.size() - 10) == "/prof.leaf");
    // A fresh group holding a shell, a sleeper and prof-measure: prof-measure moves every
    // process of the group (its own helpers too) into the group's leaf, says so, and measures
    // tree-wide.
    std::string x = probe_cgroup().parent + "/prof-test-deleg-" + std::to_string(getpid());
    auto r = sh("mkdir " + x + " && sh -c 'echo $$ > " + x + "/cgroup.procs; sleep 64.25 & s=$!; " + bin() +
                "/prof-measure -- " + helper("forktree") + " 2 50 0.3; kill $s; wait $s' ; cat " + x +
                "/cgroup.subtree_control >&2; rmdir " + x + "/prof.leaf " + x);
    auto v = fits_of(r.out);
    REQUIRE_MESSAGE(v.size() == 1, r.err);
    CHECK(v[0].rss_method.value() == "cgroup-v2");
    CHECK(double(v[0].cgroup_peak_bytes.value()) >= 100 * mib);
    // The shell, the sleeper, prof-measure and its warden; the launcher too when the warden had
    // forked it before the move (it does so while prof-measure goes on), else it starts in the leaf.
    bool four = r.err.find("4 process(es) (prof-measure's included) were moved into " + x + "/prof.leaf") != std::string::npos;
    bool five = r.err.find("5 process(es) (prof-measure's included) were moved into " + x + "/prof.leaf") != std::string::npos;
    CHECK_MESSAGE((four || five), r.err);
    CHECK(r.err.find("\nmemory") != std::string::npos);  // enabled on the group
    CHECK(r.err.find("no cgroup") == std::string::npos);
}

TEST_CASE("cgroup v2 where the group is not delegated: the note says why and gives the systemd-run command" *
          doctest::skip(!in_nonroot_v2_group())) {
    // An unprivileged user in a group it cannot write: no cgroup, rusage, and the way out. The
    // group holds a process, so its parent cannot give it up either.
    std::string x = probe_cgroup().parent + "/prof-test-nodeleg-" + std::to_string(getpid());
    auto r = sh("mkdir " + x + " && sh -c 'echo $$ > " + x + "/cgroup.procs; exec setpriv --reuid=65534 --regid=65534 "
                "--clear-groups " + bin() + "/prof-measure -- " + helper("alloc") + " 20'; rmdir " + x);
    auto v = fits_of(r.out);
    REQUIRE_MESSAGE(v.size() == 1, r.err);
    CHECK(v[0].rss_method.value() == "rusage");
    CHECK(r.err.find("no cgroup (cgroup v2: " + x) != std::string::npos);
    CHECK(r.err.find("systemd-run --user --scope -p Delegate=yes") != std::string::npos);
}

TEST_CASE("replay runs the N - 1 heaviest sampled cells lightest first, then the heaviest again") {
    std::vector<sampled_cell> cells = {{0, 300, 10}, {1, 900, 50}, {2, 100, 90}, {3, 900, 40}, {4, std::nullopt, 1000}};
    // By reading, then n_obs: 4 (none), 2 (100), 0 (300), 3 (900, n 40), 1 (900, n 50).
    CHECK(replay_cells(cells, 3) == std::vector<std::size_t>{3, 1, 1});
    CHECK(replay_cells(cells, 1) == std::vector<std::size_t>{1});
    CHECK(replay_cells(cells, 0).empty());
    CHECK(replay_cells({}, 3).empty());
    // More runs than cells: every cell once, lightest first, then the heaviest again.
    CHECK(replay_cells({{7, 5, 1}, {8, 6, 1}}, 9) == std::vector<std::size_t>{7, 8, 8});
}

TEST_CASE("worker mode by default: a warm-up run marked cold first, the cells, then three replay runs") {
    run_result raw;
    auto all = run_cells(cells({"noop", "noop"}), "--worker " + helper("worker"), &raw);
    std::vector<std::string> phases;
    for (const auto& f : all) phases.push_back(f.phase + (f.cold.value() ? "(cold)" : ""));
    // With a second CPU, a second worker warms up and replays the same cells beside the first.
    const bool beside = allowed_cpu_count() >= 2;
    std::vector<std::string> want{"warmup(cold)", "sample", "sample"};
    if (beside) want.push_back("warmup(cold)");
    for (int k = 0; k < (beside ? 6 : 3); ++k) want.push_back("replay");
    CHECK(phases == want);
    CHECK(all[0].ts_id == "s0");
    CHECK(all[1].ts_id == "s0");
    // The first worker's lifetime peak never falls: it is never reset.
    std::vector<std::size_t> first{0, 1, 2};
    for (std::size_t i = beside ? 4 : 3; i < (beside ? 7u : all.size()); ++i) first.push_back(i);
    for (std::size_t k = 1; k < first.size(); ++k)
        CHECK(all[first[k]].worker_peak_bytes.value() >= all[first[k - 1]].worker_peak_bytes.value());
    CHECK(raw.err.find(beside ? "2 cell(s) measured, 0 failed; 2 warm-up and 6 replay run(s) beside them"
                              : "2 cell(s) measured, 0 failed; 1 warm-up and 3 replay run(s) beside them") != std::string::npos);
    // Process mode: every cell is its own cold process, with no worker peak.
    auto proc = one_fit("-- /bin/true");
    CHECK(proc.phase == "sample");
    CHECK(proc.cold.value());
    CHECK_FALSE(proc.worker_peak_bytes.has_value());
    CHECK(sh(bin() + "/prof-measure --run /bin/true --warmup 1 < /dev/null").status == 64);
}

TEST_CASE("a worker that keeps 200 MiB per cell: the replay's worker peak reads three cells' worth") {
    // keep200 allocates, touches and keeps 200 MiB at each cell. The sample's one cell reads about
    // 200 MiB over the worker's footprint; replaying it twice (--replay 2: the heaviest, then the
    // heaviest again) leaves the worker holding 600 MiB, which its lifetime peak must show.
    const double mib200 = 200.0 * 1048576;
    run_result raw;
    // Once per cell: a retry on a busy host would run in a worker already holding 200 MiB more.
    // The replay in the sample's worker alone: a second worker beside it would hold only its own.
    auto v = run_cells(cells({"keep200"}), "--no-cgroup --remeasure-busy 0 --warmup 0 --replay 2 --replay-alone --worker " +
                                               helper("worker"), &raw);
    REQUIRE(v.size() == 3);
    CHECK(v[0].phase == "sample");
    CHECK(v[2].phase == "replay");
    MESSAGE("sample ", double(v[0].process_rss_bytes.value()) / mib, " MiB; last replay's worker peak ",
            double(v[2].worker_peak_bytes.value()) / mib, " MiB");
    CHECK(double(v[0].process_rss_bytes.value()) < 1.2 * mib200);
    CHECK(double(v[2].worker_peak_bytes.value()) >= 3 * mib200);
    CHECK(double(v[2].worker_peak_bytes.value()) < 3.3 * mib200);
}
