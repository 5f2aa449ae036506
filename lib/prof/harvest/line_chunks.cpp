// The chunker: a byte source → chunks of whole lines → worker threads (see line_chunks.hpp).
#include "prof/harvest/line_chunks.hpp"

#include <algorithm>
#include <string_view>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace prof {

namespace {

// Reads a chunk's bytes, behind a '\n' for every chunk but the first.
class chunk_byte_source : public byte_source {
public:
    chunk_byte_source(const line_chunk& c, const std::string& name)
        : lead_(c.index == 0 ? 0 : 1), bytes_(c.bytes()), name_(name) {}
    std::size_t read(char* buf, std::size_t n) override {
        std::size_t k = 0;
        if (lead_ && n) {
            buf[k++] = '\n';
            lead_ = 0;
        }
        std::size_t m = std::min(n - k, bytes_.size() - at_);
        std::memcpy(buf + k, bytes_.data() + at_, m);
        at_ += m;
        return k + m;
    }
    const std::string& name() const override { return name_; }

private:
    int lead_;
    std::string_view bytes_;
    std::size_t at_ = 0;
    std::string name_;
};

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
            std::size_t last = c.bytes().rfind('\n');
            c.size = last == std::string_view::npos ? 0 : last + 1;
            if (c.size == 0) throw;
            return true;
        }
        std::string_view b = c.bytes();
        std::size_t last = b.rfind('\n');
        if (last != std::string_view::npos) {
            carry.assign(b.substr(last + 1));
            c.size = last + 1;
            return true;
        }
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

}  // namespace

std::unique_ptr<byte_source> chunk_source(const line_chunk& c, const std::string& name) {
    return std::make_unique<chunk_byte_source>(c, name);
}

void line_chunk::reserve(std::size_t n) {
    if (n <= capacity) return;
    std::unique_ptr<char[]> bigger(new char[n]);
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
    chunk_ring ring;
    for (std::size_t k = 0, n = options.ring ? options.ring : 2 * std::size_t{workers}; k < n; ++k)
        ring.spare.push_back(std::make_unique<line_chunk>());
    std::vector<std::thread> threads;
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
    std::exception_ptr read_error;
    try {
        std::string carry;
        std::uint64_t index = 0, total = 0;
        bool eof = false;
        std::exception_ptr failure;
        while (auto c = ring.take_spare()) {
            if (!fill_chunk(src, *c, carry, options.chunk_bytes, total, eof, failure)) break;
            c->index = index++;
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
