// prof-measure --jobs: several fits at once, each on its own CPU set, measured as if alone
// (real children: sleepers, burners, a worker; their affinity as the kernel reports it).
#include "prof/measure/measure_test_support.hpp"

#include "prof/core/cpus.hpp"
#include "prof/core/test_support.hpp"

#include <doctest/doctest.h>
#include <set>

namespace {
// Cells of series s0 .. s{n-1}, each series' cells one per model in the order given.
std::string n_cells(int n, std::initializer_list<const char*> models) {
    std::string s;
    for (int i = 0; i < n; ++i)
        for (const char* m : models)
            s += fmt::format("{{\"kind\":\"cell\",\"ts_id\":\"s{}\",\"model_type\":\"{}\"}}\n", i, m);
    return s;
}
// prof-measure's arguments for the test worker, with no warm-up and no replay run. These tests
// time fits side by side and count their records: each cell runs once (--remeasure-busy 0), as
// a busy host would otherwise run a sleeper again (remeasure_test.cpp covers --jobs retries).
std::string worker_args() { return "--remeasure-busy 0 --warmup 0 --replay 0 --worker " + helper("worker"); }
bool two_cpus() { return allowed_cpu_count() >= 2; }
}  // namespace

TEST_CASE("the overlap tracker counts the most fits that ran beside each one") {
    overlap_tracker t;
    auto a = t.begin();  // a alone
    auto b = t.begin();  // a and b
    auto c = t.begin();  // a, b and c: two beside each
    CHECK(t.end(b) == 2);
    CHECK(t.end(c) == 2);
    auto d = t.begin();  // a and d
    CHECK(t.end(a) == 2);
    CHECK(t.end(d) == 1);
    auto e = t.begin();
    CHECK(t.end(e) == 0);  // alone
}

TEST_CASE("--jobs 2 runs four 0.6 s sleepers in about half the wall, records in input order" * doctest::skip(!two_cpus())) {
    const double t0 = monotonic_seconds();
    run_result raw;
    auto v = run_cells(n_cells(4, {"nap"}), "--remeasure-busy 0 --jobs 2 --run 'sleep 0.6'", &raw);
    const double took = monotonic_seconds() - t0;
    REQUIRE(v.size() == 4);
    MESSAGE("4 x 0.6 s sleepers with --jobs 2: ", took, " s");
    CHECK(took < 1.9);  // one after another: at least 2.4 s
    for (int i = 0; i < 4; ++i) {
        CHECK(v[i].ts_id == fmt::format("s{}", i));
        CHECK(v[i].ok);
        CHECK(std::abs(v[i].wall_s.value() - 0.6) < 0.15);
        CHECK(v[i].concurrent_fits.value() >= 1);
        CHECK(v[i].concurrent_fits.value() <= 1);
    }
    CHECK(raw.out.find("\"concurrent_fits\":1") != std::string::npos);
    // --jobs 1 (the default) writes no such field.
    auto one = run_cells(n_cells(1, {"nap"}), "--remeasure-busy 0 --run 'sleep 0.01'", &raw);
    CHECK(raw.out.find("concurrent_fits") == std::string::npos);
}

TEST_CASE("--jobs 2 binds fits running at once to disjoint CPUs, as the kernel reports them" * doctest::skip(!two_cpus())) {
    std::string out = "/tmp/prof-test-affinity-" + std::to_string(getpid());
    auto v = run_cells(n_cells(4, {"aff"}),
                       "--remeasure-busy 0 --jobs 2 --child-output " + out +
                           " --run 'sh -c \"grep Cpus_allowed_list: /proc/self/status; sleep 0.4\"'");
    REQUIRE(v.size() == 4);
    std::ifstream in(out);
    std::string line;
    std::set<std::string> seen;
    int lines = 0;
    while (std::getline(in, line)) {
        ++lines;
        auto tab = line.find_last_of(" \t");
        std::string cpus = line.substr(tab + 1);
        CHECK(cpus.find_first_of(",-") == std::string::npos);  // one CPU each (--threads 1)
        seen.insert(cpus);
    }
    unlink(out.c_str());
    CHECK(lines == 4);
    CHECK(seen.size() == 2);  // two sets, one per thread, never the same CPU for both
}

TEST_CASE("--jobs 2 burners read the CPU and memory they read one at a time") {
    // burn spends 0.4 s of its own thread's CPU however the scheduler treats it; alloc touches
    // 120 MiB. Their readings must not move with a neighbour.
    auto burn = run_cells(n_cells(4, {"burn"}), "--remeasure-busy 0 --run '" + helper("burn") + " 1 0.4'");
    auto burn2 = run_cells(n_cells(4, {"burn"}), "--remeasure-busy 0 --jobs 2 --run '" + helper("burn") + " 1 0.4'");
    auto mem = run_cells(n_cells(2, {"alloc"}), "--remeasure-busy 0 --run '" + helper("alloc") + " 120'");
    auto mem2 = run_cells(n_cells(2, {"alloc"}), "--remeasure-busy 0 --jobs 2 --run '" + helper("alloc") + " 120'");
    REQUIRE(burn.size() == 4);
    REQUIRE(burn2.size() == 4);
    for (int i = 0; i < 4; ++i) {
        CHECK(burn2[i].cpu_s.value() == doctest::Approx(burn[i].cpu_s.value()).epsilon(0.1));
        CHECK(burn2[i].cpu_s.value() >= 0.4);
    }
    REQUIRE(mem.size() == 2);
    REQUIRE(mem2.size() == 2);
    for (int i = 0; i < 2; ++i) {
        MESSAGE("alloc 120 MiB: --jobs 1 ", mem[i].process_rss_bytes.value(), " B, --jobs 2 ", mem2[i].process_rss_bytes.value(), " B");
        CHECK(double(mem2[i].process_rss_bytes.value()) == doctest::Approx(double(mem[i].process_rss_bytes.value())).epsilon(0.02));
        if (mem[i].cgroup_peak_bytes && mem2[i].cgroup_peak_bytes)
            CHECK(double(*mem2[i].cgroup_peak_bytes) == doctest::Approx(double(*mem[i].cgroup_peak_bytes)).epsilon(0.05));
    }
}

TEST_CASE("--jobs 2 with --timeout stops every fit in flight, each recorded") {
    const double t0 = monotonic_seconds();
    run_result raw;
    std::string path = "/tmp/prof-test-jobs-timeout-" + std::to_string(getpid());
    std::ofstream(path) << n_cells(4, {"slow"});
    // The duration travels as $1, so this shell's own command line never matches the pattern.
    raw = sh(fmt::format("sh -c '{}/prof-measure --jobs 2 --timeout 300ms --run \"sleep $1\" < {}; echo status=$?; "
                         "pgrep -f \"[s]leep $1\" || echo none-left' sh 63.5", bin(), path));
    unlink(path.c_str());
    const double took = monotonic_seconds() - t0;
    CHECK(raw.out.find("status=0") != std::string::npos);
    CHECK(raw.out.find("none-left") != std::string::npos);
    auto v = fits_of(raw.out.substr(0, raw.out.find("status=")));
    REQUIRE(v.size() == 4);
    for (const auto& f : v) {
        CHECK_FALSE(f.ok);
        CHECK(f.error.value().find("timeout") != std::string::npos);
    }
    CHECK(took < 3.0);
}

TEST_CASE("SIGTERM with two fits in flight records both as interrupted, leaves nothing running, exits 143" *
          doctest::skip(!two_cpus())) {
    std::string path = "/tmp/prof-test-jobs-term-" + std::to_string(getpid());
    std::ofstream(path) << n_cells(4, {"slow"});
    auto r = sh(fmt::format("sh -c '{}/prof-measure --jobs 2 --run \"sh -c \\\"setsid sleep \\$1 & sleep \\$1\\\" sh $1\" < {} & pid=$!; "
                            "for i in $(seq 100); do [ $(pgrep -fc \"^slee[p] $1\") -ge 4 ] && break; sleep 0.05; done; "
                            "sleep 0.3; kill -TERM $pid; wait $pid; echo status=$?; sleep 0.3; "
                            "pgrep -f \"[s]leep $1\" || echo none-left' sh 64.5", bin(), path));
    unlink(path.c_str());
    CHECK(r.out.find("status=143") != std::string::npos);
    CHECK(r.out.find("none-left") != std::string::npos);
    auto v = fits_of(r.out.substr(0, r.out.find("status=")));
    REQUIRE(v.size() == 2);  // the two in flight; the other two never started
    for (int i = 0; i < 2; ++i) {
        CHECK(v[i].ts_id == fmt::format("s{}", i));
        CHECK_FALSE(v[i].ok);
        CHECK(v[i].error.value().find("interrupted: prof-measure received SIGTERM") != std::string::npos);
        CHECK(v[i].concurrent_fits.value() == 1);
    }
}

TEST_CASE("--jobs 2 runs one warm worker per model at once, records grouped as under --jobs 1" * doctest::skip(!two_cpus())) {
    // napA and napB cells sleep 0.4 s each in the worker: the wall does not depend on the load.
    const std::string lines = n_cells(3, {"napA", "napB"}), args = worker_args();
    auto one = run_cells(lines, args);
    const double t0 = monotonic_seconds();
    auto two = run_cells(lines, "--jobs 2 " + args);
    const double took = monotonic_seconds() - t0;
    REQUIRE(one.size() == 6);
    REQUIRE(two.size() == 6);
    MESSAGE("two workers side by side: ", took, " s for 6 naps of 0.4 s");
    CHECK(took < 2.0);  // one after another: at least 2.4 s
    for (int i = 0; i < 6; ++i) {
        CHECK(two[i].model_type == one[i].model_type);  // napA's three, then napB's
        CHECK(two[i].ts_id == one[i].ts_id);
        CHECK(two[i].ok);
        CHECK(two[i].concurrent_fits.value() == 1);
    }
}

TEST_CASE("--jobs 2 warm workers read the CPU they read one at a time") {
    const std::string lines = n_cells(2, {"spinA", "spinB"}), args = worker_args();
    auto one = run_cells(lines, args);
    auto two = run_cells(lines, "--jobs 2 " + args);
    REQUIRE(one.size() == 4);
    REQUIRE(two.size() == 4);
    for (int i = 0; i < 4; ++i) {
        CHECK(two[i].model_type == one[i].model_type);
        CHECK(two[i].cpu_s.value() >= 0.4);
        CHECK(two[i].cpu_s.value() == doctest::Approx(one[i].cpu_s.value()).epsilon(0.1));
    }
}

TEST_CASE("--jobs is refused where it cannot apply") {
    auto r = sh(bin() + "/prof-measure --jobs 0 --run true </dev/null");
    CHECK(r.status == 64);
    CHECK(r.err.find("--jobs must be at least 1") != std::string::npos);
    r = sh(bin() + "/prof-measure --jobs 2 --threads 0 --run true </dev/null");
    CHECK(r.status == 64);
    CHECK(r.err.find("needs a thread cap") != std::string::npos);
    r = sh(bin() + "/prof-measure --jobs 2 -- true");
    CHECK(r.status == 64);
    r = sh(bin() + "/prof-measure --jobs 2 --worker-scope run --worker true </dev/null");
    CHECK(r.status == 64);
}

namespace {
// Cells of series s0 .. s{n-1} of `model`, of lengths 100, 200, ...
std::string cells_with_lengths(int n, const char* model) {
    std::string s;
    for (int i = 0; i < n; ++i)
        s += fmt::format("{{\"kind\":\"cell\",\"ts_id\":\"s{}\",\"model_type\":\"{}\",\"n_obs\":{}}}\n", i, model, 100 * (i + 1));
    return s;
}
std::vector<std::string> phases_of(const std::vector<measured_fit>& v) {
    std::vector<std::string> out;
    for (const auto& f : v) out.push_back(f.phase);
    return out;
}
}  // namespace

TEST_CASE("the replay runs in a second worker beside the first, and a sleeper reads no slowdown" * doctest::skip(!two_cpus())) {
    // nap cells sleep 0.4 s: as long beside a neighbour as alone, so the profile's ratio of the
    // replayed walls to the sample's reads about 1, and the two replays overlap in time.
    run_result raw;
    const double t0 = monotonic_seconds();
    auto v = run_cells(cells_with_lengths(3, "nap"), "--remeasure-busy 0 --warmup 1 --replay 2 --worker " + helper("worker"), &raw);
    const double took = monotonic_seconds() - t0;
    REQUIRE(phases_of(v) == std::vector<std::string>{"warmup", "sample", "sample", "sample", "warmup", "replay", "replay",
                                                     "replay", "replay"});
    // The second worker warms up, cold and alone, on the shortest sampled cell.
    CHECK(v[4].ts_id == "s0");
    CHECK(v[4].cold.value());
    CHECK_FALSE(v[4].concurrent_fits.has_value());
    // Both replay the same cells (--replay 2: the second heaviest, then the heaviest), warm, and
    // every replay run had the other worker's beside it.
    CHECK(v[5].ts_id == v[7].ts_id);
    CHECK(v[6].ts_id == v[8].ts_id);
    // How far each worker's history reaches: the first ran the whole sample (up to 300), the
    // second its warm-up (100) and then the replay's cells (which two, of equal memory, is
    // the noise's choice).
    CHECK(v[3].worker_max_n_obs.value() == 300);
    CHECK(v[4].worker_max_n_obs.value() == 100);
    CHECK(v[5].worker_max_n_obs.value() == 300);
    CHECK(v[7].worker_max_n_obs.value() == std::max<std::uint64_t>(100, v[7].n_obs.value()));
    CHECK(v[8].worker_max_n_obs.value() == std::max(v[7].worker_max_n_obs.value(), v[8].n_obs.value()));
    for (int i = 5; i < 9; ++i) {
        CHECK_FALSE(v[i].cold.value());
        CHECK(v[i].concurrent_fits.value() == 1);
        CHECK(v[i].wall_s.value() < 0.6);
    }
    // Five naps one after another (2 s), then two pairs side by side (0.8 s); one worker after
    // the other would take 1.6 s more. Under ASan each process's start (its shadow memory) adds
    // about a tenth of a second, and there were 3.51 s on a busy host: the bound there is 3.9,
    // still 0.5 s short of the naps alone one after another.
    MESSAGE("warm-ups, sample and replay beside: ", took, " s");
    CHECK(took < (test::sanitized_build ? 3.9 : 3.4));
    CHECK(raw.err.find("3 cell(s) measured, 0 failed; 2 warm-up and 4 replay run(s) beside them") != std::string::npos);
    // The profile reads the neighbour's cost from them: about nothing for a sleeper.
    const std::string path = "/tmp/prof-test-beside-" + std::to_string(getpid());
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        REQUIRE(f);
        std::fputs(raw.out.c_str(), f);
        std::fclose(f);
    }
    auto agg = sh(bin() + "/prof-aggregate " + path);
    std::remove(path.c_str());
    REQUIRE(agg.status == 0);
    const auto at = agg.out.find("\"beside_slowdown\":");
    if (at == std::string::npos) {
        // Left out only when every replay run read a busy host (a loaded test machine).
        for (int i = 5; i < 9; ++i) CHECK(v[i].cpu_pressure.value_or(0) >= contended_cpu_pressure);
        return;
    }
    const double slowdown = std::stod(agg.out.substr(at + 18));
    MESSAGE("beside_slowdown of nap: ", slowdown);
    CHECK(slowdown > 0.9);
    CHECK(slowdown < 1.25);
    CHECK((agg.out.find("\"n_beside\":") != std::string::npos));
}

TEST_CASE("--replay-alone replays in the sample's worker only; it is refused outside worker mode") {
    auto v = run_cells(cells_with_lengths(2, "noop"), "--remeasure-busy 0 --warmup 0 --replay 2 --replay-alone --worker " +
                                                          helper("worker"));
    CHECK(phases_of(v) == std::vector<std::string>{"sample", "sample", "replay", "replay"});
    for (const auto& f : v) CHECK_FALSE(f.concurrent_fits.has_value());
    auto r = sh(bin() + "/prof-measure --replay-alone --run true </dev/null");
    CHECK(r.status == 64);
    CHECK(r.err.find("--replay-alone applies to --worker only") != std::string::npos);
}

TEST_CASE("under --jobs 2 the replay stays in each worker: its fits run beside others already" * doctest::skip(!two_cpus())) {
    auto v = run_cells(n_cells(1, {"noopA", "noopB"}), "--jobs 2 --remeasure-busy 0 --warmup 0 --replay 1 --worker " +
                                                           helper("worker"));
    CHECK(phases_of(v) == std::vector<std::string>{"sample", "replay", "sample", "replay"});
}
