// Which evidence a run sizes from (prof-resolve): the precedence as a pure function over
// injected loaders, the pinned-source drift check, and the real loaders (a registry directory or
// URL in prof-harvest's layout, the baseline file shipped with prof).
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/http.hpp"
#include "prof/io/json_in.hpp"
#include "prof/profile/profile.hpp"
#include "prof/core/units.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

// ---- the decision ---------------------------------------------------------------------------

// One line of a registry's index.jsonl as prof-harvest writes it (registry.hpp):
// {"run_id":"...","signature":{...},"measured_at":"RFC 3339"}. measured_at is compared as an
// instant; nullopt (null in the index) sorts before every instant. Many runs share
// one signature, so lines whose signature text is identical share one parsed value (a large index
// over a few signatures then holds a pointer a line, not a parsed tree each).
struct registry_entry {
    std::string run_id;
    std::shared_ptr<const json_value> signature;  // any JSON value (never null); only an equal object matches
    std::optional<time_point_ns> measured_at;
};

// What the index loader returns: the entries it could read and warnings about the lines it skipped.
struct registry_index {
    std::vector<registry_entry> entries;
    std::vector<std::string> warnings;
};

// The I/O the precedence needs, injected so every branch is unit-tested offline. A loader that
// fails throws (any std::exception; its what() becomes part of a warning); an empty function
// means "not configured" (no --registry, --baseline none).
struct evidence_loaders {
    std::function<compute_profile(const std::string& run_id)> load_run;  // runs/<id>.json
    std::function<registry_index()> load_index;                          // index.jsonl
    std::function<compute_profile()> load_baseline;
    std::string registry_name;  // the --registry value, for messages
};

// The operator's request. `source` is "auto", "none", "baseline" or any other text, which names a
// run (so a run literally called "auto", "none" or "baseline" cannot be pinned).
struct resolve_request {
    std::string source = "auto";
    std::string mode = "auto";            // off | always | auto (always and auto both walk the chain)
    std::optional<json_value> signature;  // this run's data signature; nullopt = not given
    bool force = false;
    // --strict: exit 65 (prof::error data_err) instead of falling back when a pinned run cannot
    // be loaded (no registry, missing from the index, a missing or corrupt run file, a registry
    // that does not answer), naming why, or when the result has no evidence
    // (basis assumed) or an axis a planner would have to assume (a family with no core count,
    // memory or wall time).
    bool strict = false;
};

// A top-level key on which two signatures differ, with its value on each side (nullopt = the
// key is absent on that side). A non-object signature is compared as a whole, under key "".
struct signature_difference {
    std::string key;
    std::optional<json_value> pinned, current;
};

// The keys (sorted) on which `pinned` and `current` differ as JSON values (key order never
// matters: json_value objects are canonical). Empty iff the signatures are equal.
std::vector<signature_difference> signature_differences(const json_value& pinned, const json_value& current);

// The outcome of checking a pinned source (step 2 of the precedence).
struct pin_check {
    enum class state {
        not_pinned,  // mode off, or source auto/none/baseline: nothing to check
        unloadable,  // the pin could not be loaded: not drift (a warning; resolve falls back)
        unchecked,   // loaded, but one side has no signature: honoured with a warning
        matches,     // loaded and the signatures are equal
        drifted,     // loaded and the signatures differ
    };
    state status = state::not_pinned;
    std::string run_id;
    std::optional<compute_profile> profile;  // the pinned harvest, when it loaded
    std::vector<signature_difference> differences;
    std::vector<std::string> warnings;
    std::string drift_message;  // set when drifted: the run, both signatures, each differing key
    // unloadable only: the registry's index was read and does not list the pin (a typo, a run
    // never harvested), and its run ids nearest to the pin (nearest_run_ids).
    bool missing_from_index = false;
    std::vector<std::string> nearest;
};

// The run ids of `entries` nearest to `run_id` by edit distance (Levenshtein, bytes), at most
// `k`, nearest first (ties: the greater id first, so the newer of nightly-N runs leads).
std::vector<std::string> nearest_run_ids(const std::string& run_id, const std::vector<registry_entry>& entries,
                                         std::size_t k = 3);

// The drift of a pin used under --force, one warning per differing key.
std::vector<std::string> forced_drift_warnings(const pin_check& c);

// Step 2 alone (prof-resolve --check): loads the pin, if there is one, and compares its
// signature (the harvest's provenance.signature) with the request's. Never throws for a loader
// failure: that is state::unloadable with a warning.
pin_check check_pinned_source(const resolve_request& req, const evidence_loaders& io);

// Refusal of a drifted pin: exit 78 (EX_CONFIG).
struct drift_error : error {
    explicit drift_error(const std::string& m) : error(exit_code::config, m) {}
};

// The precedence, pure over `io`:
//   1. mode off, or source none            → no evidence (basis assumed, source "none")
//   2. source RUN_ID                       → that run's harvest, source "run:<id>"; drifted →
//      throws drift_error unless req.force (then the drift becomes warnings); unloadable → a
//      warning, then step 4; no signature on either side → honoured with a warning
//   3. source auto                         → the newest harvest (measured_at as instants, ties:
//      greater run_id) whose index signature equals req.signature, source "auto:<id>"; a
//      candidate whose file fails to load or records another signature is skipped with a warning
//   4. the baseline, if one loads          → source "baseline", with its baseline_version
//   5. no evidence                         → basis assumed
// Evidence comes back as basis "reference" with its own measured_at and signature; the
// evidence's own provenance warnings are replaced by this decision's warnings, which are all in
// provenance.warnings (the caller prints them). A loader failure is a warning, never an error,
// except under req.strict: a pin missing from a registry whose index was read, or a result
// with assumed_axes, throws prof::error(data_err) (65).
compute_profile resolve_profile_source(const resolve_request& req, const evidence_loaders& io);

// What a planner would have to assume from this profile: everything when its basis is
// assumed, else each family's null core count, memory or wall time and each dropped model;
// empty when every axis has evidence. (--strict refuses a profile for which it is not empty.)
std::vector<std::string> assumed_axes(const compute_profile& p);
// The "no evidence" profile: basis assumed, source "none", empty models and families.
compute_profile assumed_profile(std::vector<std::string> warnings);

// ---- the real loaders ------------------------------------------------------------------------

// Opens one file of a registry given its path components ({"index.jsonl"} or
// {"runs", "<file name>"}) as a stream; opening or reading throws on any failure (missing,
// unreadable, HTTP error, timeout). Streaming keeps a large index out of memory. Both fetches
// inflate a gzip file (told by its magic bytes, whatever its name), as every input is.
using registry_fetch = std::function<std::unique_ptr<byte_source>(const std::vector<std::string>& components)>;

// A registry directory: DIR/<components joined by '/'>, each checked to stay under DIR.
registry_fetch directory_fetch(const std::string& dir);

// How prof-resolve reads a registry over HTTP: a 5 s connect timeout, 30 s for the whole
// transfer, 10 s without a byte, one retry after 0.5 s (a registry that is down must not hold
// up the run: the baseline is the fallback).
http_options registry_http_options();

// A registry served over HTTP(S): BASE/<components, each URL-escaped once more ('%' → "%25",
// as ProfileCache keys)>, streamed with http_source. Any HTTP error or timeout throws (a warning).
registry_fetch http_fetch(const std::string& base_url, http_options options = registry_http_options());

// The file name prof-harvest gives a run: key_file_name({run_id}) + ".json" (ProfileCache keys).
std::string run_file_name(const std::string& run_id);

// index.jsonl → entries, streamed line by line; a malformed line (bad JSON or UTF-8, no run_id,
// a measured_at that is not RFC 3339) is skipped with a warning "SOURCE:LINE: what (line
// skipped)" for the first ten, then one warning counting the rest. A read error of the stream
// itself throws (the whole index then counts as failed).
registry_index read_registry_index(line_reader& in);
registry_index parse_registry_index(std::string text, const std::string& source);

// Loaders over a fetch function: the run file (a profile; one that names another run_id is
// refused) and the index.
evidence_loaders registry_loaders(registry_fetch fetch, std::string registry_name);

// The baseline as a profile (throws on failure): a file, gzip-compressed or not (told by its
// magic bytes), or an http(s) URL read with registry_http_options. A baseline without
// provenance baseline_version is refused: an unversioned file cannot be argued with.
compute_profile load_baseline_file(const std::string& path);

// Where the baseline installed with prof may live, from the running binary's path, in the order
// looked at: EXE_DIR/../share/prof/baseline.json (make install PREFIX=…: PREFIX/bin beside
// PREFIX/share/prof), then EXE_DIR/../../share/prof/baseline.json (a build tree: build/bin → the
// source tree's share/prof).
std::vector<std::string> baseline_candidates(const std::string& exe_path);

// The loader of the installed baseline: the first candidate that exists; when none does it
// throws no_input_error naming every place looked at (which becomes a warning).
std::function<compute_profile()> installed_baseline_loader(const std::string& exe_path);

// This run's signature from --signature FILE ("-" = stdin, an http(s) URL fetched with
// registry_http_options, gzip told by its magic bytes): no_input_error (66) when it cannot be
// read, input_error (65) when it is not one JSON object.
json_value read_signature_file(const std::string& path);

}  // namespace prof
