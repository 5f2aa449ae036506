// ProfileCache (see cache.hpp).
#include "prof/io/cache.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/io/keys.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <system_error>

namespace prof {

namespace fs = std::filesystem;

namespace {
void check_kind_word(std::string_view kind) {
    bool ok = !kind.empty() && std::all_of(kind.begin(), kind.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
    if (!ok) throw error(exit_code::software, fmt::format("cache kind '{}' is not a plain word", kind));
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string chomp(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}
}  // namespace

profile_cache::profile_cache(std::string root) : root_(std::move(root)) {
    if (root_.empty()) throw usage_error("the cache directory name is empty");
}

std::string profile_cache::path_for(std::string_view kind, const std::vector<std::string>& key) const {
    check_kind_word(kind);
    for (const auto& k : key) {
        if (k.empty())
            throw error(exit_code::data_err, fmt::format("a {} with an empty key field cannot be cached (it could never be "
                                                         "asked for)", kind));
        if (k.find('\0') != std::string::npos)
            throw error(exit_code::data_err, fmt::format("a {} whose key holds a NUL byte cannot be cached (no command "
                                                         "line could ask for it)", kind));
    }
    return path_under(root_, std::string(kind) + "/" + key_file_name(key) + ".json");
}

std::optional<std::string> profile_cache::problem(const std::string& name, const std::string& record,
                                                  const record_key& key_of) const {
    if (record.find_first_not_of(" \t\r\n") == std::string::npos) return "the file is empty";
    if (!simdjson::validate_utf8(record.data(), record.size())) return "invalid UTF-8";
    if (json_depth_overflow(record) != std::string::npos) return json_depth_message();
    json_scanner sc{record.data(), record.data() + record.size()};
    sc.syntax_only = true;
    sc.ws();
    bool object = sc.p < sc.e && *sc.p == '{';
    if (!sc.skip_value()) return "malformed JSON (cut short or corrupt)";
    sc.ws();
    if (sc.p != sc.e) return "unexpected content after the JSON object";
    if (!object) return "expected a JSON object";
    if (!key_of) return std::nullopt;
    std::vector<std::string> own;
    try {
        own = key_of(record);
    } catch (const field_error& e) {
        return std::string(e.what());
    } catch (const std::exception& e) {  // prof::error, simdjson_error: the record is not usable either way
        return std::string(e.what());
    }
    std::string own_name = key_file_name(own) + ".json";
    if (own_name != name) return fmt::format("it holds the record of key '{}', not of this file's key", key_file_name(own));
    return std::nullopt;
}

// Every access goes through descriptors (rooted_dir): the root opened once, the kind's directory
// opened from it with O_NOFOLLOW, each file opened or renamed from that, so a link planted or
// swapped in anywhere under ROOT is never followed. A planted link or FIFO where a record
// should be is a miss (get) or skipped (list), with a warning, and the next put replaces it.
std::optional<rooted_dir> profile_cache::kind_dir(std::string_view kind, bool create) const {
    check_kind_word(kind);
    if (!create) {
        std::error_code ec;
        if (!fs::exists(fs::path(root_), ec)) return std::nullopt;
    }
    rooted_dir root(root_, "cache", create);
    return root.sub(kind, create);
}

void profile_cache::put(std::string_view kind, const std::vector<std::string>& key, std::string_view record) const {
    std::string path = path_for(kind, key);
    std::optional<rooted_dir> dir = kind_dir(kind, true);
    dir->remove_stale_temps();  // left by writers killed before their rename
    std::string text(record);
    text.push_back('\n');
    dir->write_atomic(fs::path(path).filename().string(), text);
}

std::optional<std::string> profile_cache::get(std::string_view kind, const std::vector<std::string>& key,
                                              const record_key& key_of) const {
    std::string path = path_for(kind, key);
    std::string name = fs::path(path).filename().string();
    std::optional<rooted_dir> dir = kind_dir(kind, false);
    if (!dir) return std::nullopt;
    std::string refused;
    std::optional<std::string> text = dir->read_regular(name, refused);
    if (!text && refused.empty()) return std::nullopt;
    if (text) *text = chomp(std::move(*text));
    std::optional<std::string> why = text ? problem(name, *text, key_of) : refused;
    if (why) {
        warn(fmt::format("cache entry '{}' is not usable ({}): treated as a miss; the next store of this key replaces it",
                         path, *why));
        return std::nullopt;
    }
    return text;
}

std::vector<profile_cache::entry> profile_cache::list(std::string_view kind, const record_key& key_of) const {
    std::optional<rooted_dir> dir = kind_dir(kind, false);
    if (!dir) return {};
    std::vector<std::string> names;
    for (auto& name : dir->names())
        // Temporary names are "FILE.json.tmp.<pid>.<n>"; only finished records end in ".json".
        if (ends_with(name, ".json")) names.push_back(std::move(name));
    std::sort(names.begin(), names.end());
    std::vector<entry> out;
    for (const auto& n : names) {
        std::string path = dir->path_of(n), refused;
        std::optional<std::string> text = dir->read_regular(n, refused);
        if (!text && refused.empty()) continue;  // replaced or removed by a concurrent writer since the listing
        if (text) *text = chomp(std::move(*text));
        std::optional<std::string> why = text ? problem(n, *text, key_of) : refused;
        if (why) {
            warn(fmt::format("cache entry '{}' is not usable ({}): skipped", path, *why));
            continue;
        }
        out.push_back({path, std::move(*text)});
    }
    return out;
}

}  // namespace prof
