// The panel's data signature (see signature.hpp).
#include "prof/profile/signature.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/keys.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace prof {
namespace {

json_value uint_value(std::uint64_t u) {
    json_value v;
    v.t = json_value::type::uinteger;
    v.u = u;
    return v;
}

}  // namespace

std::pair<std::string, json_value> parse_signature_key(const std::string& spec) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
        throw usage_error(fmt::format("--signature-key: expected KEY=VALUE, found \"{}\"", spec));
    std::string key = spec.substr(0, eq), text = spec.substr(eq + 1);
    // Inside an array so that a scalar (2026, true, "x") is a JSON text too.
    try {
        json_value wrapped = parse_json_text("[" + text + "]");
        if (wrapped.arr.size() == 1) return {key, wrapped.arr.front()};
    } catch (const field_error&) {
    }
    json_value v;
    v.t = json_value::type::string;
    v.s = text;
    return {key, v};
}

json_value data_signature(const std::vector<series_ref>& usable,
                          const std::vector<std::pair<std::string, json_value>>& extra) {
    std::map<std::string, json_value> members;
    std::vector<std::string> ids;
    std::vector<std::uint64_t> lengths;
    ids.reserve(usable.size());
    lengths.reserve(usable.size());
    for (const auto& s : usable) {
        ids.push_back(s.ts_id);
        lengths.push_back(s.n_obs);
    }
    std::sort(ids.begin(), ids.end());
    std::string joined;
    for (const auto& id : ids) joined += id + "\n";
    members["n_series"] = uint_value(usable.size());
    json_value digest;
    digest.t = json_value::type::string;
    digest.s = sha256_hex(joined);
    members["ts_ids_sha256"] = digest;
    json_value n_obs;
    n_obs.t = json_value::type::object;
    if (!lengths.empty()) {
        std::sort(lengths.begin(), lengths.end());
        std::uint64_t total = 0;
        for (auto n : lengths) total += n;
        std::size_t m = lengths.size();
        json_value median;
        if (m % 2 == 1) {
            median = uint_value(lengths[m / 2]);
        } else if ((lengths[m / 2 - 1] + lengths[m / 2]) % 2 == 0) {
            median = uint_value(lengths[m / 2 - 1] / 2 + lengths[m / 2] / 2 + (lengths[m / 2 - 1] % 2));
        } else {
            median.t = json_value::type::number;
            median.d = (static_cast<double>(lengths[m / 2 - 1]) + static_cast<double>(lengths[m / 2])) / 2.0;
        }
        n_obs.obj = {{"max", uint_value(lengths.back())},
                     {"median", median},
                     {"min", uint_value(lengths.front())},
                     {"total", uint_value(total)}};
    }
    members["n_obs"] = n_obs;
    for (const auto& [k, v] : extra) {
        if (k == "n_series" || k == "n_obs" || k == "ts_ids_sha256")
            throw usage_error(fmt::format("--signature-key: '{}' is computed from the panel and cannot be set", k));
        if (!members.emplace(k, v).second)
            throw usage_error(fmt::format("--signature-key: '{}' is given twice", k));
    }
    json_value out;
    out.t = json_value::type::object;
    for (auto& [k, v] : members) out.obj.emplace_back(k, std::move(v));  // std::map: sorted by key
    return out;
}

}  // namespace prof
