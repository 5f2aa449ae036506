// Byte sources: files, stdin, strings, a prefix put back, gzip recognised by its magic (see
// byte_source.hpp). The gzip decoder itself is gzip.cpp.
#include "prof/io/byte_source.hpp"

#include "prof/core/errors.hpp"
#include "prof/io/http.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace prof {

namespace {

class fd_byte_source final : public byte_source {
public:
    fd_byte_source(int fd, std::string name, bool owns) : fd_(fd), name_(std::move(name)), owns_(owns) {}
    ~fd_byte_source() override {
        if (owns_) ::close(fd_);
    }
    std::size_t read(char* buf, std::size_t n) override {
        for (;;) {
            ssize_t r = ::read(fd_, buf, n);
            if (r >= 0) return static_cast<std::size_t>(r);
            if (errno == EINTR) continue;
            throw io_error(fmt::format("{}: read error: {}", name_, std::strerror(errno)));
        }
    }
    const std::string& name() const override { return name_; }

private:
    int fd_;
    std::string name_;
    bool owns_;
};

class string_byte_source final : public byte_source {
public:
    string_byte_source(std::string data, std::string name, std::size_t max_read)
        : data_(std::move(data)), name_(std::move(name)), max_read_(max_read) {}
    std::size_t read(char* buf, std::size_t n) override {
        std::size_t k = std::min({n, max_read_, data_.size() - pos_});
        std::memcpy(buf, data_.data() + pos_, k);
        pos_ += k;
        return k;
    }
    const std::string& name() const override { return name_; }

private:
    std::string data_;
    std::size_t pos_ = 0;
    std::string name_;
    std::size_t max_read_;
};

class prefixed_byte_source final : public byte_source {
public:
    prefixed_byte_source(std::string prefix, std::unique_ptr<byte_source> src)
        : prefix_(std::move(prefix)), src_(std::move(src)) {}
    std::size_t read(char* out, std::size_t n) override {
        if (pos_ < prefix_.size()) {
            std::size_t k = std::min(n, prefix_.size() - pos_);
            std::memcpy(out, prefix_.data() + pos_, k);
            pos_ += k;
            return k;
        }
        return src_->read(out, n);
    }
    const std::string& name() const override { return src_->name(); }

private:
    std::string prefix_;
    std::size_t pos_ = 0;
    std::unique_ptr<byte_source> src_;
};

}  // namespace

std::unique_ptr<byte_source> fd_source(int fd, std::string name, bool owns_fd) {
    return std::make_unique<fd_byte_source>(fd, std::move(name), owns_fd);
}

std::unique_ptr<byte_source> string_source(std::string data, std::string name, std::size_t max_read) {
    return std::make_unique<string_byte_source>(std::move(data), std::move(name), max_read);
}

std::unique_ptr<byte_source> prefixed_source(std::string prefix, std::unique_ptr<byte_source> src) {
    return std::make_unique<prefixed_byte_source>(std::move(prefix), std::move(src));
}

std::unique_ptr<byte_source> gunzip_if_gzip(std::unique_ptr<byte_source> src) {
    char head[2];
    std::size_t got = 0;
    while (got < 2) {
        std::size_t r = src->read(head + got, 2 - got);
        if (r == 0) break;
        got += r;
    }
    auto rest = prefixed_source(std::string(head, got), std::move(src));
    if (got == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
        return gunzip(std::move(rest));
    return rest;
}

std::unique_ptr<byte_source> open_input(const std::string& spec, const http_options* http) {
    if (spec == "-") return gunzip_if_gzip(fd_source(0, "<stdin>", false));
    if (is_http_url(spec)) return gunzip_if_gzip(http_source(spec, http ? *http : http_options{}));
    int fd = ::open(spec.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw no_input_error(fmt::format("cannot open '{}': {}", spec, std::strerror(errno)));
    return gunzip_if_gzip(fd_source(fd, spec, true));
}

}  // namespace prof
