// Unit tests of the ProfileCache directory (cache.hpp): keys, refusals, atomic replace, listing.
#include "prof/cache.hpp"
#include "prof/errors.hpp"
#include "prof/fsutil.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace prof;
namespace fs = std::filesystem;

namespace {
struct temp_dir {
    fs::path path;
    temp_dir() {
        char tmpl[] = "/tmp/prof-cache-test-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
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

TEST_CASE("cache: a symbolic link that resolves outside the root is refused with exit 73") {
    temp_dir t;
    temp_dir outside;
    profile_cache c((t.path / "c").string());
    c.put("query_profile", {"seed", "h"}, "{}");
    fs::create_symlink(outside.path / "secret.json", fs::path(c.path_for("query_profile", {"evil", "h"})));
    write_file_atomic((outside.path / "secret.json").string(), "{\"secret\":1}\n");
    try {
        c.get("query_profile", {"evil", "h"});
        FAIL("expected a refusal");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::cant_create);
        CHECK(std::string(e.what()).find("outside") != std::string::npos);
    }
    CHECK_THROWS_AS(c.put("query_profile", {"evil", "h"}, "{}"), cant_create_error);
    CHECK(read_file((outside.path / "secret.json").string()) == "{\"secret\":1}\n");
    // A whole kind directory linked elsewhere is refused too.
    fs::create_directory_symlink(outside.path, t.path / "c" / "link_rate");
    CHECK_THROWS_AS(c.put("link_rate", {"x"}, "{}"), cant_create_error);
}
