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

// Calls fn(i) for every i in [0, n), on up to `threads` threads, the calling one included;
// each thread takes the next index as it is free, so long and short items even out. With
// threads <= 1 (or n <= 1) everything runs here, in order. The first exception fn throws is
// rethrown once every thread has stopped; no index is started after it.
template <class Fn>
void parallel_for(std::size_t n, unsigned threads, const Fn& fn) {
    if (threads <= 1 || n <= 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mu;
    auto run = [&] {
        for (std::size_t i; !failed && (i = next++) < n;) {
            try {
                fn(i);
            } catch (...) {
                std::lock_guard lock(error_mu);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    const std::size_t extra = std::min<std::size_t>(threads, n) - 1;
    for (std::size_t t = 0; t < extra; ++t) pool.emplace_back(run);
    run();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace prof
