// The thread cap's pool variables, and the one list the Python helper shares with them.
#include "prof/measure/spawn.hpp"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("python/prof_record.py reads the pool variables prof-measure --threads sets, in its order") {
    const char* root = std::getenv("PROF_ROOT");  // set by scripts/check; else run from the tree
    std::ifstream in(std::string(root ? root : ".") + "/python/prof_record.py");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    auto open = s.find("THREAD_VARIABLES = (");
    REQUIRE(open != std::string::npos);
    auto close = s.find(')', open);
    std::string tuple = s.substr(open, close - open);
    std::vector<std::string> python;
    std::regex name("\"([A-Z_]+)\"");
    for (auto it = std::sregex_iterator(tuple.begin(), tuple.end(), name); it != std::sregex_iterator(); ++it)
        python.push_back((*it)[1]);
    CHECK(python == thread_pool_variables());
    CHECK(python.size() == 12);
}

TEST_CASE("pick_cpus takes the first n allowed CPUs, and no more than there are") {
    std::vector<int> all = allowed_cpus();
    CHECK(pick_cpus(1) == std::vector<int>{all.front()});
    CHECK(pick_cpus(static_cast<unsigned>(all.size()) + 5) == all);
}
