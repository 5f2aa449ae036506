// The JSON Lines reader of SPEC §1: BOM, CRLF, blank lines, line-numbered errors, bad-line budget.
#include "prof/json_in.hpp"

#include "prof/errors.hpp"
#include "prof/records.hpp"

#include <doctest/doctest.h>

using namespace prof;

namespace {
std::vector<std::string> ids(const std::string& text, std::size_t max_bad = 0, std::size_t* bad = nullptr) {
    line_reader in(string_source(text, "in.jsonl"));
    std::vector<std::string> out;
    auto st = for_each_object(in, max_bad, [&](simdjson::ondemand::object& o, std::size_t line) {
        out.push_back(read_cell(o).ts_id + "@" + std::to_string(line));
    });
    if (bad) *bad = st.bad_lines;
    return out;
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
        in, 0, [&](simdjson::ondemand::object& o, std::size_t) { slow.push_back(read_cell(o).ts_id); },
        [&](std::string_view text) { return text == "FAST" && ++fast > 0; });
    CHECK(fast == 2);
    CHECK(slow == std::vector<std::string>{"a"});
    CHECK(st.records == 3);
}
