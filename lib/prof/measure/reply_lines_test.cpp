// Unit tests of the worker reply line splitter.
#include "prof/measure/reply_lines.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("a reply line of 8 MiB arriving in 4 KiB reads is searched once, byte for byte") {
    // 8 MiB of 'x' then '\n', appended 4096 bytes at a time with a look for a line after each
    // read (as the worker loop does): every byte is searched exactly once, 8 MiB + 1 in all.
    // Searching the whole buffer again after each read would search about 2048 × 8 MiB / 2.
    const std::string body(std::size_t{8} << 20, 'x');
    std::string reply = body + "\n{\"ok\":true}\n";
    prof::reply_lines r;
    std::string line;
    std::size_t lines = 0;
    std::string first;
    for (std::size_t at = 0; at < reply.size(); at += 4096) {
        r.append(reply.data() + at, std::min<std::size_t>(4096, reply.size() - at));
        while (r.take(line)) {
            if (lines++ == 0) first = line;
        }
    }
    CHECK(lines == 2);
    CHECK(first == body);
    CHECK(line == "{\"ok\":true}");
    CHECK(r.bytes_searched() == reply.size());
}

TEST_CASE("reply lines come out whole and in order however the bytes are cut") {
    // "a\n\nbc\n" then "d" without its '\n': lines "a", "", "bc"; "d" waits for more.
    for (std::size_t step : {1, 2, 3, 7}) {
        CAPTURE(step);
        std::string text = "a\n\nbc\nd";
        prof::reply_lines r;
        std::string line, got;
        for (std::size_t at = 0; at < text.size(); at += step) {
            r.append(text.data() + at, std::min(step, text.size() - at));
            while (r.take(line)) got += "[" + line + "]";
        }
        CHECK(got == "[a][][bc]");
        r.append("\n", 1);
        REQUIRE(r.take(line));
        CHECK(line == "d");
        CHECK_FALSE(r.take(line));
        r.clear();
        CHECK_FALSE(r.take(line));
    }
}
