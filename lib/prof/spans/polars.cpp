// Polars profile rows (see polars.hpp).
#include "prof/spans/polars.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/interner.hpp"
#include "prof/io/json_in.hpp"

#include <charconv>
#include <fmt/format.h>
#include <optional>
#include <simdjson.h>

namespace prof {

namespace od = simdjson::ondemand;

namespace {

// RFC 4180 fields of one line; throws field_error on an unterminated quote.
std::vector<std::string> csv_fields(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    std::size_t i = 0;
    for (;;) {
        cur.clear();
        if (i < line.size() && line[i] == '"') {
            ++i;
            for (;;) {
                if (i >= line.size()) throw field_error("unterminated quoted field");
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        cur.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                cur.push_back(line[i++]);
            }
            if (i < line.size() && line[i] != ',') throw field_error("unexpected text after a quoted field");
        } else {
            while (i < line.size() && line[i] != ',') cur.push_back(line[i++]);
        }
        out.push_back(cur);
        if (i >= line.size()) break;
        ++i;  // the comma
    }
    return out;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
    std::size_t k = 0;
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    return s.substr(k);
}

}  // namespace

bool polars_csv_header(std::string_view line) {
    try {
        auto f = csv_fields(line);
        bool n = false, s = false, e = false;
        for (auto& x : f) {
            x = trim(x);
            n |= x == "node";
            s |= x == "start";
            e |= x == "end";
        }
        return n && s && e;
    } catch (const field_error&) {
        return false;
    }
}

bool polars_jsonl_row(std::string_view line) {
    simdjson::padded_string p(line);
    od::parser parser;
    od::document doc;
    if (parser.iterate(p).get(doc) != simdjson::SUCCESS) return false;
    od::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
    bool has_node = false;
    for (auto f : obj) {
        std::string_view k;
        if (f.unescaped_key().get(k) != simdjson::SUCCESS) return false;
        if (k == "node") has_node = true;
    }
    return has_node;
}

namespace {

// Polars rows are integer microseconds, bounded like every time stamp (chrome_events.hpp).
constexpr std::int64_t max_polars_us = 9000000000000000;

void add_polars_row(span_set& out, string_interner& names, std::string_view node, std::int64_t start, std::int64_t end) {
    for (auto [v, what] : {std::pair{start, "start"}, std::pair{end, "end"}})
        if (v <= -max_polars_us || v >= max_polars_us)
            throw field_error(fmt::format("field '{}': expected microseconds below 9e15 in magnitude, found {}", what, v));
    if (end < start) throw field_error(fmt::format("span '{}' ends before it starts (start {}, end {})", node, start, end));
    out.spans.push_back({start * 1000, end * 1000, names.intern(node)});
}

}  // namespace

span_set read_polars_jsonl(std::string_view text, const std::string& source) {
    span_set out;
    string_interner names;
    line_reader in(string_source(std::string(text), source));
    for_each_object(in, 0, [&](od::object& obj, std::size_t) {
        std::optional<std::string> node;
        std::optional<std::int64_t> start, end;
        bool has_start = false, has_end = false;
        for (auto f : obj) {
            std::string_view k = f.unescaped_key();
            if (k == "node") node = read_string(f.value(), "node");
            else if (k == "start") start = read_int(f.value(), "start"), has_start = true;
            else if (k == "end") end = read_int(f.value(), "end"), has_end = true;
        }
        if (!node) missing_field("node");
        if (!has_start || !start) missing_field("start");
        if (!has_end || !end) missing_field("end");
        add_polars_row(out, names, *node, *start, *end);
    });
    out.names = names.names();
    return out;
}

span_set read_polars_csv(std::string_view text, const std::string& source) {
    span_set out;
    string_interner names;
    line_reader in(string_source(std::string(text), source));
    text_line line;
    int ci_node = -1, ci_start = -1, ci_end = -1;
    std::size_t ncols = 0;
    bool header = true;
    while (in.next(line)) {
        try {
            auto f = csv_fields(line.text);
            if (header) {
                for (std::size_t k = 0; k < f.size(); ++k) {
                    std::string c = trim(f[k]);
                    if (c == "node") ci_node = static_cast<int>(k);
                    else if (c == "start") ci_start = static_cast<int>(k);
                    else if (c == "end") ci_end = static_cast<int>(k);
                }
                if (ci_node < 0 || ci_start < 0 || ci_end < 0)
                    throw field_error("the CSV header must name the columns node, start and end");
                ncols = f.size();
                header = false;
                continue;
            }
            if (f.size() != ncols)
                throw field_error(fmt::format("expected {} CSV fields as in the header, found {}", ncols, f.size()));
            auto integer = [&](int col, const char* what) {
                std::string s = trim(f[static_cast<std::size_t>(col)]);
                std::int64_t v = 0;
                auto r = std::from_chars(s.data(), s.data() + s.size(), v);
                if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
                    throw field_error(fmt::format("field '{}': expected an integer (microseconds), found \"{}\"", what, s));
                return v;
            };
            add_polars_row(out, names, f[static_cast<std::size_t>(ci_node)], integer(ci_start, "start"),
                           integer(ci_end, "end"));
        } catch (const field_error& e) {
            throw input_error(source, line.number, e.what());
        }
    }
    out.names = names.names();
    return out;
}

}  // namespace prof
