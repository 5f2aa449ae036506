// ProfileCache (see cache.hpp).
#include "prof/resolve/cache.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_scan.hpp"
#include "prof/resolve/keys.hpp"

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
    for (const auto& k : key)
        if (k.empty())
            throw error(exit_code::data_err, fmt::format("a {} with an empty key field cannot be cached (it could never be "
                                                         "asked for)", kind));
    return path_under(root_, std::string(kind) + "/" + key_file_name(key) + ".json");
}

// Lexical checks cannot see symbolic links: a planted link inside ROOT could point a cache
// file anywhere. Resolve both sides (as far as they exist) and compare again.
std::string profile_cache::checked(const std::string& path) const { return checked_inside(root_, path, "cache"); }

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

void profile_cache::put(std::string_view kind, const std::vector<std::string>& key, std::string_view record) const {
    std::string path = path_for(kind, key);
    std::string dir = fs::path(path).parent_path().string();
    make_dirs(dir);
    checked(path);
    remove_stale_temps(dir);  // left by writers killed before their rename
    std::string text(record);
    text.push_back('\n');
    write_file_atomic(path, text);
}

std::optional<std::string> profile_cache::get(std::string_view kind, const std::vector<std::string>& key,
                                              const record_key& key_of) const {
    std::string path = path_for(kind, key);
    std::error_code ec;
    if (!fs::exists(fs::path(path), ec)) {
        if (ec) throw io_error(fmt::format("cannot read cache entry '{}': {}", path, ec.message()));
        return std::nullopt;
    }
    checked(path);
    std::string record;
    try {
        record = chomp(read_file(path));
    } catch (const no_input_error& e) {
        throw io_error(e.what());
    }
    if (auto why = problem(key_file_name(key) + ".json", record, key_of)) {
        warn(fmt::format("cache entry '{}' is not usable ({}): treated as a miss; the next store of this key replaces it",
                         path, *why));
        return std::nullopt;
    }
    return record;
}

std::vector<profile_cache::entry> profile_cache::list(std::string_view kind, const record_key& key_of) const {
    check_kind_word(kind);
    std::string dir = path_under(root_, std::string(kind));
    std::vector<std::string> names;
    std::error_code ec;
    if (!fs::is_directory(fs::path(dir), ec)) return {};
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        // Temporary names are "FILE.json.tmp.<pid>.<n>"; only finished records end in ".json".
        if (ends_with(name, ".json") && it->is_regular_file()) names.push_back(name);
    }
    if (ec) throw io_error(fmt::format("cannot list cache directory '{}': {}", dir, ec.message()));
    std::sort(names.begin(), names.end());
    std::vector<entry> out;
    for (const auto& n : names) {
        std::string path = checked(dir + "/" + n);
        std::string record;
        try {
            record = chomp(read_file(path));
        } catch (const no_input_error&) {
            continue;  // replaced or removed by a concurrent writer between listing and reading
        }
        if (auto why = problem(n, record, key_of)) {
            warn(fmt::format("cache entry '{}' is not usable ({}): skipped", path, *why));
            continue;
        }
        out.push_back({path, std::move(record)});
    }
    return out;
}

}  // namespace prof
