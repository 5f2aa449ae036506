// The run of every cell: one after another, or several at once under --jobs, each on a CPU set
// of its own (see measure.hpp).
#include "prof/measure/measure.hpp"

#include "prof/core/cpus.hpp"
#include "prof/core/diag.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <fmt/format.h>
#include <thread>
#include <tuple>

namespace prof {

std::size_t overlap_tracker::begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t id = next_++;
    const std::uint64_t others = running_.size();
    for (auto& [k, most] : running_) most = std::max<std::uint64_t>(most, others);
    running_[id] = others;
    return id;
}

std::uint64_t overlap_tracker::end(std::size_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = running_.find(id);
    if (it == running_.end()) return 0;
    std::uint64_t most = it->second;
    running_.erase(it);
    return most;
}

std::vector<std::vector<int>> fit_cpu_sets(unsigned threads, unsigned jobs) {
    const std::vector<int> allowed = allowed_cpus();
    auto sets = partition_cpus(read_cpu_places(allowed), threads, jobs);
    if (sets.empty())
        warn(fmt::format("--jobs {}: no set of {} CPU(s) on whole cores of one NUMA node among the {} this process "
                         "may use; the fits run one at a time",
                         jobs, threads, allowed.size()));
    else if (sets.size() < jobs)
        warn(fmt::format("--jobs {}: only {} disjoint set(s) of {} CPU(s) (whole cores, one NUMA node each) among the "
                         "{} this process may use; {} fit(s) run at a time",
                         jobs, sets.size(), threads, allowed.size(), sets.size()));
    return sets;
}

std::vector<int> beside_cpu_set(const measure_options& o) {
    if (o.threads == 0) return {};
    const std::vector<int> first = o.cpus.empty() ? pick_cpus(o.threads) : o.cpus;
    std::vector<cpu_place> places = read_cpu_places(allowed_cpus());
    std::vector<cpu_place> taken;
    for (const cpu_place& p : places)
        if (std::find(first.begin(), first.end(), p.cpu) != first.end()) taken.push_back(p);
    std::erase_if(places, [&](const cpu_place& p) {
        return std::any_of(taken.begin(), taken.end(), [&](const cpu_place& t) {
            return t.node == p.node && t.package == p.package && t.core == p.core;
        });
    });
    auto sets = partition_cpus(places, o.threads, 1);
    return sets.empty() ? std::vector<int>() : std::move(sets.front());
}

namespace {

// One measurement, with the count of fits that ran beside it when there is a tracker (a
// stopped fit's partial record too).
template <class Measure>
measured_fit measured_with_count(overlap_tracker* overlap, Measure measure) {
    if (!overlap) return measure();
    const std::size_t id = overlap->begin();
    try {
        measured_fit fit = measure();
        fit.concurrent_fits = overlap->end(id);
        return fit;
    } catch (interrupted& e) {
        const std::uint64_t most = overlap->end(id);
        if (e.partial) e.partial->concurrent_fits = most;
        throw;
    } catch (...) {
        overlap->end(id);
        throw;
    }
}

// measure_cells' state: the worker of the current scope group, what it measured (for its
// replay), and the counts of the closing line. With an overlap tracker, every record says how
// many fits ran beside it.
class cell_runner {
public:
    cell_runner(const measure_input& in, const cell_loop& loop, const measure_options& o,
                std::function<void(const measured_fit&, double)> record, double* started,
                overlap_tracker* overlap = nullptr)
        : in_(in), loop_(loop), o_(o), record_(std::move(record)), started_(started), overlap_(overlap) {}

    // Cell `index` of the input as a fit of the sample: in its worker (started, or replayed and
    // replaced at a new scope group), after its warm-up runs; or as a process of its own.
    void sample(std::size_t index) {
        const cell& c = in_.cells[index];
        if (loop_.worker_words.empty()) {
            measured_fit fit = remeasured([&] {
                const double t = begin();
                return std::pair(beside([&] { return measure_cell_process(loop_.run_words, c, o_); }), t);
            });
            n_failed_ += !fit.ok;
            return;
        }
        if (!worker_ || scope_key(c, loop_.scope) != worker_key_) {
            end_worker();
            measure_options wo = o_;
            wo.worker_per_model = loop_.scope == worker_scope::model;
            worker_ = std::make_unique<warm_worker>(loop_.worker_words, wo, loop_.wait_ready, loop_.ready_timeout_s);
            worker_key_ = scope_key(c, loop_.scope);
        }
        // At most `warmup` warm-up runs per cell: a worker that dies in every one restarts cold
        // each time, and must not warm up for ever.
        for (unsigned k = 0; k < loop_.warmup && worker_->served(c.model_type) < loop_.warmup; ++k) {
            run_in_worker(c, fit_phase_warmup);
            ++n_warmup_;
        }
        measured_fit fit = remeasured([&] {
            const double t = begin();
            return std::pair(beside([&] { return worker_->measure(c, fit_phase_sample); }), t);
        });
        n_failed_ += !fit.ok;
        if (std::find(models_.begin(), models_.end(), c.model_type) == models_.end()) models_.push_back(c.model_type);
        if (fit.ok) sampled_[c.model_type].push_back({index, fit.process_rss_bytes, c.n_obs});
    }

    // The worker's models' heaviest cells replayed back to back in it (and in a second worker
    // beside it, replay_beside), then the worker stopped.
    void end_worker() {
        if (!worker_) return;
        for (const auto& model : models_) {
            const std::vector<std::size_t> cells = replay_cells(sampled_[model], loop_.replay);
            if (cells.empty() || replay_beside(model, cells)) continue;
            for (std::size_t index : cells) {
                run_in_worker(in_.cells[index], fit_phase_replay);
                ++n_replay_;
            }
        }
        models_.clear();
        sampled_.clear();
        worker_->stop();
        worker_.reset();
    }

    std::size_t failed() const { return n_failed_; }
    std::size_t warmups() const { return n_warmup_; }
    std::size_t replays() const { return n_replay_; }
    std::size_t remeasured_cells() const { return n_remeasured_; }

private:
    double begin() {
        const double t = monotonic_seconds();
        if (started_) *started_ = t;
        return t;
    }
    // One measurement, with the count of fits beside it under --jobs (measured_with_count).
    template <class Measure>
    measured_fit beside(Measure measure) {
        return measured_with_count(overlap_, measure);
    }
    // One cell of the sample: `once` measures it (the fit and its start), again while the last
    // attempt is ok and contended, at most loop_.remeasure_busy more times. Every attempt is
    // recorded, in the order they ran; the one that counts is the least contended ok attempt
    // (the first of equals), or a failed attempt, which ends the retries: a failure is no
    // contention, and it stands for the cell as the failure it is. The others become phase
    // superseded, and the one that counts carries `attempts`. Returns the one that counts.
    template <class Once>
    measured_fit remeasured(Once once) {
        std::vector<std::pair<measured_fit, double>> tries;
        tries.push_back(once());
        while (tries.size() <= loop_.remeasure_busy && tries.back().first.ok && contended(tries.back().first)) {
            try {
                tries.push_back(once());
            } catch (interrupted& e) {
                // The attempts that ended come out first; the stopped one follows, superseded.
                settle_attempts(tries);
                if (e.partial) e.partial->phase = fit_phase_superseded;
                throw;
            }
        }
        return settle_attempts(tries);
    }
    measured_fit settle_attempts(std::vector<std::pair<measured_fit, double>>& tries) {
        std::size_t keep = 0;
        if (!tries.back().first.ok) {
            keep = tries.size() - 1;
        } else {
            // A reading without a pressure (unreadable) ranks after every reading with one.
            auto rank = [](const measured_fit& f) { return f.cpu_pressure.value_or(2.0); };
            for (std::size_t i = 1; i < tries.size(); ++i)
                if (rank(tries[i].first) < rank(tries[keep].first)) keep = i;
        }
        if (tries.size() > 1) {
            ++n_remeasured_;
            tries[keep].first.attempts = tries.size();
            for (std::size_t i = 0; i < tries.size(); ++i)
                if (i != keep) tries[i].first.phase = fit_phase_superseded;
        }
        for (const auto& [f, t] : tries) record_(f, t);
        return tries[keep].first;
    }
    measured_fit run_in_worker(const cell& c, std::string_view phase) {
        const double t = begin();
        measured_fit fit = beside([&] { return worker_->measure(c, phase); });
        record_(fit, t);
        return fit;
    }
    // The replay of `cells` in two workers of the model at once: the one that ran the sample,
    // with its history, and a second one started on a CPU set of its own (beside_cpu_set) and
    // warmed up on the model's shortest sampled cell first (alone: a cold start, phase warmup).
    // Both run `cells` in order at the same time; each replay record carries concurrent_fits
    // (1: the other worker ran a fit beside it), so the profile reads what a neighbour on the
    // node costs the model (beside_slowdown) from the same cells it measured alone. The records
    // come out after both ended: the warm-up, this worker's runs, then the second's. After a
    // signal both stop, every record (the stopped ones too) comes out, and interrupted is
    // thrown without a partial record. False, with nothing run, when not asked for, under
    // --jobs (whose fits run beside others already) or when no such set exists.
    bool replay_beside(const std::string& model, const std::vector<std::size_t>& cells) {
        if (!loop_.replay_beside || overlap_) return false;
        std::vector<int> set = beside_cpu_set(o_);
        if (set.empty()) return false;
        measure_options wo = o_;
        wo.cpus = std::move(set);
        wo.worker_per_model = loop_.scope == worker_scope::model;
        warm_worker second(loop_.worker_words, wo, loop_.wait_ready, loop_.ready_timeout_s);
        const auto& sampled = sampled_[model];
        const auto shortest = std::min_element(sampled.begin(), sampled.end(), [](const sampled_cell& a, const sampled_cell& b) {
            return std::tuple(a.n_obs.value_or(0), a.rss_bytes.value_or(0), a.index) <
                   std::tuple(b.n_obs.value_or(0), b.rss_bytes.value_or(0), b.index);
        });
        const double t0 = begin();
        try {
            record_(second.measure(in_.cells[shortest->index], fit_phase_warmup), t0);
        } catch (interrupted& e) {
            if (e.partial) record_(*e.partial, t0);
            throw interrupted(e.sig);
        }
        ++n_warmup_;
        // Opened by now (both workers started); opened again from no thread.
        if (o_.cgroups) o_.cgroups->get();
        if (o_.nvml) o_.nvml->get();
        overlap_tracker overlap;
        std::vector<std::pair<measured_fit, double>> ours, theirs;
        std::exception_ptr our_failure, their_failure;
        auto replay_in = [&](warm_worker& w, std::vector<std::pair<measured_fit, double>>& out, std::exception_ptr& failure) {
            try {
                for (std::size_t index : cells) {
                    const double t = monotonic_seconds();
                    try {
                        out.emplace_back(measured_with_count(&overlap, [&] { return w.measure(in_.cells[index], fit_phase_replay); }), t);
                    } catch (interrupted& e) {
                        if (e.partial) out.emplace_back(*e.partial, t);
                        throw;
                    }
                }
            } catch (...) {
                failure = std::current_exception();
            }
        };
        std::thread beside_thread([&] { replay_in(second, theirs, their_failure); });
        replay_in(*worker_, ours, our_failure);
        beside_thread.join();
        for (auto* runs : {&ours, &theirs})
            for (const auto& [f, t] : *runs) {
                record_(f, t);
                ++n_replay_;
            }
        int sig = 0;
        for (const auto& failure : {our_failure, their_failure}) {
            if (!failure) continue;
            try {
                std::rethrow_exception(failure);
            } catch (const interrupted& e) {
                sig = sig ? sig : e.sig;
            } catch (...) {
                if (!sig) throw;
            }
        }
        if (sig) throw interrupted(sig);
        return true;
    }

    const measure_input& in_;
    const cell_loop& loop_;
    const measure_options& o_;
    std::function<void(const measured_fit&, double)> record_;
    double* started_;
    overlap_tracker* overlap_;
    std::unique_ptr<warm_worker> worker_;
    std::string worker_key_;
    std::vector<std::string> models_;  // the worker's models, in the order of their first cell
    std::map<std::string, std::vector<sampled_cell>> sampled_;  // its ok fits of the sample, per model
    std::size_t n_failed_ = 0, n_warmup_ = 0, n_replay_ = 0, n_remeasured_ = 0;
};

// The cells in measure order cut into the units one thread runs from start to end: one cell
// each in process mode, one scope group each in worker mode.
std::vector<std::vector<std::size_t>> job_units(const measure_input& in, const cell_loop& loop) {
    std::vector<std::vector<std::size_t>> units;
    std::string key;
    for (std::size_t index : measure_order(in.cells, loop.scope)) {
        std::string k = scope_key(in.cells[index], loop.scope);
        if (units.empty() || loop.worker_words.empty() || k != key) units.emplace_back();
        units.back().push_back(index);
        key = std::move(k);
    }
    return units;
}

// What the threads of a run under --jobs share: the next unit to take, each unit's records
// (written in unit order by the calling thread as units finish), the first error.
struct job_board {
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t next_unit = 0, threads_running = 0;
    std::vector<std::vector<std::pair<measured_fit, double>>> records;
    std::vector<char> done;
    std::exception_ptr failure;
    int interrupted_by = 0;
};

struct run_counts {
    std::size_t failed = 0, warmups = 0, replays = 0, remeasured = 0;
};

// One thread of a run under --jobs: takes the next unit and runs it with `runner` until none
// is left or one failed; `at` is the unit it runs now, `started` when its current fit began.
void work_through_units(job_board& board, const std::vector<std::vector<std::size_t>>& units, cell_runner& runner,
                        std::size_t& at, const double& started) {
    for (;;) {
        std::size_t u;
        {
            std::lock_guard<std::mutex> lock(board.mutex);
            if (board.failure || board.next_unit == units.size()) break;
            u = board.next_unit++;
            at = u;
        }
        try {
            // A signal that came between two units: start no other fit.
            if (int sig = take_pending_signal()) throw interrupted(sig);
            for (std::size_t index : units[u]) runner.sample(index);
            runner.end_worker();
        } catch (interrupted& e) {
            std::lock_guard<std::mutex> lock(board.mutex);
            if (e.partial) board.records[u].emplace_back(*e.partial, started);
            if (!board.interrupted_by) board.interrupted_by = e.sig;
            if (!board.failure) board.failure = std::current_exception();
        } catch (...) {
            std::lock_guard<std::mutex> lock(board.mutex);
            if (!board.failure) board.failure = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(board.mutex);
        board.done[u] = 1;
        board.changed.notify_all();
    }
    std::lock_guard<std::mutex> lock(board.mutex);
    --board.threads_running;
    board.changed.notify_all();
}

// The units of `in` on threads of their own, one per CPU set; the records go out in unit order
// through `pass` and `record` as soon as every unit before theirs is done.
run_counts run_side_by_side(const measure_input& in, const cell_loop& loop, const measure_options& o,
                            const std::vector<std::vector<int>>& sets,
                            const std::function<void(std::size_t)>& pass_through,
                            const std::function<void(const measured_fit&, double)>& record) {
    const auto units = job_units(in, loop);
    // Opened here, once, before any thread could race to open them.
    if (o.cgroups) o.cgroups->get();
    if (o.nvml) o.nvml->get();
    job_board board;
    board.records.resize(units.size());
    board.done.assign(units.size(), 0);
    overlap_tracker overlap;
    std::vector<measure_options> options(sets.size(), o);
    std::vector<std::unique_ptr<cell_runner>> runners;
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < sets.size(); ++k) options[k].cpus = sets[k];
    board.threads_running = sets.size();
    for (std::size_t k = 0; k < sets.size(); ++k) {
        auto* unit_records = &board.records;
        auto at = std::make_shared<std::size_t>(0);  // the unit this thread runs now
        auto started = std::make_shared<double>(0);  // when its current fit began
        runners.push_back(std::make_unique<cell_runner>(
            in, loop, options[k],
            [&board, unit_records, at](const measured_fit& f, double t) {
                std::lock_guard<std::mutex> lock(board.mutex);
                (*unit_records)[*at].emplace_back(f, t);
            },
            started.get(), &overlap));
        cell_runner* runner = runners.back().get();
        threads.emplace_back([&, runner, at, started] { work_through_units(board, units, *runner, *at, *started); });
    }
    // Written in unit order as units finish; after a failure, what finished, then the failure.
    std::size_t next_write = 0;
    std::exception_ptr write_failure;
    for (;;) {
        std::vector<std::pair<measured_fit, double>> out;
        std::size_t u;
        {
            std::unique_lock<std::mutex> lock(board.mutex);
            board.changed.wait(lock, [&] {
                return next_write == units.size() || board.done[next_write] || board.threads_running == 0;
            });
            if (next_write == units.size()) break;
            if (!board.done[next_write] && board.threads_running == 0) {
                // Stopped: the units that ran (in part) still go out, the rest never started.
                while (next_write < units.size() && board.records[next_write].empty()) ++next_write;
                if (next_write == units.size()) break;
            }
            u = next_write++;
            out = std::move(board.records[u]);
        }
        if (write_failure) continue;
        try {
            if (loop.progress)
                fmt::print(stderr, "\rprof-measure: [{}/{}] {} ...\x1b[K", u + 1, units.size(),
                           in.cells[units[u].front()].model_type);
            if (loop.worker_words.empty()) pass_through(u);
            for (const auto& [f, t] : out) record(f, t);
        } catch (...) {
            // Stdout is gone (a closed pipe): no further unit starts; those in flight end first.
            write_failure = std::current_exception();
            std::lock_guard<std::mutex> lock(board.mutex);
            board.next_unit = units.size();
        }
    }
    for (auto& t : threads) t.join();
    run_counts counts;
    for (const auto& r : runners) {
        counts.failed += r->failed();
        counts.warmups += r->warmups();
        counts.replays += r->replays();
        counts.remeasured += r->remeasured_cells();
    }
    if (write_failure) std::rethrow_exception(write_failure);
    if (board.interrupted_by) throw interrupted(board.interrupted_by);  // the stopped fits' records are out
    if (board.failure) std::rethrow_exception(board.failure);
    return counts;
}

}  // namespace

void measure_cells(const measure_input& in, const cell_loop& loop, const measure_options& o,
                   const std::function<void(const std::string&)>& pass,
                   const std::function<void(const measured_fit&, double)>& record, double* started) {
    std::size_t next_pass = 0;
    auto pass_through = [&](std::size_t fits_written) {
        for (; next_pass < in.passthrough.size() &&
               (loop.scope != worker_scope::run || in.passthrough_at[next_pass] <= fits_written);
             ++next_pass)
            pass(in.passthrough[next_pass]);
    };
    auto order = measure_order(in.cells, loop.scope);
    run_counts counts;
    // Side by side only where there is more than one unit to run and a thread cap to size the
    // CPU sets by; a worker of scope run serves every cell, one after another.
    const bool side_by_side = loop.jobs > 1 && o.threads > 0 && order.size() > 1 &&
                              (loop.worker_words.empty() || loop.scope != worker_scope::run);
    std::vector<std::vector<int>> sets;
    if (side_by_side) sets = fit_cpu_sets(o.threads, loop.jobs);
    if (!sets.empty()) {
        counts = run_side_by_side(in, loop, o, sets, pass_through, record);
    } else {
        cell_runner runner(in, loop, o, record, started);
        for (std::size_t i = 0; i < order.size(); ++i) {
            pass_through(i);
            const cell& c = in.cells[order[i]];
            if (loop.progress)
                fmt::print(stderr, "\rprof-measure: [{}/{}] {} on {} ...\x1b[K", i + 1, order.size(), c.model_type, c.ts_id);
            runner.sample(order[i]);
        }
        if (loop.progress && !order.empty() && loop.replay > 0 && !loop.worker_words.empty())
            fmt::print(stderr, "\rprof-measure: replaying the heaviest cells ...\x1b[K");
        runner.end_worker();
        counts = {runner.failed(), runner.warmups(), runner.replays(), runner.remeasured_cells()};
    }
    pass_through(order.size());
    for (; next_pass < in.passthrough.size(); ++next_pass) pass(in.passthrough[next_pass]);
    if (loop.progress) fmt::print(stderr, "\r\x1b[K");
    // Said with no cell too (a skipped gate upstream sends none): "0 cell(s) measured" tells
    // the reader of a log that the stage ran and had nothing to do, not that it died silent.
    if (loop.summary) {
        std::string extra;
        if (counts.warmups + counts.replays > 0)
            extra = fmt::format("; {} warm-up and {} replay run(s) beside them", counts.warmups, counts.replays);
        if (counts.remeasured > 0)
            extra += fmt::format("; {} measured again on a busy host (--remeasure-busy)", counts.remeasured);
        note(fmt::format("{} cell(s) measured, {} failed{}", order.size(), counts.failed, extra));
    }
}

}  // namespace prof
