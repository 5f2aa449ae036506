// Interval arithmetic (see intervals.hpp).
#include "prof/spans/intervals.hpp"

#include <algorithm>
#include <limits>

namespace prof {

namespace {

using interval = std::pair<std::int64_t, std::int64_t>;
// The same as a type without a constructor, so that an array of millions is sized unwritten.
struct interval_pod {
    std::int64_t first, second;
};

// The union's length of iv[0, n), sorted in place by start (through tmp, room for n). Lengths
// are unsigned differences: exact for any two int64 time points.
template <class I>
std::uint64_t union_length(I* iv, std::size_t n, I* tmp) {
    // Ordered by start only: among equal starts the sweep below takes the largest end anyway.
    auto by_start = [](const I& a, const I& b) { return a.first < b.first; };
    if (!std::is_sorted(iv, iv + n, by_start)) radix_sort_range(iv, n, tmp, [](const I& x) { return x.first; });
    auto length = [](std::int64_t s, std::int64_t e) {
        return static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(s);
    };
    std::uint64_t total = 0;
    bool open = false;
    std::int64_t cur_s = 0, cur_e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        auto [s, e] = iv[i];
        if (e <= s) continue;
        if (open && s <= cur_e) {
            cur_e = std::max(cur_e, e);
            continue;
        }
        if (open) total += length(cur_s, cur_e);
        cur_s = s;
        cur_e = e;
        open = true;
    }
    if (open) total += length(cur_s, cur_e);
    return total;
}

}  // namespace

std::uint64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv) {
    std::vector<interval> tmp(iv.size() < radix_sort_min ? 0 : iv.size());
    return union_length(iv.data(), iv.size(), tmp.data());
}

span_summary summarize_spans(const span_set& s, const std::vector<bool>& is_fixed, unsigned jobs) {
    span_summary out;
    const std::size_t nodes = s.names.size(), n = s.spans.size();
    out.node_ns.assign(nodes, 0);
    if (n == 0) return out;
    // Bucketed by node (bucket_sort, on up to `jobs` threads, each slice's extremes kept), then
    // each bucket's union, sorted in place: O(n log n) overall, on integers only.
    struct alignas(64) extremes {  // one cache line per slice: written by one thread only
        std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    };
    std::vector<extremes> ex(std::max(jobs, 1u));
    filled_vector<interval_pod> iv(n);
    const std::vector<std::size_t> offset = bucket_sort(
        s.spans.data(), n, nodes, jobs, iv.data(), [](const span& sp) { return sp.node; },
        [&](const span& sp, std::size_t p) {
            ex[p].lo = std::min(ex[p].lo, sp.start_ns);
            ex[p].hi = std::max(ex[p].hi, sp.end_ns);
            return interval_pod{sp.start_ns, sp.end_ns};
        });
    // The fixed union: with one fixed node it is that node's union, with several the union of
    // their intervals, copied before any bucket is sorted.
    std::vector<std::size_t> fixed_nodes;
    for (std::size_t k = 0; k < nodes; ++k)
        if (k < is_fixed.size() && is_fixed[k]) fixed_nodes.push_back(k);
    filled_vector<interval_pod> fixed_iv;
    if (fixed_nodes.size() > 1)
        for (std::size_t k : fixed_nodes)
            fixed_iv.insert(fixed_iv.end(), iv.begin() + static_cast<std::ptrdiff_t>(offset[k]),
                            iv.begin() + static_cast<std::ptrdiff_t>(offset[k + 1]));
    // Tasks 0 .. nodes-1: a node's union; task `nodes`: the fixed union of several nodes. Each
    // task writes only its own result, through a scratch buffer of its own.
    parallel_for(fixed_nodes.size() > 1 ? nodes + 1 : nodes, jobs, [&](std::size_t t) {
        interval_pod* v = t < nodes ? iv.data() + offset[t] : fixed_iv.data();
        const std::size_t m = t < nodes ? offset[t + 1] - offset[t] : fixed_iv.size();
        filled_vector<interval_pod> tmp(m < radix_sort_min ? 0 : m);
        (t < nodes ? out.node_ns[t] : out.fixed_ns) = union_length(v, m, tmp.data());
    });
    if (fixed_nodes.size() == 1) out.fixed_ns = out.node_ns[fixed_nodes[0]];
    std::int64_t lo = ex[0].lo, hi = ex[0].hi;
    for (const extremes& e : ex) lo = std::min(lo, e.lo), hi = std::max(hi, e.hi);
    out.elapsed_ns = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    return out;
}

}  // namespace prof
