// ProfileCache (see cache.hpp).
#include "prof/cache.hpp"

#include "prof/errors.hpp"
#include "prof/fsutil.hpp"
#include "prof/keys.hpp"

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
    return path_under(root_, std::string(kind) + "/" + key_file_name(key) + ".json");
}

// Lexical checks cannot see symbolic links: a planted link inside ROOT could point a cache
// file anywhere. Resolve both sides (as far as they exist) and compare again.
std::string profile_cache::checked(const std::string& path) const {
    std::error_code ec;
    fs::path r = fs::weakly_canonical(fs::path(root_), ec);
    if (ec) throw cant_create_error(fmt::format("cannot resolve cache directory '{}': {}", root_, ec.message()));
    fs::path p = fs::weakly_canonical(fs::path(path), ec);
    if (ec) throw cant_create_error(fmt::format("cannot resolve cache path '{}': {}", path, ec.message()));
    auto rel = p.lexically_relative(r);
    if (rel.empty() || *rel.begin() == ".." || rel == ".")
        throw cant_create_error(fmt::format("refusing cache path '{}': it resolves to '{}', outside '{}'", path,
                                            p.string(), r.string()));
    return path;
}

void profile_cache::put(std::string_view kind, const std::vector<std::string>& key, std::string_view record) const {
    std::string path = path_for(kind, key);
    make_dirs(fs::path(path).parent_path().string());
    checked(path);
    std::string text(record);
    text.push_back('\n');
    write_file_atomic(path, text);
}

std::optional<std::string> profile_cache::get(std::string_view kind, const std::vector<std::string>& key) const {
    std::string path = path_for(kind, key);
    std::error_code ec;
    if (!fs::exists(fs::path(path), ec)) {
        if (ec) throw io_error(fmt::format("cannot read cache entry '{}': {}", path, ec.message()));
        return std::nullopt;
    }
    checked(path);
    try {
        return chomp(read_file(path));
    } catch (const no_input_error& e) {
        throw io_error(e.what());
    }
}

std::vector<profile_cache::entry> profile_cache::list(std::string_view kind) const {
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
        try {
            out.push_back({path, chomp(read_file(path))});
        } catch (const no_input_error&) {
            // Replaced or removed by a concurrent writer between listing and reading: skip it.
        }
    }
    return out;
}

}  // namespace prof
