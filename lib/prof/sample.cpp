// The gate and the sample (see sample.hpp).
#include "prof/sample.hpp"

#include "prof/errors.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace prof {

profile_mode parse_profile_mode(const std::string& text, const std::string& flag) {
    if (text == "off") return profile_mode::off;
    if (text == "always") return profile_mode::always;
    if (text == "auto") return profile_mode::automatic;
    throw usage_error(fmt::format("{}: expected off, always or auto, got '{}'", flag, text));
}

gate_decision should_profile(profile_mode mode, std::uint64_t cells, std::uint64_t min_cells) {
    switch (mode) {
    case profile_mode::off:
        return {false, "profiling is off (--mode off): nothing sampled"};
    case profile_mode::always:
        return {true, ""};
    case profile_mode::automatic:
        if (cells >= min_cells) return {true, ""};
        return {false, fmt::format("{} cells is below --min-cells {}: a pre-pass would cost more than it saves; "
                                   "nothing sampled (use --mode always to sample anyway)",
                                   cells, min_cells)};
    }
    return {false, "unknown mode"};
}

std::vector<std::size_t> spread_indices(std::size_t n, std::size_t k) {
    k = std::min(k, n);
    std::vector<std::size_t> out;
    if (k == 0) return out;
    if (k == 1) return {(n - 1) / 2};
    // floor(j(n-1)/(k-1) + 1/2) = floor((2j(n-1) + (k-1)) / (2(k-1))), all in integers.
    for (std::size_t j = 0; j < k; ++j) out.push_back((2 * j * (n - 1) + (k - 1)) / (2 * (k - 1)));
    return out;
}

model_spec parse_model_spec(const std::string& text) {
    auto colon = text.find(':');
    model_spec m;
    m.model_type = text.substr(0, colon);
    m.family = colon == std::string::npos ? m.model_type : text.substr(colon + 1);
    if (m.model_type.empty() || m.family.empty() || m.family.find(':') != std::string::npos)
        throw usage_error(fmt::format("--model: expected NAME or NAME:FAMILY, got '{}'", text));
    return m;
}

std::vector<series_ref> select_sample(std::vector<series_ref> usable, std::size_t k) {
    std::sort(usable.begin(), usable.end(), [](const series_ref& a, const series_ref& b) {
        return a.n_obs != b.n_obs ? a.n_obs < b.n_obs : a.ts_id < b.ts_id;
    });
    std::vector<series_ref> out;
    for (std::size_t i : spread_indices(usable.size(), k)) out.push_back(usable[i]);
    return out;
}

std::vector<cell> sample_cells(const std::vector<series_ref>& sample, const std::vector<model_spec>& models) {
    std::vector<cell> out;
    for (const auto& s : sample)
        for (const auto& m : models) out.push_back(cell{s.ts_id, m.model_type, m.family, s.n_obs});
    return out;
}

}  // namespace prof
