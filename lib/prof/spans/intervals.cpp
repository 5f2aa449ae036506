// Interval arithmetic (see intervals.hpp).
#include "prof/spans/intervals.hpp"

#include <atomic>
#include <limits>
#include <thread>

namespace prof {

namespace {

using interval = std::pair<std::int64_t, std::int64_t>;

// The union's length of iv[0, n), sorted in place by start (through tmp, room for n). Lengths
// are unsigned differences: exact for any two int64 time points.
std::uint64_t union_length(interval* iv, std::size_t n, interval* tmp) {
    // Ordered by start only: among equal starts the sweep below takes the largest end anyway.
    auto by_start = [](const interval& a, const interval& b) { return a.first < b.first; };
    if (!std::is_sorted(iv, iv + n, by_start)) radix_sort_range(iv, n, tmp, [](const interval& x) { return x.first; });
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
    out.node_ns.assign(s.names.size(), 0);
    if (s.spans.empty()) return out;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    // Bucket by node (counting sort, O(n)), then each bucket's union, sorted in place through
    // a scratch buffer per thread: O(n log n) overall, on integers only.
    std::vector<std::size_t> offset(s.names.size() + 1, 0);
    for (const auto& sp : s.spans) {
        lo = std::min(lo, sp.start_ns);
        hi = std::max(hi, sp.end_ns);
        ++offset[sp.node + 1];
    }
    std::size_t largest = 0;
    for (std::size_t k = 1; k < offset.size(); ++k) {
        largest = std::max(largest, offset[k]);
        offset[k] += offset[k - 1];
    }
    std::vector<interval> iv(s.spans.size());
    {
        std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
        for (const auto& sp : s.spans) iv[fill[sp.node]++] = {sp.start_ns, sp.end_ns};
    }
    std::vector<interval> fixed_iv;  // the fixed nodes' intervals, copied before any bucket is sorted
    for (std::size_t n = 0; n < s.names.size(); ++n)
        if (n < is_fixed.size() && is_fixed[n])
            fixed_iv.insert(fixed_iv.end(), iv.begin() + static_cast<std::ptrdiff_t>(offset[n]),
                            iv.begin() + static_cast<std::ptrdiff_t>(offset[n + 1]));
    // Tasks 0 .. nodes-1: a node's union; task `nodes`: the fixed union. Taken in turn by the
    // threads, each through its own scratch; every task writes only its own result.
    const std::size_t nodes = s.names.size(), tasks = nodes + 1;
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        std::vector<interval> tmp;
        for (std::size_t t; (t = next.fetch_add(1)) < tasks;) {
            interval* v = t < nodes ? iv.data() + offset[t] : fixed_iv.data();
            std::size_t n = t < nodes ? offset[t + 1] - offset[t] : fixed_iv.size();
            if (n >= radix_sort_min && tmp.size() < n) tmp.resize(std::max(n, largest));  // grown once or twice
            (t < nodes ? out.node_ns[t] : out.fixed_ns) = union_length(v, n, tmp.data());
        }
    };
    std::vector<std::thread> threads;
    for (unsigned k = 1; k < std::min<std::size_t>(jobs, tasks); ++k) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    out.elapsed_ns = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    return out;
}

}  // namespace prof
