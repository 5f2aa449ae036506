// The CPUs this process may use and their disjoint sets (see cpus.hpp).
#include "prof/core/cpus.hpp"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sched.h>
#include <tuple>
#include <unistd.h>

namespace prof {

std::optional<std::vector<int>> affinity_of(pid_t pid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(pid, sizeof set, &set) != 0) return std::nullopt;
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

std::vector<int> allowed_cpus() {
    std::vector<int> out;
    if (auto mask = affinity_of(0)) {
        out = std::move(*mask);
    } else {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < online && c < CPU_SETSIZE; ++c) out.push_back(static_cast<int>(c));
    }
    if (out.empty()) out.push_back(0);
    return out;
}

unsigned allowed_cpu_count() { return static_cast<unsigned>(allowed_cpus().size()); }

namespace {
// The integer in `path`, or `fallback` when it cannot be read.
int read_int(const std::string& path, int fallback) {
    std::ifstream f(path);
    int v = 0;
    return (f >> v) ? v : fallback;
}
}  // namespace

std::vector<cpu_place> read_cpu_places(const std::vector<int>& cpus, const std::string& sysfs_cpu_dir) {
    std::vector<cpu_place> out;
    for (int cpu : cpus) {
        const std::string dir = sysfs_cpu_dir + "/cpu" + std::to_string(cpu);
        cpu_place p;
        p.cpu = cpu;
        p.package = read_int(dir + "/topology/physical_package_id", 0);
        // Without a core_id the CPU is a core of its own: a number no real core_id takes.
        p.core = read_int(dir + "/topology/core_id", -1 - cpu);
        if (DIR* d = opendir(dir.c_str())) {
            while (dirent* e = readdir(d)) {
                std::string name = e->d_name;
                if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
                    std::all_of(name.begin() + 4, name.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                    p.node = std::stoi(name.substr(4));
            }
            closedir(d);
        }
        out.push_back(p);
    }
    return out;
}

std::vector<std::vector<int>> partition_cpus(const std::vector<cpu_place>& places, unsigned size, unsigned max_sets) {
    std::vector<std::vector<int>> sets;
    if (size == 0 || max_sets == 0) return sets;
    // node -> its cores in order of their first CPU, each core's CPUs ascending.
    std::map<int, std::vector<std::vector<int>>> nodes;
    std::map<std::tuple<int, int, int>, std::size_t> core_at;
    std::vector<cpu_place> sorted = places;
    std::sort(sorted.begin(), sorted.end(), [](const cpu_place& a, const cpu_place& b) { return a.cpu < b.cpu; });
    for (const auto& p : sorted) {
        auto key = std::tuple(p.node, p.package, p.core);
        auto& cores = nodes[p.node];
        auto it = core_at.find(key);
        if (it == core_at.end()) {
            core_at.emplace(key, cores.size());
            cores.push_back({p.cpu});
        } else {
            cores[it->second].push_back(p.cpu);
        }
    }
    for (auto& [node, cores] : nodes) {
        std::vector<int> set;
        for (const auto& core : cores) {
            for (int cpu : core)
                if (set.size() < size) set.push_back(cpu);
            // The set owns the whole core: its siblings left over go to no other set.
            if (set.size() == size) {
                std::sort(set.begin(), set.end());
                sets.push_back(std::move(set));
                set.clear();
                if (sets.size() == max_sets) return sets;
            }
        }
    }
    return sets;
}

}  // namespace prof
