// Interval arithmetic of the spans area: the length of a union of half-open intervals, the
// split of one run into elapsed, fixed and per-node time, and the stable radix sort both use
// (so does the Chrome reader's B/E matching). Integer nanoseconds throughout.
#pragma once

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

// Calls task(t) once for each t in [0, tasks), on up to `jobs` threads (this one among them),
// each taking the next task not yet taken, and returns when all are done. When a task throws,
// no further task starts and the first exception is rethrown here.
template <class Task>
void run_tasks(std::size_t tasks, unsigned jobs, Task task) {
    std::atomic<std::size_t> next{0};
    std::exception_ptr failed;
    std::mutex lock;
    auto work = [&] {
        try {
            for (std::size_t t; (t = next.fetch_add(1)) < tasks;) task(t);
        } catch (...) {
            std::lock_guard<std::mutex> g(lock);
            if (!failed) failed = std::current_exception();
            next = tasks;
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t k = 1; k < std::min<std::size_t>(jobs, tasks); ++k) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    if (failed) std::rethrow_exception(failed);
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
