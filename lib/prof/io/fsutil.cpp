// Atomic writes and locked appends (see fsutil.hpp).
#include "prof/io/fsutil.hpp"

#include "prof/core/errors.hpp"
#include "prof/core/limits.hpp"
#include "prof/io/http.hpp"
#include "prof/io/json_in.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <chrono>
#include <csignal>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

namespace prof {

namespace {
bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t w = ::write(fd, data.data(), data.size());
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(w));
    }
    return true;
}
}  // namespace

void make_dirs(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) throw cant_create_error(fmt::format("cannot create directory '{}': {}", path, ec.message()));
}

void write_file_atomic(const std::string& path, std::string_view content) {
    static std::atomic<unsigned> counter{0};
    std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw cant_create_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    bool ok = write_all(fd, content) && ::fsync(fd) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        if (ok) err = errno;
        ::unlink(tmp.c_str());
        throw cant_create_error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
    }
}

void append_line_locked(const std::string& path, std::string_view line) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw cant_create_error(fmt::format("cannot open '{}' for appending: {}", path, std::strerror(errno)));
    if (::flock(fd, LOCK_EX) != 0) {
        int err = errno;
        ::close(fd);
        throw cant_create_error(fmt::format("cannot lock '{}': {}", path, std::strerror(err)));
    }
    std::string buf(line);
    buf.push_back('\n');
    bool ok = write_all(fd, buf) && ::fsync(fd) == 0;
    int err = errno;
    ::flock(fd, LOCK_UN);
    ::close(fd);
    if (!ok) throw cant_create_error(fmt::format("cannot append to '{}': {}", path, std::strerror(err)));
}

namespace {
// Everything left to read on `fd`, which it closes (also when a read fails: io_error
// "cannot read 'SHOWN': ...").
std::string read_and_close(int fd, const std::string& shown) {
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            throw io_error(fmt::format("cannot read '{}': {}", shown, std::strerror(err)));
        }
        out.append(buf, static_cast<std::size_t>(r));
    }
    ::close(fd);
    return out;
}
}  // namespace

std::string read_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw no_input_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    return read_and_close(fd, path);
}

std::string checked_inside(const std::string& root, const std::string& path, std::string_view what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path r = fs::weakly_canonical(fs::path(root), ec);
    if (ec) throw cant_create_error(fmt::format("cannot resolve {} directory '{}': {}", what, root, ec.message()));
    // A link whose target does not exist yet (a write would create it) is followed by hand:
    // weakly_canonical stops at the first missing name and would judge the link's own path.
    fs::path q(path);
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(q, ec)); ++hops) {
        fs::path target = fs::read_symlink(q, ec);
        if (ec) break;
        q = target.is_absolute() ? target : q.parent_path() / target;
    }
    ec.clear();
    fs::path p = fs::weakly_canonical(q, ec);
    if (ec) throw cant_create_error(fmt::format("cannot resolve {} path '{}': {}", what, path, ec.message()));
    auto rel = p.lexically_relative(r);
    if (rel.empty() || *rel.begin() == ".." || rel == ".")
        throw cant_create_error(fmt::format("refusing {} path '{}': it resolves to '{}', outside '{}'", what, path,
                                            p.string(), r.string()));
    return path;
}

namespace {
// NAME.tmp.<pid>.<n> of a writer that no longer exists: its pid, else 0.
pid_t dead_writer_of(const std::string& name) {
    auto last = name.rfind('.');
    if (last == std::string::npos || last == 0) return 0;
    auto mid = name.rfind('.', last - 1);
    if (mid == std::string::npos || mid < 4 || name.compare(mid - 4, 4, ".tmp") != 0) return 0;
    std::string pid_text = name.substr(mid + 1, last - mid - 1), n_text = name.substr(last + 1);
    auto digits = [](const std::string& t) {
        return !t.empty() && t.size() < 10 && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(pid_text) || !digits(n_text)) return 0;
    pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) return 0;
    return pid;
}

// One path component a directory can hold: not empty, no '/', not "." or "..".
bool one_component(std::string_view name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
           name.find('\0') == std::string_view::npos;
}
}  // namespace

std::size_t remove_stale_temps(const std::string& dir) {
    try {
        return rooted_dir(dir, "directory", false).remove_stale_temps();
    } catch (const error&) {
        return 0;  // errors are ignored: the next writer tries again
    }
}

// ---- rooted_dir ---------------------------------------------------------------------------

rooted_dir::rooted_dir(int fd, std::string path, std::string what) : fd_(fd), path_(std::move(path)), what_(std::move(what)) {}

rooted_dir::rooted_dir(const std::string& path, std::string_view what, bool create) : path_(path), what_(what) {
    if (create) make_dirs(path);
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) {
        int err = errno;
        if (err == ENOENT && !create) throw no_input_error(fmt::format("cannot open {} directory '{}': {}", what, path, std::strerror(err)));
        throw cant_create_error(fmt::format("cannot open {} directory '{}': {}", what, path, std::strerror(err)));
    }
}

rooted_dir::~rooted_dir() {
    if (fd_ >= 0) ::close(fd_);
}

rooted_dir::rooted_dir(rooted_dir&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)), what_(std::move(o.what_)) { o.fd_ = -1; }

rooted_dir& rooted_dir::operator=(rooted_dir&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
        path_ = std::move(o.path_);
        what_ = std::move(o.what_);
    }
    return *this;
}

std::optional<rooted_dir> rooted_dir::sub(std::string_view name, bool create) const {
    std::string n(name);
    if (!one_component(n)) throw cant_create_error(fmt::format("refusing {} directory name '{}'", what_, n));
    if (create && ::mkdirat(fd_, n.c_str(), 0755) != 0 && errno != EEXIST)
        throw cant_create_error(fmt::format("cannot create directory '{}': {}", path_of(n), std::strerror(errno)));
    int fd = ::openat(fd_, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return rooted_dir(fd, path_of(n), what_);
    int err = errno;
    if (err == ENOENT && !create) return std::nullopt;
    struct stat st {};
    if (err == ELOOP || (err == ENOTDIR && ::fstatat(fd_, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)))
        throw cant_create_error(fmt::format("refusing {} directory '{}': it is a symbolic link (a {} holds only its "
                                            "own directories and files)", what_, path_of(n), what_));
    throw cant_create_error(fmt::format("cannot open {} directory '{}': {}", what_, path_of(n), std::strerror(err)));
}

int rooted_dir::open_regular(std::string_view name, std::string& refused) const {
    refused.clear();
    std::string n(name);
    if (!one_component(n)) {
        refused = "not a file name";
        return -1;
    }
    int fd = ::openat(fd_, n.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT) return -1;
        struct stat st {};
        if (err == ELOOP || (::fstatat(fd_, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)))
            refused = "a symbolic link";
        else
            refused = std::strerror(err);
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        refused = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file";
        return -1;
    }
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

std::optional<std::string> rooted_dir::read_regular(std::string_view name, std::string& refused) const {
    int fd = open_regular(name, refused);
    if (fd < 0) return std::nullopt;
    return read_and_close(fd, path_of(name));
}

void rooted_dir::write_atomic(std::string_view name, std::string_view content) const {
    static std::atomic<unsigned> counter{0};
    std::string n(name);
    if (!one_component(n)) throw cant_create_error(fmt::format("refusing {} file name '{}'", what_, n));
    std::string tmp = fmt::format("{}.tmp.{}.{}", n, ::getpid(), counter++);
    int fd = ::openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw cant_create_error(fmt::format("cannot write '{}': {}", path_of(n), std::strerror(errno)));
    bool ok = write_all(fd, content) && ::fsync(fd) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok || ::renameat(fd_, tmp.c_str(), fd_, n.c_str()) != 0) {
        if (ok) err = errno;
        ::unlinkat(fd_, tmp.c_str(), 0);
        throw cant_create_error(fmt::format("cannot write '{}': {}", path_of(n), std::strerror(err)));
    }
}

int rooted_dir::open_locked(std::string_view name) const {
    std::string n(name);
    if (!one_component(n)) throw cant_create_error(fmt::format("refusing {} file name '{}'", what_, n));
    int fd = ::openat(fd_, n.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP)
            throw cant_create_error(fmt::format("refusing {} lock '{}': it is a symbolic link", what_, path_of(n)));
        throw cant_create_error(fmt::format("cannot open '{}': {}", path_of(n), std::strerror(err)));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw cant_create_error(fmt::format("refusing {} lock '{}': not a regular file", what_, path_of(n)));
    }
    while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        throw cant_create_error(fmt::format("cannot lock '{}': {}", path_of(n), std::strerror(err)));
    }
    return fd;
}

std::vector<std::string> rooted_dir::names() const {
    std::vector<std::string> out;
    int dup = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // fdopendir takes it over
    DIR* d = dup >= 0 ? ::fdopendir(dup) : nullptr;
    if (!d) {
        int err = errno;
        if (dup >= 0) ::close(dup);
        throw io_error(fmt::format("cannot list '{}': {}", path_, std::strerror(err)));
    }
    while (dirent* e = ::readdir(d)) {
        std::string_view n(e->d_name);
        if (n != "." && n != "..") out.emplace_back(n);
    }
    ::closedir(d);
    return out;
}

std::size_t rooted_dir::remove_stale_temps() const {
    std::size_t removed = 0;
    std::vector<std::string> all;
    try {
        all = names();
    } catch (const error&) {
        return 0;
    }
    auto now = std::chrono::system_clock::now();
    for (const auto& name : all) {
        if (dead_writer_of(name) == 0) continue;
        struct stat st {};
        if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        auto mtime = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
        if (now - mtime < std::chrono::minutes(1)) continue;
        if (::unlinkat(fd_, name.c_str(), 0) == 0) ++removed;
    }
    return removed;
}

padded_input::padded_input(const std::string& path) {
    src_ = open_input(path);  // the error (66) for a missing file, and gzip told by its magic
    // A regular file that is not gzip is mapped by its source, which also arms the guard that
    // turns a SIGBUS (the file shrank under the mapping) into a message and exit 74.
    const std::size_t limit = max_document_bytes();
    auto too_large = [&]() { return error(exit_code::data_err, fmt::format("{}: {}", src_->name(), document_too_large_message())); };
    if (auto r = src_->map_rest()) {
        if (r->bytes.size() > limit) throw too_large();
        if (r->readable_after >= simdjson::SIMDJSON_PADDING) {
            text_ = r->bytes;
            mapped_ = std::make_unique<memory_region>(*r);
            return;
        }
        owned_.reserve(r->bytes.size() + simdjson::SIMDJSON_PADDING + 1);
        owned_.assign(r->bytes);  // no room for the padding after the last page: copied
        src_->verify_mapped();
    } else {
        // The text's room doubles up to the limit and one byte past it (a stream that fills that
        // byte is larger than the limit), with the padding always reserved behind it: what is
        // held never passes the limit by more than the byte, and no copy is made at the end.
        constexpr std::size_t chunk = 1 << 20;
        constexpr std::size_t pad = simdjson::SIMDJSON_PADDING;
        for (;;) {
            std::size_t at = owned_.size();
            if (at > limit) throw too_large();
            if (owned_.capacity() < at + chunk + pad)
                owned_.reserve(std::min(std::max(owned_.capacity() * 2, at + chunk + pad), limit + 1 + pad));
            std::size_t room = owned_.capacity() - pad - at;  // >= 1: the capacity is past at + pad
            owned_.resize(at + room);
            std::size_t n = src_->read(owned_.data() + at, room);
            owned_.resize(at + n);
            if (n == 0) break;
        }
    }
    std::size_t length = owned_.size();
    owned_.append(simdjson::SIMDJSON_PADDING, '\0');
    text_ = std::string_view(owned_.data(), length);
}

padded_input::~padded_input() = default;

void padded_input::verify_mapped() const {
    if (mapped_) src_->verify_mapped();
}

}  // namespace prof
