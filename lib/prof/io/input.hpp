// Records from a run's inputs: every input opened by open_input (stdin, files, URLs, gzip by
// its magic), every line read as one JSON object, and one bad-line policy (--max-bad-lines)
// with its closing warning over all of them. The one loop every program reads records through.
#pragma once

#include "prof/io/byte_source.hpp"
#include "prof/io/json_in.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prof {

// Where a record was read: the source as diagnostics name it ("<stdin>" for "-"), its 1-based
// line, and the line's text as read (without '\n', a trailing '\r' or a leading BOM; valid
// only during the call it is handed to).
struct record_place {
    std::string_view source;
    std::size_t line = 0;
    std::string_view text;
};

// A skipped line handed to the caller in collect mode: where it is and what is wrong with it
// ("malformed JSON (...)", "field 'x': ...").
using skipped_line_fn = std::function<void(const record_place& at, const std::string& what)>;

// What a run does with malformed lines, over all its inputs together.
struct bad_line_policy {
    explicit bad_line_policy(std::size_t max = 0, std::string what = "line", std::string before = {})
        : max_bad_lines(max), noun(std::move(what)), prefix(std::move(before)) {}
    // Lines skipped (each named in a warning) before the next one is an error (65).
    std::size_t max_bad_lines;
    // How the closing warning names what was skipped: "PREFIXskipped N malformed NOUN(s)",
    // e.g. "skipped 2 malformed cell line(s)", "--panel: skipped 1 malformed line(s)".
    std::string noun;
    std::string prefix;
    // Options for URL inputs (null: http_options' defaults).
    const http_options* http = nullptr;
    // Collect mode: when set, each skipped line (within max_bad_lines) is handed here instead of
    // being warned about on stderr, and no closing warning is written: the caller decides how to
    // report them (prof-resolve makes them provenance warnings). The line past the budget is
    // still an error.
    skipped_line_fn collect;
};

using record_fn = std::function<void(simdjson::ondemand::object&, const record_place&)>;

// Reads INPUTS in order, each through open_input and for_each_object (json_in.hpp: the line
// checks, the "SOURCE:LINE: what" errors and the "(skipped)" warnings), with the policy's
// budget shared by all of them; `fast` as for for_each_object. When any line was skipped,
// ends with the policy's closing warning (in collect mode, none: see bad_line_policy). Throws
// input_error (65) for the line past the budget, and open_input's errors (66 for a missing
// file) when an input cannot be opened.
jsonl_stats for_each_record(const std::vector<std::string>& inputs, const bad_line_policy& policy,
                            const record_fn& fn, const line_fn& fast = {});

// The same over one source already open (a registry's index, fetched from a directory or a
// URL), with the policy's whole budget.
jsonl_stats for_each_record(line_reader& in, const bad_line_policy& policy, const record_fn& fn,
                            const line_fn& fast = {});

// Everything `src` holds, as one text (a whole profile or signature file); throws what
// src.read throws.
std::string read_all(byte_source& src);

// A small input an option names (--family-map, --signature, --params, ...), read whole: `text`,
// and `name`, the source as diagnostics name it ("<stdin>" for "-", a URL without its
// credentials).
struct whole_input {
    std::string text;
    std::string name;
};
// SPEC opened by open_input (a file, "-" for stdin, an http(s) URL fetched with `http`; gzip
// told by its magic bytes) and read to its end. Throws open_input's errors (66 for a missing
// file) and the source's read errors (io_error, 74).
whole_input read_whole_input(const std::string& spec, const http_options* http = nullptr);

// The policy's closing warning for `bad` skipped lines (nothing when there are none), for a
// reader that keeps its own count (prof-harvest's).
void warn_skipped(const bad_line_policy& policy, std::size_t bad);

}  // namespace prof
