// The measure area: running fits (spawn, launcher, cgroups, host readings) and turning them
// into fit records. This header: a worker's reply stream split into lines.
#pragma once

#include <cstddef>
#include <string>

namespace prof {

// Bytes read from a worker's reply descriptor, handed back a line at a time. Time is linear in
// the bytes however they arrive: each byte is searched for '\n' once (a reply line of several
// MB arriving in 4 KiB reads is not searched again on every read), and taken lines are dropped
// from the front in one move once they make up half the buffer.
class reply_lines {
public:
    void append(const char* data, std::size_t n);
    // The next complete line (without its '\n') into `line`; false when none is complete yet.
    bool take(std::string& line);
    void clear();
    // Bytes appended and not yet taken (a line still arriving, and complete ones not taken).
    std::size_t pending() const { return buf_.size() - begin_; }
    // Bytes searched for '\n' so far (what the linear bound is tested on).
    std::size_t bytes_searched() const { return searched_; }

private:
    std::string buf_;
    std::size_t begin_ = 0;    // buf_[0, begin_) has been taken
    std::size_t scanned_ = 0;  // buf_[begin_, scanned_) holds no '\n'
    std::size_t searched_ = 0;
};

}  // namespace prof
