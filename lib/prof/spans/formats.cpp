// Span input formats (see formats.hpp).
#include "prof/spans/formats.hpp"

#include "prof/core/errors.hpp"
#include "prof/spans/polars.hpp"

#include <fmt/format.h>

namespace prof {

std::string_view skip_bom_ws(std::string_view t) {
    if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    while (!t.empty() && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n')) t.remove_prefix(1);
    return t;
}

namespace {

std::string_view first_line(std::string_view t) {
    auto nl = t.find('\n');
    std::string_view l = nl == std::string_view::npos ? t : t.substr(0, nl);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
}

}  // namespace

span_format detect_span_format(std::string_view text, const std::string& source) {
    std::string_view t = skip_bom_ws(text);
    if (!t.empty() && t[0] == '[') return span_format::chrome;
    if (!t.empty() && t[0] == '{') {
        if (polars_jsonl_row(first_line(t))) return span_format::polars_jsonl;
        if (t.find("\"traceEvents\"") != std::string_view::npos) return span_format::chrome;
        if (t.find("\"latency\"") != std::string_view::npos) return span_format::duckdb;
    } else if (polars_csv_header(first_line(t))) {
        return span_format::polars_csv;
    }
    throw input_error(source, 1,
                      "cannot tell the input format (expected Polars node/start/end rows, a Chrome trace or a "
                      "DuckDB JSON profile); name it with --input-format");
}

bool chrome_by_head(std::string_view word, std::string_view head, bool whole) {
    std::string_view t = skip_bom_ws(head);
    if (t.empty()) return false;
    if (word == "chrome") return true;
    if (word != "auto") return false;
    if (t[0] == '[') return true;
    if (t[0] != '{' || (!whole && t.find('\n') == std::string_view::npos)) return false;  // its first line not all here
    return !polars_jsonl_row(first_line(t)) && t.find("\"traceEvents\"") != std::string_view::npos;
}

std::string_view format_name(span_format f) {
    switch (f) {
    case span_format::polars_jsonl: return "polars-jsonl";
    case span_format::polars_csv: return "polars-csv";
    case span_format::chrome: return "chrome";
    case span_format::duckdb: return "duckdb";
    }
    return "?";
}

span_format span_format_named(std::string_view word, std::string_view text, const std::string& source) {
    if (word == "auto") return detect_span_format(text, source);
    for (span_format f : {span_format::polars_jsonl, span_format::polars_csv, span_format::chrome, span_format::duckdb})
        if (word == format_name(f)) return f;
    throw usage_error(fmt::format("--input-format must be auto, polars-jsonl, polars-csv, chrome or duckdb, not '{}'", word));
}

std::vector<std::string> default_fixed_nodes(span_format f) {
    if (f == span_format::polars_jsonl || f == span_format::polars_csv) return {"optimization"};
    return {};
}

std::string record_source(span_format f) {
    switch (f) {
    case span_format::polars_jsonl:
    case span_format::polars_csv: return "polars";
    case span_format::chrome: return "chrome";
    case span_format::duckdb: return "duckdb";
    }
    return "?";
}

std::string no_spans_reason(span_format f, const span_set& s, const std::string& source) {
    return fmt::format("{}: no timed spans ({}) in the input: no query_profile written", source,
                       f == span_format::chrome ? fmt::format("X events or B/E pairs, among {} event(s)", s.events)
                                                : std::string("node/start/end rows"));
}

}  // namespace prof
