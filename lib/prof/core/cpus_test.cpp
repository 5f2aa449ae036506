// The CPUs this process may use, against the kernel's own affinity mask.
#include "prof/core/cpus.hpp"

#include <filesystem>
#include <fstream>
#include <sched.h>
#include <stdlib.h>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("the allowed CPUs are the affinity mask's, and shrink with it") {
    cpu_set_t old_set;
    CPU_ZERO(&old_set);
    REQUIRE(sched_getaffinity(0, sizeof old_set, &old_set) == 0);
    std::vector<int> all = allowed_cpus();
    CHECK(all.size() == static_cast<std::size_t>(CPU_COUNT(&old_set)));
    CHECK(allowed_cpu_count() == all.size());
    // Pinned to the last allowed CPU alone, the rule sees that one CPU.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(all.back(), &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    std::vector<int> pinned = allowed_cpus();
    unsigned n = allowed_cpu_count();
    REQUIRE(sched_setaffinity(0, sizeof old_set, &old_set) == 0);
    CHECK(pinned == std::vector<int>{all.back()});
    CHECK(n == 1);
}

namespace {
cpu_place at(int cpu, int node, int core) { return cpu_place{cpu, node, 0, core}; }
}  // namespace

TEST_CASE("disjoint CPU sets take one core each for one thread, its sibling left idle") {
    // 2 cores x 2 siblings, numbered as Linux does: CPUs 0,1 are cores 0,1; 2,3 their siblings.
    std::vector<cpu_place> p = {at(0, 0, 0), at(1, 0, 1), at(2, 0, 0), at(3, 0, 1)};
    CHECK(partition_cpus(p, 1, 8) == std::vector<std::vector<int>>{{0}, {1}});
    // Two threads: a whole core each (both siblings).
    CHECK(partition_cpus(p, 2, 8) == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
    // Three threads: two cores, leaving nothing for a second set.
    CHECK(partition_cpus(p, 3, 8) == std::vector<std::vector<int>>{{0, 1, 2}});
    CHECK(partition_cpus(p, 1, 1) == std::vector<std::vector<int>>{{0}});
}

TEST_CASE("disjoint CPU sets never span two NUMA nodes") {
    // Node 0: cores 0 and 1 (CPUs 0, 1); node 1: cores 2 and 3 (CPUs 2, 3); no siblings.
    std::vector<cpu_place> p = {at(0, 0, 0), at(1, 0, 1), at(2, 1, 2), at(3, 1, 3)};
    CHECK(partition_cpus(p, 2, 8) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
    // Three CPUs fit on no node: no set at all.
    CHECK(partition_cpus(p, 3, 8).empty());
    CHECK(partition_cpus(p, 1, 8) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
    CHECK(partition_cpus(p, 0, 8).empty());
}

TEST_CASE("CPU places come from the topology files, and a CPU without them is a core of its own") {
    char tmpl[] = "/tmp/prof-cpus-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    std::string root = tmpl;
    auto put = [](const std::string& path, const std::string& text) {
        std::ofstream(path) << text;
    };
    for (int cpu : {0, 1}) {
        std::string d = root + "/cpu" + std::to_string(cpu);
        std::filesystem::create_directories(d + "/topology");
        std::filesystem::create_directories(d + "/node" + std::to_string(cpu));
        put(d + "/topology/core_id", "7\n");  // both siblings of core 7
        put(d + "/topology/physical_package_id", "0\n");
    }
    auto places = read_cpu_places({0, 1, 5}, root);
    REQUIRE(places.size() == 3);
    CHECK(places[0].core == 7);
    CHECK(places[1].core == 7);
    CHECK(places[1].node == 1);
    CHECK(places[2].core != 7);  // cpu5 has no files
    CHECK(places[2].node == 0);
    std::filesystem::remove_all(root);
}
