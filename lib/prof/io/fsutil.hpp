// Files written the way prof(7) CONVENTIONS promise: atomically (temp name in the same directory, flushed, renamed)
// and a shared index appended under an exclusive flock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace prof {

// Writes `content` to `path` atomically: PATH.tmp.<pid>.<n> in the same directory, fsync,
// rename. A crash never leaves a partial file under the final name. Throws cant_create_error
// (exit 73) on failure; the temporary file is removed.
void write_file_atomic(const std::string& path, std::string_view content);
// Appends `line` + '\n' to `path` (created if absent) holding an exclusive flock(2) on it, so
// concurrent writers never lose each other's lines. Throws cant_create_error.
void append_line_locked(const std::string& path, std::string_view line);
// The whole file as a string; throws no_input_error (66) when it cannot be opened, io_error
// on a read failure.
std::string read_file(const std::string& path);
// A whole input held in memory and readable for simdjson::SIMDJSON_PADDING bytes past its end,
// so a parser can work in place. A regular file that is not gzip is mapped when the zero fill
// of its last page covers the padding (no copy: a large trace reads at page-cache speed);
// stdin, gzip (told by its magic bytes, whatever the name), URLs and anything else are read
// through open_input (66 for a missing file).
class padded_input {
public:
    explicit padded_input(const std::string& path);
    ~padded_input();
    padded_input(const padded_input&) = delete;
    padded_input& operator=(const padded_input&) = delete;
    std::string_view text() const { return text_; }

private:
    std::string owned_;
    void* map_ = nullptr;
    std::size_t map_len_ = 0;
    std::string_view text_;
};

// mkdir -p; throws cant_create_error.
void make_dirs(const std::string& path);

// `path` after checking that, with every symbolic link resolved (as far as the path exists),
// it still lies inside `root` (resolved the same way): a link planted under a cache or registry
// directory cannot send a write or a read elsewhere. Throws cant_create_error (exit 73),
// naming `what` ("cache", "registry"), otherwise.
std::string checked_inside(const std::string& root, const std::string& path, std::string_view what);

// Removes the temporary files write_file_atomic left in `dir` when its writer died before the
// rename ("NAME.tmp.<pid>.<n>" whose process no longer exists and which are older than a
// minute, so a live writer in another PID namespace keeps its file). Returns how many went;
// errors are ignored (the next writer tries again).
std::size_t remove_stale_temps(const std::string& dir);

}  // namespace prof
