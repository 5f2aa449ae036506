// Byte sources: files, stdin, strings, a prefix put back, gzip recognised by its magic (see
// byte_source.hpp). The gzip decoder itself is gzip.cpp.
#include "prof/io/byte_source.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/limits.hpp"
#include "prof/io/http.hpp"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prof {

namespace {

// A mapped file that shrinks under the reader turns the next touch of a page past its new end
// into SIGBUS. No result computed from such a read could be right, so the process says so and
// exits 74 (async-signal-safe: a message prepared while mapping, write, _exit). Nothing has
// been written to stdout by then: every reader of a mapped file writes after its input ends.
char bus_message[512];
std::atomic<std::size_t> bus_message_size{0};

std::atomic<bool> bus_said{false};

extern "C" void on_sigbus(int, siginfo_t* info, void*) {
    if (info->si_code <= 0) {  // sent by kill(2) or the like, not a fault: the default action
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGBUS, &dfl, nullptr);
        raise(SIGBUS);  // delivered when this handler returns
        return;
    }
    // Several threads may fault at once: one says it and exits, the others wait for that.
    if (bus_said.exchange(true))
        for (;;) pause();
    std::size_t n = bus_message_size.load();
    if (n) {
        ssize_t ignored = ::write(2, bus_message, n);
        (void)ignored;
    }
    _exit(74);
}

void arm_sigbus(const std::string& name) {
    static std::once_flag installed;
    std::string m = fmt::format("{}: {}: the file shrank while it was read (SIGBUS)\n", program_name(), name);
    if (m.size() > sizeof bus_message) m.resize(sizeof bus_message);
    bus_message_size = 0;
    std::memcpy(bus_message, m.data(), m.size());
    bus_message_size = m.size();
    std::call_once(installed, [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, nullptr);
    });
}

class fd_byte_source final : public byte_source {
public:
    fd_byte_source(int fd, std::string name, bool owns) : fd_(fd), name_(std::move(name)), owns_(owns) {}
    ~fd_byte_source() override {
        if (map_) ::munmap(map_, map_size_);
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
    std::optional<memory_region> map_rest() override {
        struct stat st;
        if (map_ || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return std::nullopt;
        off_t at = ::lseek(fd_, 0, SEEK_CUR);
        if (at < 0 || at >= st.st_size) return std::nullopt;
        const std::size_t size = static_cast<std::size_t>(st.st_size);
        void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd_, 0);
        if (p == MAP_FAILED) return std::nullopt;  // read() still works
        ::madvise(p, size, MADV_SEQUENTIAL);
        arm_sigbus(name_);
        map_ = p;
        map_size_ = size;
        const long page = ::sysconf(_SC_PAGESIZE);
        const std::size_t mapped = (size + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page) *
                                   static_cast<std::size_t>(page);
        memory_region r;
        r.bytes = std::string_view(static_cast<const char*>(p) + at, size - static_cast<std::size_t>(at));
        r.readable_after = mapped - size;  // the last page's bytes past the end read as zeros
        r.releasable = true;
        return r;
    }

    void verify_mapped() const override {
        struct stat st;
        if (map_ && ::fstat(fd_, &st) == 0 && static_cast<std::size_t>(st.st_size) < map_size_)
            throw io_error(fmt::format("{}: the file shrank while it was read", name_));
    }

private:
    int fd_;
    std::string name_;
    bool owns_;
    void* map_ = nullptr;
    std::size_t map_size_ = 0;
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
    void verify_mapped() const override { src_->verify_mapped(); }
    // The prefix is the bytes read from the source just before: a mapped source holds them
    // right in front of its rest.
    std::optional<memory_region> map_rest() override {
        auto r = src_->map_rest();
        if (!r) return r;
        std::string_view back = std::string_view(prefix_).substr(pos_);
        if (back.empty()) return r;
        const char* start = r->bytes.data() - back.size();
        // Only a region that starts past the mapping's first bytes can step back; the bytes
        // must be the prefix's (they are, for a file read from its start).
        if (std::string_view(start, back.size()) != back) return std::nullopt;
        r->bytes = std::string_view(start, r->bytes.size() + back.size());
        pos_ = prefix_.size();
        return r;
    }

private:
    std::string prefix_;
    std::size_t pos_ = 0;
    std::unique_ptr<byte_source> src_;
};

}  // namespace

void release_region(const memory_region& r, const char* from, const char* to) {
    // Never past the region: a range that strays outside it (a copy's bytes, say) is cut back,
    // for dropping the pages of anonymous memory would lose what they hold.
    from = std::max(from, r.bytes.data());
    to = std::min(to, r.bytes.data() + r.bytes.size());
    if (!r.releasable || to <= from) return;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    auto a = (reinterpret_cast<std::uintptr_t>(from) + page - 1) & ~(page - 1);
    auto b = reinterpret_cast<std::uintptr_t>(to) & ~(page - 1);
    if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

std::string_view read_rest_padded(byte_source& src, std::string& text, std::uint64_t& total) {
    const std::size_t limit = max_document_bytes();
    // The first megabyte comes through a small buffer and is appended: growing the string by a
    // megabyte of zeros to read into would zero (and fault in) that megabyte even for an empty
    // input, which cost a short run more than the rest of its start. Past it, reads go
    // straight into the string.
    constexpr std::size_t step = std::size_t{1} << 20;
    char piece[64 * 1024];
    for (std::size_t n = 1; n > 0;) {
        const std::size_t at = text.size();
        if (at > limit) throw error(exit_code::data_err, fmt::format("{}: {}", src.name(), document_too_large_message()));
        const std::size_t room = std::min(step, limit + 1 - at);  // one byte past the limit at most
        if (at < step) {
            n = src.read(piece, std::min(sizeof piece, room));
            text.append(piece, n);
        } else {
            text.resize(at + room);
            n = src.read(text.data() + at, room);
            text.resize(at + n);
        }
        total += n;
    }
    const std::size_t length = text.size();
    text.append(simdjson::SIMDJSON_PADDING, '\0');
    return {text.data(), length};
}

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
