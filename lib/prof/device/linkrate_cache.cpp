// Naming devices without CUDA, and the link rate cache (see linkrate_cache.hpp).
#include "prof/device/linkrate_cache.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace prof {

bool is_device_ordinal(const std::string& device) {
    return !device.empty() && std::all_of(device.begin(), device.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string canonical_device_uuid(std::string device) {
    for (auto& c : device) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (device.rfind("gpu-", 0) == 0) device.erase(0, 4);
    return "GPU-" + device;
}

std::optional<link_rate> fresh_cached_rate(const profile_cache& cache, const std::vector<std::string>& key,
                                           const std::string& what, double max_age_s) {
    auto text = cache.get("link_rate", key, link_rate_record_key);
    if (!text) return std::nullopt;
    try {
        auto cached = parse_link_rate_text(*text);
        if (auto why = link_rate_stale(cached, now_ns(), max_age_s)) {
            note(fmt::format("cached rate for {} is stale ({}): measuring", what, *why));
            return std::nullopt;
        }
        note(fmt::format("using the cached rate for {} (younger than --max-age)", what));
        return cached;
    } catch (const field_error& e) {
        warn(fmt::format("cached rate for {} is unreadable ({}): measuring it again", what, e.what()));
        return std::nullopt;
    }
}

std::optional<std::string> list_cached_rates(const std::string& dir, double max_age_s) {
    std::vector<cached_rate_row> rows;
    for (auto& e : profile_cache(dir).list("link_rate")) {
        cached_rate_row row{e.path, std::nullopt, ""};
        try {
            row.rate = parse_link_rate_text(e.record);
        } catch (const field_error& err) {
            row.problem = err.what();
        }
        rows.push_back(std::move(row));
    }
    if (rows.empty()) return std::nullopt;
    return format_cached_rates(rows, now_ns(), max_age_s);
}

}  // namespace prof
