// Registry writer (see registry.hpp).
#include "prof/registry.hpp"

#include "prof/errors.hpp"
#include "prof/fsutil.hpp"
#include "prof/json_out.hpp"
#include "prof/keys.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prof {

namespace {

// Holds flock(DIR/.lock, LOCK_EX) for its lifetime. A separate lock file (rather than the
// index itself) because the index is replaced by rename, which would orphan a lock on it.
class dir_lock {
public:
    explicit dir_lock(const std::string& dir) {
        std::string path = dir + "/.lock";
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw cant_create_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
        while (::flock(fd_, LOCK_EX) != 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd_);
            throw cant_create_error(fmt::format("cannot lock '{}': {}", path, std::strerror(err)));
        }
    }
    ~dir_lock() {
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
    }
    dir_lock(const dir_lock&) = delete;
    dir_lock& operator=(const dir_lock&) = delete;

private:
    int fd_ = -1;
};

bool file_exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string write_registry_line(const std::string& run_id, const std::optional<json_value>& signature,
                                const std::optional<std::string>& measured_at) {
    json_writer w;
    w.begin_object();
    w.field("run_id", run_id);
    w.key("signature");
    if (signature) w.raw(signature->dump());
    else w.null();
    w.field("measured_at", measured_at);
    w.end_object();
    return w.take();
}

std::string registry_run_path(const std::string& dir, const std::string& run_id) {
    return path_under(dir + "/runs", key_file_name({run_id}) + ".json");
}

namespace {
// The index lines now in DIR/index.jsonl by run_id (the line text kept as written; of two lines
// for one run the last wins). A missing file is an empty index.
std::map<std::string, std::string> read_index_lines(const std::string& path) {
    std::map<std::string, std::string> out;
    if (!file_exists(path)) return out;
    line_reader in(string_source(read_file(path), path));
    text_line line;
    simdjson::ondemand::parser parser;
    while (in.next(line)) {
        std::string_view text = line.text;
        std::optional<std::string> run_id;
        try {
            simdjson::padded_string padded(text);
            auto doc = parser.iterate(padded);
            auto obj = doc.get_object();
            for (auto f : obj) {
                std::string_view k = f.unescaped_key();
                if (k == "run_id") run_id = require_string(f.value(), "run_id");
            }
        } catch (const field_error& e) {
            throw input_error(path, line.number, e.what());
        } catch (const simdjson::simdjson_error& e) {
            throw input_error(path, line.number, fmt::format("malformed JSON ({})", simdjson::error_message(e.error())));
        }
        if (!run_id) throw input_error(path, line.number, "field 'run_id': missing");
        out[*run_id] = std::string(text);
    }
    return out;
}
}  // namespace

registry_write registry_store(const std::string& dir, const compute_profile& p, bool force) {
    if (!p.provenance.run_id) throw field_error("a registry profile needs provenance.run_id");
    const std::string& run_id = *p.provenance.run_id;
    make_dirs(dir + "/runs");
    std::string run_path = registry_run_path(dir, run_id);
    dir_lock lock(dir);
    bool exists = file_exists(run_path);
    if (exists && !force) return registry_write::skipped_exists;
    // The index is read (and checked) before anything changes, then rewritten with this run's
    // line (replacing an older one), sorted by run_id.
    std::map<std::string, std::string> lines = read_index_lines(dir + "/index.jsonl");
    lines[run_id] = write_registry_line(run_id, p.provenance.signature, p.provenance.measured_at);
    write_file_atomic(run_path, write_profile(p) + "\n");
    std::string text;
    for (const auto& [id, line] : lines) text += line + "\n";
    write_file_atomic(dir + "/index.jsonl", text);
    return exists ? registry_write::replaced : registry_write::written;
}

}  // namespace prof
