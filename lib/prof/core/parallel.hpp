// Work spread over threads: the one helper prof's parallel paths share for "do these n
// independent things on up to k threads".
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace prof {

// Calls fn(i, worker) for every i in [0, n), on up to `threads` threads, the calling one
// included as worker 0 (the others 1 ...); each thread takes the next index as it is free, so
// long and short items even out, and one worker's calls all run on one thread. With
// threads <= 1 (or n <= 1) everything runs here, in order. The first exception fn throws is
// rethrown once every thread has stopped; no index is started after it.
template <class Fn>
void parallel_for_worker(std::size_t n, unsigned threads, const Fn& fn) {
    if (threads <= 1 || n <= 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i, 0u);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mu;
    auto run = [&](unsigned worker) {
        for (std::size_t i; !failed && (i = next++) < n;) {
            try {
                fn(i, worker);
            } catch (...) {
                std::lock_guard lock(error_mu);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    const auto extra = static_cast<unsigned>(std::min<std::size_t>(threads, n) - 1);
    for (unsigned t = 1; t <= extra; ++t) pool.emplace_back(run, t);
    run(0);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

// The same, for work that does not care which thread it is on: fn(i).
template <class Fn>
void parallel_for(std::size_t n, unsigned threads, const Fn& fn) {
    parallel_for_worker(n, threads, [&](std::size_t i, unsigned) { fn(i); });
}

}  // namespace prof
