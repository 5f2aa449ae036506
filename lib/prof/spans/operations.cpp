// prof-spans' stale and fit operations (see operations.hpp).
#include "prof/spans/operations.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"

#include <algorithm>

#include <charconv>
#include <fmt/format.h>

namespace prof {

std::optional<std::uint64_t> rows_option(const std::string& text, bool allow_zero) {
    if (text.empty()) return std::nullopt;
    std::int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < 0 || (v == 0 && !allow_zero))
        throw usage_error(fmt::format("--rows must be a {} integer, not '{}'", allow_zero ? "non-negative" : "positive", text));
    return static_cast<std::uint64_t>(v);
}

int stale_verdict(const std::vector<located_query_profile>& profiles, std::uint64_t rows,
                  const std::string& engine_version, double factor) {
    if (profiles.empty()) {
        note("stale: no query_profile read, so nothing can price the query");
        return static_cast<int>(exit_code::negative);
    }
    bool any = false;
    for (const auto& [p, source, line] : profiles) {
        if (auto why = stale_reason(p, rows, engine_version, factor)) {
            note(fmt::format("stale: plan '{}' on '{}': {}", p.plan_key, p.host, *why));
            any = true;
        }
    }
    return any ? static_cast<int>(exit_code::negative) : 0;
}

query_profile fit_located_profiles(std::vector<located_query_profile> located) {
    std::vector<query_profile> profiles;
    for (auto& r : located) {
        located_estimate(r, r.profile.rows);  // each run's own point, named by its line
        profiles.push_back(std::move(r.profile));
    }
    if (profiles.empty())
        throw error(exit_code::data_err, "fit: no query_profile read: give the runs to fit, at two or more row counts");
    query_profile p;
    try {
        p = fit_query_profiles(profiles);
    } catch (const field_error& e) {
        throw error(exit_code::data_err, e.what());
    }
    for (const auto& w : p.warnings) warn(w);
    return p;
}

std::optional<std::string> estimate_caveat(const query_profile& p, std::uint64_t rows) {
    if (p.source != "fit") return std::nullopt;
    std::vector<std::string> why;
    if (p.per_row_seconds == 0) why.push_back("per-row cost clamped to 0, so every row count is priced alike");
    if (p.fixed_seconds == 0) why.push_back("fixed cost clamped to 0");
    std::uint64_t least = p.rows;
    for (const auto& r : p.residuals) least = std::min(least, r.rows);
    if (rows > p.rows || rows < least)
        why.push_back(fmt::format("{} rows is outside the {} to {} rows fitted: extrapolated", rows, least, p.rows));
    if (why.empty()) return std::nullopt;
    std::string out = fmt::format("estimate: plan '{}' on '{}': {}", p.plan_key, p.host, why[0]);
    for (std::size_t k = 1; k < why.size(); ++k) out += "; " + why[k];
    return out;
}

void estimate_lines(const std::vector<located_query_profile>& profiles, std::uint64_t rows,
                    const std::function<void(const std::string&)>& emit) {
    if (profiles.empty()) throw error(exit_code::data_err, "estimate: no query_profile read, so nothing prices the query");
    for (const auto& r : profiles) {
        emit(format_double(located_estimate(r, rows)));
        if (auto caveat = estimate_caveat(r.profile, rows)) note(*caveat);
    }
}

std::optional<std::string> cached_query_profile(const profile_cache& cache, const std::string& plan_key,
                                                const std::string& host) {
    auto rec = cache.get("query_profile", query_profile_key(plan_key, host), query_profile_record_key);
    if (!rec) note(fmt::format("no cached profile for plan '{}' on '{}'", plan_key, host));
    return rec;
}

}  // namespace prof
