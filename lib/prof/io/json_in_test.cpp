// The JSON Lines reader: BOM, CRLF, blank lines, line-numbered errors, bad-line budget.
#include "prof/io/json_in.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/input.hpp"
#include "prof/core/test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>
#include <vector>
#include <zlib.h>

using namespace prof;

namespace {
// A record reader of this test's own, through the field readers of json_in.hpp: `ts_id` a
// required string, `n_obs` an optional count, anything else ignored.
std::string read_ts_id(simdjson::ondemand::object& o) {
    std::optional<std::string> ts_id;
    for (auto field : o) {
        std::string_view key = field.unescaped_key();
        if (key == "ts_id") ts_id = require_string(field.value(), "ts_id");
        else if (key == "n_obs") read_count(field.value(), "n_obs");
    }
    if (!ts_id) throw field_error("field 'ts_id': missing");
    return *ts_id;
}
std::vector<std::string> ids(const std::string& text, std::size_t max_bad = 0, std::size_t* bad = nullptr) {
    line_reader in(string_source(text, "in.jsonl"));
    std::vector<std::string> out;
    auto st = for_each_object(in, max_bad, [&](simdjson::ondemand::object& o, std::size_t line) {
        out.push_back(read_ts_id(o) + "@" + std::to_string(line));
    });
    if (bad) *bad = st.bad_lines;
    return out;
}
// Runs `body` in a forked child whose stderr is a pipe (the body ends the child with _exit; one
// that returns exits 5): the child's exit code and what it wrote to stderr.
std::pair<int, std::string> in_child(const std::function<void()>& body) {
    int err[2];
    REQUIRE(::pipe(err) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(err[1], 2);
        body();
        _exit(5);
    }
    ::close(err[1]);
    std::string said;
    char buf[512];
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
    ::close(err[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    return {WEXITSTATUS(status), said};
}
std::string error_of(const std::string& text) {
    try {
        ids(text);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("a leading BOM, CRLF line ends and blank lines are tolerated and lines keep their numbers") {
    std::string text = "\xEF\xBB\xBF{\"ts_id\":\"a\",\"model_type\":\"m\"}\r\n\r\n   \n{\"ts_id\":\"b\",\"model_type\":\"m\"}";
    CHECK(ids(text) == std::vector<std::string>{"a@1", "b@4"});
}

TEST_CASE("a malformed line is an error naming the source and the line") {
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\"}\n{\"ts_id\": oops}\n").rfind("in.jsonl:2: malformed JSON", 0) == 0);
    CHECK(error_of("[1,2]\n") == "in.jsonl:1: expected a JSON object");
    // Whatever follows a whole object (garbage, a NUL, a second object) is named as such.
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\"} trailing\n") ==
          "in.jsonl:1: unexpected content after the JSON object");
    CHECK(error_of(std::string("{\"ts_id\":\"a\",\"model_type\":\"m\"}") + '\0' + "\n") ==
          "in.jsonl:1: unexpected content after the JSON object");
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\"} {}\n") == "in.jsonl:1: unexpected content after the JSON object");
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\"").rfind("in.jsonl:1: malformed JSON", 0) == 0);
}

TEST_CASE("a wrong type names the field and what was found") {
    CHECK(error_of("{\"ts_id\":7,\"model_type\":\"m\"}") == "in.jsonl:1: field 'ts_id': expected a string, found 7");
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\",\"n_obs\":\"abc\"}") ==
          "in.jsonl:1: field 'n_obs': expected a non-negative integer, found \"abc\"");
    CHECK(error_of("{\"ts_id\":\"a\",\"model_type\":\"m\",\"n_obs\":-3}") ==
          "in.jsonl:1: field 'n_obs': expected a non-negative integer, found -3");
    CHECK(error_of("{\"model_type\":\"m\"}") == "in.jsonl:1: field 'ts_id': missing");
}

TEST_CASE("invalid UTF-8 is bad input") {
    CHECK(error_of("{\"ts_id\":\"a\xff\",\"model_type\":\"m\"}") == "in.jsonl:1: invalid UTF-8");
}

TEST_CASE("--max-bad-lines skips up to N bad lines and counts them; the next one is fatal") {
    std::size_t bad = 0;
    auto got = ids("{\"ts_id\":\"a\",\"model_type\":\"m\"}\nnope\n{\"ts_id\":\"b\",\"model_type\":\"m\"}\n", 1, &bad);
    CHECK(got == std::vector<std::string>{"a@1", "b@3"});
    CHECK(bad == 1);
    CHECK_THROWS_AS(ids("nope\nnope\n", 1), input_error);
}

TEST_CASE("a line longer than the read buffer is read whole") {
    std::string big(3 << 20, 'x');
    auto got = ids("{\"ts_id\":\"" + big + "\",\"model_type\":\"m\"}\n{\"ts_id\":\"z\",\"model_type\":\"m\"}\n");
    REQUIRE(got.size() == 2);
    CHECK(got[0].size() == big.size() + 2);
    CHECK(got[1] == "z@2");
}

TEST_CASE("counts are read exactly up to 2^64-1 and refused above") {
    auto one = [](const std::string& v) {
        line_reader in(string_source("{\"x\":" + v + "}", "t"));
        std::optional<std::uint64_t> got;
        for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) {
            for (auto f : o) got = read_count(f.value(), "x");
        });
        return got;
    };
    CHECK(one("18446744073709551615").value() == 18446744073709551615ull);
    CHECK(one("\"9007199254740993\"").value() == 9007199254740993ull);
    CHECK(one("1e3").value() == 1000);
    CHECK_FALSE(one("null").has_value());
    CHECK_FALSE(one("\"NaN\"").has_value());
    CHECK_THROWS_AS(one("18446744073709551616"), input_error);
    CHECK_THROWS_AS(one("1.5"), input_error);
    // A number whose value is exactly an integer is that integer, worked out from its digits,
    // not through a double (which would round 2^52 + 0.5 to an integer, or 1e-400 to 0).
    CHECK(one("1.0").value() == 1);
    CHECK(one("\"12.50e1\"").value() == 125);
    CHECK(one("0.000e7").value() == 0);
    CHECK(one("\"0012\"").value() == 12);
    CHECK(one("1.8446744073709551615e19").value() == 18446744073709551615ull);
    CHECK(one("9007199254740993.0").value() == 9007199254740993ull);  // above 2^53, exact
    for (const char* fraction : {"\"4503599627370496.5\"", "1.0000000000000000001", "1e-400", "\"1E-400\"", "0.5",
                                 "1e-5", "\"-0\"", "\"-1\""})
        CHECK_THROWS_WITH_AS(one(fraction), doctest::Contains("expected a non-negative integer"), input_error);
    for (const char* big : {"1e20", "1e400", "\"1.8446744073709551616e19\"", "18446744073709551616"})
        CHECK_THROWS_WITH_AS(one(big), doctest::Contains("is above 2^64-1"), input_error);
}

TEST_CASE("json values compare as values: key order never matters") {
    auto a = parse_json_text(R"({"b":[1,2],"a":{"y":1,"x":"s"}})");
    auto b = parse_json_text(R"({"a":{"x":"s","y":1.0},"b":[1,2]})");
    CHECK(a == b);
    CHECK(a.dump() == R"({"a":{"x":"s","y":1},"b":[1,2]})");
    CHECK_FALSE(a == parse_json_text(R"({"a":{"x":"s","y":2},"b":[1,2]})"));
}

TEST_CASE("canonical dump is a fixed point: negative zero dumps as 0") {
    // -0e08004 is the double -0.0; dumped as "-0" it would read back as the integer 0 and dump
    // as "0", so two canonical forms of one document would digest differently.
    auto v = parse_json_text(R"({"t": -0e08004, "u": -0.0, "w": -1.5})");
    CHECK(v.dump() == R"({"t":0,"u":0,"w":-1.5})");
    CHECK(parse_json_text(v.dump()).dump() == v.dump());
}

TEST_CASE("a line skipped for content after its object leaves no trace: the callback never saw it") {
    std::size_t bad = 0;
    auto got = ids("{\"ts_id\":\"a\",\"model_type\":\"m\"} {\"x\":1}\n{\"ts_id\":\"b\",\"model_type\":\"m\"}\n", 1, &bad);
    CHECK(got == std::vector<std::string>{"b@2"});
    CHECK(bad == 1);
}

TEST_CASE("a fast line reader consumes what it can and hands the rest to the JSON parser") {
    line_reader in(string_source("FAST\n{\"ts_id\":\"a\",\"model_type\":\"m\"}\nFAST\n", "t"));
    int fast = 0;
    std::vector<std::string> slow;
    auto st = for_each_object(
        in, 0, [&](simdjson::ondemand::object& o, std::size_t) { slow.push_back(read_ts_id(o)); },
        [&](std::string_view text) { return text == "FAST" && ++fast > 0; });
    CHECK(fast == 2);
    CHECK(slow == std::vector<std::string>{"a"});
    CHECK(st.records == 3);
}

namespace {
std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }
}  // namespace

TEST_CASE("one long line arriving in small reads is read in time linear in its length" * doctest::timeout(5)) {
    // 32 MiB in 1 KiB reads: 32,768 reads. Searching the whole line again after each read would
    // scan 32,768 * 16 MiB on average = 5.5e11 bytes (minutes); once is 3.4e7 bytes (milliseconds).
    std::string line = "{\"a\":\"" + std::string(32u << 20, 'x') + "\"}\n{}\n";
    line_reader in(string_source(line, "pipe", 1024));
    text_line l;
    REQUIRE(in.next(l));
    CHECK(l.number == 1);
    CHECK(l.text.size() == (32u << 20) + 8);
    REQUIRE(in.next(l));
    CHECK(l.text == "{}");
    CHECK_FALSE(in.next(l));
}

TEST_CASE("nesting past 1024 levels is refused with one message on every JSON path, without recursion") {
    CHECK(json_depth_overflow(nested(1024)) == std::string_view::npos);
    CHECK(json_depth_overflow(nested(1025)) == 1024);  // the 1025th '[' opens the level too many
    CHECK(json_depth_overflow("[\"[[[[\\\"[[[\"]") == std::string_view::npos);  // brackets in strings don't count
    CHECK(json_depth_message() == "JSON nested deeper than 1024 levels");
    // A whole text (100,000 levels overflowed the stack before the bound).
    CHECK_THROWS_WITH_AS(parse_json_text(nested(100000)), "JSON nested deeper than 1024 levels", field_error);
    CHECK(parse_json_text(nested(1024)).arr.size() == 1);
    CHECK_THROWS_WITH_AS(parse_object_text("{\"a\":" + nested(100000) + "}", [](simdjson::ondemand::object&) {}),
                         "JSON nested deeper than 1024 levels", field_error);
    // A JSON Lines record.
    CHECK(error_of("{\"ts_id\":" + nested(2000) + "}\n") == "in.jsonl:1: JSON nested deeper than 1024 levels");
    CHECK(error_of("{\"ts_id\":" + nested(100000) + "}\n") == "in.jsonl:1: JSON nested deeper than 1024 levels");
    // A value read into a json_value from an on-demand document that was never pre-checked.
    std::string deep = "{\"s\":" + nested(5000) + "}";
    simdjson::padded_string padded(deep);
    simdjson::ondemand::parser parser;
    auto doc = parser.iterate(padded);
    CHECK_THROWS_WITH_AS(read_json_value(doc["s"].value()), "JSON nested deeper than 1024 levels", field_error);
}

TEST_CASE("1024 levels read back whole without recursion, and every member after a nested one is kept") {
    // Objects 1024 deep, keys in order and no blanks: the canonical dump is the text itself.
    std::string deep;
    for (int k = 0; k < 1023; ++k) deep += "{\"k\":";
    deep += "{}" + std::string(1023, '}');
    CHECK(parse_json_text(deep).dump() == deep);
    CHECK(parse_json_text(nested(1024)).dump() == nested(1024));
    CHECK(parse_json_object_file("{\"a\":" + nested(1023) + "}", "sig.json", "--signature").dump() ==
          "{\"a\":" + nested(1023) + "}");
    // Members after nested containers, at every level; keys sorted, the last duplicate wins.
    CHECK(parse_json_text(R"({"b":[1,{"y":{},"x":[2,[3,[]]]},4],"a":{"k":[[],[5]]},"a":"dup","c":null})").dump() ==
          R"({"a":"dup","b":[1,{"x":[2,[3,[]]],"y":{}},4],"c":null})");
    CHECK(parse_json_text(R"([[[1],2],{"a":[{"b":true}],"c":"s"},[],{}])").dump() ==
          R"([[[1],2],{"a":[{"b":true}],"c":"s"},[],{}])");
    CHECK_THROWS_AS(parse_json_text(R"({"a":[1,{"b":2]})"), field_error);
}

TEST_CASE("a whole-file JSON object names the line at fault") {
    auto err = [](const std::string& text) {
        try {
            parse_json_object_file(text, "sig.json", "--signature");
        } catch (const input_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(parse_json_object_file("{\n \"a\": 1\n}\n", "s", "--signature").dump() == R"({"a":1})");
    CHECK(err("") == "sig.json:1: --signature: the file is empty; expected one JSON object");
    CHECK(err("{\n\"a\": 1,\n\"b\": oops\n}") == "sig.json:3: --signature: malformed JSON (near byte 16: 'o')");
    CHECK(err("{\"a\":1,\n\"b\":[2,\n") == "sig.json:2: --signature: malformed JSON (the text ends inside the value)");
    CHECK(err("{\"a\":1}\n\n{\"b\":2}\n") == "sig.json:3: --signature: unexpected content after the JSON object");
    CHECK(err("\n[1]") == "sig.json:2: --signature: expected a JSON object, found an array");
    CHECK(err("{\"a\":\n\"\xff\"}") == "sig.json:2: --signature: invalid UTF-8");
    CHECK(err("{\"a\":\n" + nested(3000) + "}") == "sig.json:2: --signature: JSON nested deeper than 1024 levels");
}

namespace {
std::string gzip_of(const std::string& data, int flush_at = -1) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, data.size()) + 1024, '\0');
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    std::size_t cut = flush_at < 0 ? data.size() : static_cast<std::size_t>(flush_at);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(cut);
    // Z_SYNC_FLUSH at the cut: everything before it decodes, and the stream simply stops.
    REQUIRE(deflate(&z, flush_at < 0 ? Z_FINISH : Z_SYNC_FLUSH) == (flush_at < 0 ? Z_STREAM_END : Z_OK));
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}
}  // namespace

TEST_CASE("gunzip checks the trailer: a stream cut at a flush point is an I/O error, not a short input") {
    std::string body;
    for (int k = 0; k < 20000; ++k) body += "{\"k\":" + std::to_string(k) + "}\n";
    CHECK(read_all(*gunzip(string_source(gzip_of(body), "x.gz"))) == body);
    CHECK(read_all(*gunzip(string_source("", "x.gz"))).empty());
    // Read one byte at a time from a source that hands out one byte at a time: the same bytes.
    {
        auto g = gunzip(string_source(gzip_of(body), "x.gz", 1));
        std::string out;
        char c;
        while (g->read(&c, 1) == 1) out.push_back(c);
        CHECK(out == body);
    }
    std::string cut = gzip_of(body, static_cast<int>(body.size() / 2));
    CHECK_THROWS_WITH_AS(read_all(*gunzip(string_source(cut, "x.gz"))), "x.gz: gzip stream cut short", io_error);
    // A wrong CRC-32 or length in the trailer is corrupt data.
    std::string bad = gzip_of(body);
    bad[bad.size() - 5] ^= 1;  // inside the CRC-32
    CHECK_THROWS_AS(read_all(*gunzip(string_source(bad, "x.gz"))), io_error);
    bad = gzip_of(body);
    bad[bad.size() - 2] ^= 1;  // inside ISIZE
    CHECK_THROWS_AS(read_all(*gunzip(string_source(bad, "x.gz"))), io_error);
}

TEST_CASE("corrupt gzip data is called corrupt whatever the read size, never 'cut short'") {
    // A fuzz finding (fuzz/corpus/gunzip/repro-error-message-depends-on-read-size): a gzip
    // header and deflate data with a back-reference before the start of the output. With a
    // one-byte output buffer zlib has taken all the input before it reaches the bad distance,
    // and the decoder, seeing the input at its end, said "cut short" instead of asking zlib.
    const unsigned char bad[] = {0x1f, 0x8b, 0x08, 0x00, 0x8b, 0x9d, 0x0e, 0x6b, 0x02, 0xff, 0x4b,
                                 0x5c, 0x75, 0xe4, 0x0e, 0x6b, 0x02, 0xff, 0x4b, 0xe2, 0x02, 0x00};
    std::string data(reinterpret_cast<const char*>(bad), sizeof bad);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{4096}}) {
        CAPTURE(chunk);
        auto g = gunzip(string_source(data, "x.gz"));
        std::vector<char> buf(chunk);
        CHECK_THROWS_WITH_AS(
            [&] {
                while (g->read(buf.data(), buf.size()) > 0) {
                }
            }(),
            "x.gz: gzip error: invalid distance too far back", io_error);
    }
}

TEST_CASE("a gzip stream of many decoder chunks reads back whole at every read size, and a bad trailer fails after the bytes before it") {
    // Two members of about 3.4 MiB each: more decoded bytes than the decoder's ring holds
    // (4 chunks of 1 MiB), so its chunks are filled, handed over and reused many times.
    std::string first, second;
    for (int k = 0; k < 200000; ++k) first += "{\"k\":" + std::to_string(k) + ",\"pad\":\"abcdef\"}\n";
    for (int k = 200000; k < 400000; ++k) second += "{\"k\":" + std::to_string(k) + ",\"pad\":\"abcdef\"}\n";
    const std::string body = first + second;
    const std::string data = gzip_of(first) + gzip_of(second);
    for (std::size_t size : {std::size_t{7}, std::size_t{65536}, std::size_t{3} << 20}) {
        CAPTURE(size);
        for (std::size_t source_read : {std::size_t{4096}, static_cast<std::size_t>(-1)}) {
            auto g = gunzip(string_source(data, "x.gz", source_read));
            std::string out;
            std::vector<char> buf(size);
            for (std::size_t n; (n = g->read(buf.data(), buf.size())) > 0;) out.append(buf.data(), n);
            CHECK(out.size() == body.size());
            CHECK(out == body);
        }
    }
    // A wrong CRC-32 in the last member's trailer: an I/O error, raised only once the bytes
    // decoded before it were read: a prefix of the body, short of it by less than what one
    // decoder call yields (a chunk, 1 MiB).
    std::string bad = data;
    bad[bad.size() - 5] ^= 1;
    auto g = gunzip(string_source(bad, "x.gz"));
    std::string out;
    char buf[65536];
    CHECK_THROWS_WITH_AS(
        [&] {
            for (std::size_t n; (n = g->read(buf, sizeof buf)) > 0;) out.append(buf, n);
        }(),
        "x.gz: gzip error: incorrect data check", io_error);
    CHECK(body.compare(0, out.size(), out) == 0);
    CHECK(out.size() + (std::size_t{1} << 20) > body.size());
}

TEST_CASE("a .gz file cut at a flush point is refused by open_input with the same message") {
    std::string body;
    for (int k = 0; k < 5000; ++k) body += "{\"k\":" + std::to_string(k) + "}\n";
    test::temp_dir tmp("json-in");
    const std::string& dir = tmp.path;
    std::string path = dir + "/cut.jsonl.gz";
    std::string cut = gzip_of(body, 1000);
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(cut.data(), 1, cut.size(), f);
    std::fclose(f);
    auto src = open_input(path);
    CHECK_THROWS_WITH_AS(read_all(*src), (path + ": gzip stream cut short").c_str(), io_error);
}

namespace {
// Every line a reader hands out: number, text and whether UTF-8 was checked already.
std::vector<std::tuple<std::size_t, std::string, bool>> lines_of(line_reader& in) {
    std::vector<std::tuple<std::size_t, std::string, bool>> out;
    text_line l;
    while (in.next(l)) out.emplace_back(l.number, std::string(l.text), l.valid_utf8());
    return out;
}

void write_file(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
}
}  // namespace

TEST_CASE("a regular file is read in place with the lines a stream gives, at every size around a page") {
    test::temp_dir tmp("mapped");
    // Sizes where the file ends exactly at, just before and just past a page boundary, with and
    // without a final '\n', a blank line, CRLF, a BOM, invalid UTF-8 and one line longer than a
    // page: the in-place reader must hand out the same lines as the copying one, and every line
    // must have SIMDJSON_PADDING readable bytes after it (ASan builds check the reads).
    for (std::size_t size : {1u, 63u, 64u, 65u, 4031u, 4032u, 4033u, 4095u, 4096u, 4097u, 8192u, 12345u}) {
        for (bool final_newline : {true, false}) {
            std::string text = "\xEF\xBB\xBF{\"a\":1}\r\n\n   \n{\"b\":\"\xC3\xA9\"}\n\xFF\xFE bad\n" + std::string(5000, 'x') + "\n";
            while (text.size() < size) text += "{\"k\":" + std::to_string(text.size()) + "}\n";
            text.resize(size);
            if (final_newline && !text.empty()) text.back() = '\n';
            if (!final_newline && text.back() == '\n') text.back() = 'z';
            std::string path = tmp.path + "/f.jsonl";
            write_file(path, text);
            line_reader mapped(open_input(path));
            line_reader copied(string_source(text, path, 4000));
            INFO("size " << size << (final_newline ? " ending in \\n" : ""));
            CHECK(lines_of(mapped) == lines_of(copied));
            CHECK(mapped.bytes_read() == text.size());
            CHECK(mapped.lines_read() == copied.lines_read());
        }
    }
}

TEST_CASE("stdin redirected from a file is read in place from where its offset stands") {
    test::temp_dir tmp("mapped");
    std::string path = tmp.path + "/f.jsonl";
    write_file(path, "{\"skip\":1}\n{\"a\":1}\n{\"b\":2}");
    int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::lseek(fd, 11, SEEK_SET) == 11);  // another reader had taken the first line
    auto src = fd_source(fd, "<stdin>", true);
    auto region = src->map_rest();
    REQUIRE(region);
    CHECK(region->bytes == "{\"a\":1}\n{\"b\":2}");
    CHECK(region->releasable);
    CHECK(region->readable_after > 0);  // the rest of the last page
}

TEST_CASE("a pipe, a string and an empty file are not mapped: they are read") {
    test::temp_dir tmp("mapped");
    std::string path = tmp.path + "/empty.jsonl";
    write_file(path, "");
    CHECK_FALSE(open_input(path)->map_rest());
    CHECK_FALSE(string_source("{}\n", "s")->map_rest());
    int p[2];
    REQUIRE(::pipe(p) == 0);
    CHECK_FALSE(fd_source(p[0], "pipe", true)->map_rest());
    ::close(p[1]);
}

TEST_CASE("a mapped file that shrinks under the reader ends the process with 74 and says why") {
    test::temp_dir tmp("mapped");
    std::string path = tmp.path + "/shrinks.jsonl";
    std::string text;
    while (text.size() < (1u << 20)) text += "{\"k\":" + std::to_string(text.size()) + "}\n";
    write_file(path, text);
    auto [code, said] = in_child([&] {
        line_reader in(open_input(path));
        text_line l;
        in.next(l);
        if (::truncate(path.c_str(), 4096) != 0) _exit(3);
        while (in.next(l)) {
        }
        _exit(0);  // not reached: the pages past 4096 are gone
    });
    CHECK(code == 74);
    CHECK(said.find(path + ": the file shrank while it was read (SIGBUS)") != std::string::npos);
}

TEST_CASE("a trace mapped whole (padded_input) that shrinks under the reader ends with 74, not SIGBUS") {
    // prof-spans reads a Chrome trace through padded_input; it mapped the file without the
    // guard, and a shrinking trace killed it with SIGBUS (135) and no message.
    test::temp_dir tmp("mapped");
    std::string path = tmp.path + "/trace.json";
    std::string text = "[";
    while (text.size() < (1u << 20)) text += "{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":1},";
    text += "{}]";
    write_file(path, text);
    auto [code, said] = in_child([&] {
        padded_input in(path);
        if (::truncate(path.c_str(), 4096) != 0) _exit(3);
        std::size_t sum = 0;
        for (char c : in.text()) sum += static_cast<unsigned char>(c);
        _exit(sum == 0 ? 4 : 0);  // not reached: the pages past 4096 are gone
    });
    CHECK(code == 74);
    CHECK(said.find(path + ": the file shrank while it was read (SIGBUS)") != std::string::npos);
}

TEST_CASE("a mapped file that shrinks inside its last page is an I/O error, not a malformed line") {
    // Bytes past the new end but inside the last page read as zeros (no SIGBUS): the reader
    // checks the file's size at the end of the input and before it calls any line malformed.
    test::temp_dir tmp("mapped");
    std::string path = tmp.path + "/shrinks.jsonl";
    std::string text;
    while (text.size() < 10000) text += "{\"k\":" + std::to_string(text.size()) + "}\n";
    write_file(path, text);
    for (std::size_t max_bad : {std::size_t{0}, std::size_t{5}}) {
        line_reader in(open_input(path));
        text_line l;
        REQUIRE(in.next(l));
        REQUIRE(::truncate(path.c_str(), static_cast<off_t>(text.size() - 1)) == 0);
        CHECK_THROWS_WITH_AS(for_each_object(in, max_bad, [](simdjson::ondemand::object&, std::size_t) {}),
                             (path + ": the file shrank while it was read").c_str(), io_error);
        write_file(path, text);
    }
}
