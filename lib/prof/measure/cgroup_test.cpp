// The readers of cgroup.hpp and the pressure readers of measure.hpp, on texts as the kernel
// writes them (values worked out by hand in the comments).
#include "prof/measure/cgroup.hpp"
#include "prof/measure/measure.hpp"

#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("/proc/self/cgroup lines give each hierarchy's controllers and our group in it") {
    auto v = parse_proc_cgroup("4:memory:/process_api/734\n2:cpu,cpuacct:/\n0::/user.slice/x.scope\n");
    REQUIRE(v.size() == 3);
    CHECK(v[0].controllers == std::vector<std::string>{"memory"});
    CHECK(v[0].path == "/process_api/734");
    CHECK(v[1].controllers == std::vector<std::string>{"cpu", "cpuacct"});
    CHECK(v[2].controllers.empty());  // the v2 line
    CHECK(v[2].path == "/user.slice/x.scope");
}

TEST_CASE("mountinfo gives the cgroup mounts, their roots and v1 controllers, and skips the rest") {
    auto v = parse_cgroup_mounts(
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "36 31 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory\n"
        "40 31 0:35 /kubepods/pod1 /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n");
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].v2);
    CHECK(v[0].mount_point == "/sys/fs/cgroup/memory");
    CHECK(v[0].controllers == std::vector<std::string>{"rw", "memory"});
    CHECK(v[1].v2);
    CHECK(v[1].root == "/kubepods/pod1");
}

TEST_CASE("stat_value reads one key of a key-value file and no prefix of another key") {
    std::string stat = "cache 1515520\nrss 221184\ntotal_cache 3207475200\ntotal_shmem 9084928\n";
    CHECK(stat_value(stat, "cache").value() == 1515520);
    CHECK(stat_value(stat, "total_cache").value() == 3207475200ULL);
    CHECK_FALSE(stat_value(stat, "total").has_value());
    CHECK(stat_value("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", "oom_kill").value() == 2);
}

TEST_CASE("PSI's some total and /proc/stat's CPU columns and run queue are read") {
    CHECK(psi_some_total_us("some avg10=2.28 avg60=1.27 avg300=0.72 total=6611517\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
              .value() == 6611517);
    CHECK_FALSE(psi_some_total_us("full avg10=0.00 total=5\n").has_value());
    // user 10 nice 1 system 5 idle 100 iowait 2 irq 0 softirq 1 steal 7 (guest columns ignored):
    // total = 10+1+5+100+2+0+1+7 = 126
    auto st = parse_proc_stat("cpu  10 1 5 100 2 0 1 7 3 0\ncpu0 5 0 2 50 1 0 0 3 0 0\nprocs_running 4\nprocs_blocked 0\n");
    REQUIRE(st);
    CHECK(st->total == 126);
    CHECK(st->steal == 7);
    CHECK(st->procs_running == 4);
    // cpu0: busy = user 5 + nice 0 + system 2 + irq 0 + softirq 0 = 7, steal 3, total 61.
    REQUIRE(st->cpus.size() == 1);
    CHECK(st->cpus[0].present);
    CHECK(st->cpus[0].busy == 7);
    CHECK(st->cpus[0].steal == 3);
    CHECK(st->cpus[0].total == 61);
    // A CPU without a line (offline cpu1) is there, all zero, not present.
    auto gap = parse_proc_stat("cpu  4 0 0 4\ncpu0 2 0 0 2\ncpu2 2 1 1 2 0 3 4 0\nprocs_running 1\n");
    REQUIRE(gap);
    REQUIRE(gap->cpus.size() == 3);
    CHECK_FALSE(gap->cpus[1].present);
    CHECK(gap->cpus[2].busy == 2 + 1 + 1 + 3 + 4);
    CHECK_FALSE(parse_proc_stat("cpu  1 2 3 4\n").has_value());  // no procs_running
}

TEST_CASE("measure_order groups by family or model in the order of first appearance, input order within") {
    std::vector<cell> c = {{"a", "theta", "stat", {}}, {"a", "lgbm", "ml", {}}, {"b", "theta", "stat", {}}, {"b", "ets", "stat", {}}, {"c", "lgbm", "ml", {}}};
    CHECK(measure_order(c, worker_scope::run) == std::vector<std::size_t>{0, 1, 2, 3, 4});
    CHECK(measure_order(c, worker_scope::family) == std::vector<std::size_t>{0, 2, 3, 1, 4});  // stat, then ml
    CHECK(measure_order(c, worker_scope::model) == std::vector<std::size_t>{0, 2, 1, 4, 3});   // theta, lgbm, ets
    CHECK_THROWS_AS(parse_worker_scope("series"), usage_error);
}

TEST_CASE("the contention warning names contended fits only: pressure >= 0.1 over >= 0.1 s") {
    measured_fit busy, short_busy, idle;
    busy.ts_id = "s1", busy.model_type = "theta", busy.wall_s = 2, busy.cpu_pressure = 0.4;
    short_busy.ts_id = "s2", short_busy.model_type = "theta", short_busy.wall_s = 0.05, short_busy.cpu_pressure = 0.9;
    idle.ts_id = "s3", idle.model_type = "theta", idle.wall_s = 2, idle.cpu_pressure = 0.02;
    auto w = contention_warning({busy, short_busy, idle});
    REQUIRE(w);
    CHECK(w->find("1 of 3 fits") != std::string::npos);
    CHECK(w->find("theta on s1 (40%)") != std::string::npos);
    CHECK(w->find("s2") == std::string::npos);
    CHECK_FALSE(contention_warning({idle, short_busy}).has_value());
}

TEST_CASE("the delegation advice gives the systemd-run command, and says 'as root' only to a process that is not root") {
    std::string root = cgroup_delegation_advice(true), user = cgroup_delegation_advice(false);
    CHECK(root.find("systemd-run --scope -p Delegate=yes prof-measure") != std::string::npos);
    CHECK(root.find("as root") == std::string::npos);
    CHECK(root.find("--cgroupns=private") != std::string::npos);
    CHECK(user.find("as root") != std::string::npos);
    CHECK(user.find("systemd-run --user --scope -p Delegate=yes prof-measure") != std::string::npos);
}
