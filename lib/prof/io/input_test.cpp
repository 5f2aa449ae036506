// Unit tests of the one record loop (input.hpp): the bad-line budget over all inputs, its
// closing warning, collect mode, and what a record's place carries.
#include "prof/io/input.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/test_support.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {
using prof::test::temp_dir;

// What `fn` writes on stderr (fd 2, where warn() writes), captured through a temporary file.
template <class F>
std::string stderr_of(F&& fn) {
    std::FILE* tmp = std::tmpfile();
    REQUIRE(tmp);
    int saved = ::dup(2);
    ::dup2(::fileno(tmp), 2);
    try {
        fn();
    } catch (...) {
        ::dup2(saved, 2);
        ::close(saved);
        std::fclose(tmp);
        throw;
    }
    ::dup2(saved, 2);
    ::close(saved);
    std::string out;
    std::rewind(tmp);
    for (int c; (c = std::fgetc(tmp)) != EOF;) out += static_cast<char>(c);
    std::fclose(tmp);
    return out;
}

std::string write(const temp_dir& dir, const std::string& name, const std::string& text) {
    std::string path = dir.path + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// The "x" member of each record, as text.
std::string x_of(simdjson::ondemand::object& obj) {
    std::string out;
    for (auto f : obj)
        if (std::string_view(f.unescaped_key()) == "x") out = std::string(prof::trimmed_token(f.value()));
    return out;
}

struct skipped_line {
    std::string source;
    std::size_t line;
    std::string text, what;
};
}  // namespace

TEST_CASE("collect mode hands each skipped line's place and reason to the caller and warns nothing") {
    prof::line_reader in(prof::string_source("{\"x\":1}\n{oops\n\n[2]\n{\"x\":3}\n", "idx"));
    prof::bad_line_policy policy(5);
    std::vector<skipped_line> skipped;
    policy.collect = [&](const prof::record_place& at, const std::string& what) {
        skipped.push_back({std::string(at.source), at.line, std::string(at.text), what});
    };
    std::vector<std::string> xs;
    prof::jsonl_stats st;
    std::string err = stderr_of([&] {
        st = prof::for_each_record(in, policy, [&](simdjson::ondemand::object& o, const prof::record_place&) {
            xs.push_back(x_of(o));
        });
    });
    CHECK(err.empty());  // neither "(skipped)" lines nor the closing count
    CHECK(xs == std::vector<std::string>{"1", "3"});
    CHECK(st.records == 2);
    CHECK(st.bad_lines == 2);
    // Line 3 is blank: not a line to skip, but counted in the numbering, so [2] is line 4.
    REQUIRE(skipped.size() == 2);
    CHECK(skipped[0].source == "idx");
    CHECK(skipped[0].line == 2);
    CHECK(skipped[0].text == "{oops");
    CHECK(skipped[0].what.rfind("malformed JSON", 0) == 0);
    CHECK(skipped[1].line == 4);
    CHECK(skipped[1].text == "[2]");
    CHECK(skipped[1].what == "expected a JSON object");
}

TEST_CASE("collect mode still refuses the line past its budget, naming source and line") {
    prof::line_reader in(prof::string_source("{oops\n{\"x\":1}\n[2]\n", "idx"));
    prof::bad_line_policy policy(1);
    std::size_t collected = 0;
    policy.collect = [&](const prof::record_place&, const std::string&) { ++collected; };
    CHECK_THROWS_WITH_AS(prof::for_each_record(in, policy, [](simdjson::ondemand::object&, const prof::record_place&) {}),
                         "idx:3: expected a JSON object", prof::input_error);
    CHECK(collected == 1);
}

TEST_CASE("a field error thrown by the record's reader is a skipped line like bad JSON") {
    prof::line_reader in(prof::string_source("{\"x\":1}\n{\"x\":\"no\"}\n", "idx"));
    prof::bad_line_policy policy(1);
    std::vector<std::string> whats;
    policy.collect = [&](const prof::record_place&, const std::string& what) { whats.push_back(what); };
    prof::for_each_record(in, policy, [](simdjson::ondemand::object& o, const prof::record_place&) {
        if (x_of(o) == "\"no\"") throw prof::field_error("field 'x': expected a number, found \"no\"");
    });
    CHECK(whats == std::vector<std::string>{"field 'x': expected a number, found \"no\""});
}

TEST_CASE("a record's place carries its source, line and the line's text as read") {
    // CRLF and a leading BOM are not part of the text; the second record is on line 3.
    prof::line_reader in(prof::string_source("\xEF\xBB\xBF{\"x\":1}\r\n\n{\"x\": 2 }\n", "in.jsonl"));
    std::vector<std::string> seen;
    prof::for_each_record(in, prof::bad_line_policy(), [&](simdjson::ondemand::object&, const prof::record_place& at) {
        seen.push_back(std::string(at.source) + ":" + std::to_string(at.line) + ":" + std::string(at.text));
    });
    CHECK(seen == std::vector<std::string>{"in.jsonl:1:{\"x\":1}", "in.jsonl:3:{\"x\": 2 }"});
}

TEST_CASE("the budget is shared by all inputs and one closing warning counts every skipped line") {
    temp_dir dir("input");
    std::string a = write(dir, "a.jsonl", "{\"x\":1}\n{oops\n");
    std::string b = write(dir, "b.jsonl", "[1]\n{\"x\":2}\n");
    std::vector<std::string> xs;
    auto read = [&](std::size_t max) {
        xs.clear();
        return prof::for_each_record({a, b}, prof::bad_line_policy(max, "cell line"),
                                     [&](simdjson::ondemand::object& o, const prof::record_place&) { xs.push_back(x_of(o)); });
    };
    std::string err = stderr_of([&] { CHECK(read(2).bad_lines == 2); });
    CHECK(xs == std::vector<std::string>{"1", "2"});
    const std::string warning = prof::program_name() + ": warning: ";
    CHECK(err.find(warning + a + ":2: malformed JSON") == 0);
    CHECK(err.find(warning + b + ":1: expected a JSON object (skipped)\n") != std::string::npos);
    // One closing line, last, for both files' lines.
    const std::string closing = warning + "skipped 2 malformed cell line(s)\n";
    REQUIRE(err.size() >= closing.size());
    CHECK(err.substr(err.size() - closing.size()) == closing);
    // A budget of 1 covers a.jsonl's line; b.jsonl's first line is then the error.
    stderr_of([&] {
        CHECK_THROWS_WITH_AS(read(1), (b + ":1: expected a JSON object").c_str(), prof::input_error);
    });
}

TEST_CASE("a record file compressed with gzip is read by its magic bytes, whatever its name") {
    temp_dir dir("input");
    // gzip of "{\"x\":7}\n" (python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.compress(b"{\"x\":7}\n", mtime=0))').
    const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0xaa, 0x50,
                                0xb2, 0x32, 0xaf, 0xe5, 0x02, 0x00, 0xa7, 0x8c, 0xbc, 0x54, 0x08, 0x00, 0x00, 0x00};
    std::string path = write(dir, "fits.jsonl", std::string(reinterpret_cast<const char*>(gz), sizeof gz));
    std::vector<std::string> xs;
    prof::for_each_record({path}, prof::bad_line_policy(),
                          [&](simdjson::ondemand::object& o, const prof::record_place&) { xs.push_back(x_of(o)); });
    CHECK(xs == std::vector<std::string>{"7"});
}
