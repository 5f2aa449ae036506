// Atomic writes and locked appends (see fsutil.hpp).
#include "prof/io/fsutil.hpp"

#include "prof/core/errors.hpp"
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

std::string read_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw no_input_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            throw io_error(fmt::format("cannot read '{}': {}", path, std::strerror(err)));
        }
        out.append(buf, static_cast<std::size_t>(r));
    }
    ::close(fd);
    return out;
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

std::size_t remove_stale_temps(const std::string& dir) {
    namespace fs = std::filesystem;
    std::size_t removed = 0;
    std::error_code ec;
    auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        // NAME.tmp.<pid>.<n>: the pid is the second-last dot-separated part.
        auto last = name.rfind('.');
        if (last == std::string::npos || last == 0) continue;
        auto mid = name.rfind('.', last - 1);
        if (mid == std::string::npos || mid < 4 || name.compare(mid - 4, 4, ".tmp") != 0) continue;
        std::string pid_text = name.substr(mid + 1, last - mid - 1), n_text = name.substr(last + 1);
        auto digits = [](const std::string& t) {
            return !t.empty() && t.size() < 10 && t.find_first_not_of("0123456789") == std::string::npos;
        };
        if (!digits(pid_text) || !digits(n_text)) continue;
        pid_t pid = static_cast<pid_t>(std::stol(pid_text));
        if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
        std::error_code ec2;
        if (!it->is_regular_file(ec2) || ec2) continue;
        auto mtime = it->last_write_time(ec2);
        if (ec2 || now - mtime < std::chrono::minutes(1)) continue;
        if (fs::remove(it->path(), ec2) && !ec2) ++removed;
    }
    return removed;
}

padded_input::padded_input(const std::string& path) {
    auto src = open_input(path);  // the error (66) for a missing file, and gzip told by its magic
    struct stat st {};
    bool regular = path != "-" && !is_http_url(path) && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (regular && st.st_size > 0) {
        auto size = static_cast<std::size_t>(st.st_size);
        auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        if (size % page != 0 && page - size % page >= simdjson::SIMDJSON_PADDING) {
            int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            void* m = fd >= 0 ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
            if (fd >= 0) ::close(fd);
            // Mapped as it is only when it is not gzip (whatever its name): src inflates that.
            auto* head = static_cast<const unsigned char*>(m);
            if (m != MAP_FAILED && size >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
                ::munmap(m, size);
                m = MAP_FAILED;
            }
            if (m != MAP_FAILED) {
                map_ = m;
                map_len_ = size;
                text_ = std::string_view(static_cast<const char*>(m), size);
                return;
            }
        }
        owned_.reserve(size + simdjson::SIMDJSON_PADDING + 1);
    }
    constexpr std::size_t chunk = 1 << 20;
    for (;;) {
        std::size_t at = owned_.size();
        if (owned_.capacity() - at < chunk) owned_.reserve(std::max(owned_.capacity() * 2, at + chunk));
        owned_.resize(owned_.capacity());
        std::size_t n = src->read(owned_.data() + at, owned_.size() - at);
        owned_.resize(at + n);
        if (n == 0) break;
    }
    std::size_t length = owned_.size();
    owned_.append(simdjson::SIMDJSON_PADDING, '\0');
    text_ = std::string_view(owned_.data(), length);
}

padded_input::~padded_input() {
    if (map_) ::munmap(map_, map_len_);
}

}  // namespace prof
