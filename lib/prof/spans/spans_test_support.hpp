// What the spans area's unit tests share: span sets from rows, query options, Chrome traces from
// events, how a trace was read, and a span set as text.
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/byte_source.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/spans/spans.hpp"
#include "prof/spans/operations.hpp"
#include "prof/spans/chrome_paths.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <cstdlib>
#include <fmt/format.h>
#include <doctest/doctest.h>

using namespace prof;

namespace {

inline std::string input_path(const std::string& name) {
    const char* root = std::getenv("PROF_ROOT");
    return std::string(root ? root : ".") + "/testdata/inputs/" + name;
}

inline span_set spans_of(std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> rows) {
    std::string text = "node,start,end\n";
    for (auto& [n, s, e] : rows) text += n + "," + std::to_string(s) + "," + std::to_string(e) + "\n";
    return read_polars_csv(text, "t.csv");
}

inline query_options opts(std::uint64_t rows) {
    query_options o;
    o.plan_key = "q";
    o.host = "h";
    o.rows = rows;
    return o;
}

inline query_profile parse_profile(const std::string& line) {
    query_profile out;
    line_reader in(string_source(line + "\n", "p"));
    for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { out = read_query_profile(o); });
    return out;
}

inline std::string chrome(const std::string& events) {
    return std::string("{\"traceEvents\":[\n") + events + "\n]}";
}

// The trace read by the given paths; jobs > 1 cuts even a short trace into that many chunks.
inline span_set read_chrome(const std::string& text, std::size_t batch = std::size_t{1} << 20, bool scan = true, unsigned jobs = 1,
                     chrome_read_stats* stats = nullptr) {
    simdjson::padded_string p(text);
    chrome_paths paths;
    paths.batch_bytes = batch;
    paths.scan = scan;
    paths.jobs = jobs;
    paths.min_chunk_bytes = 1;
    return read_chrome_trace(std::string_view(p.data(), p.size()), "trace.json", paths, stats);
}

inline chrome_read_stats how_read(const std::string& text, unsigned jobs = 1) {
    chrome_read_stats st;
    read_chrome(text, std::size_t{1} << 20, true, jobs, &st);
    return st;
}

// One defect a reader counted, as one comparable text: "COUNT at event E, line L".
inline std::string defect_at(const span_set& s, event_defect d) {
    const defect_count& c = s.defect(d);
    return fmt::format("{} at event {}, line {}", c.count, c.first_event, c.first_line);
}

// Everything a reader produced, as one comparable text.
inline std::string dump(const span_set& s) {
    std::string out = fmt::format("events {} async {} unclosed {} unit '{}'\n", s.events, s.async_unmatched,
                                  s.unclosed, s.display_time_unit);
    for (std::size_t k = 0; k < event_defect_kinds; ++k)
        out += fmt::format("{} {} {} {}\n", defect_name(static_cast<event_defect>(k)), s.defects[k].count,
                           s.defects[k].first_event, s.defects[k].first_line);
    for (const auto& sp : s.spans) out += fmt::format("{} {} {}\n", s.names[sp.node], sp.start_ns, sp.end_ns);
    return out;
}

// A random trace event in one of the spellings a producer may use: every phase, integer,
// fractional and exponent time stamps (only integers when `fractional` is false, so that events
// the scanner declines stay in the DOM batches), numbers in strings, names with escapes and
// non-ASCII text, pids and tids as numbers, strings, escaped strings, -0 and 1.0, nested args
// with arrays of objects and surrogate pairs, keys in any order, whitespace anywhere; with
// `defects`, the ones a reader tolerates and counts (no dur, no ts, null times, {} events,
// unknown phases, 'E' names that differ from their 'B'); with `bad`, now and then something
// that is an error.
inline std::string random_event(std::mt19937_64& rng, bool bad, bool plain, bool fractional, bool defects) {
    auto pick = [&](std::initializer_list<const char*> xs) {
        auto k = std::uniform_int_distribution<std::size_t>(0, xs.size() - 1)(rng);
        return std::string(*(xs.begin() + static_cast<std::ptrdiff_t>(k)));
    };
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    auto ws = [&]() { return chance(0.15) ? pick({" ", "\n", "\t ", "\r\n  "}) : std::string(); };
    if (defects && chance(0.03)) return "{" + ws() + "}";
    std::vector<std::pair<std::string, std::string>> fields;
    std::string ph = pick({"X", "X", "X", "X", "B", "E", "B", "E", "i", "M", "b", "e", "C"});
    if (defects && chance(0.04)) ph = pick({"XXX", "Q", "", "xX"});
    if (!(defects && chance(0.02))) fields.push_back({"ph", "\"" + ph + "\""});
    else if (chance(0.5)) fields.push_back({"ph", "5"});
    auto time = [&](bool is_dur) {
        if (defects && chance(0.03)) return std::string("null");
        if (chance(0.05)) return pick({"\"100\"", "\"37\"", "\"0\""});
        if (fractional && chance(0.05)) return pick({"\"5.1\"", "\"1.5e2\"", "\"0.0005\""});
        if (!fractional) return is_dur ? pick({"10", "0", "300", "45"}) : pick({"100", "250", "1000", "37", "0", "-3"});
        if (is_dur) return pick({"10", "0", "7.6", "300", "2e1", "45", "0.5", "2.5", "0.4", "500.1", "0.0015", "425.453"});
        return pick({"100", "250", "1000", "37", "0", "12.5", "1.5e2", "99.49", "-3", "1e0", "5.1", "0.0005",
                     "198093488368.463", "0.50000000000000000000000001", "0.70000000000000000000"});
    };
    if (!(defects && chance(0.05))) fields.push_back({"ts", time(false)});
    if (ph == "M" && defects && chance(0.2)) fields.push_back({"ts", pick({"null", "\"abc\"", "true", "9e99"})});
    if (ph == "X" && !(defects && chance(0.05)))
        fields.push_back({"dur", bad && chance(0.05) ? std::string("-4") : time(true)});
    if (bad && chance(0.03)) fields.push_back({"ts", pick({"\"abc\"", "true", "{}", "9e15"})});
    if (plain) {  // the spellings the scanner takes
        fields.push_back({"name", pick({"\"scan\"", "\"optimization\"", "\"sort\"", "\"a},{b\"", "\"café\""})});
        fields.push_back({"pid", pick({"1", "\"1\"", "2", "0", "\"p1\""})});
        fields.push_back({"tid", pick({"7", "\"7\"", "8", "\"t\""})});
    } else {
        fields.push_back({"name", pick({"\"scan\"", "\"optimization\"", "\"sort\"", "\"a},{b\"", "\"caf\\u00e9\"",
                                        "\"café\"", "\"q\\\"uote\"", "\"opt\\u0069mization\"", "\"\\ud83d\\ude00\""})});
        fields.push_back({"pid", pick({"1", "\"1\"", "2", "-0", "0", "1.0", "\"p\\u0031\"", "\"p1\"", "{}", "{\"a\": 1}",
                                       "[]", "[1]"})});
        fields.push_back({"tid", pick({"7", "\"7\"", "8", "7e0", "\"t\""})});
    }
    // An 'E' names what it closes only sometimes; without defects, it carries no name.
    if (ph == "E" && !defects) fields.erase(std::find_if(fields.begin(), fields.end(), [](auto& f) { return f.first == "name"; }));
    if (ph == "b" || ph == "e") {
        fields.push_back({"cat", plain ? std::string("\"c\"") : pick({"\"c\"", "\"\\u0063\""})});
        fields.push_back({"id", pick({"\"0x1\"", "1", "\"0x2\""})});
    }
    if (!plain && chance(0.01))
        fields.push_back({"args", "\"lone \\ud800\""});
    else if (!plain && chance(0.5))
        fields.push_back({"args", pick({"\"\\ud83d\\ude00\"", "{\"deep\":[[[[{\"a\":[1]}]]]]}"})});
    else if (chance(0.5))
        fields.push_back({"args", pick({"{}", "{\"list\":[{\"x\":1},{\"y\":[2,{\"z\":\"},{\"}]}]}",
                                        "{\"s\":\"tab\\tnew\\nline \\\\ \\/ \\u2603\"}",
                                        "{\"n\":null,\"t\":true,\"f\":false,\"d\":-1.25e-3}", "[1, [2, [3]]]"})});
    if (chance(0.1)) fields.push_back({"tts", "12345"});
    if (chance(0.05) && !fields.empty() && fields[0].first == "ph") fields.push_back(fields[0]);  // a duplicated key: the last wins
    std::shuffle(fields.begin() + (fields.empty() ? 0 : 1), fields.end(), rng);
    // Escaped spellings of the keys read ("d\u0075r" is "dur"), now and then.
    if (!plain)
        for (auto& [k, v] : fields)
            if (chance(0.05) && k.size() >= 2) k = k.substr(0, 1) + fmt::format("\\u{:04x}", static_cast<unsigned>(k[1])) + k.substr(2);
    std::string out = "{" + ws();
    for (std::size_t k = 0; k < fields.size(); ++k) {
        if (k) out += "," + ws();
        out += "\"" + fields[k].first + "\"" + ws() + ":" + ws() + fields[k].second + ws();
    }
    return out + "}";
}

// The result of one reading, or its error, as one comparable text.
inline std::string outcome(const std::string& text, std::size_t batch, bool scan, unsigned jobs = 1) {
    try {
        return dump(read_chrome(text, batch, scan, jobs));
    } catch (const input_error& e) {
        return std::string("error: ") + e.what();
    }
}

// What read_chrome_stream makes of `text` written into a real pipe by a thread of its own, in
// pieces of 1 to 97 bytes, as prof-spans reads stdin: a head of `head` bytes first, then the
// ring's chunks of about `chunk_bytes` on `jobs` threads. The stream is read to its end.
inline std::string stream_outcome(const std::string& text, std::size_t head, std::size_t chunk_bytes, unsigned jobs,
                           chrome_read_stats* stats = nullptr) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] {
        std::mt19937 rng(static_cast<unsigned>(text.size()));
        for (std::size_t at = 0; at < text.size();) {
            const ssize_t w = ::write(fds[1], text.data() + at, std::min<std::size_t>(text.size() - at, 1 + rng() % 97));
            if (w <= 0) break;
            at += static_cast<std::size_t>(w);
        }
        ::close(fds[1]);
    });
    auto src = fd_source(fds[0], "trace.json", true);
    std::string out;
    try {
        std::string first(head, '\0');
        std::size_t got = 0;
        for (std::size_t k = 1; got < head && k > 0; got += k) k = src->read(first.data() + got, head - got);
        first.resize(got);
        chrome_paths paths;
        paths.jobs = jobs;
        paths.chunk_bytes = chunk_bytes;
        chrome_read_stats st;
        std::uint64_t bytes = 0;
        out = dump(read_chrome_stream(first, *src, "trace.json", paths, &st, bytes));
        if (bytes != text.size()) out += fmt::format("read {} bytes of {}\n", bytes, text.size());
        if (stats) *stats = st;
    } catch (const input_error& e) {
        out = std::string("error: ") + e.what();
    }
    char rest[4096];
    while (src->read(rest, sizeof rest) > 0) {}
    src.reset();
    writer.join();
    return out;
}

}  // namespace
