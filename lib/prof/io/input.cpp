// Records from a run's inputs under one bad-line policy (see input.hpp).
#include "prof/io/input.hpp"

#include "prof/core/diag.hpp"

#include <fmt/format.h>

namespace prof {

jsonl_stats for_each_record(const std::vector<std::string>& inputs, const bad_line_policy& policy,
                            const record_fn& fn, const line_fn& fast) {
    jsonl_stats total;
    for (const auto& spec : inputs) {
        line_reader in(open_input(spec, policy.http));
        const std::string& source = in.source_name();
        jsonl_stats s = for_each_object(
            in, policy.max_bad_lines - total.bad_lines,
            [&](simdjson::ondemand::object& obj, std::size_t line) { fn(obj, record_place{source, line}); }, fast);
        total.records += s.records;
        total.bad_lines += s.bad_lines;
    }
    warn_skipped(policy, total.bad_lines);
    return total;
}

void warn_skipped(const bad_line_policy& policy, std::size_t bad) {
    if (bad) warn(fmt::format("{}skipped {} malformed {}(s)", policy.prefix, bad, policy.noun));
}

}  // namespace prof
