// Unit tests of prof-resolve's precedence (every branch, loaders injected), the pin check, the
// registry index reader, the directory registry over real files, and the shipped baseline.
#include "prof/resolve/resolve.hpp"

#include "prof/io/fsutil.hpp"
#include "prof/io/keys.hpp"
#include "prof/core/test_support.hpp"
#include "prof/profile/test_support.hpp"
#include "prof/resolve/test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using prof::compute_profile;
using prof::json_value;

json_value sig(const std::string& text) { return prof::parse_json_text(text); }

// A small real-shaped harvest: one model in one family, stamped with run id and signature.
compute_profile harvest(const std::string& run_id, const std::optional<std::string>& signature,
                        const std::string& measured_at) {
    auto f = prof::test::fit_of("co2", "theta", "statistical",
                                {.wall_s = 0.5, .cpu_s = 0.5, .process_rss_bytes = 100, .measured_at = measured_at});
    prof::profile_provenance pv;
    pv.basis = "measured";
    pv.source = "harvest";
    pv.run_id = run_id;
    if (signature) pv.signature = sig(*signature);
    return prof::build_profile({f}, {1.25, 1.1}, pv);
}

compute_profile baseline_profile() {
    compute_profile p = harvest("demo", std::nullopt, "2026-11-29T12:00:00Z");
    p.provenance.run_id.reset();
    p.provenance.baseline_version = "2026.11.29";
    return p;
}

// Loaders over in-memory maps; counts every call so a test can prove a loader was not asked.
struct fake_registry {
    std::map<std::string, compute_profile> runs;
    std::map<std::string, std::string> run_failures;  // run_id → what the loader throws
    std::vector<prof::registry_entry> index;
    std::optional<std::string> index_failure;
    bool have_registry = true;
    bool have_baseline = true;
    std::optional<std::string> baseline_failure;
    mutable int run_calls = 0, index_calls = 0, baseline_calls = 0;

    prof::evidence_loaders loaders() const {
        prof::evidence_loaders io;
        io.registry_name = "reg";
        if (have_registry) {
            io.load_run = [this](const std::string& id) {
                ++run_calls;
                if (run_failures.count(id)) throw std::runtime_error(run_failures.at(id));
                auto it = runs.find(id);
                if (it == runs.end()) throw prof::no_input_error("cannot open 'reg/runs/" + id + ".json': No such file or directory");
                return it->second;
            };
            io.load_index = [this] {
                ++index_calls;
                if (index_failure) throw std::runtime_error(*index_failure);
                return prof::registry_index{index, {}};
            };
        }
        if (have_baseline) {
            io.load_baseline = [this] {
                ++baseline_calls;
                if (baseline_failure) throw std::runtime_error(*baseline_failure);
                return baseline_profile();
            };
        }
        return io;
    }
};

prof::registry_entry entry(const std::string& id, const std::string& signature, const std::string& at) {
    return {id, std::make_shared<const json_value>(sig(signature)), prof::parse_rfc3339(at)};
}

prof::resolve_request request(std::string source, std::optional<std::string> signature, std::string mode = "auto",
                              bool force = false) {
    prof::resolve_request r;
    r.source = std::move(source);
    r.mode = std::move(mode);
    if (signature) r.signature = sig(*signature);
    r.force = force;
    return r;
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
    for (const auto& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

const std::string A = R"({"panel":"co2","n_series":85})";
const std::string A_reordered = R"({"n_series":85,"panel":"co2"})";
const std::string B = R"({"panel":"co2","n_series":90})";

}  // namespace

TEST_CASE("signatures that differ only in key order are equal") {
    CHECK(prof::signature_differences(sig(A), sig(A_reordered)).empty());
}

TEST_CASE("signature differences name each differing or missing key with both values, sorted") {
    auto d = prof::signature_differences(sig(R"({"a":1,"b":2,"c":[1]})"), sig(R"({"b":3,"c":[1],"d":"x"})"));
    REQUIRE(d.size() == 3);
    CHECK(d[0].key == "a");
    CHECK(d[0].pinned->dump() == "1");
    CHECK(!d[0].current);
    CHECK(d[1].key == "b");
    CHECK(d[1].pinned->dump() == "2");
    CHECK(d[1].current->dump() == "3");
    CHECK(d[2].key == "d");
    CHECK(!d[2].pinned);
    CHECK(d[2].current->dump() == "\"x\"");
}

TEST_CASE("a nested difference is reported under its top-level key") {
    auto d = prof::signature_differences(sig(R"({"p":{"x":1,"y":2}})"), sig(R"({"p":{"y":2,"x":5}})"));
    REQUIRE(d.size() == 1);
    CHECK(d[0].key == "p");
    CHECK(d[0].pinned->dump() == R"({"x":1,"y":2})");
    CHECK(d[0].current->dump() == R"({"x":5,"y":2})");
}

// The precedence, one row per branch of prof-resolve(1)'s chain. `setup` shapes the registry; the expected
// source is what provenance.source must say; `warning` a text one warning must contain.
TEST_CASE("the precedence picks the evidence each branch of the chain names") {
    struct row {
        const char* name;
        prof::resolve_request req;
        std::function<void(fake_registry&)> setup;
        std::string basis, source;
        std::vector<std::string> warnings;  // each must appear in some warning; empty = none at all
    };
    auto base = [](fake_registry& r) {
        r.runs["r1"] = harvest("r1", A, "2026-11-29T10:00:00Z");
        r.runs["r2"] = harvest("r2", A_reordered, "2026-11-29T11:00:00Z");
        r.runs["r3"] = harvest("r3", B, "2026-11-29T12:00:00Z");
        r.index = {entry("r1", A, "2026-11-29T10:00:00Z"), entry("r2", A_reordered, "2026-11-29T11:00:00Z"),
                   entry("r3", B, "2026-11-29T12:00:00Z")};
    };
    std::vector<row> rows = {
        {"mode off ignores even a drifted pin", request("r3", A, "off"), base, "assumed", "none", {}},
        {"source none", request("none", A), base, "assumed", "none", {}},
        {"a pin whose signature matches", request("r1", A_reordered, "always"), base, "reference", "run:r1", {}},
        {"a drifted pin under --force", request("r3", A, "auto", true), base, "reference", "run:r3",
         {"pinned run 'r3' was measured on different data (used because of --force): key 'n_series': run r3 has 90, "
          "this run has 85"}},
        {"a pin without --signature is honoured unchecked", request("r3", std::nullopt), base, "reference", "run:r3",
         {"no --signature was given"}},
        {"a pin whose harvest records no signature is honoured unchecked", request("r0", A),
         [&](fake_registry& r) { base(r); r.runs["r0"] = harvest("r0", std::nullopt, "2026-11-29T09:00:00Z"); },
         "reference", "run:r0", {"records no data signature"}},
        {"a pin that cannot be loaded falls through to the baseline, not to auto", request("r9", A), base,
         "reference", "baseline", {"pinned run 'r9' could not be loaded (cannot open 'reg/runs/r9.json': No such file or directory)"}},
        {"a pin with no registry falls through to the baseline", request("r1", A),
         [](fake_registry& r) { r.have_registry = false; }, "reference", "baseline", {"(no --registry given)"}},
        {"a corrupt pin and no baseline give no evidence", request("r1", A),
         [&](fake_registry& r) { base(r); r.run_failures["r1"] = "reg/runs/r1.json:1: malformed JSON"; r.have_baseline = false; },
         "assumed", "none", {"malformed JSON", "no evidence found"}},
        {"auto takes the newest matching harvest", request("auto", A), base, "reference", "auto:r2", {}},
        {"auto breaks a measured_at tie by the greater run_id", request("auto", A),
         [&](fake_registry& r) {
             base(r);
             r.runs["r10"] = harvest("r10", A, "2026-11-29T11:00:00Z");
             r.index.push_back(entry("r10", A, "2026-11-29T13:00:00+02:00"));  // the same instant as r2's
         },
         "reference", "auto:r2", {}},
        {"auto compares measured_at as instants, not strings", request("auto", A),
         [&](fake_registry& r) {
             base(r);
             r.runs["r4"] = harvest("r4", A, "2026-11-29T11:30:00Z");
             r.index.push_back(entry("r4", A, "2026-11-29T10:30:00-01:00"));  // 11:30Z, newer than r2
         },
         "reference", "auto:r4", {}},
        {"auto skips a newest match that cannot be loaded", request("auto", A),
         [&](fake_registry& r) { base(r); r.run_failures["r2"] = "HTTP 500"; }, "reference", "auto:r1",
         {"run 'r2' matches this run's signature but could not be loaded (HTTP 500)"}},
        {"auto skips a run whose file records another signature", request("auto", A),
         [&](fake_registry& r) { base(r); r.runs["r2"] = harvest("r2", B, "2026-11-29T11:00:00Z"); }, "reference",
         "auto:r1", {"registry is inconsistent"}},
        {"auto without --signature uses the baseline", request("auto", std::nullopt), base, "reference", "baseline",
         {"no --signature given"}},
        {"auto without a registry uses the baseline", request("auto", A),
         [](fake_registry& r) { r.have_registry = false; }, "reference", "baseline", {"no --registry given"}},
        {"auto over a registry that fails uses the baseline", request("auto", A),
         [](fake_registry& r) { r.index_failure = "cannot open 'reg/index.jsonl': Permission denied"; }, "reference",
         "baseline", {"registry reg could not be searched (cannot open 'reg/index.jsonl': Permission denied)"}},
        {"auto with no match uses the baseline", request("auto", R"({"panel":"other"})"), base, "reference",
         "baseline", {"no harvest in registry reg matches this run's signature (3 run(s) indexed)"}},
        {"source baseline skips the registry", request("baseline", A), base, "reference", "baseline", {}},
        {"a baseline that fails to load gives no evidence", request("baseline", A),
         [](fake_registry& r) { r.baseline_failure = "base.json:1: malformed JSON"; }, "assumed", "none",
         {"baseline could not be loaded (base.json:1: malformed JSON)", "no evidence found"}},
        {"source baseline with --baseline none gives no evidence", request("baseline", A),
         [](fake_registry& r) { r.have_baseline = false; }, "assumed", "none",
         {"--source baseline was asked for, but --baseline none leaves no baseline to use", "no evidence found"}},
        {"--baseline none and nothing else gives no evidence", request("auto", std::nullopt),
         [](fake_registry& r) { r.have_registry = false; r.have_baseline = false; }, "assumed", "none",
         {"no --registry given", "no evidence found"}},
    };
    for (const auto& r : rows) {
        CAPTURE(r.name);
        fake_registry reg;
        if (r.setup) r.setup(reg);
        compute_profile p = prof::resolve_profile_source(r.req, reg.loaders());
        CHECK(p.provenance.basis == r.basis);
        CHECK(p.provenance.source == r.source);
        if (r.warnings.empty()) CHECK(p.provenance.warnings.empty());
        for (const auto& w : r.warnings) {
            CAPTURE(w);
            CHECK(any_contains(p.provenance.warnings, w));
        }
        if (r.basis == "assumed") {
            CHECK(p.models.empty());
            CHECK(p.families.empty());
            CHECK(!p.provenance.measured_at);
        } else {
            CHECK(p.models.size() == 1);
            CHECK(p.families.at("statistical").slot_rss_bytes == 125u);  // ceil(100 × 1.25)
        }
    }
}

TEST_CASE("evidence in which every fit failed is used, with a warning that it sizes nothing") {
    fake_registry reg;
    auto f = prof::test::fit_of("co2", "sarimax", "statistical", {}, "exit 1: LinAlgError");
    prof::profile_provenance pv;
    pv.run_id = "bad";
    pv.signature = sig(A);
    reg.runs["bad"] = prof::build_profile({f, f}, {1.25, 1.1}, pv);
    auto p = prof::resolve_profile_source(request("bad", A), reg.loaders());
    CHECK(p.provenance.source == "run:bad");
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0] == std::string("the evidence (run:bad, 2 fit(s), 0 ok): ") + prof::sizes_nothing_warning);
    CHECK(p.first_error_by_model.at("sarimax") == "exit 1: LinAlgError");
}

TEST_CASE("mode off and source none call no loader at all") {
    fake_registry reg;
    prof::resolve_profile_source(request("r1", A, "off"), reg.loaders());
    prof::resolve_profile_source(request("none", A), reg.loaders());
    CHECK(reg.run_calls + reg.index_calls + reg.baseline_calls == 0);
}

TEST_CASE("source baseline never reads the registry") {
    fake_registry reg;
    prof::resolve_profile_source(request("baseline", A), reg.loaders());
    CHECK(reg.run_calls + reg.index_calls == 0);
    CHECK(reg.baseline_calls == 1);
}

TEST_CASE("a drifted pin is refused with exit 78 naming the run, both signatures and each differing key") {
    fake_registry reg;
    reg.runs["r3"] = harvest("r3", B, "2026-11-29T12:00:00Z");
    try {
        prof::resolve_profile_source(request("r3", R"({"n_series":85,"panel":"co2","x":true})"), reg.loaders());
        FAIL("expected drift_error");
    } catch (const prof::drift_error& e) {
        CHECK(e.code() == prof::exit_code::config);
        CHECK(std::string(e.what()) ==
              "pinned run 'r3' was measured on different data: its signature {\"n_series\":90,\"panel\":\"co2\"} "
              "differs from this run's {\"n_series\":85,\"panel\":\"co2\",\"x\":true} (key 'n_series': run r3 has 90, "
              "this run has 85; key 'x': run r3 has absent, this run has true); pin a run measured on this data, use "
              "--source auto, or pass --force to use it anyway");
    }
    CHECK(reg.baseline_calls == 0);
}

TEST_CASE("reference evidence keeps its own measured_at, run id and signature, and drops its old warnings") {
    fake_registry reg;
    reg.runs["r1"] = harvest("r1", A, "2026-11-29T10:00:00Z");
    reg.runs["r1"].provenance.warnings = {"an old harvest warning"};
    compute_profile p = prof::resolve_profile_source(request("r1", A), reg.loaders());
    CHECK(p.provenance.measured_at == "2026-11-29T10:00:00Z");
    CHECK(p.provenance.run_id == "r1");
    CHECK(p.provenance.signature->dump() == R"({"n_series":85,"panel":"co2"})");
    CHECK(p.provenance.warnings.empty());
    compute_profile b = prof::resolve_profile_source(request("baseline", A), reg.loaders());
    CHECK(b.provenance.baseline_version == "2026.11.29");
    CHECK(!b.provenance.run_id);
}

TEST_CASE("check_pinned_source reports each state without throwing") {
    fake_registry reg;
    reg.runs["r1"] = harvest("r1", A, "2026-11-29T10:00:00Z");
    using st = prof::pin_check::state;
    struct row {
        prof::resolve_request req;
        st expected;
    };
    std::vector<row> rows = {
        {request("auto", A), st::not_pinned},     {request("baseline", A), st::not_pinned},
        {request("none", A), st::not_pinned},     {request("r1", B, "off"), st::not_pinned},
        {request("r1", A), st::matches},          {request("r1", B), st::drifted},
        {request("r1", std::nullopt), st::unchecked}, {request("missing", B), st::unloadable},
    };
    for (const auto& r : rows) {
        CAPTURE(r.req.source);
        auto c = prof::check_pinned_source(r.req, reg.loaders());
        CHECK(c.status == r.expected);
        CHECK((c.status == st::drifted) == !c.drift_message.empty());
        CHECK((c.status == st::unloadable || c.status == st::unchecked) == !c.warnings.empty());
    }
    CHECK(reg.baseline_calls == 0);
}

TEST_CASE("the registry index reader skips malformed lines with line-numbered warnings") {
    auto idx = prof::parse_registry_index(
        "{\"run_id\":\"r1\",\"signature\":{\"a\":1},\"measured_at\":\"2026-11-29T10:00:00+01:00\"}\n"
        "\n"
        "{\"run_id\":\"r2\",\"signature\":{\"a\":1},\"measured_at\":\"yesterday\"}\n"
        "not json\n"
        "{\"signature\":{\"a\":1}}\n"
        "{\"run_id\":\"r3\",\"signature\":null,\"measured_at\":null}\n",
        "reg/index.jsonl");
    REQUIRE(idx.entries.size() == 2);
    CHECK(idx.entries[0].run_id == "r1");
    CHECK(idx.entries[0].measured_at == prof::parse_rfc3339("2026-11-29T09:00:00Z"));
    CHECK(idx.entries[0].signature->dump() == R"({"a":1})");
    CHECK(idx.entries[1].run_id == "r3");
    CHECK(!idx.entries[1].measured_at);
    CHECK(idx.entries[1].signature->dump() == "null");
    REQUIRE(idx.warnings.size() == 3);
    CHECK(idx.warnings[0] ==
          "reg/index.jsonl:3: field 'measured_at': expected an RFC 3339 time stamp, found \"yesterday\" (line skipped)");
    CHECK(idx.warnings[1] == "reg/index.jsonl:4: expected a JSON object (line skipped)");
    CHECK(idx.warnings[2] == "reg/index.jsonl:5: field 'run_id': missing (line skipped)");
}

TEST_CASE("a badly damaged index names its first ten bad lines and counts the rest") {
    std::string text = "{\"run_id\":\"r1\",\"signature\":{\"a\":1}}\n";
    for (int i = 0; i < 25; ++i) text += "{oops\n";
    auto idx = prof::parse_registry_index(text, "idx");
    CHECK(idx.entries.size() == 1);
    REQUIRE(idx.warnings.size() == 11);
    CHECK(idx.warnings[0].rfind("idx:2: malformed JSON", 0) == 0);
    CHECK(idx.warnings[9].rfind("idx:11: malformed JSON", 0) == 0);
    CHECK(idx.warnings[10] == "idx: 15 more malformed line(s) skipped");
}

TEST_CASE("index lines with identical signature text share one parsed value; equal ones still match") {
    auto idx = prof::parse_registry_index("{\"run_id\":\"r1\",\"signature\":{\"b\":2,\"a\":1}}\n"
                                          "{\"run_id\":\"r2\",\"signature\":{\"b\":2,\"a\":1}}\n"
                                          "{\"run_id\":\"r3\",\"signature\":{\"a\":1,\"b\":2}}\n"
                                          "{\"run_id\":\"r4\"}\n",
                                          "idx");
    REQUIRE(idx.entries.size() == 4);
    CHECK(idx.entries[0].signature == idx.entries[1].signature);  // the same object, parsed once
    CHECK(idx.entries[0].signature != idx.entries[2].signature);
    CHECK(*idx.entries[0].signature == *idx.entries[2].signature);  // key order never matters
    CHECK(idx.entries[3].signature->dump() == "null");
    fake_registry reg;
    for (const char* id : {"r1", "r2", "r3", "r4"}) reg.runs[id] = harvest(id, R"({"a":1,"b":2})", "2026-11-29T10:00:00Z");
    reg.index = idx.entries;
    // No measured_at anywhere: all tie, the greatest matching run_id wins (r4 has no signature).
    CHECK(prof::resolve_profile_source(request("auto", R"({"a":1,"b":2})"), reg.loaders()).provenance.source == "auto:r3");
}

TEST_CASE("a run's file name is its percent-encoded id, so no id can name a path") {
    CHECK(prof::run_file_name("2026-11-29/nightly") == "2026-11-29%2Fnightly.json");
    CHECK(prof::run_file_name("..") == "%2E%2E.json");
}

namespace {
using prof::test::temp_dir;

// What prof-resolve answers for `source` (a pin or "auto") and signature A over the registry
// directory `dir`.
compute_profile resolve_in_dir(const std::string& dir, const std::string& source) {
    return prof::resolve_profile_source(request(source, A), prof::test::directory_registry(dir));
}
}  // namespace

TEST_CASE("a registry directory on disk resolves a pin and the newest match through real files") {
    temp_dir d;
    prof::make_dirs(d.path + "/runs");
    prof::write_file_atomic(d.path + "/runs/" + prof::run_file_name("night/1"),
                            prof::write_profile(harvest("night/1", A, "2026-11-29T10:00:00Z")));
    prof::write_file_atomic(d.path + "/runs/" + prof::run_file_name("night/2"),
                            prof::write_profile(harvest("night/2", A, "2026-11-29T11:00:00Z")));
    prof::write_file_atomic(d.path + "/index.jsonl",
                            "{\"run_id\":\"night/1\",\"signature\":" + sig(A).dump() +
                                ",\"measured_at\":\"2026-11-29T10:00:00Z\"}\n"
                                "{\"run_id\":\"night/2\",\"signature\":" +
                                sig(A).dump() + ",\"measured_at\":\"2026-11-29T11:00:00Z\"}\n");
    auto io = prof::test::directory_registry(d.path);
    CHECK(prof::resolve_profile_source(request("auto", A), io).provenance.source == "auto:night/2");
    CHECK(prof::resolve_profile_source(request("night/1", A), io).provenance.source == "run:night/1");

    // The file of night/2 now claims to be another run's harvest: refused, the older one wins.
    prof::write_file_atomic(d.path + "/runs/" + prof::run_file_name("night/2"),
                            prof::write_profile(harvest("other", A, "2026-11-29T11:00:00Z")));
    auto p = prof::resolve_profile_source(request("auto", A), io);
    CHECK(p.provenance.source == "auto:night/1");
    CHECK(any_contains(p.provenance.warnings, "the file is the harvest of run 'other', not 'night/2'"));
}

TEST_CASE("an unreadable registry directory is a warning, not an error") {
    temp_dir d;
    prof::make_dirs(d.path + "/index.jsonl");  // a directory where the index should be: read fails
    auto p = resolve_in_dir(d.path, "auto");
    CHECK(p.provenance.basis == "assumed");
    CHECK(any_contains(p.provenance.warnings, "index.jsonl': not a regular file"));
}

TEST_CASE("a FIFO planted in a registry directory is refused without hanging") {
    temp_dir d;
    prof::make_dirs(d.path + "/runs");
    REQUIRE(::mkfifo((d.path + "/runs/" + prof::run_file_name("r1")).c_str(), 0600) == 0);
    auto p = resolve_in_dir(d.path, "r1");
    CHECK(p.provenance.basis == "assumed");
    CHECK(any_contains(p.provenance.warnings, "r1.json': not a regular file"));
}

TEST_CASE("--signature must be one readable JSON object") {
    temp_dir d;
    CHECK_THROWS_AS(prof::read_signature_file(d.path + "/absent.json"), prof::no_input_error);
    // A directory opens but cannot be read: the read error every input gives, as 66.
    CHECK_THROWS_WITH_AS(prof::read_signature_file(d.path), (d.path + ": read error: Is a directory").c_str(),
                         prof::no_input_error);
    prof::write_file_atomic(d.path + "/array.json", "[1,2]");
    prof::write_file_atomic(d.path + "/bad.json", "{\"a\":");
    prof::write_file_atomic(d.path + "/ok.json", "{\n  \"b\": 2,\n  \"a\": 1\n}\n");
    try {
        prof::read_signature_file(d.path + "/array.json");
        FAIL("expected input_error");
    } catch (const prof::input_error& e) {
        CHECK(e.code() == prof::exit_code::data_err);
        CHECK(std::string(e.what()) == d.path + "/array.json:1: --signature: expected a JSON object, found an array");
    }
    CHECK_THROWS_AS(prof::read_signature_file(d.path + "/bad.json"), prof::input_error);
    CHECK(prof::read_signature_file(d.path + "/ok.json").dump() == R"({"a":1,"b":2})");
}

TEST_CASE("a gzip --signature is read inflated, whatever its name") {
    // The gzip member of {"a":1} (python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.compress(b"{\"a\":1}", mtime=0))').
    const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0x54,
                                0xb2, 0x32, 0xac, 0x05, 0x00, 0xaf, 0xac, 0x1b, 0x56, 0x07, 0x00, 0x00, 0x00};
    temp_dir d;
    prof::write_file_atomic(d.path + "/sig.json", std::string(reinterpret_cast<const char*>(gz), sizeof gz));
    CHECK(prof::read_signature_file(d.path + "/sig.json").dump() == R"({"a":1})");
}

TEST_CASE("a baseline file without a baseline_version is refused") {
    temp_dir d;
    compute_profile p = baseline_profile();
    prof::write_file_atomic(d.path + "/b.json", prof::write_profile(p));
    CHECK(prof::load_baseline_file(d.path + "/b.json").provenance.baseline_version == "2026.11.29");
    p.provenance.baseline_version.reset();
    prof::write_file_atomic(d.path + "/nov.json", prof::write_profile(p));
    CHECK_THROWS_WITH_AS(prof::load_baseline_file(d.path + "/nov.json"),
                         doctest::Contains("a baseline must carry its version"), prof::input_error);
}

TEST_CASE("the installed baseline is looked for beside the binary, then in the source tree") {
    temp_dir d;
    auto exe = d.path + "/build/bin/prof-resolve";
    CHECK(prof::baseline_candidates(exe) ==
          std::vector<std::string>{d.path + "/build/share/prof/baseline.json", d.path + "/share/prof/baseline.json"});
    auto load = prof::installed_baseline_loader(exe);
    std::string expected = "no baseline is installed: looked for " + d.path + "/build/share/prof/baseline.json and " +
                           d.path + "/share/prof/baseline.json; pass --baseline FILE, or --baseline none to do without";
    CHECK_THROWS_WITH_AS(load(), expected.c_str(), prof::no_input_error);
    prof::make_dirs(d.path + "/share/prof");
    prof::write_file_atomic(d.path + "/share/prof/baseline.json", prof::write_profile(baseline_profile()));
    CHECK(load().provenance.baseline_version == "2026.11.29");
}

TEST_CASE("a registry server that accepts but never answers times out into a warning, not an error") {
    // A real socket on 127.0.0.1 that listens and never accepts: the kernel completes the
    // connection, the request goes out, no reply ever comes.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/reg";
    prof::http_options o = prof::registry_http_options();
    o.timeout_s = 0.3;
    o.retries = 0;
    auto io = prof::registry_loaders(prof::http_fetch(url, o), url);
    io.load_baseline = [] { return baseline_profile(); };
    auto p = prof::resolve_profile_source(request("auto", A), io);
    ::close(fd);
    CHECK(p.provenance.source == "baseline");
    REQUIRE(p.provenance.warnings.size() == 1);
    CHECK(p.provenance.warnings[0].rfind("registry " + url + " could not be searched (" + url + "/index.jsonl: ", 0) == 0);
    CHECK(p.provenance.warnings[0].find("timed out") != std::string::npos);
}

TEST_CASE("the run ids nearest a pin are by edit distance, the greater id first on a tie") {
    std::vector<prof::registry_entry> idx = {entry("nightly-1128", A, "2026-11-28T02:00:00Z"),
                                             entry("nightly-1129", A, "2026-11-29T02:00:00Z"),
                                             entry("weekly/48", A, "2026-11-28T03:00:00Z"),
                                             entry("nightly-1129", A, "2026-11-29T02:00:00Z")};
    // nightly-9999 → nightly-1128 and nightly-1129: 4 substitutions each; weekly/48: far.
    CHECK(prof::nearest_run_ids("nightly-9999", idx) ==
          std::vector<std::string>{"nightly-1129", "nightly-1128", "weekly/48"});
    CHECK(prof::nearest_run_ids("nightly-1128", idx, 1) == std::vector<std::string>{"nightly-1128"});
    CHECK(prof::nearest_run_ids("x", {}).empty());
}

TEST_CASE("a pin missing from a readable registry warns with the nearest ids; --strict refuses it") {
    fake_registry r;
    r.index = {entry("nightly-1128", A, "2026-11-28T02:00:00Z"), entry("nightly-1129", A, "2026-11-29T02:00:00Z")};
    auto rq = request("nightly-9999", A);
    auto p = prof::resolve_profile_source(rq, r.loaders());
    CHECK(p.provenance.source == "baseline");
    CHECK(any_contains(p.provenance.warnings, "registry reg does not list it (nearest: nightly-1129, nightly-1128)"));
    rq.strict = true;
    int code = 0;
    try {
        prof::resolve_profile_source(rq, r.loaders());
    } catch (const prof::error& e) {
        code = static_cast<int>(e.code());
        CHECK(std::string(e.what()) ==
              "--strict: pinned run 'nightly-9999' is not in registry reg (nearest: nightly-1129, nightly-1128); pin "
              "one of its runs, or drop --strict to fall back");
    }
    CHECK(code == 65);
    // A registry that fails for another reason is not asked for its index (a second wait).
    fake_registry down;
    down.run_failures["nightly-9999"] = "reg: timed out";
    int calls_before = down.index_calls;
    auto q = prof::resolve_profile_source(request("nightly-9999", A), down.loaders());
    CHECK(down.index_calls == calls_before);
    CHECK(!any_contains(q.provenance.warnings, "nearest"));
}

TEST_CASE("--strict refuses a result a planner would have to assume") {
    fake_registry r;
    r.have_baseline = false;
    auto rq = request("auto", std::nullopt);
    rq.strict = true;
    CHECK_THROWS_WITH(prof::resolve_profile_source(rq, r.loaders()),
                      doctest::Contains("--strict: the resolved profile (source none) leaves a planner to assume every "
                                        "axis (basis assumed: no evidence)"));
    fake_registry b;  // the baseline has every axis
    CHECK(prof::resolve_profile_source(rq, b.loaders()).provenance.source == "baseline");
}
