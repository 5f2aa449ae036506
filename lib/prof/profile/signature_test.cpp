// The panel's data signature: its keys, its canonical form, the user's keys.
#include "prof/core/errors.hpp"
#include "prof/profile/signature.hpp"

#include <doctest/doctest.h>

TEST_CASE("a signature holds the series count, the length summary and a digest of the sorted ids") {
    // lengths 10, 20, 31, 40: median (20 + 31) / 2 = 25.5, total 101; the digest is
    // `printf 'a\nb\nc\nd\n' | sha256sum`.
    std::vector<prof::series_ref> usable = {{"c", 31}, {"a", 10}, {"d", 40}, {"b", 20}};
    auto sig = prof::data_signature(usable, {});
    CHECK(sig.dump() == R"({"n_obs":{"max":40,"median":25.5,"min":10,"total":101},"n_series":4,)"
                            R"("ts_ids_sha256":"cf2c7f63055d2e84af6e3f01ac1bb7fce598d20cf213fab2b56b8e8047b46ced"})");
    CHECK(sig.find("n_obs")->find("median")->d == 25.5);
    CHECK(sig.find("n_obs")->find("total")->u == 101);
}

TEST_CASE("an even count whose middle lengths sum to an even number has an integer median") {
    std::vector<prof::series_ref> usable = {{"a", 11}, {"b", 13}};  // (11 + 13) / 2 = 12
    auto sig = prof::data_signature(usable, {});
    const auto* m = sig.find("n_obs")->find("median");
    CHECK(m->t == prof::json_value::type::uinteger);
    CHECK(m->u == 12);
}

TEST_CASE("the order of the panel does not change the signature, one more observation does") {
    std::vector<prof::series_ref> a = {{"x", 5}, {"y", 7}}, b = {{"y", 7}, {"x", 5}}, c = {{"x", 5}, {"y", 8}};
    CHECK(prof::data_signature(a, {}) == prof::data_signature(b, {}));
    CHECK_FALSE(prof::data_signature(a, {}) == prof::data_signature(c, {}));
}

TEST_CASE("a signature key's value is JSON when it parses as JSON, else text") {
    CHECK(prof::parse_signature_key("v=3").second.dump() == "3");
    CHECK(prof::parse_signature_key("flag=true").second.b);
    CHECK(prof::parse_signature_key("d=2026-11-30").second.s == "2026-11-30");
    CHECK(prof::parse_signature_key("o={\"a\":1}").second.is_object());
    CHECK(prof::parse_signature_key("e=").second.s.empty());
    CHECK_THROWS_AS(prof::parse_signature_key("=1"), prof::usage_error);
    CHECK_THROWS_AS(prof::data_signature({}, {{"n_obs", {}}}), prof::usage_error);
}
