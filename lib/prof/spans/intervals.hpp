// Interval arithmetic of the spans area: the length of a union of half-open intervals, the
// split of one run into elapsed, fixed and per-node time, and the stable radix sort both use
// (so does the Chrome reader's B/E matching). Integer nanoseconds throughout.
#pragma once

#include "prof/core/parallel.hpp"

#include "prof/spans/span_set.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace prof {

// Below this many elements radix_sort_range uses std::stable_sort and needs no scratch.
inline constexpr std::size_t radix_sort_min = 4096;

// Stable LSD radix sort of v[0, n) by an integer key, 11 bits a pass over the keys' actual
// range, from their lowest bit that differs (time stamps in whole microseconds, as nanoseconds,
// are multiples of 1000 = 8 x 125: 3 bits that need no pass), O(n) per pass, through `tmp`
// (room for n elements when n >= radix_sort_min). Stability keeps file order among equal keys.
template <class T, class Key>
void radix_sort_range(T* v, std::size_t n, T* tmp, Key key) {
    if (n < radix_sort_min) {
        std::stable_sort(v, v + n, [&](const T& a, const T& b) { return key(a) < key(b); });
        return;
    }
    const std::int64_t first = key(v[0]);
    std::int64_t lo = first, hi = lo;
    std::uint64_t differ = 0;  // the bits in which some key differs from the first
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t k = key(v[i]);
        lo = std::min(lo, k);
        hi = std::max(hi, k);
        differ |= static_cast<std::uint64_t>(k ^ first);
    }
    if (differ == 0) return;  // all keys equal: already in order
    auto range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    constexpr int bits = 11;
    constexpr std::size_t radix = std::size_t{1} << bits;
    auto digit = [&](const T& x, int shift) {
        return (static_cast<std::uint64_t>(key(x)) - static_cast<std::uint64_t>(lo)) >> shift & (radix - 1);
    };
    T* src = v;
    T* dst = tmp;
    // Every key - lo is a multiple of 2^(trailing zeros of differ): those low bits are all zero.
    for (int shift = __builtin_ctzll(differ); shift < 64 && (range >> shift) != 0; shift += bits) {
        std::size_t count[radix + 1] = {};
        for (std::size_t i = 0; i < n; ++i) ++count[digit(src[i], shift) + 1];
        for (std::size_t d = 1; d <= radix; ++d) count[d] += count[d - 1];
        for (std::size_t i = 0; i < n; ++i) dst[count[digit(src[i], shift)]++] = src[i];
        std::swap(src, dst);
    }
    if (src != v) std::copy(src, src + n, v);
}

// A stable counting sort of v[0, n) into out[0, n) by bucket(v[i]) (below `buckets`), counted
// and scattered in up to `jobs` slices of the input on as many threads (slice p writes after
// slices 0 .. p-1 within each bucket, so file order is kept); out[j] = make(v[i], slice).
// Returns where each bucket starts (buckets + 1 offsets, the last n).
template <class T, class U, class Bucket, class Make>
std::vector<std::size_t> bucket_sort(const T* v, std::size_t n, std::size_t buckets, unsigned jobs, U* out, Bucket bucket,
                                     Make make) {
    const std::size_t slices = std::clamp<std::size_t>(n / 65536, 1, std::max(jobs, 1u));
    auto range = [&](std::size_t p) { return std::pair{n * p / slices, n * (p + 1) / slices}; };
    std::vector<std::vector<std::size_t>> at(slices, std::vector<std::size_t>(buckets, 0));
    parallel_for(slices, jobs, [&](std::size_t p) {
        auto [b, e] = range(p);
        std::vector<std::size_t>& count = at[p];
        for (std::size_t i = b; i < e; ++i) ++count[bucket(v[i])];
    });
    std::vector<std::size_t> offset(buckets + 1, 0);
    for (std::size_t b = 0; b < buckets; ++b) {
        std::size_t next = offset[b];
        for (std::size_t p = 0; p < slices; ++p) {
            const std::size_t count = at[p][b];
            at[p][b] = next;
            next += count;
        }
        offset[b + 1] = next;
    }
    parallel_for(slices, jobs, [&](std::size_t p) {
        auto [b, e] = range(p);
        std::vector<std::size_t>& next = at[p];
        for (std::size_t i = b; i < e; ++i) out[next[bucket(v[i])]++] = make(v[i], p);
    });
    return offset;
}

// Length of the union of half-open intervals [first, second), in the same unit. Sorts `iv`
// in place by start (radix_sort_range), then one sweep. Empty intervals add nothing. Unsigned:
// two time points below 9e18 ns in magnitude are up to 1.8e19 apart, which fits 64 bits only
// without a sign.
std::uint64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv);

// The split of one run: elapsed = max(end) - min(start) over all spans; fixed = length of the
// union of the fixed nodes' intervals; per node, the length of the union of its own spans. All
// in integer nanoseconds.
struct span_summary {
    std::uint64_t elapsed_ns = 0;
    std::uint64_t fixed_ns = 0;
    std::vector<std::uint64_t> node_ns;  // indexed like span_set::names
};
// is_fixed is indexed like span_set::names. An empty span set has elapsed 0. The unions (one
// per node, and the fixed one) are computed on up to `jobs` threads; the result is the same for
// every `jobs`.
span_summary summarize_spans(const span_set& s, const std::vector<bool>& is_fixed, unsigned jobs = 1);

}  // namespace prof
