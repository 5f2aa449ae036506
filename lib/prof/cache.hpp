// ProfileCache: a plain directory of JSON records under percent-encoded keys (SPEC §1), shared
// by prof-spans (query_profile) and prof-linkrate (link_rate).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// Layout: ROOT/<kind>/<key_file_name(components)>.json, one record per file, the record's JSON
// text followed by '\n'. The kind ("query_profile", "link_rate") is a fixed lower-case word;
// the key components are whatever identifies the record (SPEC §1 "Keys in file names": every
// byte outside [A-Za-z0-9_-] percent-encoded, components joined with '@', long names cut to
// 150 bytes + '~' + SHA-256), so two different keys never share a file and no key can name a
// path outside its kind's directory. Every path is also checked after resolving symbolic
// links: one that lands outside ROOT is refused (exit 73). Writes are atomic (temporary file in
// the same directory, fsync, rename: write_file_atomic), so a reader never sees a partial
// record and concurrent writers of one key leave one whole record (the last rename wins).
// What a record means (its staleness, its key fields) is the caller's business: the cache
// stores and returns text.
class profile_cache {
public:
    // ROOT need not exist yet; put() creates it.
    explicit profile_cache(std::string root);

    const std::string& root() const { return root_; }
    // The file a key maps to (checked lexically to lie under ROOT; throws cant_create_error).
    std::string path_for(std::string_view kind, const std::vector<std::string>& key) const;
    // Stores one record (JSON text without the newline) under the key, replacing any old one.
    // Throws cant_create_error (73) when the directory or file cannot be written.
    void put(std::string_view kind, const std::vector<std::string>& key, std::string_view record) const;
    // The stored record text (without the trailing newline), or nullopt when the key has no
    // file. Throws io_error (74) when the file exists but cannot be read.
    std::optional<std::string> get(std::string_view kind, const std::vector<std::string>& key) const;

    struct entry {
        std::string path;    // the file
        std::string record;  // its JSON text, without the trailing newline
    };
    // Every record of one kind, ordered by file name (byte-stable). Temporary files of writes
    // in progress are not records and are skipped. A missing directory lists nothing.
    std::vector<entry> list(std::string_view kind) const;

private:
    std::string checked(const std::string& path) const;
    std::string root_;
};

}  // namespace prof
