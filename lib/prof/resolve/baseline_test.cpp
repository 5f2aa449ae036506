// The shipped baseline (share/prof/baseline.json): a real profile whose derived values
// are exactly what the arithmetic computes from its raw values, so a hand edit cannot mislead.
#include "prof/io/fsutil.hpp"
#include "prof/profile/profile.hpp"
#include "prof/resolve/resolve.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

namespace {

std::string baseline_path() {
    const char* root = std::getenv("PROF_ROOT");  // set by scripts/check; else run from the tree
    return std::string(root ? root : ".") + "/share/prof/baseline.json";
}

// The keys of `file` whose values differ from the recomputed profile's, as "path: file vs
// recomputed" lines (top level, then one level into models and families).
std::vector<std::string> mismatches(const prof::json_value& file, const prof::json_value& recomputed) {
    std::vector<std::string> out;
    for (const auto& [k, v] : recomputed.obj) {
        const prof::json_value* f = file.find(k);
        if ((k == "models" || k == "families") && f && f->is_object()) {
            for (const auto& [name, entry] : v.obj) {
                const prof::json_value* fe = f->find(name);
                for (const auto& [field, value] : entry.obj) {
                    const prof::json_value* ff = fe ? fe->find(field) : nullptr;
                    if (!ff || !(*ff == value))
                        out.push_back(k + "." + name + "." + field + ": file has " + (ff ? ff->dump() : "nothing") +
                                      ", the arithmetic gives " + value.dump());
                }
            }
        } else if (!f || !(*f == v)) {
            out.push_back(k + ": file has " + (f ? f->dump() : "nothing") + ", the arithmetic gives " + v.dump());
        }
    }
    return out;
}

std::vector<std::string> check_text(const std::string& text) {
    prof::compute_profile p = prof::parse_profile_text(text, "baseline.json");  // raw fields only
    return mismatches(prof::parse_json_text(text), prof::parse_json_text(prof::write_profile(p)));
}

}  // namespace

TEST_CASE("the shipped baseline's derived values equal what the arithmetic computes from its raw values") {
    std::string text = prof::read_file(baseline_path());
    auto bad = check_text(text);
    for (const auto& m : bad) MESSAGE(m);
    CHECK(bad.empty());
    // The whole file is canonical too: nothing but what write_profile prints.
    prof::compute_profile p = prof::parse_profile_text(text, baseline_path());
    CHECK(prof::parse_json_text(text) == prof::parse_json_text(prof::write_profile(p)));
}

TEST_CASE("the shipped baseline is a real, versioned reference profile that prof-resolve loads") {
    prof::compute_profile p = prof::load_baseline_file(baseline_path());
    CHECK(p.provenance.basis == "reference");
    CHECK(p.provenance.source == "baseline");
    REQUIRE(p.provenance.baseline_version);
    CHECK(!p.provenance.baseline_version->empty());
    CHECK(p.provenance.measured_at);
    CHECK(p.n_ok > 0);
    CHECK(!p.models.empty());
    for (const auto& [name, f] : p.families) {
        CAPTURE(name);
        CHECK(f.slot_rss_bytes);
        CHECK(f.planning_wall_s_per_cell);
    }
}

TEST_CASE("a hand edit of a derived baseline value is caught (negative control)") {
    std::string text = prof::read_file(baseline_path());
    // Raise the first slot_rss_bytes by one byte: the raw max_process_rss_bytes no longer gives it.
    auto at = text.find("\"slot_rss_bytes\":");
    REQUIRE(at != std::string::npos);
    auto begin = at + std::string("\"slot_rss_bytes\":").size();
    auto end = text.find_first_of(",}", begin);
    std::string edited = text.substr(0, begin) + std::to_string(std::stoull(text.substr(begin, end - begin)) + 1) +
                         text.substr(end);
    auto bad = check_text(edited);
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].find(".slot_rss_bytes: file has ") != std::string::npos);
}
