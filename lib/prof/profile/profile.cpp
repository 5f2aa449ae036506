// build_profile and the profile record (see profile.hpp for the rules of the arithmetic).
#include "prof/profile/profile.hpp"
#include "prof/profile/bootstrap.hpp"

#include "prof/core/diag.hpp"

#include "prof/core/parallel.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <fmt/format.h>
#include <limits>

namespace prof {
namespace od = simdjson::ondemand;

namespace {

// The warning for a model whose device ran out of memory: the limit it died at is seldom
// recorded, so the GPU slot sized from the fits that worked may be too small.
std::string gpu_oom_warning(const std::string& model, std::uint64_t n, const std::optional<std::uint64_t>& peak) {
    std::string bound =
        peak ? fmt::format("one reached peak_gpu_bytes {} before failing, so it needs more: slot_gpu_bytes is at "
                           "least {} (the OOM bump)",
                           *peak, oom_floor_bytes(*peak))
             : std::string("no peak_gpu_bytes was recorded at the failure, so no lower bound follows");
    return fmt::format("model '{}': {} fit(s) ran out of GPU memory (a device OOM; host memory is not raised): the "
                       "device limit they hit is not recorded, so slot_gpu_bytes may be too small; {}; size the GPU "
                       "from a fit that succeeds on a larger device",
                       model, n, bound);
}

template <class T>
[[gnu::always_inline]] inline void keep_max(std::optional<T>& acc, const std::optional<T>& v) {
    if (!v) return;
    if (!acc || *v > *acc) acc = v;
}

// Per-family raw roll-up from the models (peaks, sums, the common thread cap), then sizing.
std::map<std::string, family_cost> roll_up_families(const std::map<std::string, model_cost>& models,
                                                    const std::map<std::string, std::optional<double>>& family_median,
                                                    const margins& margin) {
    std::map<std::string, family_cost> out;
    std::map<std::string, bool> threads_mixed;
    for (const auto& [name, m] : models) {
        family_cost& f = out[m.family];
        bool first = f.models.empty();
        f.family = m.family;
        f.models.push_back(name);  // models is a sorted map, so this stays sorted
        f.n_fits += m.n_fits;
        f.n_ok += m.n_ok;
        keep_max(f.max_process_rss_bytes, m.max_process_rss_bytes);
        keep_max(f.max_replay_rss_bytes, m.max_replay_rss_bytes);
        keep_max(f.max_peak_rss_bytes, m.max_peak_rss_bytes);
        keep_max(f.max_peak_gpu_bytes, m.max_peak_gpu_bytes);
        keep_max(f.max_effective_cores, m.max_effective_cores);
        if (m.oom_limit_bytes) keep_max(f.oom_floor_bytes, std::optional(oom_floor_bytes(*m.oom_limit_bytes)));
        if (m.gpu_oom_peak_bytes)
            keep_max(f.gpu_oom_floor_bytes, std::optional(oom_floor_bytes(*m.gpu_oom_peak_bytes)));
        if (m.median_wall_s) f.total_wall_s_per_series = f.total_wall_s_per_series.value_or(0.0) + *m.median_wall_s;
        if (first) {
            f.intraop_threads = m.intraop_threads;
            threads_mixed[m.family] = !m.intraop_threads;
        } else if (!m.intraop_threads || m.intraop_threads != f.intraop_threads) {
            threads_mixed[m.family] = true;
        }
    }
    for (auto& [name, f] : out) {
        if (threads_mixed[name]) f.intraop_threads.reset();
        auto it = family_median.find(name);
        f.median_wall_s = it == family_median.end() ? std::nullopt : it->second;
        size_family(f, margin);
    }
    return out;
}

std::vector<curve_point> curve_of(const value_blocks& wall, const blocks<std::uint32_t>& wall_n,
                                  const value_blocks& cpu, const blocks<std::uint32_t>& cpu_n) {
    return build_curve_in_place([&](auto fn) { wall.for_each_with(wall_n, fn); },
                                [&](auto fn) { cpu.for_each_with(cpu_n, fn); });
}

// The median extra wall of the cold warm-up runs over the warm wall at their length.
std::optional<double> cold_start_of(const std::vector<std::pair<std::uint32_t, double>>& cold, const model_cost& m) {
    std::vector<double> extra;
    for (const auto& [n, wall] : cold) {
        std::optional<double> warm;
        if (n > 0 && !m.wall_curve.empty()) warm = curve_wall_at(m.wall_curve, n);
        else warm = m.median_wall_s;
        if (warm && std::isfinite(*warm)) extra.push_back(std::max(0.0, wall - *warm));
    }
    return median(extra);
}

// Sum of the walls measured beside another fit over the sum of the curve's walls at their
// lengths (only lengths on the curve's range count: a replayed cell is a sampled one).
std::optional<double> beside_slowdown_of(const std::vector<std::pair<std::uint32_t, double>>& beside,
                                         const model_cost& m, std::uint64_t& n) {
    double ran = 0, alone = 0;
    n = 0;
    for (const auto& [at, wall] : beside) {
        if (at == 0 || m.wall_curve.empty()) continue;
        const double curve = curve_wall_at(m.wall_curve, at);
        if (!(std::isfinite(curve) && curve > 0)) continue;
        ran += wall;
        alone += curve;
        ++n;
    }
    if (n == 0 || !(alone > 0) || !std::isfinite(ran / alone)) return std::nullopt;
    return ran / alone;
}

// A model's raw cost from its accumulator (profile_builder's private model_acc, deduced).
template <class Acc>
model_cost cost_of(const std::string& name, const std::string& family, const Acc& acc) {
    model_cost m = acc.raw;  // the counts and maxima, kept in the record's fields as they came
    m.model_type = name;
    m.family = family;
    std::vector<std::span<const double>> wall_parts, cpu_parts;
    acc.wall.parts(wall_parts);
    acc.cpu.parts(cpu_parts);
    m.median_wall_s = median_of_parts(wall_parts);
    m.median_cpu_s = median_of_parts(cpu_parts);
    m.rss_method = acc.rss_mixed ? std::optional<std::string>("mixed") : acc.rss_method;
    if (acc.threads.size() > 1) m.thread_caps = acc.threads;
    m.intraop_threads = sized_thread_cap(acc.threads);
    m.wall_curve = curve_of(acc.wall, acc.wall_n, acc.cpu, acc.cpu_n);
    if (!acc.readings_full) {
        m.readings = acc.readings;
        std::sort(m.readings.begin(), m.readings.end());
    }
    attach_memory(m.wall_curve, acc.rss_peaks());
    m.memory_basis = model_memory_basis(m);
    m.cold_start_s = cold_start_of(acc.cold_walls, m);
    m.beside_slowdown = beside_slowdown_of(acc.beside_walls, m, m.n_beside);
    return m;
}

}  // namespace

std::optional<std::uint64_t> slot_memory_evidence(const model_cost& m) {
    std::optional<std::uint64_t> rss = m.max_process_rss_bytes;
    keep_max(rss, m.max_replay_rss_bytes);
    return rss;
}

std::optional<std::string> model_memory_basis(const model_cost& m) {
    if (!m.max_process_rss_bytes && !m.max_replay_rss_bytes) return std::nullopt;
    return m.max_replay_rss_bytes > m.max_process_rss_bytes ? "replay" : "per-cell";
}

void size_family(family_cost& f, const margins& m) {
    f.memory_margin = m.memory();
    f.time_margin = m.time();
    // The replayed worker peak sizes the slot when it is above every cell's own peak.
    std::optional<std::uint64_t> rss = f.max_process_rss_bytes;
    keep_max(rss, f.max_replay_rss_bytes);
    f.memory_basis.reset();
    if (rss) f.memory_basis = rss == f.max_process_rss_bytes ? "per-cell" : "replay";
    const slot_size s = size_slot({f.max_effective_cores, rss, f.max_peak_gpu_bytes, f.oom_floor_bytes,
                                   f.gpu_oom_floor_bytes},
                                  m.memory());
    f.slot_cores = s.cores;
    f.slot_rss_bytes = s.rss_bytes;
    f.slot_gpu_bytes = s.gpu_bytes;
    f.planning_wall_s_per_cell = f.median_wall_s ? std::optional(*f.median_wall_s * m.time()) : std::nullopt;
    f.planning_wall_s_per_series =
        f.total_wall_s_per_series ? std::optional(*f.total_wall_s_per_series * m.time()) : std::nullopt;
}

bool fit_was_oom_killed(const fit_evidence& f) {
    if (f.ok) return false;
    if (f.oom_killed) return *f.oom_killed;
    if (f.memory_limit_bytes && f.signal && *f.signal == "SIGKILL") return true;
    if (!f.error || fit_was_device_oom(f)) return false;
    for (std::string_view p : memory_error_patterns)
        if (f.error->find(p) != std::string_view::npos) return true;
    if (f.memory_limit_bytes)
        for (std::string_view p : killed_error_patterns)
            if (f.error->find(p) != std::string_view::npos) return true;
    return false;
}

bool fit_was_device_oom(const fit_evidence& f) {
    if (f.ok || !f.error) return false;
    for (std::string_view p : device_memory_error_patterns)
        if (f.error->find(p) != std::string_view::npos) return true;
    return false;
}

void append_oom_warnings(std::vector<std::string>& out, const std::string& model, std::uint64_t n_oom_no_limit,
                         std::uint64_t n_gpu_oom, const std::optional<std::uint64_t>& gpu_oom_peak) {
    if (n_oom_no_limit)
        out.push_back(fmt::format(
            "model '{}': {} fit(s) killed for memory under no known limit: no lower bound on its memory; record "
            "the limit (prof-measure --memory-limit, or a memory_limit_bytes column)",
            model, n_oom_no_limit));
    if (n_gpu_oom) out.push_back(gpu_oom_warning(model, n_gpu_oom, gpu_oom_peak));
}

namespace {

std::string family_counts(const family_votes& votes) {
    std::string all;
    for (const auto& [name, n] : votes.named)
        all += fmt::format("{}'{}' ({} fit{})", all.empty() ? "" : ", ", name, n, n == 1 ? "" : "s");
    return all;
}

}  // namespace

std::string family_choice(const std::string& model, const family_votes& votes) {
    if (votes.named.empty()) return model;
    std::uint64_t most = 0;
    std::size_t at = 0, n_most = 0;
    for (std::size_t i = 0; i < votes.named.size(); ++i) {
        if (votes.named[i].second > most) {
            most = votes.named[i].second;
            at = i;
            n_most = 1;
        } else if (votes.named[i].second == most) {
            ++n_most;
        }
    }
    if (n_most > 1)
        throw error(exit_code::data_err,
                    fmt::format("model '{}' appears under families {}: no family has the most fits, so none can be "
                                "chosen; give each model one family",
                                model, family_counts(votes)));
    return votes.named[at].first;
}

void append_family_warning(std::vector<std::string>& out, const std::string& model, const family_votes& votes) {
    if (votes.named.empty() || (votes.named.size() == 1 && votes.n_unnamed == 0)) return;
    const std::string chosen = family_choice(model, votes);
    const std::string unnamed =
        votes.n_unnamed ? fmt::format(" and {} fit{} name no family", votes.n_unnamed, votes.n_unnamed == 1 ? "" : "s")
                        : std::string();
    if (votes.named.size() == 1)
        out.push_back(fmt::format("model '{}': {} of its fits name no family; counted under '{}', the family the "
                                  "others name: give each model one family",
                                  model, votes.n_unnamed, chosen));
    else
        out.push_back(fmt::format("model '{}' appears under families {}{}; counted under '{}', the family most of its "
                                  "fits name: give each model one family",
                                  model, family_counts(votes), unnamed, chosen));
}

// ---- profile_builder --------------------------------------------------------------------

profile_builder::profile_builder(const margins& m) : margins_(m) {}

void profile_builder::add(const measured_fit& f) {
    add(fit_evidence{.ts_id = f.ts_id, .model_type = f.model_type, .family = f.family,
                     .family_named = f.family_named, .n_obs = f.n_obs, .ok = f.ok,
                     .error = f.error, .wall_s = f.wall_s, .cpu_s = f.cpu_s, .process_rss_bytes = f.process_rss_bytes,
                     .peak_rss_bytes = f.peak_rss_bytes, .peak_gpu_bytes = f.peak_gpu_bytes,
                     .intraop_threads = f.intraop_threads, .measured_at = f.measured_at, .signal = f.signal,
                     .memory_limit_bytes = f.memory_limit_bytes, .oom_killed = f.oom_killed,
                     .params_digest = f.params_digest, .contended = contended(f), .phase = f.phase, .cold = f.cold,
                     .worker_peak_bytes = f.worker_peak_bytes, .rss_method = f.rss_method,
                     .concurrent_fits = f.concurrent_fits, .worker_max_n_obs = f.worker_max_n_obs});
}

profile_builder::model_acc& profile_builder::model_of(const fit_evidence& f) {
    std::uint32_t id = model_ids_.intern_next(f.model_type);
    if (id == models_.size()) models_.emplace_back();
    model_acc& m = models_[id];
    // A model nearly always has one family: that case is one short compare, not a search.
    auto& named = m.families.named;
    if (!f.family_named) {
        ++m.families.n_unnamed;
    } else if (named.size() == 1 && same_text(named.front().first, f.family)) {
        ++named.front().second;
    } else {
        auto fam = std::lower_bound(named.begin(), named.end(), f.family,
                                    [](const auto& a, std::string_view b) { return a.first < b; });
        if (fam == named.end() || !same_text(fam->first, f.family)) fam = named.emplace(fam, std::string(f.family), 0);
        ++fam->second;
    }
    return m;
}

namespace {

// A fit's length on the curves: 0 when unknown or past 2^32 - 1 (no series a fit runs on), so
// kept off them like a missing one.
std::uint32_t curve_length(const fit_evidence& f) {
    return f.n_obs && *f.n_obs <= UINT32_MAX ? static_cast<std::uint32_t>(*f.n_obs) : 0;
}

}  // namespace

void profile_builder::model_acc::add_memory(const fit_evidence& f, std::uint32_t n) {
    if (usable(f.process_rss_bytes)) {
        keep_max(raw.max_process_rss_bytes, f.process_rss_bytes);
        if (n) add_rss(n, *f.process_rss_bytes);
    }
    if (usable(f.peak_rss_bytes)) keep_max(raw.max_peak_rss_bytes, f.peak_rss_bytes);
    // A GPU reading of 0 is a measurement (NVML saw no device memory in use), not an absence:
    // the one axis where 0 is usable, so a CPU model measured on a GPU host stays "measured none".
    if (f.peak_gpu_bytes) keep_max(raw.max_peak_gpu_bytes, f.peak_gpu_bytes);
}

// An ok warm-up, replay or superseded run: its wall (cold warm-ups), its worker's lifetime peak
// (replays) or its memory (superseded attempts).
void profile_builder::add_beside_sample(const fit_evidence& f) {
    if (f.measured_at) latest_.add(parse_rfc3339(*f.measured_at));
    model_acc& m = model_of(f);
    const std::uint32_t at = curve_length(f);
    if (f.phase == fit_phase_warmup) {
        ++m.raw.n_warmup;
        if (f.cold.value_or(false) && usable(f.wall_s)) m.cold_walls.emplace_back(at, *f.wall_s);
        return;
    }
    if (f.phase == fit_phase_superseded) {
        // An attempt a less contended one replaced: its clocks read the busy host, but the
        // memory it took is the cell's as much as the counted attempt's, so a slot holds the
        // larger. Unlike an ok warm-up run (a worker's first, whose memory is its imports).
        m.add_memory(f, at);
        return;
    }
    ++m.raw.n_replay;
    // Beside another fit, uncontended (a busy host's wait is not the neighbour's cost) and long
    // enough for its clock to read the fit rather than the protocol around it.
    if (f.concurrent_fits.value_or(0) >= 1 && usable(f.wall_s) && *f.wall_s >= contended_min_wall_s && !f.contended)
        m.beside_walls.emplace_back(at, *f.wall_s);
    std::optional<std::uint64_t> peak = usable(f.worker_peak_bytes) ? f.worker_peak_bytes : std::nullopt;
    keep_max(peak, usable(f.process_rss_bytes) ? f.process_rss_bytes : std::nullopt);
    keep_max(m.raw.max_replay_rss_bytes, peak);
    // The replayed peak also stands on the memory curve, so the size class holding the heaviest
    // cells is sized for what a worker carries into them: at the longest series the worker had
    // run by then (worker_max_n_obs), which any worker reaching that peak must have run and so
    // any class it can happen in holds; else at the replayed cell's own length.
    std::uint32_t reach = at;
    if (f.worker_max_n_obs && *f.worker_max_n_obs <= UINT32_MAX)
        reach = std::max(reach, static_cast<std::uint32_t>(*f.worker_max_n_obs));
    if (reach && peak) m.add_rss(reach, *peak);
}

namespace {

// vote_threads' search and insert, for a cap other than the last voted.
[[gnu::noinline]] void vote_new_threads(std::vector<thread_cap_count>& votes, std::optional<std::uint64_t> threads,
                                        std::uint64_t n) {
    auto at = std::lower_bound(votes.begin(), votes.end(), threads,
                               [](const thread_cap_count& v, const std::optional<std::uint64_t>& t) {
                                   return v.intraop_threads < t;
                               });
    if (at == votes.end() || at->intraop_threads != threads) at = votes.insert(at, {threads, 0});
    at->n_fits += n;
}

// `n` fits' thread cap counted toward a model's votes (kept sorted by cap).
inline void vote_threads(std::vector<thread_cap_count>& votes, std::optional<std::uint64_t> threads, std::uint64_t n = 1) {
    // A model's fits nearly always run under one cap: that case is one compare, inline.
    if (!votes.empty() && votes.back().intraop_threads == threads) {
        votes.back().n_fits += n;
        return;
    }
    vote_new_threads(votes, threads, n);
}

}  // namespace

void profile_builder::add(const fit_evidence& f) {
    if (f.ok && !same_text(f.phase, fit_phase_sample)) return add_beside_sample(f);
    ++n_measurements_;
    if (f.ok) ++n_ok_;
    if ((!last_ts_pending_ && ts_ids_.size() == 0) || !same_text(f.ts_id, last_ts_id_)) {
        settle_series();
        last_ts_id_.assign(f.ts_id);
        last_ts_hash_ = short_text_hash(last_ts_id_);
        ts_ids_.prefetch(last_ts_hash_);
        last_ts_pending_ = true;
        // A series' cells share its length: each model's memory-curve entry at it is loaded
        // now, a model's row or more before add_memory reads it (a table of thousands of
        // lengths per model is out of the cache by the time a length comes round again).
        if (const std::uint32_t n = curve_length(f); n && models_.size() <= max_prefetched_models)
            for (const model_acc& m : models_)
                if (n < m.rss_by_n.size()) __builtin_prefetch(&m.rss_by_n[n], 1);
    }
    if (f.measured_at) latest_.add(parse_rfc3339(*f.measured_at));
    model_acc& m = model_of(f);
    // The memory curve's entry at this length is read below (add_memory). With more models
    // than a new series prefetches for (above), the load starts here, beside the work before it.
    const std::uint32_t n = curve_length(f);
    if (models_.size() > max_prefetched_models && n < m.rss_by_n.size()) __builtin_prefetch(&m.rss_by_n[n], 1);
    ++m.raw.n_fits;
    if (f.contended) ++n_contended_;
    if (!m.params_seen) {
        m.params_seen = true;
        if (f.params_digest) m.params = std::string(*f.params_digest);
    } else if (!m.other_params && (m.params.has_value() != f.params_digest.has_value() ||
                                   (m.params && !same_text(*m.params, *f.params_digest)))) {
        m.other_params = f.params_digest ? std::string(*f.params_digest) : std::string();
    }
    if (!f.ok) {
        if (m.raw.n_ok == 0) vote_threads(m.threads, f.intraop_threads);  // until a fit runs: see below
        // Compared as views: the pair of strings is built only when it is the new first.
        const std::string_view error = f.error ? std::string_view(*f.error) : std::string_view();
        if (!m.first_error || std::pair(f.ts_id, error) < std::pair<std::string_view, std::string_view>(
                                                           m.first_error->first, m.first_error->second))
            m.first_error.emplace(f.ts_id, error);
        if (fit_was_oom_killed(f)) {
            ++m.raw.n_oom_killed;
            if (f.memory_limit_bytes) keep_max(m.raw.oom_limit_bytes, f.memory_limit_bytes);
            else ++m.n_oom_no_limit;
        } else if (fit_was_device_oom(f)) {
            ++m.raw.n_gpu_oom;
            if (usable(f.peak_gpu_bytes)) keep_max(m.raw.gpu_oom_peak_bytes, f.peak_gpu_bytes);
        }
        return;
    }
    // The thread cap, like every axis, is what the fits that ran say: a failed row (often one
    // whose columns were never filled) does not vote once a fit has run, so it cannot erase the
    // cap; a model whose every fit failed (killed for memory) keeps the cap its failures ran under.
    if (m.raw.n_ok++ == 0) m.threads.clear();
    vote_threads(m.threads, f.intraop_threads);
    if (f.rss_method && !m.rss_mixed) {
        if (!m.rss_method) m.rss_method = std::string(*f.rss_method);
        else if (!same_text(*m.rss_method, *f.rss_method)) m.rss_mixed = true;
    }
    keep_max(m.raw.max_n_obs, f.n_obs);  // a failed fit says nothing about the lengths a model handles
    // Tested once: the stores below could alias f for all the compiler knows.
    const bool wall_ok = usable(f.wall_s), cpu_ok = usable(f.cpu_s);
    if (wall_ok) m.wall_n.push_back(n);
    if (cpu_ok) m.cpu_n.push_back(n);
    m.add_memory(f, n);
    if (wall_ok) m.wall.push_back(*f.wall_s);
    if (cpu_ok) m.cpu.push_back(*f.cpu_s);
    if (wall_ok && cpu_ok)
        keep_max(m.raw.max_effective_cores, effective_cores(f.wall_s, f.cpu_s));
    if (wall_ok && !m.readings_full) {  // no allocation per fit once past the bound
        if (m.readings.size() == max_model_readings) {
            m.readings_full = true;
            std::vector<fit_reading>().swap(m.readings);
        } else {
            m.readings.push_back({n, *f.wall_s, cpu_ok ? f.cpu_s : std::nullopt, f.contended});
        }
    }
}

void profile_builder::model_acc::add_readings(const std::vector<fit_reading>& more) {
    if (readings_full) return;
    if (readings.size() + more.size() > max_model_readings) {
        readings_full = true;
        std::vector<fit_reading>().swap(readings);
        return;
    }
    readings.insert(readings.end(), more.begin(), more.end());
}

void profile_builder::model_acc::add_rss_new(std::uint32_t n, std::uint64_t rss) {
    if (n < rss_dense_lengths) {
        if (n >= rss_by_n.size()) rss_by_n.resize(std::size_t{n} + 1, 0);
        rss_by_n[n] = std::max(rss_by_n[n], rss);
    } else {
        std::uint64_t& v = rss_by_long_n[n];
        v = std::max(v, rss);
    }
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> profile_builder::model_acc::rss_peaks() const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (std::size_t n = 1; n < rss_by_n.size(); ++n)
        if (rss_by_n[n]) out.emplace_back(n, rss_by_n[n]);
    for (const auto& [n, rss] : rss_by_long_n) out.emplace_back(n, rss);
    return out;
}

void profile_builder::settle_series() const {
    if (!last_ts_pending_) return;
    ts_ids_.intern(last_ts_id_, last_ts_hash_);
    last_ts_pending_ = false;  // last_ts_id_ stays: the next row of its series is not added again
}

void profile_builder::merge(profile_builder&& other) {
    n_measurements_ += other.n_measurements_;
    n_ok_ += other.n_ok_;
    n_contended_ += other.n_contended_;
    settle_series();
    other.settle_series();
    for (const auto& id : other.ts_ids_.names()) ts_ids_.intern(id);
    latest_.add(other.latest_);
    const auto& names = other.model_ids_.names();
    for (std::size_t k = 0; k < names.size(); ++k) {
        std::uint32_t id = model_ids_.intern(names[k]);
        if (id == models_.size()) models_.emplace_back();
        model_acc& m = models_[id];
        model_acc& o = other.models_[k];
        m.raw.n_fits += o.raw.n_fits;
        m.wall.splice(std::move(o.wall));
        // The thread cap's votes: those of fits that ran, or, while none has, those of the
        // failed ones (add's rule); the side without a fit that ran is dropped.
        if (m.raw.n_ok == 0 && o.raw.n_ok > 0) m.threads.clear();
        if (o.raw.n_ok == 0 && m.raw.n_ok > 0) o.threads.clear();
        m.raw.n_ok += o.raw.n_ok;
        m.cpu.splice(std::move(o.cpu));
        m.wall_n.splice(std::move(o.wall_n));
        m.cpu_n.splice(std::move(o.cpu_n));
        if (o.readings_full) {
            m.readings_full = true;
            std::vector<fit_reading>().swap(m.readings);
        }
        m.add_readings(o.readings);
        for (const auto& [n, rss] : o.rss_peaks()) m.add_rss(static_cast<std::uint32_t>(n), rss);
        o.rss_by_n.clear();
        o.rss_by_long_n.clear();
        keep_max(m.raw.max_n_obs, o.raw.max_n_obs);
        keep_max(m.raw.max_process_rss_bytes, o.raw.max_process_rss_bytes);
        keep_max(m.raw.max_peak_rss_bytes, o.raw.max_peak_rss_bytes);
        keep_max(m.raw.max_peak_gpu_bytes, o.raw.max_peak_gpu_bytes);
        m.raw.n_oom_killed += o.raw.n_oom_killed;
        m.n_oom_no_limit += o.n_oom_no_limit;
        m.raw.n_gpu_oom += o.raw.n_gpu_oom;
        keep_max(m.raw.oom_limit_bytes, o.raw.oom_limit_bytes);
        keep_max(m.raw.gpu_oom_peak_bytes, o.raw.gpu_oom_peak_bytes);
        keep_max(m.raw.max_effective_cores, o.raw.max_effective_cores);
        m.raw.n_warmup += o.raw.n_warmup;
        m.raw.n_replay += o.raw.n_replay;
        m.cold_walls.insert(m.cold_walls.end(), o.cold_walls.begin(), o.cold_walls.end());
        m.beside_walls.insert(m.beside_walls.end(), o.beside_walls.begin(), o.beside_walls.end());
        keep_max(m.raw.max_replay_rss_bytes, o.raw.max_replay_rss_bytes);
        for (const auto& v : o.threads) vote_threads(m.threads, v.intraop_threads, v.n_fits);
        if (o.rss_method) {
            m.rss_mixed |= o.rss_mixed || (m.rss_method && *m.rss_method != *o.rss_method);
            if (!m.rss_method) m.rss_method = std::move(o.rss_method);
        }
        m.families.n_unnamed += o.families.n_unnamed;
        for (auto& [name, n] : o.families.named) {
            auto& named = m.families.named;
            auto fam = std::lower_bound(named.begin(), named.end(), name,
                                        [](const auto& a, const std::string& b) { return a.first < b; });
            if (fam == named.end() || fam->first != name) fam = named.emplace(fam, std::move(name), 0);
            fam->second += n;
        }
        if (o.first_error && (!m.first_error || *o.first_error < *m.first_error)) m.first_error = std::move(o.first_error);
        if (o.params_seen) {
            if (!m.params_seen) {
                m.params = std::move(o.params);
                m.other_params = std::move(o.other_params);
            } else if (!m.other_params) {
                if (o.params != m.params) m.other_params = o.params.value_or("");
                else m.other_params = std::move(o.other_params);
            }
            m.params_seen = true;
        }
    }
    other = profile_builder(margins_);
}

std::vector<std::string> profile_builder::models_without_family() const {
    std::vector<std::string> out;
    const auto& names = model_ids_.names();
    for (std::size_t k = 0; k < models_.size(); ++k)
        if (models_[k].families.named.empty()) out.push_back(names[k]);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> profile_builder::mixed_params() const {
    std::vector<std::string> out;
    const auto& names = model_ids_.names();
    auto shown = [](const std::optional<std::string>& d) { return d && !d->empty() ? d->substr(0, 12) : std::string("none"); };
    for (std::size_t k = 0; k < models_.size(); ++k)
        if (models_[k].other_params)
            out.push_back(fmt::format("model {}: fits measured under different params (params_digest {} and {})", names[k],
                                      shown(models_[k].params), shown(models_[k].other_params)));
    std::sort(out.begin(), out.end());
    return out;
}

compute_profile profile_builder::finish(profile_provenance provenance, unsigned threads) const {
    compute_profile p;
    p.provenance = std::move(provenance);
    p.memory_margin = margins_.memory();
    p.time_margin = margins_.time();
    p.n_measurements = n_measurements_;
    p.n_ok = n_ok_;
    p.n_failed = n_measurements_ - n_ok_;
    settle_series();
    p.n_sample_series = ts_ids_.size();
    // The 100 smallest ids, sorted, without sorting them all (a run has millions of series).
    const auto& all_ids = ts_ids_.names();
    std::vector<std::string> ids(std::min<std::size_t>(all_ids.size(), 100));
    std::partial_sort_copy(all_ids.begin(), all_ids.end(), ids.begin(), ids.end());
    p.sample_ts_ids = std::move(ids);
    if (latest_.ns()) p.provenance.measured_at = latest_.rfc3339();
    if (n_contended_ > 0)
        p.provenance.warnings.push_back(fmt::format(
            "{} of {} fits were measured on a busy host (CPU pressure at least {:.0f}% over at least {} s): their wall "
            "times may read long and their effective cores short; measure again on an idle host",
            n_contended_, n_measurements_, contended_cpu_pressure * 100, format_double(contended_min_wall_s)));
    for (const auto& m : mixed_params()) p.provenance.warnings.push_back(m + " (folded as one under --mixed-params)");

    std::map<std::string, std::vector<std::span<const double>>> family_walls;
    std::vector<std::uint32_t> by_name(models_.size());
    for (std::uint32_t k = 0; k < by_name.size(); ++k) by_name[k] = k;
    const auto& names = model_ids_.names();
    std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t a, std::uint32_t b) { return names[a] < names[b]; });
    std::vector<std::uint32_t> costed;  // the models with an axis, by name
    for (std::uint32_t k : by_name) {
        const std::string& name = names[k];
        const model_acc& acc = models_[k];
        if (acc.first_error) p.first_error_by_model[name] = acc.first_error->second;
        const model_cost& raw = acc.raw;
        bool any_axis = raw.max_process_rss_bytes || raw.max_peak_rss_bytes ||
                        (raw.max_peak_gpu_bytes && *raw.max_peak_gpu_bytes > 0) ||
                        !acc.wall.empty() || !acc.cpu.empty() || raw.oom_limit_bytes ||
                        raw.gpu_oom_peak_bytes || raw.max_replay_rss_bytes;
        const std::string family = family_choice(name, acc.families);
        append_oom_warnings(p.provenance.warnings, name, acc.n_oom_no_limit, raw.n_gpu_oom,
                            raw.gpu_oom_peak_bytes);
        if (!any_axis) {
            p.dropped_models.push_back(name);
            p.dropped_model_families[name] = family;
            continue;
        }
        append_family_warning(p.provenance.warnings, name, acc.families);
        append_thread_cap_warning(p.provenance.warnings, name, acc.threads);
        acc.wall.parts(family_walls[family]);
        costed.push_back(k);
    }
    // Each model's medians and curve, and each family's median, are independent of the others:
    // they are computed on `threads` threads, each result in its own slot.
    std::vector<model_cost> costs(costed.size());
    parallel_for(costed.size(), threads, [&](std::size_t i) {
        const model_acc& acc = models_[costed[i]];
        costs[i] = cost_of(names[costed[i]], family_choice(names[costed[i]], acc.families), acc);
    });
    for (std::size_t i = 0; i < costed.size(); ++i) p.models.emplace(names[costed[i]], std::move(costs[i]));
    std::vector<std::pair<std::string, std::vector<std::span<const double>>>> families(family_walls.begin(),
                                                                                          family_walls.end());
    std::vector<std::optional<double>> medians(families.size());
    parallel_for(families.size(), threads, [&](std::size_t i) { medians[i] = median_of_parts(families[i].second); });
    std::map<std::string, std::optional<double>> family_median;
    for (std::size_t i = 0; i < families.size(); ++i) family_median[families[i].first] = medians[i];
    p.families = roll_up_families(p.models, family_median, margins_);
    warn_if_sizes_nothing(p);
    return p;
}

std::string reading_coverage(const std::optional<std::string>& rss_method) {
    if (!rss_method) return "not recorded";
    const std::string& m = *rss_method;
    if (m == "cgroup-v2" || m == "cgroup-v1") return "the fit's whole process tree";
    if (m == "proc") return "the fitting process only";
    if (m == "rusage") return "the largest single process";
    if (m == "mixed") return "several methods";
    return "an unknown method";
}

std::optional<std::uint64_t> sized_thread_cap(const std::vector<thread_cap_count>& caps) {
    if (caps.empty() || !caps.front().intraop_threads) return std::nullopt;  // none recorded, or no cap
    return caps.back().intraop_threads;  // sorted: the largest is last
}

std::string thread_caps_text(const std::vector<thread_cap_count>& caps) {
    std::string out;
    for (const auto& c : caps)
        out += fmt::format("{}{} ({} fit{})", out.empty() ? "" : ", ",
                           c.intraop_threads ? std::to_string(*c.intraop_threads) : std::string("none"), c.n_fits,
                           c.n_fits == 1 ? "" : "s");
    return out;
}

void append_thread_cap_warning(std::vector<std::string>& out, const std::string& model,
                               const std::vector<thread_cap_count>& caps) {
    if (caps.size() < 2) return;
    const auto cap = sized_thread_cap(caps);
    out.push_back(fmt::format(
        "model '{}': its fits ran under different thread caps: {}; it is sized under the largest, {}: measure it "
        "under one cap (prof-measure --threads) to size it from readings taken as production runs",
        model, thread_caps_text(caps),
        cap ? std::to_string(*cap) + ", which the renderings set"
            : std::string("no cap, so the renderings set no thread-pool variables")));
}

const char* const sizes_nothing_warning =
    "no model has a usable measurement (see first_error_by_model): this profile sizes nothing, and a consumer falls "
    "back to its static defaults";

void warn_if_sizes_nothing(compute_profile& p) {
    if (p.models.empty()) p.provenance.warnings.push_back(sizes_nothing_warning);
}

compute_profile build_profile(const std::vector<measured_fit>& fits, const margins& m, profile_provenance provenance) {
    profile_builder b(m);
    for (const auto& f : fits) b.add(f);
    return b.finish(std::move(provenance));
}

void recompute_derived(compute_profile& p) {
    const margins margin(p.memory_margin, p.time_margin);
    p.n_failed = p.n_measurements >= p.n_ok ? p.n_measurements - p.n_ok : 0;
    std::map<std::string, std::optional<double>> family_median;
    for (const auto& [name, f] : p.families) family_median[name] = f.median_wall_s;
    for (auto& [name, m] : p.models) {
        m.memory_basis = model_memory_basis(m);
        if (!m.thread_caps.empty()) m.intraop_threads = sized_thread_cap(m.thread_caps);
        if (!p.families.count(m.family))
            throw field_error(fmt::format("model '{}' names family '{}', which has no entry in 'families'", name,
                                          m.family));
    }
    p.families = roll_up_families(p.models, family_median, margin);
}

// ---- table ------------------------------------------------------------------------------

std::string format_profile_table(const compute_profile& p) {
    auto opt_bytes = [](const std::optional<std::uint64_t>& b) { return b ? human_bytes(double(*b)) : std::string("-"); };
    auto opt_secs = [](const std::optional<double>& s) { return s ? human_seconds(*s) : std::string("-"); };
    auto opt_int = [](const std::optional<std::uint64_t>& u) { return u ? std::to_string(*u) : std::string("-"); };
    auto opt_cores = [](const std::optional<double>& c) { return c ? fmt::format("{:.2f}", *c) : std::string("-"); };
    std::string out;
    out += fmt::format("profile: basis {}, source {}{}, {} fits ({} ok, {} failed) on {} series, margins memory x{} time x{}\n",
                       p.provenance.basis, p.provenance.source,
                       p.provenance.run_id ? " " + *p.provenance.run_id : std::string(), p.n_measurements, p.n_ok,
                       p.n_failed, p.n_sample_series, format_double(p.memory_margin), format_double(p.time_margin));
    out += fmt::format("{:<24} {:>6} {:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7}\n", "FAMILY / model", "fits",
                       "ok", "cores", "slot_rss", "slot_gpu", "wall/cell", "wall/series", "peak_rss", "threads");
    for (const auto& [name, f] : p.families) {
        out += fmt::format("{:<24} {:>6} {:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7}\n", name, f.n_fits,
                           f.n_ok, opt_int(f.slot_cores), opt_bytes(f.slot_rss_bytes), opt_bytes(f.slot_gpu_bytes),
                           opt_secs(f.planning_wall_s_per_cell), opt_secs(f.planning_wall_s_per_series),
                           opt_bytes(f.max_peak_rss_bytes), opt_int(f.intraop_threads));
        for (const auto& mname : f.models) {
            const model_cost& m = p.models.at(mname);
            out += fmt::format("  {:<22} {:>6} {:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7}\n", mname, m.n_fits,
                               m.n_ok, opt_cores(m.max_effective_cores), opt_bytes(m.max_process_rss_bytes),
                               opt_bytes(m.max_peak_gpu_bytes), opt_secs(m.median_wall_s), "", opt_bytes(m.max_peak_rss_bytes),
                               opt_int(m.intraop_threads));
        }
    }
    out += "(family rows: sized slot values with margins; model rows: raw max cores, max process RSS, median wall)\n";
    // The median wall's spread over its own sample (prof-plan's intervals read the same resamples).
    for (const auto& [name, m] : p.models) {
        if (m.readings.size() < 2) continue;
        std::vector<double> medians;
        std::uint64_t busy = 0;
        for (const auto& r : m.readings) busy += r.contended ? 1 : 0;
        for (const auto& r : bootstrap_model(m.readings, 200, 1, name)) medians.push_back(r.median_wall_s);
        out += fmt::format("median wall of {} over 200 resamples of its {} fits: P10 {}, P50 {}, P90 {}{}\n", name,
                           m.readings.size(), human_seconds(quantile(medians, 0.1)), human_seconds(quantile(medians, 0.5)),
                           human_seconds(quantile(medians, 0.9)),
                           busy ? fmt::format("; {} measured on a busy host", busy) : std::string());
    }
    if (!p.dropped_models.empty()) {
        std::string d;
        for (const auto& m : p.dropped_models) {
            auto fam = p.dropped_model_families.find(m);
            d += (d.empty() ? "" : ", ") + m +
                 (fam != p.dropped_model_families.end() ? " (family " + fam->second + ")" : std::string());
        }
        out += "dropped models (no usable measurement): " + d + "\n";
    }
    // An error is a fit's own text: one line here whatever it holds (printable, newlines too).
    for (const auto& [m, e] : p.first_error_by_model) out += fmt::format("first error of {}: {}\n", m, printable(e));
    for (const auto& [name, m] : p.models)
        if (m.oom_limit_bytes)
            out += fmt::format("killed for memory: {} fit(s) of {}, at limits up to {}: its family's slot is at least "
                               "{}\n",
                               m.n_oom_killed, name, human_bytes(double(*m.oom_limit_bytes)),
                               human_bytes(double(oom_floor_bytes(*m.oom_limit_bytes))));
    for (const auto& [name, m] : p.models)
        if (m.n_gpu_oom)
            out += fmt::format("out of GPU memory: {} fit(s) of {}{}\n", m.n_gpu_oom, name,
                               m.gpu_oom_peak_bytes ? fmt::format(", at peaks up to {}: its family's GPU slot is at least {}",
                                                                  human_bytes(double(*m.gpu_oom_peak_bytes)),
                                                                  human_bytes(double(oom_floor_bytes(*m.gpu_oom_peak_bytes))))
                                                    : std::string(", peak not recorded: no bound on its GPU memory"));
    for (const auto& [name, m] : p.models) {
        if (m.memory_basis == "replay")
            out += fmt::format("history: {}'s worker reached {} with its heaviest cells back to back, above its cells' "
                               "{}: its family's slot is sized from the replay\n",
                               name, human_bytes(double(*m.max_replay_rss_bytes)),
                               m.max_process_rss_bytes ? human_bytes(double(*m.max_process_rss_bytes)) : std::string("-"));
        if (m.cold_start_s)
            out += fmt::format("cold start: {}'s first cell in a fresh worker takes {} more ({} warm-up run(s) left out)\n",
                               name, human_seconds(*m.cold_start_s), m.n_warmup);
        if (m.beside_slowdown)
            out += fmt::format("beside a neighbour: {}'s replayed cells took {:.2f} x their time alone ({} run(s) "
                               "beside another worker): prof-plan prices a slot that shares a node at that\n",
                               name, *m.beside_slowdown, m.n_beside);
    }
    for (const auto& w : p.provenance.warnings) out += "warning: " + w + "\n";
    return out;
}

}  // namespace prof
