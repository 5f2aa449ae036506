// Unit tests of the registry writer's repair and refusals (registry.hpp): an interrupted write
// (run file without its index line) is repaired by the next store and noticed by readers; links
// out of the registry, empty run ids and dead writers' temporary files.
#include "prof/resolve/registry.hpp"

#include "prof/core/errors.hpp"
#include "prof/harvest/harvest.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/keys.hpp"
#include "prof/resolve/resolve.hpp"
#include "prof/core/test_support.hpp"
#include "prof/resolve/test_support.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <sys/syscall.h>
#include <thread>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {
using prof::test::temp_dir;
using prof::test::swap_while;

prof::compute_profile run(const std::string& id, const std::string& measured_at, const std::string& sig = R"({"d":1})") {
    prof::compute_profile p;
    p.provenance.run_id = id;
    p.provenance.measured_at = measured_at;
    p.provenance.signature = prof::parse_json_text(sig);
    return p;
}

// The index entries prof-resolve would see for a registry directory.
prof::registry_index resolve_view(const std::string& dir) {
    return prof::with_unindexed_runs(prof::test::directory_registry(dir).load_index, dir)();
}

// Stores `p` as a writer killed between its two renames leaves it: the run file in place, the
// index (rewritten after it) as it was before.
void store_unindexed(const std::string& dir, const prof::compute_profile& p) {
    std::string index_before = prof::read_file(dir + "/index.jsonl");
    prof::registry_store(dir, p, false);
    prof::write_file_atomic(dir + "/index.jsonl", index_before);
}
}  // namespace

TEST_CASE("a run file left without its index line is seen by readers and indexed by the next store") {
    temp_dir d;
    prof::registry_store(d.path, run("old", "2026-11-01T00:00:00Z"), false);
    // A writer killed between its two renames: the run file of 'new' is in place, the index
    // still lists 'old' only.
    store_unindexed(d.path, run("new", "2026-11-02T00:00:00Z"));

    // A reader takes the unindexed run into account, and says the index needs repair.
    auto view = resolve_view(d.path);
    REQUIRE(view.entries.size() == 2);
    CHECK(view.entries[1].run_id == "new");
    CHECK(view.entries[1].measured_at == prof::parse_rfc3339("2026-11-02T00:00:00Z"));
    REQUIRE(view.warnings.size() == 1);
    CHECK(view.warnings[0].find("run 'new' has a file but no index line") != std::string::npos);

    // Storing 'new' again (the rerun of the killed harvest) no longer skips it silently: the
    // index gets its line, and the run is then found without any warning.
    CHECK(prof::registry_store(d.path, run("new", "2026-11-02T00:00:00Z"), false) == prof::registry_write::skipped_exists);
    CHECK(prof::read_file(d.path + "/index.jsonl") ==
          "{\"run_id\":\"new\",\"signature\":{\"d\":1},\"measured_at\":\"2026-11-02T00:00:00Z\"}\n"
          "{\"run_id\":\"old\",\"signature\":{\"d\":1},\"measured_at\":\"2026-11-01T00:00:00Z\"}\n");
    CHECK(resolve_view(d.path).warnings.empty());
}

TEST_CASE("any store repairs every unindexed run, not only its own") {
    temp_dir d;
    prof::registry_store(d.path, run("a", "2026-11-01T00:00:00Z"), false);
    store_unindexed(d.path, run("b/2", "2026-11-02T00:00:00Z"));
    prof::registry_store(d.path, run("c", "2026-11-03T00:00:00Z"), false);
    std::string index = prof::read_file(d.path + "/index.jsonl");
    CHECK(index.find("\"run_id\":\"b/2\"") != std::string::npos);
    CHECK(index.find("\"run_id\":\"c\"") != std::string::npos);
}

TEST_CASE("a registry whose runs/ or index is a link out of it is refused (73), as the cache refuses") {
    temp_dir d, outside;
    std::string reg = d.path + "/reg";
    fs::create_directories(reg);
    fs::create_directory_symlink(outside.path, reg + "/runs");
    CHECK_THROWS_AS(prof::registry_store(reg, run("r", "2026-11-01T00:00:00Z"), false), prof::cant_create_error);
    CHECK(fs::is_empty(outside.path));
    fs::remove(reg + "/runs");
    fs::create_symlink(outside.path + "/index.jsonl", reg + "/index.jsonl");
    CHECK_THROWS_AS(prof::registry_store(reg, run("r", "2026-11-01T00:00:00Z"), false), prof::cant_create_error);
    CHECK(fs::is_empty(outside.path));
}

TEST_CASE("a FIFO planted as the registry index is refused (73) at once, never read under the lock") {
    // Before, the store opened the FIFO for reading and blocked for ever holding the lock.
    temp_dir d;
    ::mkfifo((d.path + "/index.jsonl").c_str(), 0644);
    try {
        prof::registry_store(d.path, run("r", "2026-11-01T00:00:00Z"), false);
        FAIL("no error");
    } catch (const prof::cant_create_error& e) {
        CHECK(std::string(e.what()).find("index.jsonl': a FIFO, not a regular file") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(d.path + "/runs/r.json"));
}

TEST_CASE("runs/ swapped with a link out of the registry between stores never receives a run file") {
    // A thread exchanges runs/ and a link to a directory outside, atomically, every 100 µs,
    // while 200 stores run: a store that checked a path and opened it again wrote some run
    // files outside; one that opens runs/ once with O_NOFOLLOW writes inside or refuses (73).
    temp_dir d, outside;
    std::string reg = d.path + "/reg";
    prof::registry_store(reg, run("seed", "2026-11-01T00:00:00Z"), false);
    fs::create_directory_symlink(outside.path, reg + "/alt");
    auto t = swap_while(reg + "/runs", reg + "/alt", 200,
                        [&](int i) { prof::registry_store(reg, run("r" + std::to_string(i), "2026-11-01T00:00:00Z"), false); });
    MESSAGE(t.written, " stores written, ", t.refused, " refused");
    CHECK(fs::is_empty(outside.path));
    CHECK(t.written + t.refused == 200);
    CHECK(t.written > 0);
}

TEST_CASE("a run with an empty run_id is refused (65): nothing could read it back") {
    temp_dir d;
    try {
        prof::registry_store(d.path, run("", "2026-11-01T00:00:00Z"), false);
        FAIL("no error");
    } catch (const prof::error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
    }
    CHECK_FALSE(fs::exists(d.path + "/index.jsonl"));
}

TEST_CASE("temporary files of dead writers are removed by the next store; a live writer's are kept") {
    temp_dir d;
    prof::registry_store(d.path, run("a", "2026-11-01T00:00:00Z"), false);
    // A pid that is certainly dead: a child that has exited and been reaped.
    pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    auto old_file = [&](const std::string& path) {
        prof::write_file_atomic(path, "partial");
        fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::minutes(5));
    };
    std::string dead_tmp = d.path + "/runs/b.json.tmp." + std::to_string(dead) + ".0";
    std::string live_tmp = d.path + "/runs/c.json.tmp." + std::to_string(::getpid()) + ".0";
    std::string fresh_dead = d.path + "/index.jsonl.tmp." + std::to_string(dead) + ".1";
    old_file(dead_tmp);
    old_file(live_tmp);
    prof::write_file_atomic(fresh_dead, "partial");  // under a minute old: maybe another namespace's
    prof::registry_store(d.path, run("z", "2026-11-01T00:00:00Z"), false);
    CHECK_FALSE(fs::exists(dead_tmp));
    CHECK(fs::exists(live_tmp));
    CHECK(fs::exists(fresh_dead));
}

TEST_CASE("a first run file written before the index ever existed is still found") {
    temp_dir d;
    prof::registry_store(d.path, run("first", "2026-11-01T00:00:00Z"), false);
    fs::remove(d.path + "/index.jsonl");  // killed between the run file's rename and the index's
    auto view = resolve_view(d.path);
    REQUIRE(view.entries.size() == 1);
    CHECK(view.entries[0].run_id == "first");
    // With no run file either, the missing index is the loader's error, as before.
    temp_dir empty;
    fs::create_directories(empty.path + "/runs");
    CHECK_THROWS_AS(resolve_view(empty.path), prof::no_input_error);
}

namespace {
// The profiles prof-harvest makes of `text` (one per run).
std::vector<prof::compute_profile> harvested(const std::string& text) {
    prof::harvester h(prof::harvest_config{});
    prof::line_reader in(prof::string_source(text, "rows"));
    h.read(in);
    return h.finish();
}
}  // namespace

TEST_CASE("registry_store writes, skips an existing run, and --force replaces it") {
    prof::test::temp_dir d;
    auto ps = harvested(R"({"run_id":"night/2","ts_id":"a","model_type":"m","fit_seconds":1,"finished_at":"2026-11-29T10:00:00Z"})" "\n"
                           R"({"run_id":"night/1","ts_id":"a","model_type":"m","fit_seconds":2})" "\n");
    CHECK(prof::registry_store(d.path, ps[1], false) == prof::registry_write::written);
    CHECK(prof::registry_store(d.path, ps[0], false) == prof::registry_write::written);
    std::string path = prof::registry_run_path(d.path, "night/2");
    CHECK(path == d.path + "/runs/night%2F2.json");
    CHECK(prof::read_file(path) == prof::write_profile(ps[1]) + "\n");
    std::string index = prof::read_file(d.path + "/index.jsonl");
    CHECK(index == "{\"run_id\":\"night/1\",\"signature\":null,\"measured_at\":null}\n"
                   "{\"run_id\":\"night/2\",\"signature\":null,\"measured_at\":\"2026-11-29T10:00:00Z\"}\n");
    CHECK(prof::registry_store(d.path, ps[0], false) == prof::registry_write::skipped_exists);
    CHECK(prof::read_file(d.path + "/index.jsonl") == index);
    ps[0].provenance.signature = prof::parse_signature(R"({"k":1})", "s");
    CHECK(prof::registry_store(d.path, ps[0], true) == prof::registry_write::replaced);
    CHECK(prof::read_file(d.path + "/index.jsonl") ==
          "{\"run_id\":\"night/1\",\"signature\":{\"k\":1},\"measured_at\":null}\n"
          "{\"run_id\":\"night/2\",\"signature\":null,\"measured_at\":\"2026-11-29T10:00:00Z\"}\n");
}

TEST_CASE("registry_store refuses a corrupt index and changes nothing") {
    prof::test::temp_dir d;
    prof::make_dirs(d.path + "/runs");
    {
        FILE* f = std::fopen((d.path + "/index.jsonl").c_str(), "w");
        std::fputs("{\"run_id\":\"a\"}\n{\"signature\":null}\n", f);
        std::fclose(f);
    }
    auto ps = harvested(R"({"run_id":"b","ts_id":"a","model_type":"m","fit_seconds":1})");
    CHECK_THROWS_WITH_AS(prof::registry_store(d.path, ps[0], false), (d.path + "/index.jsonl:2: field 'run_id': missing").c_str(),
                         prof::input_error);
    CHECK_FALSE(std::filesystem::exists(prof::registry_run_path(d.path, "b")));
}
