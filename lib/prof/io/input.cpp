// Records from a run's inputs under one bad-line policy (see input.hpp).
#include "prof/io/input.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/limits.hpp"

#include <fmt/format.h>

namespace prof {

namespace {

// One source through for_each_object with `budget` bad lines left; each record and each line
// the policy collects gets its place, the line's text included (seen through the `fast` hook,
// which every valid-UTF-8 line passes before it is parsed).
jsonl_stats read_source(line_reader& in, std::size_t budget, const bad_line_policy& policy, const record_fn& fn,
                        const line_fn& fast) {
    const std::string& source = in.source_name();
    std::string_view text;
    auto seen = [&](std::string_view t) {
        text = t;
        return fast && fast(t);
    };
    skip_fn skipped;
    if (policy.collect)
        skipped = [&](const text_line& line, const std::string& what) {
            policy.collect(record_place{source, line.number, line.text}, what);
        };
    auto each = [&](simdjson::ondemand::object& obj, std::size_t line) { fn(obj, record_place{source, line, text}); };
    return for_each_object(in, budget, each, seen, skipped);
}

}  // namespace

jsonl_stats for_each_record(const std::vector<std::string>& inputs, const bad_line_policy& policy,
                            const record_fn& fn, const line_fn& fast) {
    jsonl_stats total;
    for (const auto& spec : inputs) {
        line_reader in(open_input(spec, policy.http));
        jsonl_stats s = read_source(in, policy.max_bad_lines - total.bad_lines, policy, fn, fast);
        total.records += s.records;
        total.bad_lines += s.bad_lines;
    }
    if (!policy.collect) warn_skipped(policy, total.bad_lines);
    return total;
}

jsonl_stats for_each_record(line_reader& in, const bad_line_policy& policy, const record_fn& fn, const line_fn& fast) {
    jsonl_stats s = read_source(in, policy.max_bad_lines, policy, fn, fast);
    if (!policy.collect) warn_skipped(policy, s.bad_lines);
    return s;
}

std::string read_all(byte_source& src) {
    const std::size_t limit = max_document_bytes();
    std::string text;
    char buf[65536];
    for (std::size_t n; (n = src.read(buf, sizeof buf)) > 0;) {
        if (n > limit - text.size())  // before the append: what is held never passes the limit
            throw error(exit_code::data_err, fmt::format("{}: {}", src.name(), document_too_large_message()));
        text.append(buf, n);
    }
    return text;
}

whole_input read_whole_input(const std::string& spec, const http_options* http) {
    auto src = open_input(spec, http);
    std::string text = read_all(*src);
    return whole_input{std::move(text), src->name()};
}

void warn_skipped(const bad_line_policy& policy, std::size_t bad) {
    if (bad) warn(fmt::format("{}skipped {} malformed {}(s)", policy.prefix, bad, policy.noun));
}

}  // namespace prof
