// The input formats of the spans area: which one a text is, and what each means for a
// query_profile (its default fixed nodes, the record's source word), so that a tool needs no
// per-format rule of its own.
#pragma once

#include "prof/spans/span_set.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prof {

// The text after a UTF-8 byte order mark and the whitespace before the first token.
std::string_view skip_bom_ws(std::string_view text);

enum class span_format { polars_jsonl, polars_csv, chrome, duckdb };
// Guesses the format from the text: '[' or an object holding "traceEvents" → chrome; a first
// line that is a JSON object with "node" → polars_jsonl; an object with "latency" → duckdb; a
// first line naming node, start and end columns → polars_csv. Throws input_error otherwise.
span_format detect_span_format(std::string_view text, const std::string& source);
// Whether every text starting with `head` is a Chrome trace by the --input-format word `word`
// ("chrome", or "auto" as detect_span_format decides: '[' first, or an object whose first line
// is not a Polars row and whose head already holds "traceEvents"); `whole`: head is the text.
bool chrome_by_head(std::string_view word, std::string_view head, bool whole);
// "polars-jsonl", "polars-csv", "chrome", "duckdb" (the --input-format words).
std::string_view format_name(span_format f);
// The format a --input-format word names; "auto" detects it from the text. Throws usage_error
// for any other word.
span_format span_format_named(std::string_view word, std::string_view text, const std::string& source);

// The span nodes whose time is fixed cost when --fixed names none: Polars' "optimization";
// none for Chrome (build_from_spans then warns that all cost is treated as scaling).
std::vector<std::string> default_fixed_nodes(span_format f);
// The query_profile record's source word: "polars" (both Polars forms), "chrome", "duckdb".
std::string record_source(span_format f);
// Why a span set with no spans prices nothing: "SOURCE: no timed spans (X events or B/E pairs,
// among 12 event(s)) in the input: no query_profile written".
std::string no_spans_reason(span_format f, const span_set& s, const std::string& source);

}  // namespace prof
