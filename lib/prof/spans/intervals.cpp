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
    // Bucket by node (a stable counting sort, O(n)), in `parts` slices of the spans on as many
    // threads, then each bucket's union, sorted in place: O(n log n) overall, on integers only.
    const std::size_t parts = std::clamp<std::size_t>(n / 65536, 1, std::max(jobs, 1u));
    std::vector<std::vector<std::size_t>> count(parts, std::vector<std::size_t>(nodes, 0));
    std::vector<std::int64_t> lo(parts, std::numeric_limits<std::int64_t>::max()), hi(parts, std::numeric_limits<std::int64_t>::min());
    auto slice = [&](std::size_t p) { return std::pair{n * p / parts, n * (p + 1) / parts}; };
    run_tasks(parts, jobs, [&](std::size_t p) {
        auto [b, e] = slice(p);
        for (std::size_t i = b; i < e; ++i) {
            const span& sp = s.spans[i];
            lo[p] = std::min(lo[p], sp.start_ns);
            hi[p] = std::max(hi[p], sp.end_ns);
            ++count[p][sp.node];
        }
    });
    // offset[k]: where node k's bucket starts; count[p][k] becomes where slice p writes in it.
    std::vector<std::size_t> offset(nodes + 1, 0);
    for (std::size_t k = 0; k < nodes; ++k) {
        std::size_t at = offset[k];
        for (std::size_t p = 0; p < parts; ++p) {
            const std::size_t c = count[p][k];
            count[p][k] = at;
            at += c;
        }
        offset[k + 1] = at;
    }
    filled_vector<interval_pod> iv(n);
    run_tasks(parts, jobs, [&](std::size_t p) {
        auto [b, e] = slice(p);
        std::vector<std::size_t>& fill = count[p];
        for (std::size_t i = b; i < e; ++i) {
            const span& sp = s.spans[i];
            iv[fill[sp.node]++] = {sp.start_ns, sp.end_ns};
        }
    });
    filled_vector<interval_pod> fixed_iv;  // the fixed nodes' intervals, copied before any bucket is sorted
    for (std::size_t k = 0; k < nodes; ++k)
        if (k < is_fixed.size() && is_fixed[k])
            fixed_iv.insert(fixed_iv.end(), iv.begin() + static_cast<std::ptrdiff_t>(offset[k]),
                            iv.begin() + static_cast<std::ptrdiff_t>(offset[k + 1]));
    // Tasks 0 .. nodes-1: a node's union; task `nodes`: the fixed union. Each task writes only its
    // own result, through a scratch buffer of its own.
    run_tasks(nodes + 1, jobs, [&](std::size_t t) {
        interval_pod* v = t < nodes ? iv.data() + offset[t] : fixed_iv.data();
        const std::size_t m = t < nodes ? offset[t + 1] - offset[t] : fixed_iv.size();
        filled_vector<interval_pod> tmp(m < radix_sort_min ? 0 : m);
        (t < nodes ? out.node_ns[t] : out.fixed_ns) = union_length(v, m, tmp.data());
    });
    out.elapsed_ns = static_cast<std::uint64_t>(*std::max_element(hi.begin(), hi.end())) -
                     static_cast<std::uint64_t>(*std::min_element(lo.begin(), lo.end()));
    return out;
}

}  // namespace prof
