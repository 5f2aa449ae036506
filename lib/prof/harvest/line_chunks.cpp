// The chunker: a byte source → chunks of whole lines → worker threads (see line_chunks.hpp).
#include "prof/harvest/line_chunks.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/limits.hpp"
#include "prof/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <fmt/format.h>
#include <mutex>
#include <thread>
#include <vector>
#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace prof {

namespace {

// The chunks in flight: `ready` waits for a worker, `spare` for the reader.
struct chunk_ring {
    std::mutex mu;
    std::condition_variable ready_cv, spare_cv;
    std::deque<std::unique_ptr<line_chunk>> ready;
    std::vector<std::unique_ptr<line_chunk>> spare;
    bool done = false;      // the reader has pushed its last chunk
    bool failed = false;    // a worker threw: start nothing more
    std::exception_ptr work_error;

    std::unique_ptr<line_chunk> take_spare() {
        std::unique_lock lock(mu);
        spare_cv.wait(lock, [&] { return failed || !spare.empty(); });
        if (failed) return nullptr;
        auto c = std::move(spare.back());
        spare.pop_back();
        return c;
    }
    void give_back(std::unique_ptr<line_chunk> c) {
        {
            std::lock_guard lock(mu);
            spare.push_back(std::move(c));
        }
        spare_cv.notify_one();
    }
    void push(std::unique_ptr<line_chunk> c) {
        {
            std::lock_guard lock(mu);
            ready.push_back(std::move(c));
        }
        ready_cv.notify_one();
    }
    std::unique_ptr<line_chunk> pop() {
        std::unique_lock lock(mu);
        ready_cv.wait(lock, [&] { return failed || done || !ready.empty(); });
        if (failed || ready.empty()) return nullptr;
        auto c = std::move(ready.front());
        ready.pop_front();
        return c;
    }
    void finish() {
        {
            std::lock_guard lock(mu);
            done = true;
        }
        ready_cv.notify_all();
    }
    void fail(std::exception_ptr e) {
        {
            std::lock_guard lock(mu);
            if (!work_error) work_error = e;
            failed = true;
        }
        ready_cv.notify_all();
        spare_cv.notify_all();
    }
};

// Fills `c` with `carry` and then source bytes up to at least `want` bytes, cut back after its
// last '\n' (the rest becomes the next carry); a chunk without a '\n' grows until one comes or
// the input ends. Returns false at the end of the input with nothing read. When the source
// throws, the whole lines read before are still returned (a line reader would have yielded
// them); `failure` holds the exception, raised by the next call.
bool fill_chunk(byte_source& src, line_chunk& c, std::string& carry, std::size_t want, std::uint64_t& total,
                bool& eof, std::exception_ptr& failure) {
    if (failure) std::rethrow_exception(failure);
    c.reserve(std::max(want, carry.size() + 1));
    std::memcpy(c.data.get(), carry.data(), carry.size());
    c.size = carry.size();
    carry.clear();
    if (eof) return c.size > 0;
    for (;;) {
        try {
            while (c.size < c.capacity) {
                std::size_t n = src.read(c.data.get() + c.size, c.capacity - c.size);
                c.size += n;
                total += n;
                if (n == 0) {
                    eof = true;
                    return c.size > 0;
                }
            }
        } catch (...) {
            failure = std::current_exception();
            std::size_t last = std::string_view(c.data.get(), c.size).rfind('\n');
            c.size = last == std::string_view::npos ? 0 : last + 1;
            if (c.size == 0) throw;
            return true;
        }
        std::string_view b = std::string_view(c.data.get(), c.size);
        std::size_t last = b.rfind('\n');
        if (last != std::string_view::npos) {
            carry.assign(b.substr(last + 1));
            c.size = last + 1;
            return true;
        }
        // No '\n' in the whole chunk: one line that long is refused before it is held whole
        // (its number is not counted here; the bytes before it were whole lines).
        if (c.size > max_line_bytes())
            throw error(exit_code::data_err, fmt::format("{}: {}", src.name(), line_too_long_message()));
        c.reserve(2 * c.capacity);
    }
}

// The '\n' bytes of [p, p + n).
std::size_t count_newlines(const char* p, std::size_t n) {
    std::size_t count = 0, i = 0;
#ifdef __AVX2__
    const __m256i nl = _mm256_set1_epi8('\n');
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
        count += static_cast<std::size_t>(
            __builtin_popcount(static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)))));
    }
#endif
    for (; i < n; ++i) count += p[i] == '\n';
    return count;
}

// for_each_chunk over a mapped input: chunk k is [cut(k), cut(k + 1)), cut(k) the byte after
// the first '\n' at or past k × chunk_bytes (so every thread can find a chunk's ends alone,
// and a chunk is empty when one line spans it). Each thread, the calling one as worker 0,
// claims the next chunk index; a worked chunk's pages are released.
std::exception_ptr for_each_mapped_chunk(const memory_region& input, unsigned workers, std::size_t chunk_bytes,
                                         const std::function<void(unsigned, const line_chunk&)>& work,
                                         const std::function<void(std::uint64_t)>& progress) {
    const std::string_view all = input.bytes;
    chunk_bytes = std::max<std::size_t>(chunk_bytes, 1);
    auto cut = [&](std::uint64_t k) -> std::size_t {
        if (k == 0) return 0;
        if (k > all.size() / chunk_bytes) return all.size();
        std::size_t nl = all.find('\n', k * chunk_bytes - 1);  // a '\n' ending the chunk's last byte
        return nl == std::string_view::npos ? all.size() : nl + 1;
    };
    // The kernel maps a file's pages by windows and whole folios around each touch, so a
    // chunk's first and last touches map pages of its neighbours too, which may be done and
    // released already. Besides each chunk's own release, a sweep releases everything below
    // the first chunk not yet done, reaching back far enough to catch such strays.
    constexpr std::size_t stray_reach = std::size_t{8} << 20;
    std::mutex sweep_mu;
    std::vector<char> done(all.size() / chunk_bytes + 2, 0);
    std::uint64_t first_open = 0;
    std::size_t swept = 0;
    auto sweep = [&](std::uint64_t k) {
        std::lock_guard lock(sweep_mu);
        done[k] = 1;
        while (first_open < done.size() && done[first_open]) ++first_open;
        const std::size_t upto = cut(first_open);
        if (upto <= swept) return;
        release_region(input, all.data() + (swept > stray_reach ? swept - stray_reach : 0), all.data() + upto);
        swept = upto;
    };
    // Chunk indices past the input's end find b at its end: there are at most this many.
    parallel_for_worker(all.size() / chunk_bytes + 1, workers, [&](std::size_t k, unsigned w) {
        const std::size_t b = cut(k);
        if (b >= all.size()) return;
        const std::size_t e = cut(k + 1);
        line_chunk c;
        c.index = k;
        c.region = {all.substr(b, e - b), input.readable_after + (all.size() - e), input.releasable};
        work(w, c);  // an empty chunk too: the caller counts every index
        release_region(input, all.data() + b, all.data() + e);
        sweep(k);
        if (w == 0 && progress) progress(e);
    });
    release_region(input, all.data(), all.data() + all.size());
    return nullptr;
}

}  // namespace

line_reader chunk_reader(const line_chunk& c, const std::string& name) {
    return line_reader(c.region, name, 1 + chunk_line_bias(c.index));
}

void line_chunk::reserve(std::size_t n) {
    if (n <= capacity) return;
    std::unique_ptr<char[]> bigger(new char[n + simdjson::SIMDJSON_PADDING]);
    if (size) std::memcpy(bigger.get(), data.get(), size);
    data = std::move(bigger);
    capacity = n;
}

std::size_t chunk_lines(const line_chunk& c) {
    std::string_view b = c.bytes();
    return count_newlines(b.data(), b.size()) + (!b.empty() && b.back() != '\n');
}

std::exception_ptr for_each_chunk(byte_source& src, const chunk_options& options,
                                  const std::function<void(unsigned, const line_chunk&)>& work,
                                  const std::function<void(std::uint64_t)>& progress) {
    const unsigned workers = std::max(1u, options.workers);
    if (auto mapped = src.map_rest()) return for_each_mapped_chunk(*mapped, workers, options.chunk_bytes, work, progress);
    chunk_ring ring;
    for (std::size_t k = 0, n = options.ring ? options.ring : 2 * std::size_t{workers}; k < n; ++k)
        ring.spare.push_back(std::make_unique<line_chunk>());
    // The workers start with the first chunk: an empty input (a cron job's empty pipe) starts none.
    std::vector<std::thread> threads;
    auto start_workers = [&] {
        for (unsigned w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                while (auto c = ring.pop()) {
                    try {
                        work(w, *c);
                    } catch (...) {
                        ring.fail(std::current_exception());
                        return;
                    }
                    ring.give_back(std::move(c));
                }
            });
    };
    std::exception_ptr read_error;
    try {
        std::string carry;
        std::uint64_t index = 0, total = 0;
        bool eof = false;
        std::exception_ptr failure;
        while (auto c = ring.take_spare()) {
            if (!fill_chunk(src, *c, carry, options.chunk_bytes, total, eof, failure)) break;
            c->index = index++;
            c->region = {std::string_view(c->data.get(), c->size), c->capacity - c->size + simdjson::SIMDJSON_PADDING, false};
            if (threads.empty()) start_workers();
            ring.push(std::move(c));
            if (progress) progress(total);
        }
    } catch (...) {
        read_error = std::current_exception();
    }
    ring.finish();
    for (auto& t : threads) t.join();
    if (ring.work_error) std::rethrow_exception(ring.work_error);
    return read_error;
}

}  // namespace prof
