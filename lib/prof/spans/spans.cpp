// The query_profile record (see spans.hpp).
#include "prof/spans/spans.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_out.hpp"
#include "prof/io/interner.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/spans/query_profile_record.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {

namespace od = simdjson::ondemand;

// ---- the record -------------------------------------------------------------------------------

std::string write_query_profile(const query_profile& p) {
    // A record never carries a non-finite number (the writer would print null). Every
    // producer refuses one first, so meeting one here is a bug, not bad input.
    bool finite = std::isfinite(p.fixed_seconds) && std::isfinite(p.per_row_seconds);
    for (const auto& n : p.nodes) finite = finite && std::isfinite(n.seconds);
    for (const auto& r : p.residuals)
        finite = finite && std::isfinite(r.measured_s) && std::isfinite(r.predicted_s) && std::isfinite(r.residual_s);
    if (!finite)
        throw error(exit_code::software,
                    fmt::format("internal error: query_profile of plan '{}' holds a non-finite number", p.plan_key));
    return write_record(query_profile_schema(), p);
}

query_profile read_query_profile(od::object& obj) {
    query_profile p;
    p.source = "";
    read_record(query_profile_schema(), obj, p);
    sort_nodes(p.nodes);
    return p;
}

std::vector<located_query_profile> read_query_profile_lines(const std::vector<std::string>& paths,
                                                            std::size_t max_bad_lines) {
    std::vector<located_query_profile> out;
    for_each_record(paths, bad_line_policy(max_bad_lines), [&](od::object& o, const record_place& at) {
        out.push_back({read_query_profile(o), std::string(at.source), at.line});
    });
    return out;
}

double located_estimate(const located_query_profile& p, std::uint64_t rows) {
    try {
        return finite_estimate(p.profile, rows);
    } catch (const field_error& e) {
        throw input_error(p.source, p.line, e.what());
    }
}

std::vector<std::string> query_profile_key(const std::string& plan_key, const std::string& host) {
    return {plan_key, host};
}

std::vector<std::string> query_profile_record_key(std::string_view text) {
    query_profile p;
    parse_object_text(text, [&](od::object& obj) { p = read_query_profile(obj); });
    return query_profile_key(p.plan_key, p.host);
}

}  // namespace prof
