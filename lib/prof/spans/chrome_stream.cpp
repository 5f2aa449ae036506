// The Chrome trace reader's stream path: a trace read from a stream through a bounded ring of
// chunks, resumed behind a rebuilt header where the fast path cannot read on (see chrome.hpp).
#include "prof/spans/chrome.hpp"

#include "prof/spans/chrome_read.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/limits.hpp"
#include "prof/core/parallel.hpp"
#include "prof/io/byte_source.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/spans/chrome_events.hpp"
#include "prof/spans/chrome_parse.hpp"
#include "prof/spans/chrome_paths.hpp"
#include "prof/spans/formats.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <memory>
#include <optional>
#include <simdjson.h>
#include <thread>


namespace prof {

namespace od = simdjson::ondemand;
using namespace chrome_detail;

namespace {

// ---- a trace read from a stream, through a bounded ring of chunks ----------------------------

// Where the event array of a trace starting with `head` begins (just past its '['), when head
// holds all of the text before it in a shape the scanner checks: a bare array, or a trace
// object whose members before "traceEvents" are read as event_array_of reads them.
std::optional<std::size_t> stream_events_start(std::string_view head, event_array& shape) {
    std::string_view t = skip_bom_ws(head);
    if (t.empty()) return std::nullopt;
    if (t[0] == '{') {
        json_scanner s{t.data() + 1, head.data() + head.size()};
        if (!members_before_events(s, shape) || s.p == s.e || *s.p != '[') return std::nullopt;
        t = std::string_view(s.p, static_cast<std::size_t>(s.e - s.p));
    }
    if (t[0] != '[') return std::nullopt;
    const auto start = static_cast<std::size_t>(t.data() - head.data()) + 1;
    if (!simdjson::validate_utf8(head.data(), start)) return std::nullopt;
    return start;
}

// The last event boundary of `b` (see next_boundary) after which a whole event with a phase
// follows inside `b`; npos when none is found among the last few.
std::size_t last_boundary(std::string_view b) {
    std::size_t end = b.size();
    for (int tries = 0; tries < 64 && end > 0; ++tries) {
        const void* hit = ::memrchr(b.data(), '}', end);
        if (!hit) return std::string_view::npos;
        const auto at = static_cast<std::size_t>(static_cast<const char*>(hit) - b.data());
        if (next_boundary(b, at) == at + 1 && starts_event(b, b.find('{', at + 1))) return at + 1;
        end = at;
    }
    return std::string_view::npos;
}

// One chunk of a stream's event array: the bytes from a cut (or the array's start) to the next
// cut (or the text's end), SIMDJSON_PADDING readable bytes after them; and what reading it gave.
struct stream_piece {
    std::uint64_t index = 0;
    std::string buf;  // sized once to the capacity plus padding, reused from chunk to chunk
    std::size_t size = 0;
    bool last = false;  // holds the text's end: the array's close and what follows it
    bool done = false, ok = false;
    std::optional<trace_events> events;
    std::size_t newlines = 0;
    bool unclosed = false;
    event_array trailer;  // displayTimeUnit after the events

    std::string_view bytes() const { return {buf.data(), size}; }
    void reserve(std::size_t n) {
        if (buf.size() < n + simdjson::SIMDJSON_PADDING) buf.resize(n + simdjson::SIMDJSON_PADDING);
    }
    std::size_t capacity() const { return buf.size() - simdjson::SIMDJSON_PADDING; }
};

// Fills `p` with `carry` and then source bytes, at least `want` of them, cut back to the last
// event boundary (the rest carried to the next chunk; a chunk without one grows); at the end of
// the input the rest is the last chunk. `total` counts the bytes read.
void fill_piece(byte_source& src, stream_piece& p, std::string& carry, std::size_t want, std::uint64_t& total) {
    p.reserve(std::max(want, carry.size() + 1));
    std::memcpy(p.buf.data(), carry.data(), carry.size());
    p.size = carry.size();
    carry.clear();
    for (std::size_t target = std::max(want, p.size + 1);;) {
        p.reserve(target);
        while (p.size < target) {
            const std::size_t n = src.read(p.buf.data() + p.size, p.capacity() - p.size);
            total += n;
            if (total > max_document_bytes())  // a trace is one document, even streamed
                throw error(exit_code::data_err, fmt::format("{}: {}", src.name(), document_too_large_message()));
            if (n == 0) {
                p.last = true;
                return;
            }
            p.size += n;
        }
        const std::size_t cut = last_boundary(p.bytes());
        if (cut != std::string_view::npos && cut > 0) {
            carry.assign(p.bytes().substr(cut));
            p.size = cut;
            return;
        }
        target = p.size + std::max<std::size_t>(want / 2, 1);
    }
}

// The events of a stream's last chunk: up to the array's close, which for a trace object is
// its last ']', the members after it checked (displayTimeUnit kept); for a bare array without
// its ']', up to its last whole event (the rule of unclosed_array_prefix). nullopt otherwise.
std::optional<std::string_view> last_events(std::string_view in, bool object, stream_piece& p) {
    std::string_view t = skip_ws_back(in);
    if (object) {
        if (t.empty() || t.back() != '}') return std::nullopt;
        t.remove_suffix(1);
        std::size_t close = t.rfind(']');
        if (close == std::string_view::npos || !simdjson::validate_utf8(t.data() + close, t.size() - close) ||
            !members_after_events(json_scanner{t.data() + close + 1, t.data() + t.size()}, p.trailer))
            return std::nullopt;
        return t.substr(0, close);
    }
    if (!t.empty() && t.back() == ']') return t.substr(0, t.size() - 1);
    p.unclosed = true;
    if (!t.empty() && t.back() == ',') {
        t = skip_ws_back(t.substr(0, t.size() - 1));
        if (t.empty()) return std::nullopt;
    }
    if (!t.empty() && t.back() != '}') return std::nullopt;
    return t;
}

// Reads one chunk (on a worker): its events as read_chunk reads them, their lines pinned.
void read_piece(stream_piece& p, bool object, const chrome_paths& paths) {
    const std::string_view b = p.bytes();
    p.newlines = static_cast<std::size_t>(std::count(b.begin(), b.end(), '\n'));
    std::string_view in = b;
    if (p.index > 0) {  // ",\n{...": the cut's comma
        in = skip_ws(in);
        if (in.empty() || in[0] != ',') return;
        in = skip_ws(in.substr(1));
    }
    if (p.last) {
        auto events = last_events(in, object, p);
        if (!events) return;
        in = *events;
    }
    auto r = read_chunk(in, p.buf.data() + p.buf.size(), paths.batch_bytes, paths.scan, in.size() / 80);
    if (!r || !r->pin_lines(b.data())) return;
    p.events = std::move(r);
    p.ok = true;
}

// The chunks of one stream in flight: read on the calling thread into spare buffers, read on
// the workers in any order, and retired in file order, each joined into `joined` and its buffer
// reused. A chunk that could not be read stops everything: it and the chunks after it stay in
// `window` with their bytes, for the whole-document parse to resume from.
struct stream_ring {
    std::mutex mu;
    std::condition_variable work_cv, spare_cv;
    std::vector<std::unique_ptr<stream_piece>> spare;
    std::deque<std::unique_ptr<stream_piece>> window;  // read from the stream, not yet retired
    std::deque<stream_piece*> todo;
    bool reading_done = false, stopped = false, declined = false, joining = false;
    std::exception_ptr error;
    trace_events joined{0};
    std::size_t lines_before = 0;  // the stream's lines before the first chunk not yet retired
    std::size_t chunks = 0;
    bool unclosed = false;
    std::optional<std::string> trailer_unit;

    void stop(std::unique_lock<std::mutex>&) {
        stopped = true;
        work_cv.notify_all();
        spare_cv.notify_all();
    }
    // Joins the chunks read in order at the window's front; called with the lock held.
    void retire(std::unique_lock<std::mutex>& lock) {
        if (joining) return;
        joining = true;
        while (!stopped && !window.empty() && window.front()->done) {
            if (!window.front()->ok) {
                declined = true;
                stop(lock);
                break;
            }
            std::unique_ptr<stream_piece> p = std::move(window.front());
            window.pop_front();
            lock.unlock();
            joined.append({&*p->events}, 1, lines_before);
            lines_before += p->newlines;
            ++chunks;
            if (p->last) {
                unclosed = p->unclosed;
                trailer_unit = p->trailer.display_time_unit;
            }
            p->events.reset();
            p->done = p->ok = p->last = false;
            lock.lock();
            spare.push_back(std::move(p));
            spare_cv.notify_one();
        }
        joining = false;
    }
    void work(bool object, const chrome_paths& paths) {
        for (;;) {
            stream_piece* p = nullptr;
            {
                std::unique_lock lock(mu);
                work_cv.wait(lock, [&] { return stopped || !todo.empty() || reading_done; });
                if (stopped || todo.empty()) return;
                p = todo.front();
                todo.pop_front();
            }
            try {
                read_piece(*p, object, paths);
                std::unique_lock lock(mu);
                p->done = true;
                retire(lock);
            } catch (...) {  // out of memory, say: not a verdict on the trace
                std::unique_lock lock(mu);
                if (!error) error = std::current_exception();
                stop(lock);
                return;
            }
        }
    }
};

// The reader of the ring (the calling thread): chunks filled from the stream as buffers come
// free, handed to the workers, until the stream's end or a stop.
void read_stream(stream_ring& ring, byte_source& src, std::string& carry, std::size_t want, const std::string& unit,
                 std::uint64_t& total) {
    for (std::uint64_t index = 0;; ++index) {
        std::unique_ptr<stream_piece> p;
        {
            std::unique_lock lock(ring.mu);
            ring.spare_cv.wait(lock, [&] { return ring.stopped || !ring.spare.empty(); });
            if (ring.stopped) return;
            p = std::move(ring.spare.back());
            ring.spare.pop_back();
        }
        fill_piece(src, *p, carry, want, total);
        p->index = index;
        p->trailer.display_time_unit = unit;  // what the header said, unless the members after the events say otherwise
        const bool last = p->last;
        {
            std::unique_lock lock(ring.mu);
            ring.todo.push_back(p.get());
            ring.window.push_back(std::move(p));
            ring.work_cv.notify_one();
        }
        if (last) return;
    }
}

// After a chunk the ring could not read: the trace's header, that chunk (its leading comma
// blanked) and everything after it, read by the whole-document parse from where the ring's
// chunks left off.
span_set resume_stream(stream_ring& ring, std::string_view header, std::string& carry, byte_source& src,
                       const std::string& source, std::uint64_t& total) {
    std::string text(header);
    for (const auto& p : ring.window) {
        const std::size_t at = text.size();
        text.append(p->bytes());
        if (at == header.size() && p->index > 0) text[text.find(',', at)] = ' ';
    }
    text.append(carry);
    const std::string_view all = read_rest_padded(src, text, total);
    const auto header_lines = static_cast<std::size_t>(std::count(header.begin(), header.end(), '\n'));
    const resumed before{ring.joined.index, ring.lines_before - header_lines, header.size()};
    return read_resumed(all, source, std::move(ring.joined), before);
}

}  // namespace


span_set read_chrome_stream(std::string_view head, byte_source& rest, const std::string& source, const chrome_paths& paths,
                            chrome_read_stats* stats, std::uint64_t& bytes) {
    bytes = head.size();
    chrome_read_stats st;
    event_array shape;
    auto start = stream_events_start(head, shape);
    if (!start) {  // a header the scanner does not check: the whole text, read as a file is
        std::string text(head);
        const std::string_view all = read_rest_padded(rest, text, bytes);
        span_set s = read_chrome_trace(all, source, paths, stats);
        return s;
    }
    const bool object = skip_bom_ws(head)[0] == '{';
    const std::string_view header = head.substr(0, *start);
    stream_ring ring;
    ring.lines_before = static_cast<std::size_t>(std::count(header.begin(), header.end(), '\n'));
    const unsigned workers = std::max(paths.jobs, 1u);
    for (unsigned k = 0; k < 2 * workers + 1; ++k) ring.spare.push_back(std::make_unique<stream_piece>());
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w) threads.emplace_back([&] { ring.work(object, paths); });
    std::string carry(head.substr(*start));
    std::exception_ptr read_error;
    try {
        read_stream(ring, rest, carry, paths.chunk_bytes, shape.display_time_unit, bytes);
    } catch (...) {
        read_error = std::current_exception();  // the source's own error (a gzip stream cut short, say)
    }
    {
        std::unique_lock lock(ring.mu);
        ring.reading_done = true;
        if (read_error) ring.stop(lock);
        ring.work_cv.notify_all();
    }
    for (auto& t : threads) t.join();
    if (ring.error) std::rethrow_exception(ring.error);
    if (read_error) std::rethrow_exception(read_error);
    if (ring.declined) {
        st.whole_document = true;
        if (stats) *stats = st;
        return resume_stream(ring, header, carry, rest, source, bytes);
    }
    st.chunks = ring.chunks;
    st.streamed = true;
    st.scanned_events = ring.joined.scanned;
    st.dom_events = ring.joined.from_dom;
    ring.joined.out.display_time_unit = ring.trailer_unit.value_or(shape.display_time_unit);
    span_set out = ring.joined.finish(paths.jobs);
    out.unclosed = ring.unclosed;
    if (stats) *stats = st;
    return out;
}

span_set read_chrome_stream(std::string_view head, byte_source& rest, const std::string& source, unsigned jobs,
                            chrome_read_stats* stats, std::uint64_t& bytes) {
    chrome_paths paths;
    paths.jobs = jobs;
    return read_chrome_stream(head, rest, source, paths, stats, bytes);
}

}  // namespace prof
