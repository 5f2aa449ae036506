// Registry writer (see registry.hpp).
#include "prof/resolve/registry.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/byte_source.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/http.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_out.hpp"
#include "prof/io/keys.hpp"
#include "prof/core/diag.hpp"
#include "prof/core/units.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prof {

namespace {

// Holds flock(DIR/.lock, LOCK_EX) for its lifetime. A separate lock file (rather than the
// index itself) because the index is replaced by rename, which would orphan a lock on it.
class dir_lock {
public:
    explicit dir_lock(const rooted_dir& dir) : fd_(dir.open_locked(".lock")) {}
    ~dir_lock() {
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
    }
    dir_lock(const dir_lock&) = delete;
    dir_lock& operator=(const dir_lock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace

std::string registry_run_path(const std::string& dir, const std::string& run_id) {
    return path_under(dir + "/runs", key_file_name({run_id}) + ".json");
}

namespace {
// The index lines now in DIR/index.jsonl by run_id (the line text kept as written; of two lines
// for one run the last wins). A missing file is an empty index; a link, FIFO or anything but a
// regular file in its place is refused (73), never read or followed.
std::map<std::string, std::string> read_index_lines(const rooted_dir& dir) {
    std::map<std::string, std::string> out;
    std::string refused;
    int fd = dir.open_regular("index.jsonl", refused);
    if (fd < 0 && refused.empty()) return out;
    if (fd < 0)
        throw cant_create_error(fmt::format("refusing registry index '{}': {} (a registry holds only its own files)",
                                            dir.path_of("index.jsonl"), refused));
    // Strict: a store must not rewrite an index it cannot read. A gzip index is read inflated
    // (told by its magic bytes) and rewritten plain.
    line_reader in(gunzip_if_gzip(fd_source(fd, dir.path_of("index.jsonl"), true)));
    for_each_record(in, bad_line_policy(), [&](simdjson::ondemand::object& obj, const record_place& at) {
        std::optional<std::string> run_id;
        for (auto f : obj)
            if (std::string_view(f.unescaped_key()) == "run_id") run_id = require_string(f.value(), "run_id");
        if (!run_id) missing_field("run_id");
        out[*run_id] = std::string(at.text);
    });
    return out;
}
}  // namespace

namespace {
// The run files in DIR/runs (finished "*.json" regular files, not temporaries), by file name.
std::vector<std::string> run_file_names(const rooted_dir& runs) {
    std::vector<std::string> out;
    for (auto& name : runs.names()) {
        struct stat st {};
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 &&
            ::fstatat(runs.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            out.push_back(std::move(name));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The profile in a run file that the index does not list, checked to be the run its name says.
compute_profile read_unindexed_run(const rooted_dir& runs, const std::string& name) {
    std::string path = runs.path_of(name), refused;
    int fd = runs.open_regular(name, refused);
    if (fd < 0) throw no_input_error(fmt::format("cannot read '{}': {}", path, refused.empty() ? "no such file" : refused));
    compute_profile p = parse_profile_text(read_all(*gunzip_if_gzip(fd_source(fd, path, true))), path);
    if (!p.provenance.run_id || p.provenance.run_id->empty())
        throw input_error(path, 1, "field 'provenance.run_id': missing; the file cannot be indexed");
    if (key_file_name({*p.provenance.run_id}) + ".json" != name)
        throw input_error(path, 1, fmt::format("the file is the harvest of run '{}', whose file name is not '{}'",
                                               *p.provenance.run_id, name));
    return p;
}
}  // namespace

void check_registry_directory(const std::string& dir) {
    if (is_http_url(dir))
        throw usage_error(fmt::format("--registry: expected a directory to write, found the URL '{}' (a registry "
                                      "served over HTTP is read by prof-resolve and prof-diff; prof-harvest writes "
                                      "the directory it is served from)",
                                      redact_url(dir)));
}

registry_write registry_store(const std::string& dir, const compute_profile& p, bool force) {
    if (!p.provenance.run_id) throw field_error("a registry profile needs provenance.run_id");
    const std::string& run_id = *p.provenance.run_id;
    if (run_id.empty())
        throw error(exit_code::data_err, fmt::format("a run with an empty run_id cannot be stored in registry {} "
                                                     "(it could never be read back)", dir));
    // Every file is reached through directory descriptors with O_NOFOLLOW (rooted_dir): a
    // runs/, index.jsonl or .lock planted, or swapped in, as a link out of DIR never receives
    // the write (the cache refuses the same).
    rooted_dir root(dir, "registry", true);
    rooted_dir runs = std::move(*root.sub("runs", true));
    std::string run_name = key_file_name({run_id}) + ".json";
    dir_lock lock(root);
    root.remove_stale_temps();
    runs.remove_stale_temps();
    // The index is read (and checked) before anything changes.
    std::map<std::string, std::string> lines = read_index_lines(root);
    // The run file is renamed into place before the index is rewritten, so a writer that died
    // between the two left a run file without its index line: index it now from its own
    // provenance, whatever run this call stores (else a later store of that run would see the
    // file, skip the run as present, and it would never be found).
    std::set<std::string> indexed_files;
    for (const auto& [id, line] : lines) indexed_files.insert(key_file_name({id}) + ".json");
    bool repaired = false;
    for (const auto& name : run_file_names(runs)) {
        if (indexed_files.count(name)) continue;
        try {
            compute_profile q = read_unindexed_run(runs, name);
            const std::string& id = *q.provenance.run_id;
            lines[id] = write_registry_line(id, q.provenance.signature, q.provenance.measured_at);
            repaired = true;
            warn(fmt::format("registry {}: run '{}' had a file but no index line (a write was interrupted); indexed "
                             "it now",
                             dir, id));
        } catch (const error& e) {
            warn(fmt::format("registry {}: runs/{} is not in the index and cannot be indexed ({}); left as it is", dir,
                             name, e.what()));
        }
    }
    struct stat st {};
    bool exists = ::fstatat(runs.fd(), run_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    auto write_index = [&] {
        std::string text;
        for (const auto& [id, line] : lines) text += line + "\n";
        root.write_atomic("index.jsonl", text);
    };
    if (exists && !force) {
        if (repaired) write_index();
        return registry_write::skipped_exists;
    }
    lines[run_id] = write_registry_line(run_id, p.provenance.signature, p.provenance.measured_at);
    runs.write_atomic(run_name, write_profile(p) + "\n");
    write_index();
    return exists ? registry_write::replaced : registry_write::written;
}

std::function<registry_index()> with_unindexed_runs(std::function<registry_index()> load_index, const std::string& dir) {
    return [load_index = std::move(load_index), dir]() {
        std::vector<std::string> names;
        std::optional<rooted_dir> runs;
        try {
            runs = rooted_dir(dir, "registry", false).sub("runs", false);
            if (runs) names = run_file_names(*runs);
        } catch (const error&) {
            return load_index();  // no runs/ to list: nothing to add
        }
        registry_index index;
        try {
            index = load_index();
        } catch (const no_input_error&) {
            // The first harvest was killed after its run file and before the index existed.
            if (names.empty()) throw;
        }
        std::set<std::string> indexed_files;
        for (const auto& e : index.entries) indexed_files.insert(key_file_name({e.run_id}) + ".json");
        for (const auto& name : names) {
            if (indexed_files.count(name)) continue;
            try {
                compute_profile q = read_unindexed_run(*runs, name);
                registry_entry e;
                e.run_id = *q.provenance.run_id;
                e.signature = std::make_shared<const json_value>(q.provenance.signature.value_or(json_value{}));
                if (q.provenance.measured_at) e.measured_at = parse_rfc3339(*q.provenance.measured_at);
                index.entries.push_back(std::move(e));
                index.warnings.push_back(fmt::format(
                    "registry {}: run '{}' has a file but no index line (an interrupted write); it is considered all "
                    "the same: run prof-harvest --registry {} again to repair the index",
                    dir, *q.provenance.run_id, dir));
            } catch (const error& err) {
                index.warnings.push_back(fmt::format("registry {}: runs/{} is not in the index and cannot be read ({})",
                                                     dir, name, err.what()));
            }
        }
        return index;
    };
}

}  // namespace prof
