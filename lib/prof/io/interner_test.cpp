// Unit tests of same_text, short_text_hash and string_interner (interner.hpp).
#include "prof/io/interner.hpp"

#include <cstdio>
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

TEST_CASE("short_text_hash spreads ids that differ only in their last characters over a table's slots") {
    // A table of 8192 slots picks a slot by the hash's low 13 bits. 4096 ids "sku-0000001" ...
    // of 11 bytes differ only in their last digits, which a little-endian load puts in a word's
    // top byte. Random slots would leave about 8192 * (1 - e^(-1/2)) = 3223 distinct; a hash
    // whose top bytes never reach the low bits puts them in a few hundred.
    std::set<std::uint32_t> slots;
    for (int k = 1; k <= 4096; ++k) {
        char id[16];
        std::snprintf(id, sizeof id, "sku-%07d", k);
        slots.insert(short_text_hash(id) & 8191u);
    }
    CHECK(slots.size() > 3000);
}

TEST_CASE("intern_next gives intern's ids whether or not the cycle of names repeats") {
    string_interner a, b;
    std::mt19937_64 rng(11);
    const char* models[] = {"arima", "ets", "theta", "croston", "naive", "holtwinters"};
    for (int row = 0; row < 3000; ++row) {
        // mostly the same cycle, now and then a model skipped or a new one
        const char* m = models[row % 6];
        std::string name = rng() % 10 == 0 ? std::string(models[rng() % 6]) : rng() % 50 == 0 ? "m" + std::to_string(row) : m;
        CHECK(a.intern_next(name) == b.intern(name));
    }
    CHECK(a.names() == b.names());
}
