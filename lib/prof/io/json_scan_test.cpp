// Unit tests of the strict JSON-subset scanner (json_scan.hpp): what it accepts is valid JSON
// with the value simdjson and std::from_chars give; what it declines it leaves untouched.
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <doctest/doctest.h>

using namespace prof;

namespace {

json_scanner over(const std::string& t) { return json_scanner{t.data(), t.data() + t.size()}; }

std::uint64_t bits(double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

}  // namespace

TEST_CASE("json_scan: exact_decimal gives std::from_chars' double, bit for bit, or declines") {
    std::mt19937_64 rng(42);
    std::size_t accepted = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string t;
        if (rng() % 4 == 0) t += '-';
        int int_digits = static_cast<int>(rng() % 12);
        if (int_digits == 0) t += '0';
        for (int k = 0; k < int_digits; ++k) t += static_cast<char>('0' + (k == 0 ? 1 + rng() % 9 : rng() % 10));
        int frac = static_cast<int>(rng() % 20);
        if (frac) {
            t += '.';
            for (int k = 0; k < frac; ++k) t += static_cast<char>('0' + rng() % 10);
        }
        // Half the numbers end the text (read byte by byte at its end), half have more after
        // them (16-byte lanes).
        std::string text = t + (rng() % 2 ? "," : "}") + (rng() % 2 ? "\"next\":12345678901234567" : "");
        json_scanner s = over(text);
        double fast = 0;
        if (s.exact_decimal(fast)) {
            ++accepted;
            double ref = 0;
            auto r = std::from_chars(t.data(), t.data() + t.size(), ref);
            REQUIRE(r.ec == std::errc());
            INFO(t);
            CHECK(bits(fast) == bits(ref));
            CHECK(s.p == text.data() + t.size());
        } else {
            CHECK(s.p == text.data());
        }
    }
    CHECK(accepted > 100000);  // the common forms take the fast path
    // Declined: exponents, leading zeros, a bare point, too many digits, m > 2^53.
    for (const char* bad : {"1e5", "1.5E-3", "01", "-", "1.", ".5", "12345678901234567890", "9007199254740993"}) {
        std::string text = std::string(bad) + ",";
        json_scanner s = over(text);
        double d;
        CHECK_MESSAGE(!s.exact_decimal(d), bad);
        CHECK(s.p == text.data());
    }
    std::string pow2 = "9007199254740992,";  // 2^53 itself is exact
    json_scanner s = over(pow2);
    double d;
    CHECK(s.exact_decimal(d));
    CHECK(d == 9007199254740992.0);
}

TEST_CASE("json_scan: uint19 reads 1 to 19 digits exactly and declines the rest") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100000; ++i) {
        std::uint64_t v = rng() >> (rng() % 64);
        if (v >= 10000000000000000000ull) v /= 10;  // 19 digits at most
        std::string text = std::to_string(v) + "}" + (i % 2 ? "" : ",\"next\":\"0123456789012345\"");
        json_scanner s = over(text);
        std::uint64_t got = 0;
        REQUIRE(s.uint19(got));
        CHECK(got == v);
        CHECK(*s.p == '}');
    }
    for (const char* bad : {"-1", "01", "12345678901234567890", "1.5", "2e3", "x", ""}) {
        for (std::string text : {std::string(bad), std::string(bad) + ",                "}) {
            json_scanner s = over(text);
            std::uint64_t u;
            CHECK_MESSAGE(!s.uint19(u), text);
            CHECK(s.p == text.data());
        }
    }
    // Every run length up to 21 digits, in lanes and at the text's end: 16 or more digits in a
    // row leave the vector pass for the word loop.
    for (int n = 1; n <= 21; ++n) {
        std::string digits;
        for (int k = 0; k < n; ++k) digits += static_cast<char>('1' + k % 9);
        for (std::string text : {digits, digits + "}", digits + "},\"x\":\"................\""}) {
            json_scanner s = over(text);
            std::uint64_t got = 0;
            bool ok = s.uint19(got);
            CHECK_MESSAGE(ok == (n <= 19), text);
            if (ok) CHECK(got == std::stoull(digits));
        }
    }
}

TEST_CASE("json_scan: scan_count reads a count plain or quoted as count_of_scalar does, or declines") {
    // Each text is a count's value and a '}' after it: scan_count's reading (value, or absent
    // for null and the non-finite words; false: declined) must be count_of_scalar's of the
    // same scalar, and s.p must then stand at the '}'.
    for (const char* value : {"123", "\"123\"", "\"0\"", "\"007\"", "\"1234567890123456789\"",
                              "\"18446744073709551615\"", "\"18446744073709551616\"", "\"12.5\"", "\"1e3\"",
                              "\"-5\"", "\" 5\"", "\"5 \"", "\"\"", "\"NaN\"", "null", "\"5", "\"5\\u0030\""}) {
        std::string text = std::string(value) + "}";
        json_scanner s = over(text), ref = over(text);
        std::optional<std::uint64_t> got = 99, want = 99;
        bool ok = scan_count(s, got);
        scan_kind k;
        std::string_view t;
        bool want_ok = ref.scalar(k, t) && count_of_scalar(k, t, want);
        CHECK_MESSAGE(ok == want_ok, text);
        if (ok && want_ok) {
            CHECK_MESSAGE(got == want, text);
            CHECK_MESSAGE(*s.p == '}', text);
        }
    }
    // The quoted digits read in place, by hand: "131066449" -> 131066449, p past the quote.
    std::string text = "\"131066449\",";
    json_scanner s = over(text);
    std::optional<std::uint64_t> got;
    REQUIRE(scan_count(s, got));
    CHECK(got == 131066449u);
    CHECK(*s.p == ',');
}

TEST_CASE("json_scan: whatever skip_value accepts is one valid JSON value to simdjson") {
    // Random texts from JSON's own alphabet, valid and not: the scanner may decline valid JSON
    // (escapes of surrogates, depth), but must never accept invalid JSON or stop in the wrong place.
    const char* atoms[] = {"{", "}", "[", "]", ",", ":", "\"a\"", "\"\\n\"", "\"\\u00e9\"", "\"\\ud800\"", "\"\\x\"",
                           "1",  "-0", "0.5", "1e3", "01",   "-",    "true",  "nul",   "null", "\"k\":",   " ",  "\"\t\""};
    std::mt19937_64 rng(99);
    simdjson::dom::parser parser;
    std::size_t accepted = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string t;
        int n = 1 + static_cast<int>(rng() % 8);
        for (int k = 0; k < n; ++k) t += atoms[rng() % (sizeof atoms / sizeof *atoms)];
        json_scanner s = over(t);
        if (!s.skip_value()) continue;
        ++accepted;
        std::string_view value(t.data(), static_cast<std::size_t>(s.p - t.data()));
        simdjson::padded_string p(value);
        simdjson::dom::element el;
        INFO(t);
        auto err = parser.parse(p).get(el);
        // Range is not syntax: 1e30101 is valid JSON that simdjson's DOM refuses as overflowing
        // a double (its on-demand parser, skipping the value, takes it, as the scanner does).
        if (err == simdjson::NUMBER_ERROR && value.find('e') != std::string_view::npos) continue;
        CHECK(err == simdjson::SUCCESS);
    }
    CHECK(accepted > 10000);
}

TEST_CASE("json_scan: strings — plain ones read in place, escapes checked, control characters refused") {
    std::string_view out;
    std::string plain = "\"abc\" rest";
    json_scanner s = over(plain);
    CHECK(s.string(out));
    CHECK(out == "abc");
    std::string esc = "\"a\\\"b\"";
    json_scanner e = over(esc);
    CHECK(!e.string(out));      // a wanted string with an escape: declined
    CHECK(e.skip_string());     // but valid, so skippable
    CHECK(e.p == esc.data() + esc.size());
    std::string ctl = std::string("\"a") + '\x01' + "b\"";
    json_scanner c = over(ctl);
    CHECK(!c.skip_string());
    std::string cut = "\"abc";
    json_scanner u = over(cut);
    CHECK(!u.skip_string());
    // Longer than one 32-byte block, with the quote in the second.
    std::string longs = "\"" + std::string(45, 'x') + "\"";
    json_scanner l = over(longs);
    CHECK(l.string(out));
    CHECK(out.size() == 45);
    CHECK(scan_key_is("process_rss_bytes", "process_rss_bytes"));
    CHECK(!scan_key_is("process_rss_byteS", "process_rss_bytes"));
    CHECK(!scan_key_is("ts_i", "ts_id"));
    CHECK(scan_key_is("id", "id"));
    CHECK(!scan_key_is("ix", "id"));
}

TEST_CASE("json_number_value: correctly rounded, out of range to ±inf or ±0, not simdjson 3.0's get_double") {
    CHECK(json_number_value("0.70000000000000000000") == 0.7);
    CHECK(json_number_value("0.99999999999999999999") == 1.0);
    CHECK(json_number_value("0.12345678901234567890123") == 0.12345678901234567890123);
    CHECK(json_number_value("1e400") == std::numeric_limits<double>::infinity());
    CHECK(json_number_value("-1e400") == -std::numeric_limits<double>::infinity());
    CHECK(json_number_value("123456789e400") == std::numeric_limits<double>::infinity());
    CHECK(json_number_value("0.000001e-400") == 0.0);
    CHECK(json_number_value("1e-400") == 0.0);
    CHECK(bits(*json_number_value("-1e-400")) == bits(-0.0));
    CHECK(json_number_value("5e-324") == 5e-324);
    CHECK(!json_number_value("01"));
    CHECK(!json_number_value("1."));
    CHECK(!json_number_value("nan"));
    CHECK(!json_number_value(""));
}

TEST_CASE("key_predictor: each member's key is predicted from the last object, and relearned where it differs") {
    key_predictor keys;
    static constexpr std::pair<std::string_view, std::uint8_t> table[] = {{"a", 1}, {"bb", 2}};
    int lookups = 0;
    auto id_of = [&](std::string_view k) {
        ++lookups;
        return key_id(k, table, std::uint8_t{9});
    };
    // Reads the keys of one flat object whose values are 0, padded so 32-byte loads are readable.
    auto ids = [&](std::string text) {
        std::string out;
        text.append(64, ' ');
        json_scanner s{text.data(), text.data() + text.size() - 64};
        REQUIRE(s.eat('{'));
        for (std::size_t i = 0;; ++i) {
            std::uint8_t id = 0;
            if (!keys.member(i, s, text.data() + text.size(), id_of, id)) return out + "!";
            out += std::to_string(id);
            std::uint64_t v;
            REQUIRE(s.uint19(v));
            s.ws();
            if (s.eat('}')) return out;
            REQUIRE(s.eat(','));
        }
    };
    CHECK(ids(R"({"a":0,"bb":0,"c":0})") == "129");
    CHECK(lookups == 3);
    CHECK(ids(R"({"a":0,"bb":0,"c":0})") == "129");
    CHECK(lookups == 3);  // all three predicted
    CHECK(ids(R"({"a":0, "bb" : 0,"c":0})") == "129");
    CHECK(lookups == 4);  // the spaced member scanned and relearned
    CHECK(ids(R"({"bb":0,"a":0})") == "21");
    CHECK(lookups == 6);  // another order: both scanned
    // A key longer than 32 bytes with its quotes and colon is never predicted, always read.
    std::string long_key = "{\"" + std::string(40, 'k') + "\":0}";
    CHECK(ids(long_key) == "9");
    CHECK(ids(long_key) == "9");
    CHECK(lookups == 8);
    CHECK(ids(R"({"a" 0})") == "!");  // no ':' after the key
}

TEST_CASE("same_text and key_id compare whole texts whatever their length") {
    static constexpr std::pair<std::string_view, int> table[] = {{"fit_seconds", 1}, {"fit_second", 2}, {"n", 3}};
    CHECK(key_id("fit_seconds", table, 0) == 1);
    CHECK(key_id("fit_second", table, 0) == 2);
    CHECK(key_id("fit_secondz", table, 0) == 0);
    CHECK(key_id("n", table, 0) == 3);
    CHECK(key_id("", table, 0) == 0);
    CHECK(scan_key_is("dur", "dur"));
    CHECK_FALSE(scan_key_is("dux", "dur"));
    CHECK_FALSE(scan_key_is("du", "dur"));
}
