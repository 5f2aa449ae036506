// The median (see median.hpp).
#include "prof/core/median.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace prof {

std::optional<double> median(std::vector<double>& v) {
    if (v.empty()) return std::nullopt;
    const std::size_t n = v.size(), mid = n / 2;
    std::nth_element(v.begin(), v.begin() + mid, v.end());
    const double hi = v[mid];
    if (n % 2 == 1) return hi;
    return mean_of_middle(*std::max_element(v.begin(), v.begin() + mid), hi);
}


namespace {

// Exact order statistics of positive finite doubles by radix selection: such doubles order as
// their bit patterns do, so the k-th smallest value is the k-th smallest 64-bit key. Each step
// counts the keys by the next bits below the prefix they all share (up to 11 bits: 2048
// buckets, whose counts stay in L1; fewer for fewer keys, so that clearing the
// buckets costs less than the pass), keeps only the bucket holding the wanted rank, and
// repeats on it; the shared prefix grows with every step until the keys left are equal or few
// enough for nth_element, which beats a counting pass there. No step mispredicts a branch per
// key, as nth_element's partitions do on unordered values. A very large set takes its first
// step on the top 16 bits (sign, exponent, 4 bits of mantissa) without the pass that finds
// the shared prefix: the kept bucket is then already small.
constexpr int max_radix_bits = 11;
constexpr int wide_radix_bits = 16;
constexpr std::size_t wide_radix_from = 65536;  // keys
constexpr std::size_t select_small = 64;

inline std::uint64_t key_of(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}
inline double value_of(std::uint64_t u) {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

// The key of rank `rank` (0-based, in ascending order) and, when want_lower, the key of rank
// rank - 1 (rank > 0).
struct ranked_keys {
    std::uint64_t at = 0, lower = 0;
};

ranked_keys select_small_keys(std::vector<std::uint64_t>& keys, std::size_t rank, bool want_lower) {
    auto nth = keys.begin() + static_cast<std::ptrdiff_t>(rank);
    std::nth_element(keys.begin(), nth, keys.end());
    ranked_keys r{*nth, 0};
    if (want_lower) r.lower = *std::max_element(keys.begin(), nth);
    return r;
}

// One step over the keys that for_keys(fn) visits; `rank` < their count. `all_equal` when
// every key is the same (the result is decided here); otherwise the bucket to keep (`keep`),
// the keys before it (`below`) and whether the lower key (rank - 1) lies in an earlier bucket.
struct radix_step {
    int shift = 0;
    std::size_t mask = 0;  // buckets - 1
    std::size_t keep = 0, below = 0, kept = 0;
    bool lower_before = false;
    bool all_equal = false;
    std::uint64_t equal_key = 0;
    std::size_t bucket_of(std::uint64_t k) const { return static_cast<std::size_t>(k >> shift) & mask; }
};

// `wide`: the first step of a very large set (the top 16 bits, no prefix pass). The pass
// counts keys only: the lower key, when it lies in an earlier bucket, is found by the pass
// that takes the kept bucket (take_kept), so no per-bucket maximum is kept for a case that
// arises about once in `kept` steps.
template <class ForKeys>
radix_step plan_radix_step(ForKeys for_keys, std::size_t n, std::size_t rank, bool want_lower, bool wide = false) {
    radix_step st;
    int bits = wide_radix_bits;
    st.shift = 64 - wide_radix_bits;
    if (!wide) {
        std::uint64_t lo = UINT64_MAX, hi = 0;
        for_keys([&](std::uint64_t k) {
            lo = std::min(lo, k);
            hi = std::max(hi, k);
        });
        if (lo == hi) {
            st.all_equal = true;
            st.equal_key = lo;
            return st;
        }
        bits = std::clamp(static_cast<int>(std::bit_width(n)) - 3, 4, max_radix_bits);
        st.shift = std::max(0, static_cast<int>(std::bit_width(lo ^ hi)) - bits);
    }
    st.mask = (std::size_t{1} << bits) - 1;
    std::vector<std::size_t> count(st.mask + 1, 0);
    for_keys([&](std::uint64_t k) { ++count[st.bucket_of(k)]; });
    std::size_t b = 0;
    while (st.below + count[b] <= rank) st.below += count[b++];
    st.keep = b;
    st.kept = count[b];
    st.lower_before = want_lower && rank == st.below;
    return st;
}

// The pass after a step: take(k, in_kept_bucket) for every key, in order; returns, when the
// step says the lower key lies in an earlier bucket, the largest key of the earlier buckets
// (0 otherwise). The keys share every bit above the step's buckets (the wide step's buckets
// hold all the top bits), so an earlier bucket holds exactly the keys below the kept ones.
template <class ForKeys, class Take>
std::uint64_t take_kept(ForKeys for_keys, const radix_step& st, Take take) {
    std::uint64_t lower = 0;
    if (!st.lower_before) {
        for_keys([&](std::uint64_t k) { take(k, st.bucket_of(k) == st.keep); });
        return lower;
    }
    for_keys([&](std::uint64_t k) {
        const std::size_t b = st.bucket_of(k);
        take(k, b == st.keep);
        lower = b < st.keep ? std::max(lower, k) : lower;
    });
    return lower;
}

ranked_keys select_keys(std::vector<std::uint64_t>& keys, std::size_t rank, bool want_lower) {
    for (;;) {
        if (keys.size() <= select_small) return select_small_keys(keys, rank, want_lower);
        auto for_keys = [&](auto fn) { for (std::uint64_t k : keys) fn(k); };
        radix_step st = plan_radix_step(for_keys, keys.size(), rank, want_lower);
        if (st.all_equal) return {st.equal_key, st.equal_key};
        std::size_t w = 0;  // compact the kept bucket's keys to the front
        const std::uint64_t lower = take_kept(for_keys, st, [&](std::uint64_t k, bool kept) {
            keys[w] = k;
            w += kept;
        });
        keys.resize(w);
        rank -= st.below;
        if (st.lower_before) {
            ranked_keys r = select_keys(keys, rank, false);
            r.lower = lower;
            return r;
        }
    }
}

}  // namespace

std::optional<double> median_of_parts(const std::vector<std::span<const double>>& parts) {
    std::size_t n = 0;
    for (auto v : parts) n += v.size();
    if (n == 0) return std::nullopt;
    // median(): the value of rank n/2 and, for an even n, the mean of it and the one before.
    const std::size_t mid = n / 2;
    const bool even = n % 2 == 0;
    std::vector<std::uint64_t> keys;
    ranked_keys r;
    if (n <= select_small) {
        keys.reserve(n);
        for (auto v : parts)
            for (double d : v) keys.push_back(key_of(d));
        r = select_keys(keys, mid, even);
    } else {
        // The first step reads the parts in place; only the bucket it keeps is copied.
        auto for_keys = [&](auto fn) {
            for (auto v : parts)
                for (double d : v) fn(key_of(d));
        };
        radix_step st = plan_radix_step(for_keys, n, mid, even, n >= wide_radix_from);
        if (st.all_equal) return value_of(st.equal_key);
        keys.resize(st.kept + 1);  // a key is stored before it is known to be kept: one spare slot
        std::size_t w = 0;
        const std::uint64_t lower = take_kept(for_keys, st, [&](std::uint64_t k, bool kept) {
            keys[w] = k;
            w += kept;
        });
        keys.resize(w);
        r = select_keys(keys, mid - st.below, even && !st.lower_before);
        if (st.lower_before) r.lower = lower;
    }
    double hi = value_of(r.at);
    if (!even) return hi;
    double lo = value_of(r.lower);
    return mean_of_middle(lo, hi);
}

}  // namespace prof
