// Keys in file names (prof-records(5) PROFILE CACHE): percent-encoded components joined with '@', long names cut to
// 150 bytes + '~' + SHA-256, and a path check that refuses anything outside the root.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace prof {

// Every byte outside [A-Za-z0-9_-] becomes %XX (upper-case hex), so ".", ".." and "/" can
// never name a path and '@' never appears in an encoded component.
std::string percent_encode(std::string_view component);
// The inverse; throws field_error on a malformed escape.
std::string percent_decode(std::string_view encoded);
// Components encoded and joined with '@'; a name over 200 bytes keeps its first 150 bytes,
// then '~' and the lower-case hex SHA-256 of the whole joined name. Two different keys never
// share a name.
std::string key_file_name(const std::vector<std::string>& components);
// Lower-case hex SHA-256 of `data` (FIPS 180-4; prof's own, so no binary links libcrypto).
std::string sha256_hex(std::string_view data);
// root + "/" + name, after checking that the lexically normalised result lies inside root;
// throws prof::error (exit 73) otherwise.
std::string path_under(const std::string& root, const std::string& name);
// The same name escaped once more for a URL path ('%' → "%25").
std::string url_escape_name(std::string_view name);

}  // namespace prof
