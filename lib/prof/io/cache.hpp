// ProfileCache: a plain directory of JSON records under percent-encoded keys, shared
// by prof-spans (query_profile) and prof-linkrate (link_rate).
#pragma once

#include "prof/io/fsutil.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// Layout: ROOT/<kind>/<key_file_name(components)>.json, one record per file, the record's JSON
// text followed by '\n'. The kind ("query_profile", "link_rate") is a fixed lower-case word;
// the key components are whatever identifies the record (every
// byte outside [A-Za-z0-9_-] percent-encoded, components joined with '@', long names cut to
// 150 bytes + '~' + SHA-256), so two different keys never share a file and no key can name a
// path outside its kind's directory. Every file is reached through directory descriptors with
// O_NOFOLLOW (rooted_dir), never by a path checked and then opened again: a kind directory that
// is a symbolic link is refused (exit 73), and a link, FIFO or anything but a regular file where
// a record should be is not read (a miss, or skipped by list, with a warning) and is replaced by
// the next put. Writes are atomic (temporary file in
// the same directory, fsync, rename: write_file_atomic), so a reader never sees a partial
// record and concurrent writers of one key leave one whole record (the last rename wins); a
// put removes the temporary files that killed writers left in its kind's directory.
// What a record means (its staleness, its key fields) is the caller's business, told to the
// cache as a record_key function: every read checks the stored text against the key it is read
// for (and, through that function, against itself), so a file renamed to another key, edited,
// cut or emptied is never served.
//
// The key a record's own fields name (link_rate_key of its device, host, direction, memory and
// size). It throws field_error when the record cannot be read or disagrees with itself (a rate
// that is not the median of its samples).
using record_key = std::function<std::vector<std::string>(std::string_view record)>;

class profile_cache {
public:
    // ROOT need not exist yet; put() creates it.
    explicit profile_cache(std::string root);

    const std::string& root() const { return root_; }
    // The file a key maps to (checked lexically to lie under ROOT; throws cant_create_error). A
    // key with an empty component, or one holding a NUL byte, is refused (prof::error, exit 65):
    // no reader can ask for it.
    std::string path_for(std::string_view kind, const std::vector<std::string>& key) const;
    // Stores one record (JSON text without the newline) under the key, replacing any old one.
    // Throws cant_create_error (73) when the directory or file cannot be written.
    void put(std::string_view kind, const std::vector<std::string>& key, std::string_view record) const;
    // The stored record text (without the trailing newline), or nullopt when the key has no
    // file. A file that is empty, not one JSON object, or whose record `key_of` refuses or maps
    // to another key is a miss too, with a warning on stderr naming the file and why (the
    // caller's next put() rewrites it). Throws io_error (74) when the file exists but cannot be
    // read. Without key_of only the JSON check is made.
    std::optional<std::string> get(std::string_view kind, const std::vector<std::string>& key,
                                   const record_key& key_of = {}) const;

    struct entry {
        std::string path;    // the file
        std::string record;  // its JSON text, without the trailing newline
    };
    // Every record of one kind, ordered by file name (byte-stable). Temporary files of writes
    // in progress are not records and are skipped, and so (with a warning, as get) is a file
    // whose record does not belong under its name. A missing directory lists nothing.
    std::vector<entry> list(std::string_view kind, const record_key& key_of = {}) const;

private:
    // ROOT/KIND opened through descriptors (created when `create`); nullopt when it does not
    // exist and `create` is false. A link in its place is refused (73).
    std::optional<rooted_dir> kind_dir(std::string_view kind, bool create) const;
    // Why `record`, stored under file name `name`, is not to be served; nullopt if it is.
    std::optional<std::string> problem(const std::string& name, const std::string& record, const record_key& key_of) const;
    std::string root_;
};

}  // namespace prof
