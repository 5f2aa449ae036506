// The gate and the sample (see sample.hpp).
#include "prof/profile/sample.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <map>

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

model_spec parse_model_spec(const std::string& text, std::string_view flag) {
    auto colon = text.find(':');
    model_spec m;
    m.model_type = text.substr(0, colon);
    m.family = colon == std::string::npos ? m.model_type : text.substr(colon + 1);
    if (m.model_type.empty() || m.family.empty() || m.family.find(':') != std::string::npos)
        throw usage_error(fmt::format("{}: expected NAME or NAME:FAMILY, got '{}'", flag, text));
    return m;
}

spread_rule parse_spread_rule(const std::string& text, std::string_view flag) {
    if (text == "rank") return spread_rule::rank;
    if (text == "mixed") return spread_rule::mixed;
    if (text == "log") return spread_rule::log;
    throw usage_error(fmt::format("{}: expected rank, mixed or log, got '{}'", flag, text));
}

std::string_view spread_rule_name(spread_rule rule) {
    switch (rule) {
    case spread_rule::rank: return "rank-spread";
    case spread_rule::mixed: return "rank-log-spread";
    case spread_rule::log: return "log-spread";
    }
    return "rank-spread";
}

std::size_t rank_picks(spread_rule rule, std::size_t k) {
    switch (rule) {
    case spread_rule::rank: return k;
    case spread_rule::mixed: return std::min(k, std::max<std::size_t>(2, (k + 1) / 2));
    case spread_rule::log: return std::min<std::size_t>(k, 2);
    }
    return k;
}

namespace {

// Of the series strictly between indices a and b of `sorted` (by (n_obs, ts_id); all of them
// free, a + 1 < b), the one nearest `target` in |ln n_obs − ln target|; ties go to the shorter
// series, then the smaller ts_id (the lower index). Only the first series at or above the target
// and the first of the run of equal lengths just below it can win.
std::size_t nearest_between(const std::vector<series_ref>& sorted, std::size_t a, std::size_t b, double target) {
    auto first = sorted.begin() + static_cast<std::ptrdiff_t>(a + 1);
    auto last = sorted.begin() + static_cast<std::ptrdiff_t>(b);
    auto above = std::lower_bound(first, last, target,
                                  [](const series_ref& s, double t) { return static_cast<double>(s.n_obs) < t; });
    if (above == first) return static_cast<std::size_t>(above - sorted.begin());
    std::uint64_t below_len = std::prev(above)->n_obs;
    auto below = std::lower_bound(first, above, below_len,
                                  [](const series_ref& s, std::uint64_t n) { return s.n_obs < n; });
    std::size_t i_below = static_cast<std::size_t>(below - sorted.begin());
    if (above == last) return i_below;
    double lt = std::log(target);
    double d_below = lt - std::log(static_cast<double>(below_len));
    double d_above = std::log(static_cast<double>(above->n_obs)) - lt;
    // Equal distances up to rounding (a target at the geometric mean of two lengths) are a tie.
    return d_above < d_below - 1e-9 ? static_cast<std::size_t>(above - sorted.begin()) : i_below;
}

}  // namespace

std::vector<series_ref> select_sample(std::vector<series_ref> usable, std::size_t k, spread_rule rule) {
    std::sort(usable.begin(), usable.end(), [](const series_ref& a, const series_ref& b) {
        return a.n_obs != b.n_obs ? a.n_obs < b.n_obs : a.ts_id < b.ts_id;
    });
    k = std::min(k, usable.size());
    std::vector<std::size_t> picks = spread_indices(usable.size(), rank_picks(rule, k));
    auto ln = [&](std::size_t i) { return std::log(static_cast<double>(usable[i].n_obs)); };
    // Each further pick splits the widest gap in ln n_obs between neighbouring picks that holds a
    // length strictly between its ends' (ties: the shorter gap), at the series inside nearest the
    // gap's geometric mean. A gap with only its ends' lengths inside would gain a repeat, not a
    // length: only when no gap holds a new length does a pick go to the middle of the gap with
    // the most series inside (ties: the shorter gap), where the panel's cells are. The rank part
    // holds both ends whenever a pick is left (k_r >= 2), so every series left is in some gap.
    auto holds_new_length = [&](std::size_t a, std::size_t b) {
        auto after_a = std::upper_bound(usable.begin() + static_cast<std::ptrdiff_t>(a) + 1,
                                        usable.begin() + static_cast<std::ptrdiff_t>(b), usable[a].n_obs,
                                        [](std::uint64_t n, const series_ref& s) { return n < s.n_obs; });
        return after_a != usable.begin() + static_cast<std::ptrdiff_t>(b) && after_a->n_obs < usable[b].n_obs;
    };
    while (picks.size() < k) {
        std::size_t widest = picks.size(), fullest = picks.size();
        double widest_ln = 0;
        for (std::size_t g = 0; g + 1 < picks.size(); ++g) {
            std::size_t a = picks[g], b = picks[g + 1];
            if (b - a < 2) continue;
            if (fullest == picks.size() || b - a > picks[fullest + 1] - picks[fullest]) fullest = g;
            if (!holds_new_length(a, b)) continue;
            double width = ln(b) - ln(a);
            if (widest == picks.size() || width > widest_ln + 1e-9) {
                widest = g;
                widest_ln = width;
            }
        }
        std::size_t pick;
        if (widest < picks.size()) {
            std::size_t a = picks[widest], b = picks[widest + 1];
            double target = std::sqrt(static_cast<double>(usable[a].n_obs) * static_cast<double>(usable[b].n_obs));
            pick = nearest_between(usable, a, b, target);
        } else {
            pick = (picks[fullest] + picks[fullest + 1]) / 2;
        }
        picks.insert(std::upper_bound(picks.begin(), picks.end(), pick), pick);
    }
    std::vector<series_ref> out;
    for (std::size_t i : picks) out.push_back(usable[i]);
    return out;
}

std::vector<cell> sample_cells(const std::vector<series_ref>& sample, const std::vector<model_spec>& models) {
    std::vector<cell> out;
    for (const auto& s : sample)
        for (const auto& m : models) out.push_back(cell{s.ts_id, m.model_type, m.family, s.n_obs});
    return out;
}

panel read_panel(const std::string& spec, const bad_line_policy& policy) {
    panel out;
    std::map<std::string, std::size_t> first_line;
    auto stats = for_each_record({spec}, policy, [&](simdjson::ondemand::object& obj, const record_place& at) {
        std::size_t line = at.line;
        std::optional<std::string> ts_id;
        std::optional<std::uint64_t> n_obs;
        for (auto field : obj) {
            std::string_view k = field.unescaped_key();
            if (k == "ts_id") ts_id = std::string(read_id(field.value(), k));  // 7 → "7", as prof-harvest
            else if (k == "n_obs") n_obs = read_count(field.value(), k);
        }
        if (!ts_id) missing_field("ts_id");
        auto [it, fresh] = first_line.emplace(*ts_id, line);
        if (!fresh) throw field_error(fmt::format("field 'ts_id': \"{}\" already given on line {}", *ts_id, it->second));
        if (!n_obs || *n_obs == 0) {
            ++out.unusable;
            return;
        }
        out.usable.push_back({*ts_id, *n_obs});
    });
    out.bad_lines = stats.bad_lines;
    return out;
}

namespace {

std::uint64_t count_in(const json_value& o, std::string_view key, const std::string& where) {
    const json_value* v = o.find(key);
    if (!v) missing_field(where + "." + std::string(key));
    if (v->t == json_value::type::uinteger) return v->u;
    if (v->t == json_value::type::integer && v->i >= 0) return static_cast<std::uint64_t>(v->i);
    throw field_error(fmt::format("field '{}.{}': expected a non-negative integer", where, key));
}

}  // namespace

length_distribution sample_lengths(const json_value& sample) {
    const json_value* lengths = sample.find("lengths");
    if (!lengths || lengths->t != json_value::type::array)
        throw field_error("field 'sample.lengths': expected an array of length bins");
    length_distribution d;
    for (std::size_t i = 0; i < lengths->arr.size(); ++i) {
        const json_value& b = lengths->arr[i];
        std::string where = fmt::format("sample.lengths[{}]", i);
        if (!b.is_object()) throw field_error(fmt::format("field '{}': expected an object", where));
        length_bin bin;
        bin.n_obs = count_in(b, "n_obs", where);
        bin.n_obs_min = count_in(b, "n_obs_min", where);
        bin.n_obs_max = count_in(b, "n_obs_max", where);
        bin.n_series = static_cast<double>(count_in(b, "n_series", where));
        if (!(0 < bin.n_obs_min && bin.n_obs_min <= bin.n_obs && bin.n_obs <= bin.n_obs_max))
            throw field_error(fmt::format("field '{}': expected 0 < n_obs_min <= n_obs <= n_obs_max", where));
        if (!d.bins.empty() && bin.n_obs_min <= d.bins.back().n_obs_max)
            throw field_error(fmt::format("field '{}': bins must be in increasing, disjoint n_obs ranges", where));
        if (d.bins.size() == max_length_bins)
            throw field_error(fmt::format("field 'sample.lengths': more than {} bins", max_length_bins));
        d.bins.push_back(bin);
    }
    return d;
}

bool is_sample_record(simdjson::ondemand::object& obj) {
    // The kind is read from the object's text by a parser of its own. Reading it here through
    // obj and then the whole record again after reset() would unescape strings twice into the
    // document's string buffer, which simdjson sizes for one copy of each string of the line:
    // a long enough string then writes past its end.
    std::string_view raw = obj.raw_json();
    obj.reset();
    bool sample = false;
    parse_object_text(raw, [&](simdjson::ondemand::object& own) {
        bool seen = false;  // the first "kind" decides; every field is passed (the text is read to its end)
        for (auto field : own) {
            if (seen || std::string_view(field.unescaped_key()) != "kind") continue;
            seen = true;
            auto v = field.value();
            if (simdjson::ondemand::json_type(v.type()) == simdjson::ondemand::json_type::string)
                sample = std::string_view(v.get_string()) == "sample";
        }
    });
    return sample;
}

void keep_sample_record(std::optional<json_value>& kept, json_value record) {
    if (!kept) kept = std::move(record);
    else if (!(*kept == record))
        throw field_error("a second, different sample record: a profile stands for one sample (aggregate each "
                          "pre-pass on its own)");
}

json_value read_object_value(simdjson::ondemand::object& obj) {
    std::string_view raw = obj.raw_json();  // the object's own text, read as any JSON text is
    return parse_json_text(raw);
}

}  // namespace prof
