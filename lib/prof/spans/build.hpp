// From one profiled run's input to its query_profile, for every span format: the format's
// reader, its defaults, what it tolerated said on stderr, and --strict's refusals.
#pragma once

#include "prof/spans/chrome.hpp"
#include "prof/spans/formats.hpp"
#include "prof/spans/query_model.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace prof {

struct run_input {
    query_options opts;
    span_format format = span_format::chrome;
    unsigned jobs = 1;    // threads for a Chrome trace's event array
    bool strict = false;  // refuse tolerated trace defects and input with no timed spans (exit 65)
    bool stats = false;   // note span counts, CPU times and how the trace was read on stderr
    // The file mapping the text lies in, when read in place (padded_input::mapped): a Chrome
    // trace's pages are released behind its readers.
    const memory_region* mapped = nullptr;
};

// The spans of a Polars or Chrome input (not DuckDB, which has no spans). `text` must be
// followed by simdjson::SIMDJSON_PADDING readable bytes; `how`, when given, receives how a
// Chrome trace was read; `mapped`, the file mapping the text lies in (see read_chrome_trace).
span_set read_spans(span_format f, std::string_view padded_text, const std::string& source, unsigned jobs,
                    chrome_read_stats* how = nullptr, const memory_region* mapped = nullptr);

// The query_profile of one run (its warnings not yet said), or nullopt when the input has no
// timed spans (warned; input_error under --strict). Throws what the reader and the build throw.
std::optional<query_profile> build_run_profile(std::string_view padded_text, const std::string& source, const run_input& in);

// prof-spans build: the run in `path` ("-" = stdin), its format the --input-format word
// `format_word` ("auto" detects it; it replaces the format options() gives). Empty input (only
// whitespace) gives nullopt and no message (exit 65 under `strict`) without calling options(),
// so that no flag's error hides an empty input: options() checks and turns the flags into the
// run's options.
std::optional<query_profile> build_run_profile(const std::string& path, std::string_view format_word, bool strict,
                                               const std::function<run_input()>& options);

}  // namespace prof
