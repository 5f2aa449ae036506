// A worker's reply stream split into lines (see reply_lines.hpp).
#include "prof/measure/reply_lines.hpp"

#include <algorithm>
#include <cstring>

namespace prof {

void reply_lines::append(const char* data, std::size_t n) {
    if (begin_ > 0 && begin_ >= buf_.size() / 2) {
        buf_.erase(0, begin_);
        scanned_ -= begin_;
        begin_ = 0;
    }
    buf_.append(data, n);
}

bool reply_lines::take(std::string& line) {
    std::size_t from = std::max(begin_, scanned_);
    const void* nl = from < buf_.size() ? std::memchr(buf_.data() + from, '\n', buf_.size() - from) : nullptr;
    if (!nl) {
        searched_ += buf_.size() - from;
        scanned_ = buf_.size();
        return false;
    }
    std::size_t pos = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
    searched_ += pos + 1 - from;
    line.assign(buf_, begin_, pos - begin_);
    begin_ = scanned_ = pos + 1;
    return true;
}

void reply_lines::clear() {
    buf_.clear();
    begin_ = scanned_ = 0;
}

}  // namespace prof
