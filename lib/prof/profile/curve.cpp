// The cost curve in n_obs and the work it predicts (see curve.hpp).
#include "prof/profile/curve.hpp"

#include "prof/profile/profile.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace prof {

namespace {

// [begin, end) ranges of `count` sorted keys cut into at most `bins` runs of equal count, a
// run of equal keys never split between two ranges. key(i) is the i-th sorted key.
template <class Key>
std::vector<std::pair<std::size_t, std::size_t>> equal_count_ranges(std::size_t count, std::size_t bins, Key key) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::size_t distinct = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (i == 0 || key(i) != key(i - 1)) ++distinct;
    if (distinct <= bins) {
        for (std::size_t i = 0; i < count;) {
            std::size_t j = i + 1;
            while (j < count && key(j) == key(i)) ++j;
            out.emplace_back(i, j);
            i = j;
        }
        return out;
    }
    const std::size_t target = (count + bins - 1) / bins;
    for (std::size_t i = 0; i < count;) {
        std::size_t j = std::min(count, i + target);
        while (j < count && key(j) == key(j - 1)) ++j;
        out.emplace_back(i, j);
        i = j;
    }
    return out;
}

// Sorts (n_obs, seconds) pairs by n_obs, stably, in linear time: LSD radix passes of up to 16
// bits, as few as the largest n_obs needs (one for any length below 65536, with only as many
// buckets as that length needs). A comparison sort of a harvest's millions of fits took longer
// than reading them.
void sort_by_length(std::vector<std::pair<std::uint64_t, double>>& v) {
    if (v.size() < 64) {
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        return;
    }
    std::uint64_t top = 0;
    for (const auto& e : v) top = std::max(top, e.first);
    std::vector<std::pair<std::uint64_t, double>> tmp(v.size());
    std::vector<std::size_t> count;
    for (int shift = 0; shift < 64 && (top >> shift) != 0; shift += 16) {
        const int bits = std::min(16, static_cast<int>(std::bit_width(top >> shift)));
        const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
        count.assign(std::size_t{1} << bits, 0);
        for (const auto& e : v) ++count[(e.first >> shift) & mask];
        std::size_t at = 0;
        for (auto& c : count) {
            std::size_t n = c;
            c = at;
            at += n;
        }
        for (const auto& e : v) tmp[count[(e.first >> shift) & mask]++] = e;
        v.swap(tmp);
    }
}

}  // namespace

std::vector<curve_point> build_curve(std::vector<std::pair<std::uint64_t, double>>& walls,
                                     std::vector<std::pair<std::uint64_t, double>>& cpus) {
    std::vector<curve_point> out;
    if (walls.empty()) return out;
    sort_by_length(walls);
    sort_by_length(cpus);
    auto ranges = equal_count_ranges(walls.size(), max_curve_points, [&](std::size_t i) { return walls[i].first; });
    std::vector<double> vals;
    std::size_t c = 0;
    for (auto [b, e] : ranges) {
        curve_point p;
        p.n_obs_min = walls[b].first;
        p.n_obs_max = walls[e - 1].first;
        p.n_fits = e - b;
        p.n_obs = walls[b + (e - b - 1) / 2].first;
        vals.clear();
        for (std::size_t i = b; i < e; ++i) vals.push_back(walls[i].second);
        p.wall_s = *median(vals);
        vals.clear();
        while (c < cpus.size() && cpus[c].first < p.n_obs_min) ++c;
        for (; c < cpus.size() && cpus[c].first <= p.n_obs_max; ++c) vals.push_back(cpus[c].second);
        if (!vals.empty()) p.cpu_s = *median(vals);
        out.push_back(p);
    }
    return out;
}

namespace curve_detail {

bin_plan plan_bins(const std::vector<std::uint64_t>& count) {
    bin_plan plan;
    plan.point_of.assign(count.size(), bin_plan::npos);
    std::uint64_t total = 0, distinct = 0;
    for (std::size_t n = 1; n < count.size(); ++n)
        if (count[n]) total += count[n], ++distinct;
    // equal_count_ranges' rule on the histogram: a bin takes `target` values and then the rest
    // of the run of equal lengths it stopped in; one bin per length while they are few.
    const std::uint64_t target =
        distinct <= max_curve_points ? 1 : (total + max_curve_points - 1) / max_curve_points;
    std::size_t n = 1;
    while (n < count.size()) {
        while (n < count.size() && !count[n]) ++n;
        if (n == count.size()) break;
        curve_point p;
        p.n_obs_min = n;
        std::uint64_t in = 0;
        std::size_t last = n;
        for (; n < count.size() && in < target; ++n)
            if (count[n]) in += count[n], last = n;
        p.n_obs_max = last;
        p.n_fits = in;
        // The length of the lower middle value of the bin, in sorted order.
        std::uint64_t mid = (in - 1) / 2, seen = 0;
        for (std::size_t m = p.n_obs_min; m <= last; ++m) {
            seen += count[m];
            if (seen > mid) {
                p.n_obs = m;
                break;
            }
        }
        for (std::size_t m = p.n_obs_min; m <= last; ++m) plan.point_of[m] = static_cast<std::uint32_t>(plan.points.size());
        plan.points.push_back(p);
        n = last + 1;
    }
    return plan;
}

void finish_points(std::vector<curve_point>& points, std::vector<std::vector<double>>& walls,
                   std::vector<std::vector<double>>& cpus) {
    // median_of_parts: the same value as median(), by two streaming passes over a large bin.
    for (std::size_t k = 0; k < points.size(); ++k) {
        points[k].wall_s = *median_of_parts({walls[k]});
        if (!cpus[k].empty()) points[k].cpu_s = *median_of_parts({cpus[k]});
    }
}

}  // namespace curve_detail

double curve_wall_at(const std::vector<curve_point>& curve, std::uint64_t n_obs) {
    constexpr double biggest = std::numeric_limits<double>::max();
    const double n = static_cast<double>(n_obs);
    const curve_point& first = curve.front();
    const curve_point& last = curve.back();
    if (n_obs <= first.n_obs) return first.wall_s;
    if (n_obs >= last.n_obs) {
        if (n_obs == last.n_obs) return last.wall_s;
        double b = 1;
        if (curve.size() >= 2) {
            const curve_point& prev = curve[curve.size() - 2];
            double slope = std::log(last.wall_s / prev.wall_s) /
                           std::log(static_cast<double>(last.n_obs) / static_cast<double>(prev.n_obs));
            if (std::isfinite(slope)) b = std::clamp(slope, 1.0, 3.0);
        }
        double v = last.wall_s * std::pow(n / static_cast<double>(last.n_obs), b);
        return std::isfinite(v) ? std::max(v, last.wall_s) : biggest;
    }
    auto hi = std::lower_bound(curve.begin(), curve.end(), n_obs,
                               [](const curve_point& p, std::uint64_t x) { return p.n_obs < x; });
    auto lo = hi - 1;
    if (hi->n_obs == n_obs) return hi->wall_s;
    double t = (n - static_cast<double>(lo->n_obs)) / static_cast<double>(hi->n_obs - lo->n_obs);
    double v = lo->wall_s + t * (hi->wall_s - lo->wall_s);
    // Between two positive values the chord stays positive; the guard keeps rounding honest.
    return std::max(v, std::min(lo->wall_s, hi->wall_s));
}

void attach_memory(std::vector<curve_point>& curve, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& peaks) {
    if (curve.empty()) return;
    for (const auto& [n, rss] : peaks) {
        if (n == 0 || rss == 0) continue;
        auto it = std::lower_bound(curve.begin(), curve.end(), n,
                                   [](const curve_point& p, std::uint64_t x) { return p.n_obs_max < x; });
        curve_point& p = it == curve.end() ? curve.back() : *it;
        if (!p.max_process_rss_bytes || rss > *p.max_process_rss_bytes) p.max_process_rss_bytes = rss;
    }
}

std::optional<std::uint64_t> curve_rss_at(const std::vector<curve_point>& curve, std::uint64_t n_obs) {
    if (curve.empty()) return std::nullopt;
    for (const auto& p : curve)
        if (!p.max_process_rss_bytes) return std::nullopt;
    std::uint64_t peak = 0;
    for (const auto& p : curve) {
        peak = std::max(peak, *p.max_process_rss_bytes);
        if (p.n_obs_max >= n_obs) return peak;
    }
    const curve_point& last = curve.back();
    if (curve.size() < 2 || n_obs <= last.n_obs) return peak;
    const curve_point& prev = curve[curve.size() - 2];
    const double slope = (static_cast<double>(*last.max_process_rss_bytes) - static_cast<double>(*prev.max_process_rss_bytes)) /
                         static_cast<double>(last.n_obs - prev.n_obs);
    if (!(slope > 0)) return peak;
    const double grown = static_cast<double>(*last.max_process_rss_bytes) + slope * static_cast<double>(n_obs - last.n_obs);
    if (!(grown < 18446744073709549568.0)) return UINT64_MAX;  // the largest double below 2^64
    return std::max(peak, static_cast<std::uint64_t>(std::ceil(grown)));
}

double length_distribution::series() const {
    double s = 0;
    for (const auto& b : bins) s += b.n_series;
    return s;
}

std::uint64_t length_distribution::max_n_obs() const {
    std::uint64_t m = 0;
    for (const auto& b : bins) m = std::max(m, b.n_obs_max);
    return m;
}

std::uint64_t length_distribution::min_n_obs() const {
    return bins.empty() ? 0 : bins.front().n_obs_min;
}

length_distribution distribution_of_lengths(std::vector<std::uint64_t>& lengths) {
    length_distribution d;
    std::sort(lengths.begin(), lengths.end());
    for (auto [b, e] : equal_count_ranges(lengths.size(), max_length_bins, [&](std::size_t i) { return lengths[i]; })) {
        length_bin bin;
        bin.n_obs_min = lengths[b];
        bin.n_obs_max = lengths[e - 1];
        long double sum = 0;
        for (std::size_t i = b; i < e; ++i) sum += static_cast<long double>(lengths[i]);
        bin.n_obs = static_cast<std::uint64_t>(std::llround(sum / static_cast<long double>(e - b)));
        bin.n_series = static_cast<double>(e - b);
        d.bins.push_back(bin);
    }
    return d;
}

length_distribution scale_distribution(const length_distribution& d, double series) {
    length_distribution out = d;
    const double have = d.series();
    if (have > 0)
        for (auto& b : out.bins) b.n_series = b.n_series * series / have;
    return out;
}

model_work predict_model_work(const std::vector<curve_point>& curve, const length_distribution& d) {
    model_work w;
    constexpr double biggest = std::numeric_limits<double>::max();
    for (const auto& b : d.bins) {
        double t = curve_wall_at(curve, b.n_obs);
        double add = b.n_series * t;
        w.total_wall_s = std::isfinite(w.total_wall_s + add) ? w.total_wall_s + add : biggest;
        for (std::uint64_t n : {b.n_obs, b.n_obs_max}) {
            double c = curve_wall_at(curve, n);
            if (c > w.longest_cell_s || (c == w.longest_cell_s && n > w.longest_n_obs)) {
                w.longest_cell_s = c;
                w.longest_n_obs = n;
            }
        }
    }
    w.above_measured = d.max_n_obs() > curve.back().n_obs_max;
    w.below_measured = d.min_n_obs() < curve.front().n_obs_min;
    return w;
}

std::vector<curve_point> curve_of_readings(const std::vector<fit_reading>& readings) {
    std::vector<std::pair<std::uint64_t, double>> walls, cpus;
    walls.reserve(readings.size());
    for (const auto& r : readings) {
        if (r.n_obs == 0) continue;
        walls.emplace_back(r.n_obs, r.wall_s);
        if (r.cpu_s) cpus.emplace_back(r.n_obs, *r.cpu_s);
    }
    return build_curve(walls, cpus);
}

}  // namespace prof
