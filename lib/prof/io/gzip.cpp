// The gzip decoder (byte_source.hpp: gunzip): ISA-L's igzip inflating on a thread of its own,
// a bounded ring of decoded chunks ahead of the reader.
#include "prof/io/byte_source.hpp"

#include "prof/core/errors.hpp"

#include <isa-l/igzip_lib.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace prof {

namespace {

// zlib's words for the same faults, so a message reads the same whichever decoder found it.
const char* isal_error_text(int rc) {
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid block type";
    case ISAL_INVALID_SYMBOL: return "invalid literal/length or distance code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "corrupt data";
    }
}

// Inflates the gzip members read from `src`, one call at a time. igzip with the gzip wrapper
// checks each member's CRC-32 and ISIZE trailer; the end of a member is ISAL_BLOCK_FINISH, and
// only after one may the input end. A body cut at a flush point decodes cleanly up to the cut,
// so the missing trailer is what tells it apart from a whole stream.
class inflater {
public:
    explicit inflater(std::unique_ptr<byte_source> src)
        : src_(std::move(src)), in_(std::size_t{1} << 18), st_(std::make_unique<inflate_state>()) {
        isal_inflate_init(st_.get());
        st_->crc_flag = ISAL_GZIP;
    }
    const std::string& name() const { return src_->name(); }

    // Decodes into out[0, n) (n > 0); returns how many bytes, 0 at the end of the last member.
    std::size_t fill(char* out, std::size_t n) {
        for (;;) {
            if (st_->avail_in == 0 && !eof_) {
                std::size_t r = src_->read(reinterpret_cast<char*>(in_.data()), in_.size());
                eof_ = r == 0;
                st_->next_in = in_.data();
                st_->avail_in = static_cast<std::uint32_t>(r);
            }
            if (member_done_) {
                if (st_->avail_in == 0) {
                    if (eof_) return 0;
                    continue;
                }
                next_member();  // another member follows (concatenated .gz files)
            }
            if (!started_ && st_->avail_in == 0 && eof_) return 0;  // no byte at all: an empty input
            started_ = true;
            st_->next_out = reinterpret_cast<std::uint8_t*>(out);
            st_->avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(n, 1u << 30));
            std::uint32_t room = st_->avail_out;
            int rc = isal_inflate(st_.get());
            std::size_t got = room - st_->avail_out;
            if (rc < 0) throw io_error(fmt::format("{}: gzip error: {}", name(), isal_error_text(rc)));
            if (st_->block_state == ISAL_BLOCK_FINISH) member_done_ = true;
            else if (got == 0 && eof_ && st_->avail_in == 0)
                throw io_error(fmt::format("{}: gzip stream cut short", name()));
            if (got > 0) return got;
        }
    }

private:
    void next_member() {
        std::uint8_t* next = st_->next_in;
        std::uint32_t avail = st_->avail_in;
        isal_inflate_reset(st_.get());
        st_->crc_flag = ISAL_GZIP;
        st_->next_in = next;
        st_->avail_in = avail;
        member_done_ = false;
    }

    std::unique_ptr<byte_source> src_;
    std::vector<std::uint8_t> in_;
    std::unique_ptr<inflate_state> st_;
    bool eof_ = false, started_ = false, member_done_ = false;
};

// A decoded chunk: `size` bytes of a buffer of chunk_ring::chunk_bytes, allocated once and
// reused, never zeroed (the decoder writes every byte it hands out).
struct decoded_chunk {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
};

// The decoder's thread and the reader meet here. The thread inflates into free chunks and
// queues them; an error ends the queue and is thrown to the reader after the chunks before it.
struct chunk_ring {
    static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
    static constexpr std::size_t chunks = 4;

    explicit chunk_ring(std::unique_ptr<byte_source> src) : decoder(std::move(src)), name(decoder.name()) {}

    std::mutex m;
    std::condition_variable cv;
    std::deque<decoded_chunk> full;
    std::vector<decoded_chunk> spare;
    std::size_t in_flight = 0;  // chunks queued or held by the reader
    bool done = false, stop = false;
    std::exception_ptr failure;
    inflater decoder;
    std::string name;

    // The thread's loop: runs until the last member ends, an error, or the reader goes away.
    void run() {
        for (;;) {
            decoded_chunk chunk;
            {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return stop || in_flight < chunks; });
                if (stop) return;
                ++in_flight;
                if (!spare.empty()) {
                    chunk = std::move(spare.back());
                    spare.pop_back();
                }
            }
            if (!chunk.data) chunk.data = std::make_unique_for_overwrite<char[]>(chunk_bytes);
            chunk.size = 0;
            std::exception_ptr err;
            try {
                chunk.size = decoder.fill(chunk.data.get(), chunk_bytes);
            } catch (...) {
                err = std::current_exception();
            }
            std::lock_guard lock(m);
            bool last = err || chunk.size == 0;
            if (chunk.size > 0) full.push_back(std::move(chunk));
            else --in_flight;
            if (last) {
                failure = err;
                done = true;
                cv.notify_all();
                return;
            }
            cv.notify_all();
        }
    }
};

class gunzip_byte_source final : public byte_source {
public:
    explicit gunzip_byte_source(std::unique_ptr<byte_source> src) : ring_(std::make_shared<chunk_ring>(std::move(src))) {
        // Detached, with the ring shared: a reader that stops early (a bad line, an error)
        // never waits for a thread blocked reading a pipe; the thread ends at its next chunk.
        std::thread([ring = ring_] { ring->run(); }).detach();
    }
    ~gunzip_byte_source() override {
        std::lock_guard lock(ring_->m);
        ring_->stop = true;
        ring_->cv.notify_all();
    }
    std::size_t read(char* out, std::size_t n) override {
        if (n == 0) return 0;
        while (pos_ == cur_.size) {
            if (!next_chunk()) return 0;
        }
        std::size_t k = std::min(n, cur_.size - pos_);
        std::memcpy(out, cur_.data.get() + pos_, k);
        pos_ += k;
        return k;
    }
    const std::string& name() const override { return ring_->name; }

private:
    // Hands the used chunk back and takes the next; false at the end; rethrows the decoder's error.
    bool next_chunk() {
        std::unique_lock lock(ring_->m);
        if (holding_) {
            ring_->spare.push_back(std::move(cur_));
            --ring_->in_flight;
            holding_ = false;
            ring_->cv.notify_all();
        }
        cur_ = decoded_chunk{};
        pos_ = 0;
        ring_->cv.wait(lock, [&] { return !ring_->full.empty() || ring_->done; });
        if (!ring_->full.empty()) {
            cur_ = std::move(ring_->full.front());
            ring_->full.pop_front();
            holding_ = true;
            return true;
        }
        if (ring_->failure) std::rethrow_exception(ring_->failure);
        return false;
    }

    std::shared_ptr<chunk_ring> ring_;
    decoded_chunk cur_;
    std::size_t pos_ = 0;
    bool holding_ = false;
};

}  // namespace

std::unique_ptr<byte_source> gunzip(std::unique_ptr<byte_source> src) {
    return std::make_unique<gunzip_byte_source>(std::move(src));
}

}  // namespace prof
