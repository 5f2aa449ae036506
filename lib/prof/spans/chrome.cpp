// The Chrome trace reader: a whole document, in parallel batches where the event array allows
// (see chrome.hpp and chrome_paths.hpp); the stream path is in chrome_stream.cpp.
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

namespace chrome_detail {

std::string_view skip_ws(std::string_view t) {
    while (!t.empty() && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n')) t.remove_prefix(1);
    return t;
}

std::string_view skip_ws_back(std::string_view t) {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r' || t.back() == '\n')) t.remove_suffix(1);
    return t;
}

std::size_t line_of(std::string_view text, const char* loc) {
    if (!loc || loc < text.data() || loc > text.data() + text.size()) return 1;
    return 1 + static_cast<std::size_t>(std::count(text.data(), loc, '\n'));
}

// Where the events of the given 1-based indices (ascending) start, by one walk of the trace's
// events; nullptr for one not reached.
std::vector<const char*> event_locations(std::string_view text, const std::vector<std::size_t>& indices) {
    std::vector<const char*> out(indices.size(), nullptr);
    od::parser parser;
    od::document doc;
    if (indices.empty() || parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING).get(doc))
        return out;
    od::array events;
    od::json_type t;
    if (doc.type().get(t)) return out;
    if (t == od::json_type::array) {
        if (doc.get_array().get(events)) return out;
    } else {
        od::value v;
        if (doc.find_field_unordered("traceEvents").get(v) || v.get_array().get(events)) return out;
    }
    std::size_t k = 0, j = 0;
    for (auto el : events) {
        od::value v;
        if (el.get(v)) return out;
        ++k;
        while (j < indices.size() && indices[j] == k) {
            const char* loc = nullptr;
            if (v.current_location().get(loc)) return out;
            out[j++] = loc;
        }
        if (j == indices.size()) break;
    }
    return out;
}

// One member's value, skipped (checked), or kept when it is displayTimeUnit.
bool trace_member(json_scanner& s, std::string_view key, event_array& out) {
    if (key != "displayTimeUnit") return s.skip_value();
    std::string_view unit;
    if (!s.string(unit)) return false;
    out.display_time_unit = std::string(unit);
    return true;
}

// The members of a trace object before its events, from just past its '{': checked and skipped
// (displayTimeUnit kept) up to the value of "traceEvents", where `s` is left.
bool members_before_events(json_scanner& s, event_array& out) {
    std::string_view key;
    for (s.ws();; s.ws()) {
        if (!s.string(key)) return false;
        s.ws();
        if (!s.eat(':')) return false;
        s.ws();
        if (key == "traceEvents") return true;
        if (!trace_member(s, key, out)) return false;
        s.ws();
        if (!s.eat(',')) return false;
    }
}

// The members after the event array, from just past its ']' to the object's '}' (excluded).
bool members_after_events(json_scanner after, event_array& out) {
    std::string_view key;
    for (after.ws(); after.p < after.e; after.ws()) {
        if (!after.eat(',')) return false;
        after.ws();
        if (!after.string(key) || key == "traceEvents") return false;  // a second one: read whole
        after.ws();
        if (!after.eat(':')) return false;
        after.ws();
        if (!trace_member(after, key, out)) return false;
    }
    return true;
}

std::optional<event_array> event_array_of(std::string_view text) {
    event_array out;
    std::string_view t = text;
    if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    t = skip_ws_back(skip_ws(t));
    out.whole = t;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
        out.interior = t.substr(1, t.size() - 2);
        return out;
    }
    if (t.size() < 2 || t.front() != '{' || t.back() != '}') return std::nullopt;
    json_scanner s{t.data() + 1, t.data() + t.size() - 1};
    if (!members_before_events(s, out)) return std::nullopt;
    // The array's end is taken to be the text's last ']'. When a later member holds a ']', the
    // last event seems to be followed by ']' instead of ',' and the scanner declines the trace:
    // a wrong guess costs the fast path, never the answer.
    std::string_view rest(s.p, static_cast<std::size_t>(s.e - s.p));
    std::size_t close = rest.rfind(']');
    if (rest.empty() || rest[0] != '[' || close == std::string_view::npos || close == 0) return std::nullopt;
    out.interior = rest.substr(1, close - 1);
    if (!members_after_events(json_scanner{rest.data() + close + 1, s.e}, out)) return std::nullopt;
    return out;
}

// The first event boundary at or after `from`: the position just past a '}' that is followed,
// across whitespace, by ',' and then '{'. npos when there is none. The boundary may lie inside
// a string or a nested array; a batch cut there does not parse, which the caller detects.
std::size_t next_boundary(std::string_view in, std::size_t from) {
    while (from < in.size()) {
        const void* hit = std::memchr(in.data() + from, '}', in.size() - from);
        if (!hit) return std::string_view::npos;
        std::size_t k = static_cast<std::size_t>(static_cast<const char*>(hit) - in.data()) + 1;
        std::size_t j = k;
        while (j < in.size() && (in[j] == ' ' || in[j] == '\t' || in[j] == '\r' || in[j] == '\n')) ++j;
        if (j < in.size() && in[j] == ',') {
            ++j;
            while (j < in.size() && (in[j] == ' ' || in[j] == '\t' || in[j] == '\r' || in[j] == '\n')) ++j;
            if (j < in.size() && in[j] == '{') return k;
        }
        from = k;
    }
    return std::string_view::npos;
}

// The DOM reader of the batched path: from `pos` (the start of an event), about `batch` bytes
// of events copied into a reused buffer as "[" + events + "]" and parsed whole by simdjson's
// DOM parser, whose buffers are reused from batch to batch, so memory stays bounded by the
// batch and each batch is walked while it is in cache. The DOM parse validates the whole batch
// before a single event is taken, so a batch cut in the wrong place (a '},{' inside a string or
// a nested array) is simply extended to the next boundary. Returns where the next event starts
// (past the ',' after the batch), or nullopt when the batch does not parse after a few tries.
class dom_batches {
public:
    explicit dom_batches(std::size_t batch) : batch_(batch) {}

    std::optional<std::size_t> read(std::string_view in, std::size_t pos, trace_events& r) {
        if (!allocated_) {
            // Room for a batch and a few extensions, allocated once: a parser grown batch by
            // batch would map (and fault in) fresh buffers each time a batch came out longer.
            if (parser_.allocate(batch_ + (batch_ >> 1) + 4096)) return std::nullopt;
            buf_.reserve(batch_ + (batch_ >> 1) + 4096 + simdjson::SIMDJSON_PADDING);
            allocated_ = true;
        }
        std::size_t cut = in.size() - pos <= batch_ ? std::string_view::npos : next_boundary(in, pos + batch_);
        for (int attempt = 0;; ++attempt) {
            std::size_t end = cut == std::string_view::npos ? in.size() : cut;
            buf_.assign(1, '[');
            buf_.append(in.data() + pos, end - pos);
            buf_.push_back(']');
            std::size_t len = buf_.size();
            buf_.append(simdjson::SIMDJSON_PADDING, '\0');
            simdjson::dom::element doc;
            simdjson::dom::array arr;
            if (parser_.parse(buf_.data(), len, false).get(doc) == simdjson::SUCCESS &&
                doc.get_array().get(arr) == simdjson::SUCCESS) {
                for (simdjson::dom::element el : arr) {
                    r.start_event();
                    simdjson::dom::object ev;
                    if (el.get_object().get(ev) != simdjson::SUCCESS) throw field_error("expected an event object");
                    event_fields e;
                    read_event(ev, e, scratch_);
                    r.take(e);
                    ++r.from_dom;
                }
                pos = end;
                while (pos < in.size() && in[pos] != ',') ++pos;
                if (pos < in.size()) ++pos;
                return pos;
            }
            if (cut == std::string_view::npos || attempt == 4) return std::nullopt;
            cut = next_boundary(in, cut);
        }
    }

private:
    std::size_t batch_;
    bool allocated_ = false;
    simdjson::dom::parser parser_;
    std::string buf_;
    identity_scratch scratch_;
};

// One chunk of the event array (whole events, no comma before the first or after the last),
// checked to be UTF-8, then read by the scanner, each event it declines starting a DOM batch.
// nullopt on any error: the whole-document parse then reads the trace and names the error's
// line. Room for `expected_spans` is reserved (the first chunk reserves for the whole trace, so
// that the others are appended without moving it).
std::optional<trace_events> read_chunk(std::string_view in, const char* readable_end, std::size_t batch, bool scan,
                                       std::size_t expected_spans) {
    if (!simdjson::validate_utf8(in.data(), in.size())) return std::nullopt;
    trace_events r(expected_spans);
    dom_batches dom(batch);
    key_predictor keys;
    try {
        json_scanner s{in.data(), in.data() + in.size()};
        s.ws();
        while (s.p < s.e) {
            const char* start = s.p;
            event_fields e;
            if (scan && scan_event(s, e, keys, readable_end)) {
                r.event_at = start;
                r.consume(e);
                r.event_at = nullptr;
                ++r.scanned;
                s.ws();
                if (s.p == s.e) break;
                if (!s.eat(',')) return std::nullopt;
                s.ws();
                if (s.p == s.e) return std::nullopt;  // a trailing comma
                continue;
            }
            auto next = dom.read(in, static_cast<std::size_t>(start - in.data()), r);
            if (!next) return std::nullopt;
            s.p = in.data() + *next;
            s.ws();
        }
    } catch (const field_error&) {
        return std::nullopt;
    } catch (const simdjson::simdjson_error&) {
        return std::nullopt;
    } catch (const needs_number_text&) {
        return std::nullopt;
    }
    return r;
}

// A cut at `cut` (a boundary) is taken only when the object after it reads as an event with a
// phase: the objects of an array inside an event's args ("stackTrace": [{...},{...}]) have none,
// and a cut among them would fail the chunk before it. Only speed depends on this guess.
bool starts_event(std::string_view in, std::size_t at) {
    json_scanner s{in.data() + at, in.data() + in.size()};
    event_fields e;
    key_predictor keys;
    return scan_event(s, e, keys, s.e) && e.ph != 0;
}

// The event array's interior cut at event boundaries into chunks for `jobs` threads (see
// chrome_paths.hpp): one with one job, unless `mapped` (a mapped trace is cut on one thread too,
// so that its pages are released behind the reader); else at least `jobs`, of about
// `chunk_bytes` each, and none below `min_bytes`. Each chunk's text runs from its first event to
// the '}' of its last.
std::vector<std::string_view> event_chunks(std::string_view in, unsigned jobs, std::size_t chunk_bytes, std::size_t min_bytes,
                                           const memory_region* mapped) {
    std::vector<std::string_view> out;
    const std::size_t by_size = (in.size() + chunk_bytes - 1) / std::max<std::size_t>(chunk_bytes, 1);
    const std::size_t pieces = jobs <= 1 && mapped == nullptr ? 1 : std::max<std::size_t>(jobs, by_size);
    const std::size_t want = std::max<std::size_t>(1, std::min<std::size_t>(pieces, in.size() / std::max<std::size_t>(min_bytes, 1)));
    std::size_t from = 0;
    for (std::size_t k = 1; k < want; ++k) {
        const std::size_t probe = std::max(from, in.size() / want * k);
        std::size_t cut = next_boundary(in, probe);
        std::size_t next = 0;
        for (int tries = 0; cut != std::string_view::npos; ++tries, cut = next_boundary(in, cut)) {
            next = in.find('{', cut);  // next_boundary guarantees it: '}' ws ',' ws '{'
            if (tries == 64 || starts_event(in, next)) break;
        }
        // A touch of a mapped file may map a whole huge page of its page cache (2 MiB) around
        // it: what finding the cut touched goes again before any chunk is read.
        if (mapped) {
            constexpr std::size_t huge = std::size_t{2} << 20;
            const std::size_t last = cut == std::string_view::npos ? in.size() : std::min(in.size(), next + huge);
            release_region(*mapped, in.data() + (probe > huge ? probe - huge : 0), in.data() + last);
        }
        if (cut == std::string_view::npos) break;
        out.push_back(in.substr(from, cut - from));
        from = next;
    }
    out.push_back(in.substr(from));
    return out;
}

// The chunks read on up to `jobs` threads (this one among them), each taking the next chunk as
// it is free, so that a slower chunk or a thread the host preempts leaves no core idle. Each
// finished chunk is joined into the first as soon as every chunk before it is, by whichever
// thread finds it ready, while the others go on reading: the join overlaps the parse instead of
// following it, and a joined chunk's memory is freed for the next one.
//
// A mapped trace's pages are released behind the readers (release_region): each chunk's own
// once it is read, and everything below the first chunk not yet read. The kernel maps a file's
// pages by windows around each touch, so a chunk's first and last touches bring in pages of its
// neighbours, which may be done and released already: the sweep reaches back far enough to
// catch such strays.
std::optional<trace_events> read_chunks(const std::vector<std::string_view>& chunks, unsigned jobs, const char* readable_end,
                                        std::size_t batch, bool scan, std::size_t expected_spans,
                                        const memory_region* mapped) {
    std::vector<std::optional<trace_events>> parts(chunks.size());
    std::atomic<bool> declined{false};
    std::mutex mu;  // guards read, joined, joining, first_open and swept
    std::vector<char> read(chunks.size(), 0);
    std::size_t joined = 1;  // parts[1, joined) are in parts[0]
    bool joining = false;    // a thread is joining: the others leave their chunks to it
    constexpr std::size_t stray_reach = std::size_t{8} << 20;
    std::size_t first_open = 0;                // the first chunk not yet read
    const char* swept = chunks.front().data();  // released below this, stray_reach aside
    // Releases what lies below the first chunk not yet read; called with the lock held.
    auto sweep = [&] {
        while (first_open < chunks.size() && read[first_open]) ++first_open;
        const char* upto = first_open < chunks.size() ? chunks[first_open].data() : chunks.back().data() + chunks.back().size();
        if (upto <= swept) return;
        const auto back = static_cast<std::size_t>(swept - chunks.front().data());
        release_region(*mapped, swept - std::min(back, stray_reach), upto);
        swept = upto;
    };
    // Joins the ready chunks that follow the joined ones, outside the lock; called with it held.
    auto join_ready = [&](std::unique_lock<std::mutex>& lock) {
        if (joining || !read[0]) return;
        joining = true;
        while (joined < parts.size() && read[joined] && !declined) {
            const std::size_t k = joined;
            lock.unlock();
            parts[0]->append({&*parts[k]});
            parts[k].reset();
            lock.lock();
            joined = k + 1;
        }
        joining = false;
    };
    parallel_for(chunks.size(), jobs, [&](std::size_t k) {
        if (declined) return;  // a chunk already failed: the trace is read another way
        // The first chunk reserves for the whole trace (address space, not pages until written),
        // so that the others are joined into it without moving it.
        parts[k] = read_chunk(chunks[k], readable_end, batch, scan, k == 0 ? expected_spans : chunks[k].size() / 80);
        if (!parts[k]) {
            declined = true;
            return;
        }
        if (mapped) release_region(*mapped, chunks[k].data(), chunks[k].data() + chunks[k].size());
        std::unique_lock lock(mu);
        read[k] = 1;
        if (mapped) sweep();
        join_ready(lock);
    });
    if (declined) return std::nullopt;
    std::unique_lock lock(mu);
    join_ready(lock);  // what a thread left ready as another was joining
    return std::move(*parts[0]);
}

// The '\n' bytes of [from, to). The pages of a mapped text are released behind the count, so
// that a defect first met near the end of a large trace does not bring the whole file back.
std::size_t count_lines(const char* from, const char* to, const memory_region* mapped) {
    constexpr std::ptrdiff_t step = std::ptrdiff_t{4} << 20;
    std::size_t n = 0;
    for (; mapped && to - from > step; from += step) {
        n += static_cast<std::size_t>(std::count(from, from + step, '\n'));
        release_region(*mapped, from, from + step);
    }
    return n + static_cast<std::size_t>(std::count(from, to, '\n'));
}

// The fast path, for the common shapes (see event_array_of): the event array read in chunks
// (read_chunks), each checked to be UTF-8 on its thread, the text around the array here
// (between chunks lie only ',' and whitespace). Any error at all returns nullopt, and the
// whole-document path reads (and, for bad input, reports with its line) instead. `mapped`: the
// region `text` lies in, when its pages are to be released behind the readers.
std::optional<span_set> read_chrome_batched(std::string_view text, const chrome_paths& paths, const memory_region* mapped,
                                            chrome_read_stats& st) {
    auto shape = event_array_of(text);
    if (!shape) return std::nullopt;
    const std::string_view whole = shape->whole, in = shape->interior;
    const auto before = static_cast<std::size_t>(in.data() - whole.data());
    if (!simdjson::validate_utf8(whole.data(), before) ||
        !simdjson::validate_utf8(in.data() + in.size(), whole.size() - before - in.size()))
        return std::nullopt;
    const std::size_t expected_spans = text.size() / 80;
    const char* readable_end = text.data() + text.size() + simdjson::SIMDJSON_PADDING;
    if (mapped) release_region(*mapped, text.data(), text.data() + text.size());  // the array's end, found above
    auto chunks = event_chunks(shape->interior, paths.jobs, paths.chunk_bytes, paths.min_chunk_bytes, mapped);
    std::optional<trace_events> r =
        read_chunks(chunks, paths.jobs, readable_end, paths.batch_bytes, paths.scan, expected_spans, mapped);
    if (!r && chunks.size() > 1) {
        // A cut inside an event (a "},{" in an array of objects in its args) fails the chunk
        // before it; read in one piece then, before trying the (slower) whole-document parse.
        chunks = {shape->interior};
        r = read_chunks(chunks, 1, readable_end, paths.batch_bytes, paths.scan, expected_spans, mapped);
    }
    if (!r) return std::nullopt;
    st.chunks = chunks.size();
    st.scanned_events = r->scanned;
    st.dom_events = r->from_dom;
    r->out.display_time_unit = std::move(shape->display_time_unit);
    span_set out = r->finish(paths.jobs);
    // The lines of the defects whose first event the scanner read, counted in file order.
    std::array<std::size_t, event_defect_kinds> order{};
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r->first_at[a] < r->first_at[b]; });
    const char* from = text.data();
    std::size_t line = 1;
    for (std::size_t k : order) {
        const char* at = r->first_at[k];
        if (!at || !out.defects[k].count) continue;
        line += count_lines(from, at, mapped);
        from = at;
        out.defects[k].first_line = line;
    }
    return out;
}

// Where stage 1 of a parse of `text` found `error`, for the line number of the message:
// the first line that is not valid UTF-8, or the first control character inside a string;
// nullptr when not found (line 1 is reported).
const char* stage1_error_location(std::string_view text, simdjson::error_code error) {
    if (error == simdjson::UTF8_ERROR) {
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t nl = text.find('\n', start);
            std::size_t end = nl == std::string_view::npos ? text.size() : nl;
            if (!simdjson::validate_utf8(text.data() + start, end - start)) return text.data() + start;
            start = end + 1;
        }
        return nullptr;
    }
    bool in_string = false;
    for (std::size_t k = 0; k < text.size(); ++k) {
        unsigned char c = static_cast<unsigned char>(text[k]);
        if (in_string) {
            if (c == '\\') ++k;
            else if (c == '"') in_string = false;
            else if (c < 0x20) return text.data() + k;
        } else if (c == '"') {
            in_string = true;
        }
    }
    return nullptr;
}

// simdjson's on-demand parser checks only what it reads: a value nobody reads ("args":{"s":})
// and content after the document pass it. A document it has read is therefore also measured
// against the JSON grammar by the strict scanner (syntax only, as the JSON Lines readers do),
// and refused at the first byte that breaks it. `body` is `text` without a byte order mark.
// No byte offset is named: a stream's text read again behind a rebuilt header has other offsets
// than the file; the line is the file's.
void check_document_syntax(std::string_view body, std::string_view text, const std::string& source, resumed before) {
    const json_syntax sc = check_json_syntax(body);
    if (sc.one_value) return;
    const bool value = sc.trailing;
    const char* at = sc.stop < body.size() ? body.data() + sc.stop : nullptr;
    std::string what = !value ? (at ? fmt::format("malformed JSON (unexpected '{}')", *at)
                                    : std::string("malformed JSON (the text ends inside the trace)"))
                              : std::string("unexpected content after the trace");
    throw input_error(source, before.line(text, at), what);
}

// The whole-document parse with simdjson's on-demand parser (see read_chrome_trace), its events
// consumed into `r` (fresh, or the state of a stream's earlier chunks: see resumed).
span_set read_chrome_document(std::string_view text, const std::string& source, trace_events r, resumed before) {
    identity_scratch scratch;
    auto consume = [&](od::value v) {
        r.start_event();
        od::object ev;
        if (v.get_object().get(ev) != simdjson::SUCCESS) {
            // simdjson's on-demand array iteration takes "[{...},]" for an element "]".
            std::string_view tok = v.raw_json_token();
            if (tok.empty() || tok[0] == ']') throw simdjson::simdjson_error(simdjson::TAPE_ERROR);
            throw field_error("expected an event object");
        }
        event_fields e;
        read_event(ev, e, scratch);
        r.take(e);
    };
    od::parser parser;
    od::document doc;
    const char* loc = text.data();
    bool iterated = false;
    // A UTF-8 byte order mark is not JSON; like the JSON Lines readers, this one skips it.
    std::string_view body = text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
    try {
        if (auto err = parser.iterate(body.data(), body.size(), body.size() + simdjson::SIMDJSON_PADDING).get(doc))
            throw simdjson::simdjson_error(err);
        iterated = true;
        od::json_type root_type = doc.type();
        if (root_type == od::json_type::array) {
            for (auto el : doc.get_array()) consume(el.value());
        } else if (root_type == od::json_type::object) {
            // The members in order: the first "traceEvents" is read, displayTimeUnit kept.
            bool found = false;
            for (auto f : doc.get_object()) {
                std::string_view k = f.unescaped_key();
                if (k == "traceEvents" && !found) {
                    found = true;
                    od::array events;
                    if (f.value().get_array().get(events) != simdjson::SUCCESS)
                        throw field_error("field 'traceEvents': expected an array");
                    for (auto el : events) consume(el.value());
                } else if (k == "displayTimeUnit") {
                    od::value v = f.value();
                    std::string_view unit;
                    r.out.display_time_unit = v.get_string().get(unit) == simdjson::SUCCESS ? std::string(unit)
                                                                                          : std::string(trimmed_token(v));
                }
            }
            if (!found) throw field_error("a trace object must hold \"traceEvents\"");
        } else {
            throw field_error("expected a trace object or an array of events");
        }
    } catch (const field_error& e) {
        // Asking for a location per event costs a noticeable share of a parse, so the failing
        // event's line is found on this error path only, by walking the events again.
        std::size_t index = r.index;
        loc = index > before.events ? event_locations(body, {index - before.events})[0] : nullptr;
        throw input_error(source, before.line(text, loc), index ? fmt::format("event {}: {}", index, e.what()) : e.what());
    } catch (const simdjson::simdjson_error& e) {
        // A document whose stage 1 failed (invalid UTF-8, a control character in a string, an
        // unclosed string) has no position to ask for: the bad byte is looked for instead.
        const char* at = nullptr;
        if (!iterated) at = stage1_error_location(body, e.error());
        else if (doc.current_location().get(at) != simdjson::SUCCESS) at = loc;
        throw input_error(source, before.line(text, at), fmt::format("malformed JSON ({})", simdjson::error_message(e.error())));
    }
    check_document_syntax(body, text, source, before);
    return r.finish();
}

// For a JSON Array Format trace without its closing ']': the text up to its last whole event
// (a '}'), without the whitespace and the one comma after it; or just its '['. nullopt for any
// other text (a closed array, an object, a text cut inside an event), which is read as it is.
std::optional<std::string_view> unclosed_array_prefix(std::string_view text) {
    std::string_view t = skip_bom_ws(text);
    if (t.empty() || t[0] != '[') return std::nullopt;
    std::string_view r = skip_ws_back(t);
    if (r.size() > 1 && r.back() == ',') {
        r = skip_ws_back(r.substr(0, r.size() - 1));
        if (r.back() != '}') return std::nullopt;
    }
    if (r.back() != '}' && r.size() != 1) return std::nullopt;
    return text.substr(0, static_cast<std::size_t>(r.data() + r.size() - text.data()));
}

// Each defect's first line not yet known, from its first event's index (one walk over the
// events of `text`, which follow `before`'s).
void locate_defects(std::string_view text, span_set& s, resumed before) {
    std::vector<std::size_t> at;
    for (const auto& d : s.defects)
        if (d.count && !d.first_line) at.push_back(d.first_event - before.events);
    if (at.empty()) return;
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    std::string_view body = text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
    std::vector<const char*> where = event_locations(body, at);
    for (auto& d : s.defects)
        if (d.count && !d.first_line) {
            auto k = static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), d.first_event - before.events) - at.begin());
            d.first_line = before.line(text, where[k]);
        }
}

// Without its closing ']' (see unclosed_array_prefix), a trace is read from a copy that has it.
std::optional<simdjson::padded_string> closed_copy(std::string_view text) {
    std::optional<simdjson::padded_string> closed;
    if (auto prefix = unclosed_array_prefix(text)) {
        closed.emplace(prefix->size() + 1);
        std::memcpy(closed->data(), prefix->data(), prefix->size());
        closed->data()[prefix->size()] = ']';
    }
    return closed;
}

// The whole-document path from start to end: `text` read into `r` after `before`.
span_set read_resumed(std::string_view text, const std::string& source, trace_events r, resumed before) {
    auto closed = closed_copy(text);
    if (closed) text = std::string_view(closed->data(), closed->size());
    span_set s = read_chrome_document(text, source, std::move(r), before);
    s.unclosed = closed.has_value();
    locate_defects(text, s, before);
    return s;
}

}  // namespace chrome_detail

using namespace chrome_detail;

span_set read_chrome_trace(std::string_view text, const std::string& source, const chrome_paths& paths,
                           chrome_read_stats* stats) {
    auto closed = closed_copy(text);
    std::string_view read = closed ? std::string_view(closed->data(), closed->size()) : text;
    // The mapping's pages go behind the readers only while they read the mapping itself: a trace
    // without its ']' is read from a copy, whose making touched them all.
    const memory_region* mapped = paths.mapped && paths.mapped->releasable ? paths.mapped : nullptr;
    if (mapped && closed) release_region(*mapped, text.data(), text.data() + text.size());
    chrome_read_stats st;
    std::optional<span_set> s;
    if (paths.batch_bytes > 0) s = read_chrome_batched(read, paths, closed ? nullptr : mapped, st);
    if (s) {
        s->unclosed = closed.has_value();
        locate_defects(read, *s, {});
    } else {
        st = {};
        st.whole_document = true;
        s = read_resumed(text, source, trace_events(text.size() / 80), {});
    }
    if (mapped) release_region(*mapped, text.data(), text.data() + text.size());
    if (stats) *stats = st;
    return std::move(*s);
}

span_set read_chrome_trace(std::string_view text, const std::string& source, unsigned jobs, chrome_read_stats* stats,
                           const memory_region* mapped) {
    chrome_paths paths;
    paths.jobs = jobs;
    paths.mapped = mapped;
    return read_chrome_trace(text, source, paths, stats);
}

std::string stats_words(const chrome_read_stats& st) {
    if (st.whole_document) return "; events read by one whole-document parse";
    std::string out = fmt::format("; events: {} scanned, {} from DOM batches", st.scanned_events, st.dom_events);
    if (st.chunks > 1) out += fmt::format(" in {} chunks", st.chunks);
    if (st.streamed) out += ", from a stream";
    return out;
}

namespace {
// SOURCE:LINE of a defect's first event; SOURCE: event N when its line is unknown (a defect
// found after a streamed trace's text was let go, such as a 'B' no 'E' closed).
std::string defect_place(const std::string& source, const defect_count& d) {
    return d.first_line ? fmt::format("{}:{}", source, d.first_line) : fmt::format("{}: event {}", source, d.first_event);
}
}  // namespace

trace_report report_trace(const span_set& s, const std::string& source) {
    trace_report r;
    if (s.unclosed)
        r.notes.push_back("the event array has no closing ']' (a trace stopped abruptly, which the format allows): "
                          "read to its last whole event");
    if (s.async_unmatched) r.notes.push_back(fmt::format("ignored {} async begin(s) with no end", s.async_unmatched));
    for (std::size_t k = 0; k < event_defect_kinds; ++k) {
        const defect_count& d = s.defects[k];
        if (d.count)
            r.warnings.push_back(fmt::format("{}: {} {}, the first here (--strict refuses them)", defect_place(source, d),
                                             d.count, defect_description(static_cast<event_defect>(k))));
    }
    if (!s.display_time_unit.empty() && s.display_time_unit != "ms" && s.display_time_unit != "ns")
        r.warnings.push_back(fmt::format("displayTimeUnit {} is not one the format defines (ms, ns); it sets only how "
                                         "viewers show times: ts and dur are read as microseconds",
                                         s.display_time_unit));
    return r;
}

void refuse_defects(const span_set& s, const std::string& source) {
    const defect_count* first = nullptr;
    std::size_t kind = 0;
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        if (s.defects[k].count && (!first || s.defects[k].first_event < first->first_event)) {
            first = &s.defects[k];
            kind = k;
        }
    if (!first) return;
    const std::string what = fmt::format("event {}: {} {}, the first here; refused under --strict", first->first_event,
                                         first->count, defect_description(static_cast<event_defect>(kind)));
    if (first->first_line) throw input_error(source, first->first_line, what);
    throw error(exit_code::data_err, source + ": " + what);  // a stream's text is gone: the index names it
}

std::string defect_counts(const span_set& s) {
    std::string out;
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        if (s.defects[k].count)
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ", defect_name(static_cast<event_defect>(k)),
                               s.defects[k].count);
    return out;
}

}  // namespace prof
