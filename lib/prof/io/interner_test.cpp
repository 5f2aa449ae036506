// Unit tests of same_text, short_text_hash and string_interner (interner.hpp).
#include "prof/io/interner.hpp"

#include <random>
#include <set>
#include <string>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("same_text equals == for every length and every differing position") {
    std::mt19937_64 rng(5);
    for (std::size_t n = 0; n <= 40; ++n) {
        std::string a(n, 'x');
        for (auto& c : a) c = static_cast<char>('a' + rng() % 26);
        CHECK(same_text(a, a));
        CHECK(same_text(a, std::string(a)));
        for (std::size_t k = 0; k < n; ++k) {
            std::string b = a;
            b[k] = static_cast<char>(b[k] ^ 0x20);
            CAPTURE(n);
            CAPTURE(k);
            CHECK(!same_text(a, b));
        }
        CHECK(!same_text(a, a + "y"));
    }
}

TEST_CASE("string_interner: ids in order of first appearance, stable, for many similar names") {
    string_interner in;
    std::set<std::uint32_t> hashes;
    for (int round = 0; round < 2; ++round) {
        for (int k = 0; k < 5000; ++k) {
            std::string name = "sku-" + std::to_string(k);  // share prefixes and lengths
            CHECK(in.intern(name) == static_cast<std::uint32_t>(k));
            if (round == 0) hashes.insert(short_text_hash(name));
        }
    }
    CHECK(in.size() == 5000);
    CHECK(in.names()[4242] == "sku-4242");
    CHECK(in.intern("") == 5000);
    CHECK(in.intern("") == 5000);
    CHECK(hashes.size() > 4990);  // a hash that spreads them (collisions would still be correct)
}
