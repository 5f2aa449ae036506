// Unit tests of the Chrome trace reader's parallel and stream paths (chrome.cpp,
// chrome_stream.cpp): chunks on several threads and the stream ring give what one thread gives.
#include "prof/spans/spans_test_support.hpp"

#include "prof/core/test_support.hpp"
#include "prof/spans/build.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

TEST_CASE("chrome: a trace cut into chunks read on several threads gives what one thread gives") {
    // A 'B' in one chunk closed by an 'E' in another, an async begin and its end apart, names
    // first met in a later chunk, defects first met in a later chunk (index and line), an 'E'
    // named differently across a cut, and "},{" inside a string and inside an args array, where
    // a cut must not be taken.
    std::string events = R"({"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
{"ph":"b","cat":"c","id":7,"name":"a","ts":1},
{"ph":"X","name":"s},{\"ph\":\"X\"},{x","ts":2,"dur":3},
{"ph":"X","name":"args","ts":4,"dur":1,"args":{"l":[{"k":1},{"k":2},{"k":3}]}},
{"ph":"X","name":"late","ts":5,"dur":1},
{"ph":"X","name":"nodur","ts":6},
{},
{"ph":"e","cat":"c","id":7,"name":"a","ts":9},
{"ph":"E","name":"other","ts":10,"pid":1,"tid":1},
{"ph":"X","name":"nodur","ts":11})";
    std::string text = chrome(events);
    std::string one = outcome(text, std::size_t{1} << 20, true, 1);
    for (unsigned jobs = 2; jobs <= 12; ++jobs)
        for (std::size_t batch : {std::size_t{1}, std::size_t{64}, std::size_t{1} << 20}) {
            CAPTURE(jobs);
            CAPTURE(batch);
            CHECK(outcome(text, batch, true, jobs) == one);
        }
    // An object with a phase inside an args array may be taken for an event and cut before: the
    // chunk before the cut then fails, and the trace is read in one piece, to the same result.
    std::string decoy = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1,"args":{"l":[{"k":1},{"ph":"X"},{"ph":"i"}]}},
{"ph":"X","name":"b","ts":1,"dur":1,"args":{"l":[{"ph":"X"},{"ph":"X"}]}},{"ph":"X","name":"c","ts":2,"dur":1})");
    for (unsigned jobs = 2; jobs <= 12; ++jobs) CHECK(outcome(decoy, std::size_t{1} << 20, true, jobs) == outcome(decoy, 0, true, 1));
    span_set s = read_chrome(text, std::size_t{1} << 20, true, 4);
    // By hand: outer [0, 10 µs] (B/E), s [2, 5], args [4, 5], late [5, 6]: 4 spans, in order of
    // first appearance outer, s..., args, late; no async left open; x-without-dur first at event
    // 6 on line 7 (the trace's first line holds "traceEvents"), empty event at 7 (line 8),
    // mismatched end at 9 (line 10).
    CHECK(s.spans.size() == 4);
    REQUIRE(s.names.size() == 4);
    CHECK(s.names[0] == "outer");
    CHECK(s.names[3] == "late");
    CHECK(s.async_unmatched == 0);
    CHECK(defect_at(s, event_defect::x_without_dur) == "2 at event 6, line 7");
    CHECK(s.defect(event_defect::empty_event).first_line == 8);
    CHECK(s.defect(event_defect::mismatched_end).first_event == 9);
    CHECK(s.defect(event_defect::mismatched_end).first_line == 10);
    // A plain trace is really read apart, in as many chunks as asked for; where a cut falls
    // inside an event (above), the chunk before it fails and the trace is read in one piece.
    std::string plain;
    for (int k = 0; k < 40; ++k) plain += fmt::format("{}{{\"ph\":\"X\",\"name\":\"n{}\",\"ts\":{},\"dur\":1}}", k ? ",\n" : "", k % 3, k);
    chrome_read_stats st = how_read(chrome(plain), 4);
    CHECK(st.chunks == 4);
    CHECK(st.scanned_events == 40);
    CHECK(dump(read_chrome(chrome(plain), std::size_t{1} << 20, true, 4)) == dump(read_chrome(chrome(plain))));
    // Events whose args hold arrays of objects (a stack trace): cuts go between events, never
    // among those objects, so the trace is still read in as many chunks as asked for.
    std::string stacks;
    for (int k = 0; k < 40; ++k)
        stacks += fmt::format("{}{{\"ph\":\"X\",\"name\":\"f\",\"ts\":{},\"dur\":1,\"args\":{{\"stack\":[{{\"fn\":\"a\"}}, {{\"fn\":\"b\"}},{{\"fn\":\"c\"}}]}}}}",
                              k ? ",\n" : "", k);
    st = how_read(chrome(stacks), 4);
    CHECK(st.chunks == 4);
    CHECK(dump(read_chrome(chrome(stacks), std::size_t{1} << 20, true, 4)) == dump(read_chrome(chrome(stacks))));
}

TEST_CASE("chrome: a trace is cut into more chunks than threads, taken as threads are free, to the same result") {
    // 60 events over 3 threads' B/E pairs and X spans of 5 names, an unmatched 'E', an X without
    // dur every 7th event and an empty event every 11th, so that names, threads and defects are
    // first met in later chunks. With chunks of about `chunk_bytes`, 2 and 3 threads read every
    // cut the text allows (chunk_bytes 1: one event a chunk) or a few events a chunk, and the
    // chunks, joined in file order whichever thread read them, give what one piece gives.
    std::string events;
    for (int k = 0; k < 60; ++k) {
        std::string e = k % 11 == 10 ? "{}"
                        : k % 7 == 6 ? fmt::format(R"({{"ph":"X","name":"n{}","ts":{}}})", k % 5, k)
                        : k % 4 == 0 ? fmt::format(R"({{"ph":"B","name":"b{}","ts":{},"pid":1,"tid":{}}})", k % 3, k, k % 3)
                        : k % 4 == 2 ? fmt::format(R"({{"ph":"E","ts":{},"pid":1,"tid":{}}})", k + 1, (k + 2) % 3)
                                     : fmt::format(R"({{"ph":"X","name":"n{}","ts":{},"dur":2}})", k % 5, k);
        events += (k ? ",\n" : "") + e;
    }
    const std::string text = chrome(events);
    const std::string one = dump(read_chrome(text));
    for (unsigned jobs : {2u, 3u})
        for (std::size_t chunk_bytes : {std::size_t{1}, std::size_t{200}}) {
            CAPTURE(jobs);
            CAPTURE(chunk_bytes);
            simdjson::padded_string p(text);
            chrome_paths paths;
            paths.jobs = jobs;
            paths.chunk_bytes = chunk_bytes;
            paths.min_chunk_bytes = 1;
            chrome_read_stats st;
            span_set s = read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, &st);
            CHECK(dump(s) == one);
            // By hand: the interior is about 2400 bytes, so chunks of 200 bytes make about 12
            // (more than the threads); chunks of 1 byte one per event, except that no chunk
            // starts at an event without a phase (the 5 empty ones): 60 - 5 = 55.
            CHECK(st.chunks > jobs);
            if (chunk_bytes == 1) CHECK(st.chunks == 55);
        }
    // One thread reads the trace in one piece, whatever the chunk size.
    simdjson::padded_string p(text);
    chrome_paths paths;
    paths.chunk_bytes = 1;
    paths.min_chunk_bytes = 1;
    chrome_read_stats st;
    read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, &st);
    CHECK(st.chunks == 1);
}

TEST_CASE("chrome: a stream cut short or followed by garbage past its first chunk fails as the file does") {
    // simdjson gives these errors no position; the file names line 1, and so must a stream whose
    // later chunk is read again whole behind a rebuilt header (it had named that chunk's line).
    std::string events;
    for (int k = 0; k < 200; ++k)
        events += fmt::format("{}{{\"ph\":\"X\",\"name\":\"x\",\"ts\":{},\"dur\":1,\"pid\":1,\"tid\":2}}", k ? ",\n" : "", k * 10);
    const std::string whole = "{\"traceEvents\":[\n" + events + "\n]}";
    for (const std::string& text : {whole + " x", whole + "]", whole + " 1", whole.substr(0, whole.size() - 2),
                                    whole.substr(0, whole.size() / 2 + 3)}) {
        std::string file = outcome(text, 0, false);
        INFO(text.substr(text.size() - 20));
        CHECK(file.rfind("error: ", 0) == 0);
        CHECK(stream_outcome(text, 64, 256, 2) == file);
        CHECK(stream_outcome(text, 64, 1024, 1) == file);
    }
}

TEST_CASE("chrome: invalid JSON in a value nobody reads, or after the trace, is an error from a file and a pipe") {
    // simdjson's on-demand parser skips values it does not read without checking them; the
    // whole-document path checks the grammar after it. Expected: exit 65 at the line of the bad
    // byte (3: the event holding it, or what follows the trace on that line).
    const std::string event = "{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":{\"s\":}}\n]}", "trace.json:3: malformed JSON (unexpected '}')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":{1:2}}\n]}", "trace.json:3: malformed JSON (unexpected '1')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":[1,,2]}\n]}", "trace.json:3: malformed JSON (unexpected ',')"},
        {"{\"traceEvents\":[\n" + event + "},\n" + event + ",\"args\":tru}\n]}", "trace.json:3: malformed JSON (unexpected 't')"},
        {"{\"traceEvents\":[\n" + event + "}\n]}{}", "trace.json:3: unexpected content after the trace"},
        {"[\n" + event + "}\n]]", "trace.json:3: unexpected content after the trace"},
    };
    for (const auto& [text, want] : cases) {
        INFO(text);
        std::string file = outcome(text, 0, false);
        CHECK(file == "error: " + want);
        CHECK(outcome(text, std::size_t{1} << 20, true, 2) == file);
        CHECK(stream_outcome(text, 16, 64, 2) == file);
        CHECK(stream_outcome(text, 4096, std::size_t{1} << 20, 1) == file);
    }
}

TEST_CASE("chrome: a stream read through the ring is joined in order, and a chunk it cannot read is read again whole") {
    // 200 events of one name over 2 threads' B/E pairs, an X without dur every 50th: through a
    // pipe in chunks of about 64 bytes (one or two events), every chunk is read by the scanner
    // and joined in file order: the result of the whole text, and the stats say so.
    std::string events;
    for (int k = 0; k < 200; ++k)
        events += (k ? ",\n" : "") + (k % 50 == 49   ? fmt::format(R"({{"ph":"X","name":"nodur","ts":{}}})", k)
                                      : k % 10 == 0 ? fmt::format(R"({{"ph":"B","name":"b","ts":{},"pid":1,"tid":{}}})", k, k % 20)
                                      : k % 10 == 5 ? fmt::format(R"({{"ph":"E","ts":{},"pid":1,"tid":{}}})", k, (k - 5) % 20)
                                                    : fmt::format(R"({{"ph":"X","name":"x","ts":{},"dur":1}})", k));
    const std::string text = chrome(events);
    const std::string one = dump(read_chrome(text));
    chrome_read_stats st;
    CHECK(stream_outcome(text, 32, 64, 2, &st) == one);
    CHECK_FALSE(st.whole_document);
    CHECK(st.streamed);
    CHECK(st.chunks > 50);
    CHECK(st.scanned_events == 200);
    // By hand: the first X without dur is event 50, on line 51 (line 1 holds "traceEvents").
    span_set s = read_chrome(text);
    CHECK(s.defect(event_defect::x_without_dur).first_line == 51);
    // An event the scanner declines (an escape in a name) is read by a DOM batch, which knows
    // no line: its chunk, with every chunk after it, goes to the whole-document parse, resumed
    // after the chunks before it, to the same spans, defects and lines.
    std::string declined = text;
    declined.replace(declined.find("\"nodur\""), 7, "\"no\\u0064ur\"");
    CHECK(stream_outcome(declined, 32, 64, 2, &st) == dump(read_chrome(declined)));
    CHECK(st.whole_document);
}

TEST_CASE("chrome: an error in a later chunk names the line and event one thread names") {
    std::string text = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1},
{"ph":"X","name":"b","ts":1,"dur":1},
{"ph":"X","name":"c","ts":2,"dur":-1},
{"ph":"X","name":"d","ts":3,"dur":1})");
    for (unsigned jobs : {1u, 2u, 3u, 4u}) {
        CHECK_THROWS_WITH_AS(read_chrome(text, std::size_t{1} << 20, true, jobs),
                             "trace.json:4: event 3: 'X' event 'c' has a negative dur (-1)", input_error);
        // Through a pipe, the bad event in a chunk of its own after two read by the ring.
        CHECK(stream_outcome(text, 1, 1, jobs) == "error: trace.json:4: event 3: 'X' event 'c' has a negative dur (-1)");
    }
}

TEST_CASE("chrome: every trace in testdata reads the same in chunks on several threads, errors included") {
    const char* root = std::getenv("PROF_ROOT");
    std::string dir = std::string(root ? root : ".") + "/testdata/";
    std::size_t read = 0;
    for (const char* name : {"inputs/node_trace.json", "prof-spans/inputs/clangd_trace.json", "prof-spans/inputs/cut-in-event.json",
                             "prof-spans/inputs/mismatched-end.json", "prof-spans/inputs/no-spans.json", "prof-spans/inputs/ns.json",
                             "prof-spans/inputs/quoted-bad.json", "prof-spans/inputs/quoted.json", "prof-spans/inputs/raw-newline.json",
                             "prof-spans/inputs/tolerated.json", "prof-spans/inputs/trailing-comma.json",
                             "prof-spans/inputs/unclosed-comma.json", "prof-spans/inputs/unclosed.json", "prof-spans/inputs/unit-ns.json",
                             "prof-spans/inputs/unit-us.json"}) {
        CAPTURE(name);
        std::string text = read_file(dir + name);
        std::string one = outcome(text, std::size_t{1} << 20, true, 1);
        for (unsigned jobs : {2u, 3u, 4u, 9u}) CHECK(outcome(text, std::size_t{1} << 20, true, jobs) == one);
        CHECK(outcome(text, 64, false, 3) == one);
        for (unsigned jobs : {1u, 2u, 3u})
            for (std::size_t chunk : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) CHECK(stream_outcome(text, 8, chunk, jobs) == one);
        ++read;
    }
    CHECK(read == 15);
}

namespace {
// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"); 0 when it cannot be read.
std::size_t status_kib(const std::string& field) {
    std::string status = read_file("/proc/self/status");
    std::size_t at = status.find("\n" + field + ":");
    return at == std::string::npos ? 0 : std::strtoull(status.c_str() + at + field.size() + 2, nullptr, 10);
}
// Writes `text` to `path` (created or truncated); false when it cannot.
bool put(const std::string& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    return ::close(fd) == 0 && ok;
}
}  // namespace

// Under AddressSanitizer the freed chunk buffers stay resident in its quarantine (256 MiB by
// default), so the released read's peak grows by more than the chunks in flight; half the file
// still tells releasing from keeping (the control grows by three quarters of it).
constexpr std::size_t released_bound_divisor = test::sanitized_build ? 2 : 3;

TEST_CASE("chrome: a trace mapped from a file has its pages released behind the readers, to the same result") {
    // About 48 MiB of events with long args, so that the spans (about 120,000) are a small part
    // of the memory, and an X without dur at the very end, whose line is counted to the end of
    // the file. Read in place without releasing (the control), the peak resident set grows by the
    // whole file; releasing, by the chunks in flight and the spans (under a third of the file; half
    // under AddressSanitizer, above).
    test::temp_dir tmp("mapped-trace");
    const std::string path = tmp.path + "/trace.json";
    std::size_t events = 0;
    {
        std::string text = "{\"traceEvents\":[\n";
        const std::string pad(380, 'p');
        for (; text.size() < (std::size_t{48} << 20); ++events)
            text += fmt::format(R"({{"ph":"X","name":"n{}","ts":{},"dur":3,"pid":1,"tid":{},"args":{{"s":"{}"}}}},)"
                                "\n",
                                events % 7, events, events % 4, pad);
        text += "{\"ph\":\"X\",\"name\":\"last\",\"ts\":1}\n]}";
        ++events;
        REQUIRE(put(path, text));
    }
    const auto file_kib = static_cast<std::size_t>(std::filesystem::file_size(path) >> 10);
    for (unsigned jobs : {1u, 2u}) {
        CAPTURE(jobs);
        // The growth of the peak resident set over one read, and what the read gave.
        auto read_once = [&](bool release, std::string& got) {
            padded_input in(path);
            REQUIRE(in.mapped() != nullptr);
            chrome_paths paths;
            paths.jobs = jobs;
            paths.mapped = release ? in.mapped() : nullptr;
            const std::size_t before = status_kib("VmRSS");
            REQUIRE(put("/proc/self/clear_refs", "5"));  // VmHWM from the RSS now
            chrome_read_stats st;
            got = dump(read_chrome_trace(in.text(), "trace.json", paths, &st));
            CHECK(st.scanned_events == events);
            if (release) CHECK(st.chunks >= 12);
            const std::size_t peak = status_kib("VmHWM");
            return peak > before ? peak - before : 0;
        };
        std::string kept, released;
        const std::size_t grew_kept = read_once(false, kept);
        const std::size_t grew_released = read_once(true, released);
        CHECK(released == kept);
        CHECK(released.find(fmt::format("x-without-dur 1 {} {}", events, events + 1)) != std::string::npos);
        CHECK(grew_kept > file_kib * 3 / 4);
        CHECK(grew_released < file_kib / released_bound_divisor);
    }
}

TEST_CASE("chrome: a trace file that shrinks inside its last page while read is an I/O error, not a malformed trace") {
    // Bytes past the new end but inside the last page read as zeros, with no SIGBUS: the trace
    // then ends in a NUL where its '}' was, which the reader would call malformed JSON (65).
    // The file is truncated once it is mapped, as the run's options are taken.
    test::temp_dir tmp("mapped-trace");
    const std::string path = tmp.path + "/trace.json";
    std::string events;
    for (int k = 0; k < 200; ++k) events += fmt::format("{}{{\"ph\":\"X\",\"name\":\"n\",\"ts\":{},\"dur\":1}}", k ? ",\n" : "", k);
    const std::string text = chrome(events) + "\n";
    REQUIRE(text.size() % 4096 > 2);  // the last two bytes share the last page with others
    REQUIRE(put(path, text));
    auto options = [&] {
        REQUIRE(::truncate(path.c_str(), static_cast<off_t>(text.size() - 2)) == 0);
        run_input in;
        in.opts = opts(1);
        return in;
    };
    CHECK_THROWS_WITH_AS(build_run_profile(path, "auto", false, options), (path + ": the file shrank while it was read").c_str(),
                         io_error);
    // The same bytes, unchanged while read, are a malformed trace.
    REQUIRE(put(path, text.substr(0, text.size() - 2)));
    auto as_is = [&] {
        run_input in;
        in.opts = opts(1);
        return in;
    };
    CHECK_THROWS_AS(build_run_profile(path, "auto", false, as_is), input_error);
}
