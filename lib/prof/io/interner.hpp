// Short strings (node names, model names, thread keys) turned into dense integer ids, for the
// loops that meet one per record, millions of times: no allocation per lookup, no memcmp call.
#pragma once

#include "prof/io/json_scan.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// A hash of a short text from its words (the same overlapping loads as same_text), mixed by
// multiplication, not byte by byte, then finished with splitmix64's finaliser. A multiplication
// carries a word's bits only upwards, so without the finaliser the bits of the last word's top
// bytes (a little-endian load puts a text's last characters there: "sku-0000001" and
// "sku-0000002" differ only in them) never reached the low bits that pick a table slot, and
// ids that differ at the end collided.
inline std::uint32_t short_text_hash(std::string_view t) {
    const char* p = t.data();
    std::size_t n = t.size();
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    auto mix = [&](std::uint64_t w) { h = (h ^ w) * 0xBF58476D1CE4E5B9ull; h ^= h >> 31; };
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 <= n; i += 8) mix(detail::load_word<std::uint64_t>(p + i));
        mix(detail::load_word<std::uint64_t>(p + n - 8));
    } else if (n >= 4) {
        mix(std::uint64_t{detail::load_word<std::uint32_t>(p)} << 32 | detail::load_word<std::uint32_t>(p + n - 4));
    } else {
        std::uint64_t w = 0;
        for (std::size_t k = 0; k < n; ++k) w = w << 8 | static_cast<unsigned char>(p[k]);
        mix(w);
    }
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 31;
    return static_cast<std::uint32_t>(h);
}

// Strings → ids 0, 1, 2, ... in order of first appearance; names()[id] is the string. Open
// addressing over (hash, id) slots, short_text_hash, power-of-two size, at most half full. Looked up by
// view; the strings are owned copies, so the table holds no view that could dangle, and the
// interner may be copied or moved.
class string_interner {
public:
    std::uint32_t intern(std::string_view n) { return intern(n, short_text_hash(n)); }
    // intern(n) for a name whose short_text_hash is h32.
    std::uint32_t intern(std::string_view n, std::uint32_t h32) {
        std::size_t mask = table_.size() - 1;
        std::size_t i = h32 & mask;
        for (; table_[i].id != empty; i = (i + 1) & mask)
            if (table_[i].hash == h32 && same_text(names_[table_[i].id], n)) return table_[i].id;
        auto id = static_cast<std::uint32_t>(names_.size());
        names_.emplace_back(n);
        table_[i] = {h32, id};
        if (2 * names_.size() > table_.size()) grow();
        return id;
    }
    // intern(n), first trying the id that followed the last one this method returned, then the
    // one that followed that: rows that repeat their keys in one cycle (each series' models in
    // one order) are then matched by a comparison or two instead of a hash and a probe, also
    // where the caller skips some rows of the cycle (a fold row, a failed one). A follower is
    // learned from a miss of both, so one skipped key does not unlearn it. The id is intern(n)'s
    // either way.
    std::uint32_t intern_next(std::string_view n) {
        std::uint32_t id;
        const std::uint32_t next = last_ != empty ? follower_[last_] : empty;
        if (next != empty && same_text(names_[next], n)) {
            id = next;
        } else if (next != empty && follower_[next] != empty && same_text(names_[follower_[next]], n)) {
            id = follower_[next];
        } else {
            id = intern(n);
            if (follower_.size() < names_.size()) follower_.resize(names_.size(), empty);
            if (last_ != empty) follower_[last_] = id;
        }
        last_ = id;
        return id;
    }
    // Starts loading the slot where a name of hash h32 is looked up: a caller that knows a name
    // a while before it interns it hides the wait for a table larger than the cache.
    void prefetch(std::uint32_t h32) const { __builtin_prefetch(&table_[h32 & (table_.size() - 1)]); }
    const std::vector<std::string>& names() const { return names_; }
    std::size_t size() const { return names_.size(); }

private:
    static constexpr std::uint32_t empty = UINT32_MAX;
    struct slot {
        std::uint32_t hash;
        std::uint32_t id;
    };
    void grow() {
        std::vector<slot> bigger(table_.size() * 2, slot{0, empty});
        std::size_t mask = bigger.size() - 1;
        for (const slot& sl : table_) {
            if (sl.id == empty) continue;
            std::size_t j = sl.hash & mask;
            while (bigger[j].id != empty) j = (j + 1) & mask;
            bigger[j] = sl;
        }
        table_ = std::move(bigger);
    }

    std::vector<std::string> names_;
    std::vector<std::uint32_t> follower_;  // by id: the id intern_next() returned after it last
    std::uint32_t last_ = empty;           // intern_next()'s last id
    std::vector<slot> table_ = std::vector<slot>(64, slot{0, empty});
};

}  // namespace prof
