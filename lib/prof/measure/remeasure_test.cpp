// prof-measure --remeasure-busy against real contention: a busy loop pinned to the fit's CPU for
// a bounded time, so the first attempt at a cell reads a busy host and a later one does not.
#include "prof/measure/measure_test_support.hpp"

#include "prof/core/cpus.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <map>
#include <sched.h>
#include <sys/wait.h>

namespace {

// A busy loop on each CPU of `cpus` for `seconds`, from now; killed and reaped on destruction
// (also when a check throws).
class cpu_hogs {
public:
    cpu_hogs(const std::vector<int>& cpus, double seconds) {
        const double until = monotonic_seconds() + seconds;
        for (int cpu : cpus) {
            const pid_t pid = fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof one, &one);
                std::atomic<unsigned long> spin{0};
                while (monotonic_seconds() < until)
                    for (int i = 0; i < 100000; ++i) spin.fetch_add(1, std::memory_order_relaxed);
                _exit(0);
            }
            pids_.push_back(pid);
        }
    }
    ~cpu_hogs() {
        for (pid_t pid : pids_) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }

private:
    std::vector<pid_t> pids_;
};

// The records of prof-measure ARGS over CELLS, superseded attempts included.
std::vector<measured_fit> all_attempts(const std::string& cell_lines, const std::string& args, run_result& raw) {
    run_cells(cell_lines, args, &raw);
    return fits_of(raw.out, true);
}

// Each cell's attempts obey the contract: they come out together, in the order they ran; every
// attempt but the last was contended (that is why the next one ran); exactly one is of the
// sample, the least contended (the first of equals: strictly less than those before it),
// carrying `attempts` when there were several; every other one is superseded. Returns the
// number of attempts per ts_id.
std::map<std::string, std::size_t> check_attempts(const std::vector<measured_fit>& all) {
    std::map<std::string, std::vector<const measured_fit*>> by_cell;
    std::string last;
    for (const auto& f : all) {
        if (!by_cell[f.ts_id].empty()) CHECK_MESSAGE(f.ts_id == last, "a cell's attempts come out together");
        by_cell[f.ts_id].push_back(&f);
        last = f.ts_id;
    }
    std::map<std::string, std::size_t> out;
    for (const auto& [ts, tries] : by_cell) {
        out[ts] = tries.size();
        std::size_t counted = 0;
        const measured_fit* kept = nullptr;
        for (std::size_t i = 0; i < tries.size(); ++i) {
            const measured_fit& f = *tries[i];
            CHECK(f.ok);
            if (f.phase == fit_phase_sample) {
                ++counted;
                kept = &f;
            } else {
                CHECK(f.phase == fit_phase_superseded);
                CHECK_FALSE(f.attempts.has_value());
            }
            if (i + 1 < tries.size()) CHECK_MESSAGE(contended(f), ts, " attempt ", i + 1, " ran again");
        }
        REQUIRE(counted == 1);
        if (tries.size() > 1) CHECK(kept->attempts.value() == tries.size());
        else CHECK_FALSE(kept->attempts.has_value());
        for (const measured_fit* f : tries)
            if (f != kept) CHECK(kept->cpu_pressure.value() <= f->cpu_pressure.value());
        for (const measured_fit* f : tries) {
            if (f == kept) break;
            CHECK(kept->cpu_pressure.value() < f->cpu_pressure.value());
        }
    }
    return out;
}

bool two_cpus() { return allowed_cpu_count() >= 2; }
int first_cpu() { return allowed_cpus().front(); }  // --threads 1 binds the fit there

}  // namespace

TEST_CASE("--run: a cell read beside a hog on its CPU runs again, and the least contended attempt counts" *
          doctest::skip(!two_cpus())) {
    // The hog takes half the fit's CPU for 0.8 s: the first attempt (0.3 CPU-seconds, about
    // 0.6 s beside it) reads about 50%; at most two more attempts follow.
    run_result raw;
    std::vector<measured_fit> all;
    {
        cpu_hogs hog({first_cpu()}, 0.8);
        all = all_attempts(cells({"m"}), "--threads 1 --remeasure-busy 2 --run '" + helper("burn") + " 1 0.3'", raw);
    }
    REQUIRE(!all.empty());
    MESSAGE("attempts' pressure: ", all.front().cpu_pressure.value_or(-1), " ... ", all.back().cpu_pressure.value_or(-1));
    CHECK(all.front().pressure_method.value() == "cpu-set");
    CHECK(all.front().cpu_pressure.value() >= 0.3);
    auto n = check_attempts(all);
    CHECK(n.at("s0") >= 2);
    CHECK(n.at("s0") <= 3);
    CHECK(raw.err.find("1 measured again on a busy host") != std::string::npos);
}

TEST_CASE("--remeasure-busy 0 measures a contended cell once, with no attempts field" * doctest::skip(!two_cpus())) {
    run_result raw;
    std::vector<measured_fit> all;
    {
        cpu_hogs hog({first_cpu()}, 0.8);
        all = all_attempts(cells({"m"}), "--threads 1 --remeasure-busy 0 --run '" + helper("burn") + " 1 0.3'", raw);
    }
    REQUIRE(all.size() == 1);
    CHECK(contended(all[0]));
    CHECK(all[0].phase == fit_phase_sample);
    CHECK(raw.out.find("\"attempts\"") == std::string::npos);
    CHECK(raw.out.find("superseded") == std::string::npos);
    CHECK(raw.err.find("measured again") == std::string::npos);
    CHECK(raw.err.find("measured on a busy host") != std::string::npos);  // the end warning names it
}

TEST_CASE("--worker: a contended cell of the sample runs again in the same worker" * doctest::skip(!two_cpus())) {
    // spin burns 0.4 CPU-seconds: about 0.8 s beside a hog of 0.7 s, alone afterwards.
    run_result raw;
    std::vector<measured_fit> all;
    {
        cpu_hogs hog({first_cpu()}, 0.7);
        all = all_attempts(cells({"spin"}), "--threads 1 --warmup 0 --replay 0 --worker " + helper("worker"), raw);
    }
    REQUIRE(!all.empty());
    CHECK(all.front().cpu_pressure.value() >= 0.3);
    auto n = check_attempts(all);
    CHECK(n.at("s0") >= 2);
    CHECK(n.at("s0") <= 3);  // the default: two more attempts at most
    // One worker served them all: only the first attempt found it cold.
    CHECK(all.front().cold.value());
    for (std::size_t i = 1; i < all.size(); ++i) CHECK_FALSE(all[i].cold.value());
}

TEST_CASE("--jobs 2: each cell's attempts stay together and in input order" * doctest::skip(!two_cpus())) {
    run_result raw;
    std::vector<measured_fit> all;
    {
        cpu_hogs hog(allowed_cpus(), 0.8);  // a hog on each CPU: both first attempts read busy
        all = all_attempts(cells({"m", "m"}), "--threads 1 --jobs 2 --run '" + helper("burn") + " 1 0.3'", raw);
    }
    REQUIRE(!all.empty());
    CHECK(all.front().ts_id == "s0");
    CHECK(all.back().ts_id == "s1");
    auto n = check_attempts(all);
    REQUIRE(n.size() == 2);
    CHECK(n.at("s0") >= 2);
    CHECK(n.at("s1") >= 2);
}

TEST_CASE("a failed cell is not run again, however busy the host") {
    // exit 3 after 0.3 s of CPU: a failure, whatever the pressure.
    run_result raw;
    std::vector<measured_fit> all;
    {
        cpu_hogs hog({first_cpu()}, 0.8);
        all = all_attempts(cells({"m"}), "--threads 1 --run 'sh -c \"" + helper("burn") + " 1 0.3; exit 3\"'", raw);
    }
    REQUIRE(all.size() == 1);
    CHECK_FALSE(all[0].ok);
    CHECK_FALSE(all[0].attempts.has_value());
}
