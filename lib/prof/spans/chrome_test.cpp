// Unit tests of the Chrome trace reader (chrome.hpp): events, pairs, numbers and defects, read
// the same by the scanner, the DOM batches and the whole-document parse.
#include "prof/spans/spans_test_support.hpp"

#include <doctest/doctest.h>

namespace {
// The spans summarised with every name a node of the call tree (no fixed cost).
span_summary summary_of(const span_set& s) {
    return summarize_spans(s, std::vector<bool>(s.names.size(), false));
}
}  // namespace

TEST_CASE("chrome: X events and B/E pairs matched per thread with nesting, in any order") {
    // Thread 1: B outer 100, B inner 110, E 120 (inner), E 200 (outer), listed out of order.
    // Thread 2: X scan 150+100. Instants, metadata and counters do not count.
    auto s = read_chrome(chrome(R"({"ph":"E","pid":1,"tid":1,"ts":200},
{"ph":"B","pid":1,"tid":1,"ts":110,"name":"inner"},
{"ph":"M","pid":1,"tid":1,"ts":0,"name":"thread_name","args":{"name":"x"}},
{"ph":"M","pid":1,"tid":1,"ts":0,"name":"thread_name","args":{"name":"x"}},
{"ph":"B","pid":1,"tid":1,"ts":100,"name":"outer"},
{"ph":"I","pid":1,"tid":1,"ts":5,"name":"early"},
{"ph":"C","pid":1,"tid":1,"ts":900,"name":"ctr","args":{"v":1}},
{"ph":"E","pid":1,"tid":1,"ts":120},
{"ph":"X","pid":1,"tid":2,"ts":150,"dur":100,"name":"scan"})"));
    CHECK(s.spans.size() == 3);
    CHECK(s.events == 9);
    query_options o = opts(1);
    o.fixed_nodes = {"inner"};
    auto p = build_from_spans(s, o, {}, "chrome");
    // elapsed = 250 − 100 = 150 µs (the instant at 5 and the counter at 900 do not count).
    CHECK(p.fixed_seconds == 1e-05);
    CHECK(p.per_row_seconds == doctest::Approx(140e-6).epsilon(1e-15));
    REQUIRE(p.nodes.size() == 3);
    CHECK(p.nodes[0].node == "inner");
    CHECK(p.nodes[1].node == "outer");
    CHECK(p.nodes[1].seconds == 0.0001);
}

TEST_CASE("chrome: async begins without an end are ignored and counted; fractional microseconds are kept to the ns") {
    auto s = read_chrome(R"([{"ph":"b","cat":"c","id":"0x1","name":"a","ts":1,"pid":1,"tid":1},
{"ph":"e","cat":"c","id":"0x1","name":"a","ts":2,"pid":1,"tid":1},
{"ph":"b","cat":"c","id":"0x2","name":"a","ts":3,"pid":1,"tid":1},
{"ph":"X","name":"w","ts":10.4,"dur":5.6,"pid":1,"tid":1}])");
    CHECK(s.async_unmatched == 1);
    REQUIRE(s.spans.size() == 1);
    // 10.4 µs = 10400 ns; + 5.6 µs = 16000 ns.
    CHECK(s.spans[0].start_ns == 10400);
    CHECK(s.spans[0].end_ns == 16000);
}

TEST_CASE("chrome: fractional microseconds are exact nanoseconds on every path, never a double") {
    // 1.5 + 2.5 µs: 1500..4000 ns. 10.4 + 0.4: 10400..10800. 20 + 0.5: 20000..20500.
    // 1700000000000000 + 3.5 µs: a double cannot hold 1700000000000003.5, the ns integer can.
    // 198093488368.463 + 425.453 (a PyTorch kernel's digits): 198093488368463..198093488793916.
    std::string text = chrome(R"({"ph":"X","name":"a","ts":1.5,"dur":2.5,"pid":1,"tid":1},
{"ph":"X","name":"b","ts":10.4,"dur":0.4,"pid":1,"tid":1},
{"ph":"X","name":"c","ts":20,"dur":0.5,"pid":1,"tid":1},
{"ph":"X","name":"d","ts":1700000000000000,"dur":3.5,"pid":1,"tid":1},
{"ph":"X","name":"e","ts":198093488368.463,"dur":425.453,"pid":1,"tid":1})");
    std::string escaped = text;  // an escape in a name sends that event through simdjson
    escaped.replace(escaped.find("\"name\":\"a\""), 10, "\"name\":\"\\u0061\"");
    for (const std::string& t : {text, escaped})
        for (std::size_t batch : {std::size_t{0}, std::size_t{64}, std::size_t{1} << 20}) {
            span_set s = read_chrome(t, batch);
            REQUIRE(s.spans.size() == 5);
            CHECK(s.spans[0].start_ns == 1500);
            CHECK(s.spans[0].end_ns == 4000);
            CHECK(s.spans[1].start_ns == 10400);
            CHECK(s.spans[1].end_ns == 10800);
            CHECK(s.spans[2].end_ns == 20500);
            CHECK(s.spans[3].end_ns == 1700000000000003500);
            CHECK(s.spans[4].start_ns == 198093488368463);
            CHECK(s.spans[4].end_ns == 198093488793916);
        }
    // A key given twice: the later value wins, fraction or not.
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set twice = read_chrome(chrome(R"({"ph":"X","name":"t","ts":1.5,"dur":2.5,"ts":7,"dur":1})"), batch);
        REQUIRE(twice.spans.size() == 1);
        CHECK(twice.spans[0].start_ns == 7000);
        CHECK(twice.spans[0].end_ns == 8000);
    }
    CHECK_THROWS_WITH_AS(read_chrome(chrome(R"({"ph":"X","name":"n","ts":5,"dur":-0.25})")),
                         doctest::Contains("negative dur (-0.25)"), input_error);
}

TEST_CASE("chrome: a microsecond token reads as nanoseconds from its digits, rounded half away from zero") {
    auto ns = [](std::string_view t) {
        std::int64_t v = -42;
        return micros_token_to_ns(t, v) ? v : std::int64_t{-42};
    };
    CHECK(ns("5.1") == 5100);
    CHECK(ns("500.1") == 500100);
    CHECK(ns("0") == 0);
    CHECK(ns("-0") == 0);
    CHECK(ns("1.5e2") == 150000);        // 150 µs
    CHECK(ns("1e-3") == 1);              // 0.001 µs
    CHECK(ns("0.0005") == 1);            // 0.5 ns: half away from zero
    CHECK(ns("-0.0005") == -1);
    CHECK(ns("0.00049999999999999999999") == 0);  // just below half: a double would say 0.0005
    CHECK(ns("0.50000000000000000000000001") == 500);
    CHECK(ns("12.5E+1") == 125000);
    CHECK(ns("0e999999999999") == 0);
    CHECK(ns("1e-999999999999") == 0);
    CHECK(ns("8999999999999999.999") == 8999999999999999999);
    CHECK(ns("9e15") == -42);              // the bound itself is refused
    CHECK(ns("8999999999999999.9996") == -42);  // rounds up onto the bound
    CHECK(ns("-9000000000000000") == -42);
    CHECK(ns("1e999") == -42);
}

TEST_CASE("chrome: with no fixed node named, fixed is 0 and a warning says all cost scales") {
    auto s = read_chrome(R"([{"ph":"X","name":"w","ts":0,"dur":50,"pid":1,"tid":1}])");
    auto p = build_from_spans(s, opts(5), {}, "chrome");
    CHECK(p.fixed_seconds == 0);
    REQUIRE(p.warnings.size() == 2);
    CHECK(p.warnings[0] == "no fixed node named (--fixed NAME): all cost is treated as scaling with rows");
}

TEST_CASE("chrome: a negative dur names the line and the event") {
    try {
        read_chrome(chrome("{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":-3}"));
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()) == "trace.json:3: event 2: 'X' event 'b' has a negative dur (-3)");
    }
    CHECK_THROWS_AS(read_chrome("[{\"ph\":\"X\",\"ts\":0,"), input_error);
    CHECK_THROWS_AS(read_chrome("{\"other\":[]}"), input_error);
}

TEST_CASE("chrome: the real Node.js trace gives 95 spans over 315962 µs and 42 unended async begins") {
    // Checked independently in Python: 63 X events + 32 matched B/E pairs; min ts 629071427,
    // max end 629387389.
    std::string text = read_file(input_path("node_trace.json"));
    CHECK(detect_span_format(text, "t") == span_format::chrome);
    auto s = read_chrome(text);
    CHECK(s.events == 429);
    CHECK(s.spans.size() == 95);
    CHECK(s.async_unmatched == 42);
    CHECK(s.defect(event_defect::unclosed_begin).count == 0);
    CHECK(s.defect(event_defect::unmatched_end).count == 0);
    auto sum = summary_of(s);
    CHECK(sum.elapsed_ns == 315962000u);
}

TEST_CASE("chrome: reading in small batches gives exactly what one whole-document parse gives") {
    // Cuts fall on "},{" inside strings and inside nested arrays of objects: those batches do not
    // parse and are extended; ids and tids as numbers and strings.
    std::string tricky = chrome(R"({"ph":"X","name":"a},{b","ts":1,"dur":2,"pid":1,"tid":1},
{"ph":"X","name":"c","ts":3,"dur":4,"pid":1,"tid":1,"args":{"list":[{"x":1},{"y":2},{"z":3}]}},
{"ph":"B","name":"d","ts":5,"pid":"p","tid":"t"},
{"ph":"b","cat":"c","id":"0x1","name":"a","ts":6,"pid":1,"tid":1},
{"ph":"E","ts":9,"pid":"p","tid":"t"},
{"ph":"X","name":"e\\u0041","ts":10.6,"dur":1,"pid":2,"tid":2})");
    for (std::size_t batch : {1, 8, 40, 100}) CHECK(dump(read_chrome(tricky, batch)) == dump(read_chrome(tricky, 0)));
    std::string node = read_file(input_path("node_trace.json"));
    for (std::size_t batch : {1, 500, 4096, 65536}) CHECK(dump(read_chrome(node, batch)) == dump(read_chrome(node, 0)));
    // A bad event found by a batch is still reported by the whole-document path, with its line.
    try {
        read_chrome(chrome("{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":-3}"), 1);
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()) == "trace.json:3: event 2: 'X' event 'b' has a negative dur (-3)");
    }
}

TEST_CASE("chrome: the scanner, the DOM batches and the whole-document parse agree on random traces") {
    std::mt19937_64 rng(20261129);
    std::size_t errors = 0, scanned_all = 0, mixed = 0, whole = 0, with_defects = 0, unclosed = 0, fractions = 0;
    for (int trace = 0; trace < 600; ++trace) {
        bool bad = trace % 4 == 3, plain = trace % 3 == 0, fractional = trace % 5 < 2, defects = trace % 7 < 4;
        std::string events;
        int n = std::uniform_int_distribution<int>(1, 60)(rng);
        for (int k = 0; k < n; ++k) events += (k ? ",\n" : "") + random_event(rng, bad, plain, fractional, defects);
        std::string text = trace % 2 ? chrome(events) : "[" + events + "]";
        if (trace % 17 == 5) text = "\xEF\xBB\xBF" + text;                                  // a byte order mark
        if (trace % 23 == 7) text = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[" + events + "]}";  // other members
        if (trace % 29 == 11)  // members after the events, one holding a ']' (the fast path declines it)
            text = "{\"schemaVersion\":1,\"devices\":[{\"id\":0}],\"traceEvents\":[" + events +
                   "],\"displayTimeUnit\":\"ns\"" + (trace % 2 ? ",\"meta\":{\"l\":[1,2]}}" : "}");
        if (trace % 2 == 0 && trace % 11 == 4) text = "[" + events + (trace % 3 ? ",\n" : "\n");  // cut short
        std::string all = outcome(text, 0, false);
        INFO("trace ", trace, ":\n", text);
        CHECK(outcome(text, std::size_t{1} << 20, true) == all);
        CHECK(outcome(text, 64, true) == all);
        CHECK(outcome(text, 64, false) == all);
        CHECK(outcome(text, 1, false) == all);
        CHECK(outcome(text, std::size_t{1} << 20, true, 2) == all);
        CHECK(outcome(text, 64, true, 3) == all);
        CHECK(outcome(text, 64, false, 7) == all);
        // Through a pipe: a head of one byte (a bare array's header read from the stream, an
        // object's read whole), chunks of one event or a few, on 1 to 3 threads.
        CHECK(stream_outcome(text, 1, 1, 2) == all);
        CHECK(stream_outcome(text, 40, 1, 2) == all);
        CHECK(stream_outcome(text, 16, 64, 3) == all);
        CHECK(stream_outcome(text, 4096, std::size_t{1} << 20, 1) == all);
        if (all.rfind("error: ", 0) == 0) {
            ++errors;
            continue;
        }
        span_set s = read_chrome(text);
        chrome_read_stats st = how_read(text);
        with_defects += defect_counts(s).empty() ? 0 : 1;
        unclosed += s.unclosed;
        fractions += fractional;
        if (text.find("displayTimeUnit") != std::string::npos) {
            CHECK(s.display_time_unit == "ns");
            if (text.find("\"meta\"") != std::string::npos) CHECK(st.whole_document);
            continue;
        }
        // A lone surrogate escape in a skipped value: simdjson's DOM refuses it, its on-demand
        // parser (which skips the value) does not, so that trace is read whole; so is one where
        // the DOM met a span's time with a fraction.
        if (text.find("lone \\ud800") != std::string::npos) CHECK(st.whole_document);
        if (!fractional && !bad && text.find("lone \\ud800") == std::string::npos) CHECK_FALSE(st.whole_document);
        if (st.whole_document) {
            ++whole;
        } else {
            CHECK(st.scanned_events + st.dom_events == s.events);
            (st.dom_events == 0 ? scanned_all : mixed) += 1;
        }
    }
    // The generator reaches every case: bad traces, traces read by the scanner alone, traces where
    // declined events went through DOM batches, traces read whole, tolerated defects, traces cut
    // short, fractional times.
    INFO("errors ", errors, ", scanned alone ", scanned_all, ", mixed ", mixed, ", whole ", whole, ", with defects ",
         with_defects, ", unclosed ", unclosed, ", fractional ", fractions);
    CHECK(errors > 20);
    CHECK(scanned_all > 20);
    CHECK(mixed > 100);
    CHECK(whole > 20);
    CHECK(with_defects > 100);
    CHECK(unclosed > 10);
    CHECK(fractions > 100);
}

TEST_CASE("chrome: bad bytes are line-numbered errors, not crashes; a BOM is skipped; NULs are not whitespace") {
    // Stage 1 of the whole-document parse fails on these: there was no position to ask for
    // (the call crashed), so the bad byte is looked for.
    auto error_of = [](const std::string& text) {
        try {
            read_chrome(text);
        } catch (const input_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of("[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"a\tb\"}]").rfind("trace.json:1: malformed JSON", 0) == 0);
    CHECK(error_of("[\n{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"a\"},\n{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"\xff\"}]")
              .rfind("trace.json:3: malformed JSON (The input is not valid UTF-8)", 0) == 0);
    CHECK(error_of("{\"x\":\"\x01\",\"traceEvents\":[]}").rfind("trace.json:1: malformed JSON", 0) == 0);
    CHECK(error_of("[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]" + std::string(2, '\0')).rfind("trace.json:1: malformed JSON", 0) == 0);
    // A byte order mark before either shape, and before a shape only the whole-document parse reads.
    for (std::string t : {"[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]",
                          "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[{\"ph\":\"X\",\"ts\":0,\"dur\":5,\"name\":\"b\"}]}"}) {
        span_set s = read_chrome("\xEF\xBB\xBF" + t);
        REQUIRE(s.spans.size() == 1);
        CHECK(s.spans[0].end_ns == 5000);
    }
}

TEST_CASE("chrome: an escaped key is its unescaped name on every path; 0.7000…0 is 0.7 on every path") {
    std::string esc = chrome(R"({"ph":"X","ts":0,"dur":1000,"name":"scan"},
{"ph":"X","ts":1000,"dur":1000,"d\u0075r":500000,"name":"agg"})");
    std::string tricky_number = chrome(R"({"ph":"X","ts":0,"dur":0.50000000000000000000000001,"name":"a"})");
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set s = read_chrome(esc, batch);
        REQUIRE(s.spans.size() == 2);
        CHECK(s.spans[1].end_ns == 501000000);  // the later "dur" (escaped) wins
        // simdjson 3.0's on-demand get_double read this as 0.0000...; it is 500 ns.
        span_set n = read_chrome(tricky_number, batch);
        REQUIRE(n.spans.size() == 1);
        CHECK(n.spans[0].end_ns == 500);
    }
}

TEST_CASE("chrome: time stamps at or beyond 9e15 µs are refused on every path, integers as fractions") {
    for (const char* ev : {R"({"ph":"X","ts":9223372036854775000,"dur":10000,"name":"q"})",
                           R"({"ph":"B","ts":-9223372036854775808,"pid":1,"tid":1,"name":"q"})",
                           R"({"ph":"X","ts":9000000000000000,"dur":1,"name":"q"})", R"({"ph":"X","ts":9e15,"dur":1,"name":"q"})"}) {
        for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
            CAPTURE(ev);
            CHECK_THROWS_WITH_AS(read_chrome(chrome(ev), batch),
                                 doctest::Contains("expected a number of microseconds below 9e15"), input_error);
        }
    }
    CHECK(read_chrome(chrome(R"({"ph":"X","ts":8999999999999999,"dur":0,"name":"q"})")).spans.size() == 1);
}

TEST_CASE("chrome: a plain trace is read by the scanner alone; the real Node trace too") {
    std::string plain = chrome(R"({"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":[{"x":"y\"z"}]}},
{"ph":"B","name":"d","ts":5,"pid":"p","tid":"t"},{"ph":"E","ts":9,"pid":"p","tid":"t"})");
    chrome_read_stats st = how_read(plain);
    CHECK(st.scanned_events == 3);
    CHECK(st.dom_events == 0);
    std::string node_text = read_file(input_path("node_trace.json"));
    span_set node = read_chrome(node_text);
    CHECK(how_read(node_text).scanned_events == node.events);
    CHECK(node.events == 429);
    // A thread is one thread however its pid is spelled: 1, 1.0, "p1" and "p\u0031" pair up.
    std::string spelled = chrome(R"({"ph":"B","name":"x","ts":0,"pid":1,"tid":"p1"},
{"ph":"E","ts":5,"pid":1.0,"tid":"p\u0031"})");
    for (std::size_t batch : {std::size_t{0}, std::size_t{1} << 20}) {
        span_set t = read_chrome(spelled, batch);
        CHECK(t.spans.size() == 1);
        CHECK(t.defect(event_defect::unclosed_begin).count == 0);
    }
}

TEST_CASE("chrome: the scanner predicts each key from the last event and relearns it where events differ") {
    // Events of different shapes in turn (X with dur, B/E without, members reordered), compact
    // and spaced, a key longer than the 32 bytes a prediction covers, an unknown key, "id2":
    // the scanner reads every one (no DOM batch), to what the whole-document parse reads. An
    // escaped key ("p\u0068" is "ph") is declined by the scanner and read by a DOM batch.
    std::string ev;
    for (int k = 0; k < 200; ++k) {
        if (!ev.empty()) ev += ",\n";
        switch (k % 5) {
        case 0: ev += fmt::format(R"({{"ph":"X","name":"a","ts":{},"dur":3,"pid":1,"tid":1}})", k); break;
        case 1: ev += fmt::format(R"({{"ph":"B","pid":1,"tid":2,"ts":{},"name":"b"}})", k); break;
        case 2: ev += fmt::format(R"({{ "ph": "E", "pid": 1, "tid": 2, "ts": {} }})", k + 2); break;
        case 3: ev += fmt::format(R"({{"name":"c","dur":1,"ts":{},"ph":"X","a_key_longer_than_thirty_two_bytes":0}})", k); break;
        case 4: ev += fmt::format(R"({{"ph":"b","cat":"q","id2":{},"name":"d","ts":{}}}, {{"ph":"e","cat":"q","id2":{},"name":"d","ts":{}}})", k, k, k, k + 1); break;
        }
    }
    std::string text = chrome(ev);
    chrome_read_stats st = how_read(text);
    CHECK(st.dom_events == 0);
    CHECK(st.scanned_events == 240);  // 200 events, 40 of them pairs
    span_set s = read_chrome(text);
    CHECK(dump(s) == dump(read_chrome(text, 0)));
    // By hand: 40 X "a" + 40 X "c" + 40 B/E "b" = 120 spans; no async begin left open.
    CHECK(s.spans.size() == 120);
    CHECK(s.async_unmatched == 0);
    std::string escaped = chrome(R"({"ph":"X","name":"a","ts":0,"dur":1},
{"p\u0068":"X","name":"a","ts":1,"dur":1},
{"ph":"X","name":"a","ts":2,"dur":1})");
    st = how_read(escaped);
    CHECK(st.scanned_events + st.dom_events == 3);
    CHECK(st.dom_events >= 1);
    CHECK(dump(read_chrome(escaped)) == dump(read_chrome(escaped, 0)));
    CHECK(read_chrome(escaped).spans.size() == 3);
}

TEST_CASE("chrome: thousands of B/E pairs on interleaved threads are matched per thread in time order") {
    // 3 threads x 3000 pairs; each pair begins at 10k and ends at 10k+7 on its thread; events
    // are written thread-interleaved with every end before its begin in the file, and ties
    // (an end and the next begin at one time stamp) only within a thread's own order.
    std::string ev;
    for (int k = 0; k < 3000; ++k)
        for (int t = 0; t < 3; ++t) {
            if (!ev.empty()) ev += ",\n";
            ev += fmt::format(R"({{"ph":"E","pid":1,"tid":{},"ts":{}}},)", t, 10 * k + 7);
            ev += fmt::format(R"({{"ph":"B","pid":1,"tid":{},"ts":{},"name":"n{}"}})", t, 10 * k, t);
        }
    auto s = read_chrome(chrome(ev));
    REQUIRE(s.spans.size() == 9000);
    CHECK(s.defect(event_defect::unclosed_begin).count == 0);
    CHECK(s.defect(event_defect::unmatched_end).count == 0);
    CHECK(std::all_of(s.spans.begin(), s.spans.end(), [](const span& sp) { return sp.end_ns - sp.start_ns == 7000; }));
    CHECK(dump(read_chrome(chrome(ev), 0)) == dump(s));
    // In chunks on several threads (each thread's events sorted and matched apart): the same.
    for (unsigned jobs : {2u, 3u, 7u}) CHECK(dump(read_chrome(chrome(ev), std::size_t{1} << 20, true, jobs)) == dump(s));
}

namespace {

// One trace read by every path (whole document; DOM batches of 1 and 64 bytes; the scanner with
// 64-byte and 1 MiB batches), which must agree; the whole-document result.
span_set read_every_way(const std::string& text) {
    std::string all = outcome(text, 0, false);
    for (auto [batch, scan] : {std::pair<std::size_t, bool>{1, false}, {64, false}, {64, true}, {std::size_t{1} << 20, true}}) {
        INFO("batch ", batch, " scan ", scan);
        CHECK(outcome(text, batch, scan) == all);
        for (unsigned jobs : {2u, 5u}) CHECK(outcome(text, batch, scan, jobs) == all);
    }
    return read_chrome(text, 0);
}

std::uint64_t elapsed_ns(const span_set& s) { return summarize_spans(s, {}).elapsed_ns; }

}  // namespace

TEST_CASE("chrome: each unusable event is skipped and counted by reason, with the line of the first") {
    // Line 1 '[', then one event a line. Used: a [0, 10) and b [20, 30) µs.
    std::string text = R"([
{"ph":"M","name":"thread_name","ts":null,"pid":1,"tid":1},
{"ph":"X","name":"a","ts":0,"dur":10},
{"ph":"X","name":"nodur","ts":5},
{"ph":"X","name":"nulldur","ts":5,"dur":null},
{"ph":"XXX","name":"odd","ts":5,"dur":1},
{"name":"nophase","ts":5,"dur":1},
{"ph":5,"name":"numeric","ts":5},
{},
{"ph":"B","name":"nots","pid":1,"tid":1},
{"ph":"X","name":"b","ts":20,"dur":10},
{"ph":"C","name":"ctr","ts":"abc","args":{}},
{"ph":"i","name":"tick","ts":1e99}
])";
    span_set s = read_every_way(text);
    REQUIRE(s.spans.size() == 2);
    CHECK(elapsed_ns(s) == 30000u);
    // (defect, count, line of the first): the X events without a usable dur on lines 4-5, the
    // unknown phases on 6-8, {} on 9, the B without ts on 10; the metadata event's null ts, the
    // counter's "abc" and the instant's 1e99 (lines 2, 12, 13) are not needed; no E at all.
    const std::tuple<event_defect, std::size_t, std::size_t> expected[] = {
        {event_defect::x_without_dur, 2, 4}, {event_defect::unknown_phase, 3, 6}, {event_defect::empty_event, 1, 9},
        {event_defect::missing_ts, 1, 10},   {event_defect::bad_metadata, 3, 2},  {event_defect::mismatched_end, 0, 0},
    };
    for (const auto& [kind, count, first_line] : expected) {
        CAPTURE(static_cast<int>(kind));
        CHECK(s.defect(kind).count == count);
        CHECK(s.defect(kind).first_line == first_line);
    }
    CHECK(s.defect(event_defect::empty_event).first_event == 8);
    CHECK(defect_counts(s) == "empty-event 1, unknown-phase 3, x-without-dur 2, missing-ts 1, bad-metadata 3");
    // --strict names the first in file order: event 1, the metadata event on line 2.
    CHECK_THROWS_WITH_AS(refuse_defects(s, "t.json"), doctest::Contains("t.json:2: event 1: 3 metadata"), input_error);
    auto r = report_trace(s, "t.json");
    REQUIRE(r.warnings.size() == 5);
    CHECK(r.warnings[2] == "t.json:4: 2 'X' event(s) without dur (skipped: no end), the first here (--strict refuses them)");
}

TEST_CASE("chrome: what is needed and not a number is still an error; so is invalid JSON") {
    auto error_of = [](const std::string& text) {
        std::string all = outcome(text, 0, false);
        CHECK(outcome(text, std::size_t{1} << 20, true) == all);
        CHECK(outcome(text, 64, false) == all);
        return all;
    };
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"abc\",\"dur\":1}]") ==
          "error: trace.json:2: event 1: field 'ts': expected a number of microseconds (or a string holding one)");
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":true}]") ==
          "error: trace.json:2: event 1: field 'dur': expected a number of microseconds (or a string holding one)");
    CHECK(error_of("[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"9e15\",\"dur\":1}]") ==
          "error: trace.json:2: event 1: field 'ts': expected a number of microseconds below 9e15 in magnitude");
    CHECK(error_of("[{\"ph\":\"B\",\"name\":7,\"ts\":1}]") == "error: trace.json:1: event 1: field 'name': expected a string");
    // An X ending at or beyond the bound: 8e15 + 2e15 µs.
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"far\",\"ts\":8000000000000000,\"dur\":2000000000000000}]")
              .find("ends at or beyond 9e15 µs (ts 8000000000000000 + dur 2000000000000000)") != std::string::npos);
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},\n]").rfind("error: trace.json:2: malformed JSON", 0) == 0);
    CHECK(error_of("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":01,\"dur\":1}]").rfind("error: trace.json:1: malformed JSON", 0) == 0);
    // A misspelt literal in a time is not JSON, even where the time is not needed.
    for (const char* word : {"nul", "tru", "fals"})
        CHECK(error_of(fmt::format("[{{\"ph\":\"M\",\"name\":\"m\",\"ts\":{}}}]", word)).rfind("error: trace.json:1: malformed JSON", 0) == 0);
}

TEST_CASE("chrome: the JSON Array Format's closing bracket is optional, after a whole event only") {
    // a [0, 10) µs, b [5, 25) µs: elapsed 25 µs, whether the text ends after an event, after its
    // comma, or after whitespace; an object's brackets are not optional, nor is a cut event whole.
    for (std::string tail : {"", ",", ",\n", "\n\n", " ,  \r\n"}) {
        std::string text = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":20}" + tail;
        CAPTURE(tail);
        span_set s = read_every_way(text);
        CHECK(s.unclosed);
        CHECK(elapsed_ns(s) == 25000u);
    }
    span_set bare = read_every_way("[\n");
    CHECK(bare.unclosed);
    CHECK(bare.spans.empty());
    CHECK_FALSE(read_chrome("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10}]").unclosed);
    CHECK_THROWS_AS(read_chrome("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10}"), input_error);
    CHECK_THROWS_AS(read_chrome("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10},{\"ph\":\"X\",\"ts"), input_error);
    CHECK_THROWS_AS(read_chrome("[,"), input_error);
}

TEST_CASE("chrome: an E named differently closes the innermost B and is counted") {
    // Thread 1: B outer 0, B inner 10, E "outer" 20 (closes inner: [10, 20)), E "inner" 50
    // (closes outer: [0, 50)). Thread 2: B x 0, E "x" 5 matches; E without a name never counts.
    std::string text = R"([
{"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
{"ph":"B","name":"inner","ts":10,"pid":1,"tid":1},
{"ph":"E","name":"outer","ts":20,"pid":1,"tid":1},
{"ph":"E","name":"inner","ts":50,"pid":1,"tid":1},
{"ph":"B","name":"x","ts":0,"pid":1,"tid":2},
{"ph":"E","name":"x","ts":5,"pid":1,"tid":2},
{"ph":"B","name":"y","ts":6,"pid":1,"tid":2},
{"ph":"E","ts":9,"pid":1,"tid":2}
])";
    span_set s = read_every_way(text);
    CHECK(defect_at(s, event_defect::mismatched_end) == "2 at event 3, line 4");
    auto sum = summary_of(s);
    REQUIRE(s.names.size() == 4);  // E names are never nodes
    CHECK(s.names[0] == "outer");
    CHECK(sum.node_ns[0] == 50000u);
    CHECK(sum.node_ns[1] == 10000u);
    CHECK(sum.elapsed_ns == 50000u);
}

TEST_CASE("chrome: a string holding a JSON number is that number; other strings are not numbers") {
    // "100" + "2.5" = [100, 102.5) µs; "1e2" .. "110" = [100, 110) µs.
    span_set s = read_every_way(R"([{"ph":"X","name":"q","ts":"100","dur":"2.5"},
{"ph":"B","name":"r","ts":"1e2","pid":1,"tid":1},{"ph":"E","ts":"110","pid":1,"tid":1}])");
    REQUIRE(s.spans.size() == 2);
    CHECK(s.spans[0].start_ns == 100000);
    CHECK(s.spans[0].end_ns == 102500);
    CHECK(s.spans[1].end_ns == 110000);
    for (const char* bad : {"\" 1\"", "\"0x10\"", "\"1.\"", "\"NaN\"", "\"\"", "\"+1\""}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(read_chrome(fmt::format(R"([{{"ph":"X","name":"q","ts":{},"dur":1}}])", bad)),
                             doctest::Contains("field 'ts': expected a number of microseconds"), input_error);
    }
}

TEST_CASE("chrome: displayTimeUnit is kept and changes no time; an undefined one is warned about") {
    for (const char* unit : {"ns", "ms", "us"}) {
        std::string text = fmt::format(R"({{"displayTimeUnit":"{}","traceEvents":[{{"ph":"X","name":"x","ts":1,"dur":2.5}}]}})", unit);
        span_set s = read_every_way(text);
        CHECK(s.display_time_unit == unit);
        REQUIRE(s.spans.size() == 1);
        CHECK(s.spans[0].end_ns == 3500);
        CHECK(report_trace(s, "t").warnings.size() == (std::string(unit) == "us" ? 1u : 0u));
    }
    // Keys after the events, and a second traceEvents ignored.
    span_set after = read_every_way(R"({"traceEvents":[{"ph":"X","name":"x","ts":1,"dur":1}],"displayTimeUnit":"ns","traceEvents":[]})");
    CHECK(after.display_time_unit == "ns");
    CHECK(after.spans.size() == 1);
    // Other members before and after the events: still read in place by the scanner.
    std::string members = R"({"schemaVersion":1,"devices":[{"id":0}],"traceEvents":[{"ph":"X","name":"x","ts":1,"dur":1}],"displayTimeUnit":"ms"})";
    span_set fast = read_chrome(members);
    CHECK_FALSE(how_read(members).whole_document);
    CHECK(how_read(members).scanned_events == 1);
    CHECK(fast.display_time_unit == "ms");
}

TEST_CASE("chrome: traces modelled on the peers' parser tests give the unions computed by hand") {
    struct peer_case {
        const char* what;
        const char* trace;
        std::size_t spans;
        std::uint64_t elapsed_ns;
    };
    const peer_case cases[] = {
        // String pid and tid, fractional times: [3.2, 403.3) µs = 400100 ns.
        {"string ids, fractions", R"({"traceEvents":[{"pid":"p","tid":"t","ts":3.2,"dur":400.1,"name":"n","ph":"X","cat":"c"}]})", 1, 400100},
        // Two X events at one ts on threads given and not given: [1, 9) and [1, 4) µs.
        {"same start", R"([{"name":"in","ph":"X","ts":1,"dur":3,"pid":2},{"name":"out","ph":"X","ts":1,"dur":8,"pid":2,"tid":2}])", 2, 8000},
        // Cut short after a comma, times with three decimals: [3000000.000, 3000004.000) µs.
        {"cut short", "[\n{\"name\":\"tc\",\"ph\":\"X\",\"ts\":3000000.000,\"dur\":4.000,\"pid\":9,\"tid\":1},\n", 1, 4000},
        // B "begin" .. E "end" (mismatched, closed) [10, 30), X [35, 40), instants of every scope
        // ignored: elapsed 30 µs.
        {"slice types", R"([{"ph":"B","pid":4,"tid":5,"ts":10,"name":"begin"},{"ph":"E","pid":4,"tid":5,"ts":30,"name":"end"},
{"ph":"X","pid":4,"tid":6,"ts":35,"dur":5,"name":"whole"},{"ph":"I","pid":4,"tid":5,"ts":41,"name":"g","s":"g"},
{"ph":"i","pid":4,"tid":5,"ts":42,"name":"t","s":"t"},{"ph":"R","pid":4,"tid":5,"ts":43,"name":"mark"}])", 2, 30000},
        // Counters and metadata (with ts) around B/E pairs without cat, X with a pid only and
        // with neither: [500, 520), [600, 640), [650, 655), [660, 665) µs: elapsed 165 µs.
        {"metadata", R"([{"ph":"B","pid":3,"tid":1,"ts":500,"name":"a"},{"ph":"C","pid":3,"tid":1,"ts":505,"name":"c","args":{"v":"2.5"}},
{"ph":"E","pid":3,"tid":1,"ts":520,"name":"a"},{"ph":"M","pid":3,"tid":0,"ts":530,"name":"process_name","args":{"name":"p"}},
{"ph":"B","pid":3,"tid":2,"ts":600},{"ph":"E","pid":3,"tid":2,"ts":640},{"ph":"X","pid":8,"ts":650,"dur":5,"name":"pid only"},
{"ph":"X","ts":660,"dur":5,"name":"no ids"}])", 4, 165000},
        // An X without dur (skipped), B/E of different names (closed), an X: [200, 300) and
        // [400, 450) µs.
        {"missing values", R"([{"ph":"X","pid":1,"tid":1,"ts":100,"name":"no dur"},{"ph":"B","pid":1,"tid":2,"ts":200,"name":"b"},
{"ph":"E","pid":1,"tid":2,"ts":300,"name":"e"},{"ph":"X","pid":1,"tid":3,"ts":400,"dur":50,"name":"x","tts":390}])", 2, 250000},
        // Async pairs only (id and id2, empty ids): no timed span.
        {"async only", R"([{"ph":"b","pid":1,"tid":1,"ts":1,"name":"a","id":""},{"ph":"e","pid":1,"tid":1,"ts":2,"name":"a","id":""},
{"ph":"b","pid":1,"tid":1,"ts":3,"name":"g","cat":"k","id2":{"global":"x"}},{"ph":"e","pid":1,"tid":1,"ts":4,"name":"g","cat":"k","id2":{"global":"x"}}])", 0, 0},
        // Deprecated async S/T/F around nested B/E on one thread: BE [20, 70) holding in [30, 40),
        // then BE [80, 90): elapsed 70 µs.
        {"async and nesting", R"([{"cat":"k","pid":1,"tid":1,"ts":10,"ph":"S","name":"A","id":"1"},{"cat":"k","pid":1,"tid":1,"ts":20,"ph":"B","name":"BE"},
{"cat":"k","pid":1,"tid":1,"ts":30,"ph":"B","name":"in"},{"cat":"k","pid":1,"tid":1,"ts":35,"ph":"T","name":"A","id":"1","args":{"step":"s"}},
{"cat":"k","pid":1,"tid":1,"ts":40,"ph":"E","name":"in"},{"cat":"k","pid":1,"tid":1,"ts":70,"ph":"E","name":"BE"},
{"cat":"k","pid":1,"tid":1,"ts":80,"ph":"B","name":"BE"},{"cat":"k","pid":1,"tid":1,"ts":85,"ph":"F","name":"A","id":"1"},
{"cat":"k","pid":1,"tid":1,"ts":90,"ph":"E","name":"BE"}])", 3, 70000},
    };
    for (const auto& c : cases) {
        CAPTURE(c.what);
        span_set s = read_every_way(c.trace);
        CHECK(s.spans.size() == c.spans);
        CHECK(elapsed_ns(s) == c.elapsed_ns);
    }
}

TEST_CASE("chrome: a B no E closes is closed at its thread's last B/E time stamp, counted, with its line") {
    // Thread 1: B "RunLoop::Run" at 0 never closed; B task 1000 .. E 4300000 inside it → the run
    // loop is [0, 4300000) µs. Thread 2: a B/E pair split across threads: B "split" at 10 on
    // tid 2 (its thread's only B/E: closed at its own ts, a span of 0 kept in the bounds) and
    // its E at 20 on tid 3 (no open B there: skipped). Elapsed: [0, 4.3 s) = 4.3e9 ns.
    std::string text = R"([
{"ph":"B","name":"RunLoop::Run","ts":0,"pid":1,"tid":1},
{"ph":"B","name":"task","ts":1000,"pid":1,"tid":1},
{"ph":"E","ts":4300000,"pid":1,"tid":1},
{"ph":"B","name":"split","ts":10,"pid":1,"tid":2},
{"ph":"E","ts":20,"pid":1,"tid":3}
])";
    span_set s = read_every_way(text);
    CHECK(defect_at(s, event_defect::unclosed_begin) == "2 at event 1, line 2");
    CHECK(defect_at(s, event_defect::unmatched_end) == "1 at event 5, line 6");
    CHECK(elapsed_ns(s) == 4300000000u);
    auto sum = summary_of(s);
    REQUIRE(s.names[0] == "RunLoop::Run");
    CHECK(sum.node_ns[0] == 4300000000u);
    auto r = report_trace(s, "t.json");
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0] == "t.json:2: 2 'B' event(s) that no 'E' of their thread closes (each closed at the last 'B' "
                           "or 'E' time stamp of its thread), the first here (--strict refuses them)");
    CHECK(r.warnings[1] == "t.json:6: 1 'E' event(s) with no open 'B' on their thread (skipped), the first here "
                           "(--strict refuses them)");
    CHECK_THROWS_WITH_AS(refuse_defects(s, "t.json"), doctest::Contains("t.json:2: event 1: 2 'B' event(s)"),
                         input_error);
    CHECK(defect_counts(s) == "unclosed-begin 2, unmatched-end 1");
}
