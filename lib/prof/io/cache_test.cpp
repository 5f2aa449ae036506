// Unit tests of the ProfileCache directory (cache.hpp): keys, refusals, atomic replace, listing.
#include "prof/io/cache.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/core/test_support.hpp"

#include <doctest/doctest.h>
#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace prof;
namespace fs = std::filesystem;

namespace {
// A scratch directory whose path the tests compose with fs::path.
struct temp_dir {
    test::temp_dir dir{"cache-test"};
    fs::path path{dir.path};
};
}  // namespace

TEST_CASE("cache: keys holding '/', '..', '.', spaces and non-ASCII each get their own file inside the root") {
    temp_dir t;
    profile_cache c((t.path / "cache").string());
    std::vector<std::vector<std::string>> keys{{"a/b", "h"},     {"..", "h"},      {".", "h"},     {"a b", "h"},
                                               {"a", "b/h"},     {"a@b", "h"},     {"a", "b@h"},   {"q\xc3\xa9", "h"},
                                               {"../../etc", "h"}, {"a%2Fb", "h"}, {std::string(300, 'x'), "h"},
                                               {std::string(300, 'x') + "y", "h"}};
    std::set<std::string> paths;
    int n = 0;
    for (const auto& k : keys) {
        std::string p = c.path_for("query_profile", k);
        CHECK(fs::path(p).parent_path() == t.path / "cache" / "query_profile");
        CHECK(fs::path(p).filename().string().size() <= 220);
        paths.insert(p);
        c.put("query_profile", k, "{\"n\":" + std::to_string(n++) + "}");
    }
    CHECK(paths.size() == keys.size());  // two keys never share a file
    CHECK(*c.get("query_profile", {"a/b", "h"}) == "{\"n\":0}");
    CHECK(*c.get("query_profile", {"a", "b/h"}) == "{\"n\":4}");
    CHECK(*c.get("query_profile", {"a@b", "h"}) == "{\"n\":5}");
    CHECK(*c.get("query_profile", {"a", "b@h"}) == "{\"n\":6}");
    CHECK(fs::path(c.path_for("query_profile", {"a b", "h"})).filename() == "a%20b@h.json");
    CHECK(c.list("query_profile").size() == keys.size());
    // Nothing escaped the root.
    std::size_t files = 0;
    for (auto& e : fs::recursive_directory_iterator(t.path))
        if (e.is_regular_file()) ++files;
    CHECK(files == keys.size());
}

TEST_CASE("cache: put replaces a record whole, get of an absent key is nullopt, list is ordered by file name") {
    temp_dir t;
    profile_cache c(t.path.string());
    CHECK_FALSE(c.get("query_profile", {"q", "h"}));
    CHECK(c.list("query_profile").empty());
    c.put("query_profile", {"q", "h"}, "{\"v\":1}");
    c.put("query_profile", {"q", "h"}, "{\"v\":2}");
    c.put("query_profile", {"a", "h"}, "{\"v\":3}");
    CHECK(read_file(c.path_for("query_profile", {"q", "h"})) == "{\"v\":2}\n");
    auto all = c.list("query_profile");
    REQUIRE(all.size() == 2);
    CHECK(all[0].record == "{\"v\":3}");
    CHECK(all[1].record == "{\"v\":2}");
    // A leftover temporary file of an interrupted write is not a record.
    write_file_atomic((t.path / "query_profile" / "z@h.json.tmp.1.0").string(), "{partial");
    CHECK(c.list("query_profile").size() == 2);
    // Kinds are separate directories of the same cache.
    c.put("link_rate", {"q", "h"}, "{\"v\":4}");
    CHECK(*c.get("link_rate", {"q", "h"}) == "{\"v\":4}");
    CHECK(*c.get("query_profile", {"q", "h"}) == "{\"v\":2}");
}

TEST_CASE("cache: a planted link or FIFO is never followed: a miss with a warning, skipped by list, replaced by put") {
    temp_dir t;
    temp_dir outside;
    profile_cache c((t.path / "c").string());
    c.put("query_profile", {"seed", "h"}, "{}");
    fs::create_symlink(outside.path / "secret.json", fs::path(c.path_for("query_profile", {"evil", "h"})));
    write_file_atomic((outside.path / "secret.json").string(), "{\"secret\":1}\n");
    ::mkfifo(c.path_for("query_profile", {"fifo", "h"}).c_str(), 0644);
    CHECK_FALSE(c.get("query_profile", {"evil", "h"}).has_value());
    CHECK_FALSE(c.get("query_profile", {"fifo", "h"}).has_value());  // a FIFO never blocks the read
    auto listed = c.list("query_profile");
    REQUIRE(listed.size() == 1);  // the link and the FIFO skipped, the seed listed
    CHECK(listed[0].record == "{}");
    // put replaces the link itself (rename never follows it): the target outside is untouched.
    c.put("query_profile", {"evil", "h"}, "{\"v\":1}");
    CHECK(*c.get("query_profile", {"evil", "h"}) == "{\"v\":1}");
    CHECK(read_file((outside.path / "secret.json").string()) == "{\"secret\":1}\n");
    // A whole kind directory linked elsewhere is refused (73), for writes and reads.
    fs::create_directory_symlink(outside.path, t.path / "c" / "link_rate");
    CHECK_THROWS_AS(c.put("link_rate", {"x"}, "{}"), cant_create_error);
    CHECK_THROWS_AS(c.list("link_rate"), cant_create_error);
    CHECK(fs::directory_iterator(outside.path)->path().filename() == "secret.json");
}

TEST_CASE("cache: a kind directory swapped with a link out of the root between puts never receives a record") {
    temp_dir t;
    temp_dir outside;
    profile_cache c((t.path / "c").string());
    c.put("query_profile", {"seed"}, "{}");
    fs::create_directory_symlink(outside.path, t.path / "c" / "alt");
    std::string a = (t.path / "c" / "query_profile").string(), b = (t.path / "c" / "alt").string();
    auto race = test::swap_while(a, b, 200, [&](int i) { c.put("query_profile", {"k" + std::to_string(i)}, "{}"); });
    MESSAGE(race.written, " puts written, ", race.refused, " refused");
    CHECK(fs::is_empty(outside.path));
    CHECK(race.written + race.refused == 200);
}

namespace {
// A record_key for test records {"k":[...]}: the key is the list of strings under "k".
std::vector<std::string> key_of_k(std::string_view text) {
    std::vector<std::string> out;
    prof::parse_object_text(text, [&](simdjson::ondemand::object& o) {
        for (auto f : o)
            if (std::string_view(f.unescaped_key()) == "k")
                for (auto s : f.value().get_array()) out.emplace_back(std::string_view(s.get_string()));
    });
    return out;
}
void write_raw(const fs::path& p, const std::string& text) {
    FILE* f = std::fopen(p.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
}
}  // namespace

TEST_CASE("cache: an entry is served only when it is the record of the key asked for") {
    temp_dir t;
    profile_cache c((t.path / "c").string());
    c.put("link_rate", {"a", "1"}, R"({"k":["a","1"]})");
    CHECK(c.get("link_rate", {"a", "1"}, key_of_k) == std::optional<std::string>(R"({"k":["a","1"]})"));
    // A file copied (or renamed) under another key holds that other key's record: a miss.
    fs::copy_file(c.path_for("link_rate", {"a", "1"}), c.path_for("link_rate", {"b", "1"}));
    CHECK_FALSE(c.get("link_rate", {"b", "1"}, key_of_k));
    // The listing skips it too, and keeps the good one.
    auto l = c.list("link_rate", key_of_k);
    REQUIRE(l.size() == 1);
    CHECK(l[0].record == R"({"k":["a","1"]})");
    // The caller measures again and its put rewrites the entry, which is then served.
    c.put("link_rate", {"b", "1"}, R"({"k":["b","1"]})");
    CHECK(c.get("link_rate", {"b", "1"}, key_of_k) == std::optional<std::string>(R"({"k":["b","1"]})"));
}

TEST_CASE("cache: an empty, cut or corrupt entry is a miss, never served or thrown") {
    temp_dir t;
    profile_cache c((t.path / "c").string());
    c.put("link_rate", {"a"}, R"({"k":["a"]})");
    fs::path p = c.path_for("link_rate", {"a"});
    for (std::string bad : {"", "\n", "{\"k\":[\"a\"", "{\"k\":[\"a\"]} x", "[1]", "\xff\xfe", "{\"k\":7}"}) {
        CAPTURE(bad);
        write_raw(p, bad);
        CHECK_FALSE(c.get("link_rate", {"a"}, key_of_k));
        CHECK(c.list("link_rate", key_of_k).empty());
    }
    // Without a record_key the JSON checks still hold.
    write_raw(p, "{\"k\":");
    CHECK_FALSE(c.get("link_rate", {"a"}));
}

TEST_CASE("cache: a key with an empty component is refused, since nothing could ask for it") {
    temp_dir t;
    profile_cache c((t.path / "c").string());
    CHECK_THROWS_WITH_AS(c.put("query_profile", {"", "h"}, "{}"),
                         "a query_profile with an empty key field cannot be cached (it could never be asked for)",
                         prof::error);
}

TEST_CASE("cache: a put removes temporary files that dead writers left, and keeps a live writer's") {
    temp_dir t;
    profile_cache c((t.path / "c").string());
    c.put("link_rate", {"a"}, R"({"k":["a"]})");
    fs::path dir = fs::path(c.path_for("link_rate", {"a"})).parent_path();
    pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    fs::path stale = dir / ("b.json.tmp." + std::to_string(dead) + ".0");
    fs::path live = dir / ("c.json.tmp." + std::to_string(::getpid()) + ".0");
    for (const auto& p : {stale, live}) {
        write_raw(p, "partial");
        fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::minutes(5));
    }
    c.put("link_rate", {"a"}, R"({"k":["a"]})");
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(live));
}

TEST_CASE("cache: a key holding a NUL byte is refused (65): it could be stored but never asked for") {
    temp_dir t;
    profile_cache c((t.path / "c").string());
    try {
        c.put("query_profile", {std::string("a\0b", 3), "h"}, "{}");
        FAIL("no error");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::data_err);
    }
    CHECK(c.list("query_profile").empty());
}
