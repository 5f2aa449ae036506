// The CPUs this process may use, against the kernel's own affinity mask.
#include "prof/core/cpus.hpp"

#include <sched.h>
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
