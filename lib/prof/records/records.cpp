// The params file and the params digest of `cell` and `fit` records (see records.hpp).
#include "prof/records/records.hpp"

#include "prof/io/keys.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/json_out.hpp"
#include "prof/core/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

std::map<std::string, std::string> parse_params_file(std::string_view text, const std::string& source) {
    json_value v;
    try {
        v = parse_json_text(text);
    } catch (const field_error& e) {
        throw error(exit_code::data_err, fmt::format("{}: {}", source, e.what()));
    }
    if (!v.is_object())
        throw error(exit_code::data_err, fmt::format("{}: expected a JSON object of model → params", source));
    std::map<std::string, std::string> out;
    for (const auto& [model, params] : v.obj) {
        if (params.t == json_value::type::null) continue;
        if (!params.is_object())
            throw error(exit_code::data_err, fmt::format("{}: model '{}': expected its params as an object (or null), found {}",
                                                         source, model, shown_value(params.dump())));
        out[model] = params.dump();
    }
    return out;
}

std::string params_digest(const std::string& text) { return sha256_hex(text); }

}  // namespace prof
