// Short strings (node names, model names, thread keys) turned into dense integer ids, for the
// loops that meet one per record, millions of times: no allocation per lookup, no memcmp call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// a == b for the short texts these loops compare: a byte loop the compiler keeps inline (a
// call to memcmp was ~4 % of prof-harvest's time); memcmp beyond 32 bytes.
inline bool same_text(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    if (b.size() > 32) return std::memcmp(a.data(), b.data(), b.size()) == 0;
    for (std::size_t k = 0; k < b.size(); ++k)
        if (a[k] != b[k]) return false;
    return true;
}

// Strings → ids 0, 1, 2, ... in order of first appearance; names()[id] is the string. Open
// addressing over (hash, id) slots, FNV-1a, power-of-two size, at most half full. Looked up by
// view; the strings are owned copies, so the table holds no view that could dangle, and the
// interner may be copied or moved.
class string_interner {
public:
    std::uint32_t intern(std::string_view n) {
        std::uint64_t h = 1469598103934665603ull;
        for (unsigned char c : n) h = (h ^ c) * 1099511628211ull;
        auto h32 = static_cast<std::uint32_t>(h ^ (h >> 32));
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
    std::vector<slot> table_ = std::vector<slot>(64, slot{0, empty});
};

}  // namespace prof
