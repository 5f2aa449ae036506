// Files written the way prof(7) CONVENTIONS promise: atomically (temp name in the same directory, flushed, renamed)
// and a shared index appended under an exclusive flock.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

class byte_source;
struct memory_region;

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
// of its last page covers the padding (no copy: a large trace reads at page-cache speed; a file
// that shrinks under the mapping ends the process with a message and exit 74, never SIGBUS);
// stdin, gzip (told by its magic bytes, whatever the name), URLs and anything else are read
// through open_input (66 for a missing file).
class padded_input {
public:
    explicit padded_input(const std::string& path);
    ~padded_input();
    padded_input(const padded_input&) = delete;
    padded_input& operator=(const padded_input&) = delete;
    std::string_view text() const { return text_; }
    // The mapping text() lies in, when the file is read in place (its pages may be released
    // behind a reader: release_region); nullptr when the text is a copy.
    const memory_region* mapped() const { return mapped_.get(); }
    // Throws io_error (74) when a mapped file is now shorter than when it was mapped (see
    // byte_source::verify_mapped); does nothing otherwise.
    void verify_mapped() const;

private:
    std::unique_ptr<byte_source> src_;  // the input; when mapped, the mapping lives with it
    std::unique_ptr<memory_region> mapped_;
    std::string owned_;
    std::string_view text_;
};

// A directory opened once, and every file and directory beneath it reached through
// descriptors: each name is one component, opened with openat(2) and O_NOFOLLOW from the
// descriptor of the directory that holds it, so a symbolic link planted beneath the root, or
// swapped in between a check and a write, is never followed (no path is checked and then opened
// again). The root's own path is followed as named: the caller chose it. `what` names the tree
// in messages ("cache", "registry"). Errors are cant_create_error (exit 73) unless said.
class rooted_dir {
public:
    // Opens `path`, first creating it (and its parents) when `create`. Without `create`, a
    // missing directory throws no_input_error (66).
    rooted_dir(const std::string& path, std::string_view what, bool create);
    ~rooted_dir();
    rooted_dir(rooted_dir&& o) noexcept;
    rooted_dir& operator=(rooted_dir&& o) noexcept;
    rooted_dir(const rooted_dir&) = delete;
    rooted_dir& operator=(const rooted_dir&) = delete;

    const std::string& path() const { return path_; }
    int fd() const { return fd_; }
    // The subdirectory `name` (one component: no '/', not "." or ".."), created when `create`;
    // nullopt when it does not exist and `create` is false. A symbolic link or anything else
    // that is not a directory under that name is refused.
    std::optional<rooted_dir> sub(std::string_view name, bool create) const;
    // The file `name` opened for reading (O_NONBLOCK while opening, so a FIFO cannot hang the
    // open, then cleared): the descriptor, or -1 when nothing has that name. A symbolic link,
    // FIFO, socket, device or directory there is not opened: -1 with `refused` saying what it
    // is ("a symbolic link", "not a regular file").
    int open_regular(std::string_view name, std::string& refused) const;
    // The regular file `name` read whole, or nullopt (missing, or refused as open_regular says).
    // Throws io_error (74) when it cannot be read.
    std::optional<std::string> read_regular(std::string_view name, std::string& refused) const;
    // Writes `content` to `name` atomically (NAME.tmp.<pid>.<n> created O_EXCL in this directory,
    // fsync, renameat): the rename replaces whatever had the name, a planted link included, and
    // nothing outside this directory is written.
    void write_atomic(std::string_view name, std::string_view content) const;
    // `name` opened (created if absent, never through a link) with flock(LOCK_EX) held; the
    // caller closes the descriptor, which releases the lock.
    int open_locked(std::string_view name) const;
    // The names of the entries (not "." and ".."), unsorted; io_error (74) when it cannot list.
    std::vector<std::string> names() const;
    // remove_stale_temps for this directory, through its descriptor.
    std::size_t remove_stale_temps() const;
    // PATH/NAME, for messages.
    std::string path_of(std::string_view name) const { return path_ + "/" + std::string(name); }

private:
    rooted_dir(int fd, std::string path, std::string what);
    int fd_ = -1;
    std::string path_, what_;
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
