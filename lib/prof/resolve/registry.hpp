// The run registry, writer side (prof-harvest --registry DIR): one profile file per run and an
// index of runs, written atomically and under a lock, file names from keys.hpp (prof(7)
// CONVENTIONS). prof-resolve reads the same layout.
//
// Layout of DIR:
//   runs/<key_file_name({run_id})>.json   one profile record (write_profile + '\n')
//   index.jsonl                           one line per run, sorted by run_id:
//                                         {"run_id":"…","signature":{…}|null,"measured_at":"…"|null}
//   .lock                                 flock(2)ed exclusively while runs/ or the index change
// The index is rewritten whole (temporary file + rename) under the lock, so a reader never
// sees a partial line and two concurrent writers never lose each other's runs.
#pragma once

#include "prof/io/json_in.hpp"
#include "prof/profile/profile.hpp"
#include "prof/resolve/resolve.hpp"

#include <functional>

#include <optional>
#include <string>
#include <vector>

namespace prof {

// One index line, keys in the order above (no '\n'); signature and measured_at null when absent.
std::string write_registry_line(const std::string& run_id, const std::optional<json_value>& signature,
                                const std::optional<std::string>& measured_at);

// DIR/runs/<encoded run_id>.json; refuses (exit 73) a path that would leave DIR.
std::string registry_run_path(const std::string& dir, const std::string& run_id);

// A writer's --registry DIR, checked before any input is read: an http(s) URL is a registry only
// to its readers (prof-resolve, prof-diff); taken as a path it would become a local directory
// named "http:". Throws usage_error (64) for a URL.
void check_registry_directory(const std::string& dir);

enum class registry_write { written, replaced, skipped_exists };

// Stores profile `p` (whose provenance.run_id must be set and non-empty: 65 otherwise) in the
// registry at `dir`, creating DIR and DIR/runs as needed. A run already present is left alone
// (skipped_exists) unless `force`, which replaces its file and its index line. The run file is
// written before the index; a run file that a writer killed in between left without an index
// line is indexed from its own provenance by the next store (a warning says so), and temporary
// files of dead writers are removed. Every path must resolve (links followed) inside DIR.
// Throws cant_create_error (exit 73) when anything cannot be written or a path leaves DIR,
// input_error (65) naming DIR/index.jsonl and the line when an existing index line is not valid
// JSON with a string run_id (the index is then left alone).
registry_write registry_store(const std::string& dir, const compute_profile& p, bool force);

// For a registry directory read by prof-resolve: `load_index`'s entries plus one for each run
// file in DIR/runs that the index does not list (read from the file's own provenance), each
// with a warning saying the index needs repair (a later registry_store repairs it); a missing
// index with run files present counts as an empty one. A run file that cannot be read is a
// warning only.
std::function<registry_index()> with_unindexed_runs(std::function<registry_index()> load_index, const std::string& dir);

}  // namespace prof
