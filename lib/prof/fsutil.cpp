// Atomic writes and locked appends (see fsutil.hpp).
#include "prof/fsutil.hpp"

#include "prof/errors.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/file.h>
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

}  // namespace prof
