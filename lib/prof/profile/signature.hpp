// The data signature of a run's panel (prof-sample --signature-out): what prof-resolve compares
// to decide whether a stored run measured the same data.
//
// Keys, in canonical form (members sorted by key, as every json_value):
//   n_series       usable series (n_obs > 0), an integer
//   n_obs          {"min","median","max","total"} of the usable series' lengths (median: the
//                  mean of the two middle values for an even count)
//   ts_ids_sha256  SHA-256 (hex) of the usable ts_ids sorted bytewise, each followed by '\n'
//   ...            the user's own keys (--signature-key K=V), e.g. a data snapshot date
// Signatures match only when equal as JSON values, so any change to the panel — one series
// more, one observation longer, another id — is a different signature.
#pragma once

#include "prof/io/json_in.hpp"
#include "prof/profile/sample.hpp"

#include <string>
#include <utility>
#include <vector>

namespace prof {

// One K=V of --signature-key: V is read as JSON when it is a JSON text (2026, true,
// {"a":1}), else kept as a string. Throws usage_error for a missing '=' or an empty key.
std::pair<std::string, json_value> parse_signature_key(const std::string& spec);

// The signature of `usable` plus `extra` keys. Throws usage_error when an extra key is one of
// the keys above or is given twice.
json_value data_signature(const std::vector<series_ref>& usable,
                          const std::vector<std::pair<std::string, json_value>>& extra);

}  // namespace prof
