// What prof-measure's ground-truth tests share: the real binary run through a shell, its fit lines
// parsed, cells written, and whether a GPU answers.
#pragma once

#include "prof/measure/measure.hpp"

#include "prof/io/json_in.hpp"
#include "prof/io/keys.hpp"
#include "prof/device/nvml.hpp"
#include "prof/records/records.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace prof;

namespace {

inline std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}
inline std::string bin() { return env_or("PROF_BIN", "build/bin"); }
inline std::string helper(const std::string& name) { return env_or("PROF_TEST_HELPERS", "build/test/helpers") + "/" + name; }

struct run_result {
    std::string out, err;
    int status = -1;
};

// Runs a shell command line; stdout and stderr captured separately.
inline run_result sh(const std::string& cmd) {
    char errpath[] = "/tmp/prof-test-err-XXXXXX";
    int efd = mkstemp(errpath);
    close(efd);
    run_result r;
    FILE* p = popen(("{ " + cmd + "\n} 2>" + errpath).c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::ifstream ef(errpath);
    r.err.assign(std::istreambuf_iterator<char>(ef), {});
    unlink(errpath);
    return r;
}

// The fit records of prof-measure's output. Without `superseded`, the readings that count:
// on a busy host --remeasure-busy (on by default) adds superseded attempts, which the tests
// that count readings must not see (remeasure_test.cpp covers them).
inline std::vector<measured_fit> fits_of(const std::string& all, bool superseded = false) {
    std::vector<measured_fit> v;
    std::string out;  // the fit lines: other records pass through prof-measure
    for (std::size_t at = 0; at < all.size();) {
        auto nl = all.find('\n', at);
        std::string line = all.substr(at, nl == std::string::npos ? std::string::npos : nl - at + 1);
        if (line.rfind("{\"kind\":\"fit\"", 0) == 0 || line.find("\"kind\"") == std::string::npos) out += line;
        at = nl == std::string::npos ? all.size() : nl + 1;
    }
    line_reader in(string_source(out, "prof-measure output"));
    for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) {
        measured_fit f = read_fit(o);
        if (superseded || f.phase != fit_phase_superseded) v.push_back(std::move(f));
    });
    return v;
}

inline measured_fit one_fit(const std::string& args) {
    auto r = sh(bin() + "/prof-measure " + args);
    auto v = fits_of(r.out);
    REQUIRE_MESSAGE(v.size() == 1, r.err);
    return v[0];
}

inline std::string cells(std::initializer_list<const char*> models) {
    std::string s;
    int i = 0;
    for (const char* m : models) s += fmt::format("{{\"kind\":\"cell\",\"ts_id\":\"s{}\",\"model_type\":\"{}\"}}\n", i++, m);
    return s;
}

inline std::vector<measured_fit> run_cells(const std::string& cell_lines, const std::string& args, run_result* raw = nullptr) {
    std::string path = "/tmp/prof-test-cells-" + std::to_string(getpid());
    std::ofstream(path) << cell_lines;
    auto r = sh(bin() + "/prof-measure " + args + " < " + path);
    unlink(path.c_str());
    if (raw) *raw = r;
    CHECK_MESSAGE(r.status == 0, r.err);
    return fits_of(r.out);
}

inline bool gpu_present() { return nvml_reader::open() != nullptr; }

// Starts prof-measure ARGS in the background, kills it with SIGKILL after `after` seconds,
// and says whether any process whose command line matches PATTERN is left half a second later.
inline bool survivors_after_sigkill(const std::string& args, const std::string& pattern, double after = 0.4) {
    auto r = sh(fmt::format("{}/prof-measure {} & pid=$!; sleep {}; kill -KILL $pid; wait $pid; sleep 0.5; "
                            "pgrep -f '{}' >/dev/null && echo survivors || echo none-left",
                            bin(), args, after, pattern));
    return r.out.find("none-left") == std::string::npos;
}

}  // namespace
