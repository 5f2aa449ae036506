// The io area: where prof's bytes come from (files, stdin, HTTP bodies, gzip streams), how
// they are split into lines and read as JSON, and how records are written. This header holds
// the byte sources: a simple pull interface that every reader above it consumes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace prof {

struct http_options;

// Input bytes already in memory, handed over without a copy: `bytes`, with `readable_after`
// more bytes readable (not part of the input) behind them. `releasable`: the pages behind
// `bytes` are a file's, mapped, so a reader done with a stretch may drop it from the process
// (release_region) and the pages are read back from the file should they be touched again.
struct memory_region {
    std::string_view bytes;
    std::size_t readable_after = 0;
    bool releasable = false;
};

// Drops the whole pages inside [from, to) of a releasable region from this process's memory
// (madvise MADV_DONTNEED): what a reader has parsed stops counting toward its resident set.
// Does nothing for a region that is not releasable, nor for the part of [from, to) outside
// `r.bytes`.
void release_region(const memory_region& r, const char* from, const char* to);

// Where bytes come from: a file, stdin, a gzip stream, an HTTP body. read() fills at most n
// bytes of buf and returns how many it filled; 0 means the end of input (and only then). It
// throws prof::io_error (or a subclass) on failure. One thread reads a source at a time.
class byte_source {
public:
    virtual ~byte_source() = default;
    virtual std::size_t read(char* buf, std::size_t n) = 0;
    virtual const std::string& name() const = 0;
    // The rest of the input (what read() has not handed out yet) as one region in memory, when
    // the source can give it without copying: a regular file is mapped read-only (valid while
    // the source lives; read() must not be called afterwards). nullopt for a pipe, a socket, a
    // gzip stream, an HTTP body or an empty file: read() them. A file that shrinks while
    // mapped cannot be read past its new end: the process reports it and exits with 74.
    virtual std::optional<memory_region> map_rest() { return std::nullopt; }
    // For a mapped input: throws io_error (exit 74) "NAME: the file shrank while it was read"
    // when the file is now shorter than it was when mapped. A shrink that stays inside the last
    // page raises no SIGBUS (those bytes read as zeros), so readers call this at the end of the
    // input and before judging a line malformed: a verdict on bytes that changed under the
    // reader would be a wrong one. Does nothing for any other source.
    virtual void verify_mapped() const {}
};

// Everything `src` has left, appended to `text`, then simdjson::SIMDJSON_PADDING zero bytes: the
// view returned is `text` without them. `total` counts the bytes read.
std::string_view read_rest_padded(byte_source& src, std::string& text, std::uint64_t& total);

// A file descriptor source; `name` is what diagnostics print ("<stdin>" for fd 0).
std::unique_ptr<byte_source> fd_source(int fd, std::string name, bool owns_fd);

// Opens SPEC for reading: "-" is stdin, "http://…" and "https://…" are fetched with `http`
// (http.hpp: http_source; default options when null), anything else is a file path. Every
// input whose first two bytes are gzip's magic (1f 8b) is decompressed as it streams (gunzip),
// whatever its name: `x.jsonl.gz`, `zcat -f`-style stdin, a .gz URL served without
// Content-Encoding. Throws no_input_error (exit 66) when the file cannot be opened, and the
// errors of http_source for a URL.
std::unique_ptr<byte_source> open_input(const std::string& spec, const http_options* http = nullptr);

// Decompresses the gzip stream read from `src` (one or more members) as it is read: the one gzip
// decoder of prof, for .gz files and gzip HTTP bodies alike (ISA-L's igzip). Each member's
// CRC-32 and length trailer is checked; a stream that ends inside a member ("gzip stream cut
// short": a body cut at a flush point decodes cleanly up to the cut, and only the missing
// trailer tells), corrupt data, or bytes after a member that do not start another throw
// io_error (74) naming the source, after every byte decoded before the fault has been read.
// A source with no byte at all reads as empty. Decoding runs on a thread of its own, a bounded
// ring of chunks ahead of the reader, so inflating overlaps with parsing; the bytes and errors
// read do not depend on the read sizes.
std::unique_ptr<byte_source> gunzip(std::unique_ptr<byte_source> src);

// Wraps `src` so that a gzip stream (recognised by its magic bytes 1f 8b, whatever the name) is
// decompressed through gunzip as it is read; anything else passes through unchanged.
std::unique_ptr<byte_source> gunzip_if_gzip(std::unique_ptr<byte_source> src);

// `prefix`, then whatever `src` hands out: bytes taken from a source to look at, put back.
std::unique_ptr<byte_source> prefixed_source(std::string prefix, std::unique_ptr<byte_source> src);

// An in-memory source (tests, and data already read whole); each read hands out at most
// `max_read` bytes (a pipe hands out 64 KiB: tests of readers fed in small pieces).
std::unique_ptr<byte_source> string_source(std::string data, std::string name,
                                           std::size_t max_read = static_cast<std::size_t>(-1));

}  // namespace prof
