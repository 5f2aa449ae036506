// The harvest area: warehouse rows → profiles (the row readers, the harvester, parallel
// ingest, the warehouse-side aggregate queries). This file: one byte source cut into chunks of
// whole lines and handed to worker threads through a bounded ring.
#pragma once

#include "prof/io/json_in.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace prof {

// A run of whole lines of the source: bytes() begins at a line's first byte and ends after a
// '\n' (or at the end of the input). `index` counts chunks from 0 in input order; chunk 0
// starts the input (where a byte order mark may stand).
struct line_chunk {
    std::uint64_t index = 0;
    // The chunk's bytes: in place in a mapped input, else in `data` (SIMDJSON_PADDING readable
    // bytes after them either way).
    memory_region region;
    std::string_view bytes() const { return region.bytes; }

    // The buffer of a chunk read from a stream (grown, never shrunk, and reused from chunk to
    // chunk: not zeroed first); unused for a mapped input.
    std::unique_ptr<char[]> data;
    std::size_t size = 0, capacity = 0;
    void reserve(std::size_t n);  // keeps the bytes; allocates SIMDJSON_PADDING more
};

// The input's line number of a chunk's line = `before` (the lines of every earlier chunk) +
// its number in chunk_reader − chunk_line_bias(its index).
inline std::size_t chunk_line_bias(std::uint64_t index) { return index == 0 ? 0 : 1; }
// A line reader over one chunk, in place: its lines number from 1 + chunk_line_bias(index), so
// the byte-order-mark rule, which applies to line 1 only, never strips bytes from the middle
// of the input. `name` is the input's name.
line_reader chunk_reader(const line_chunk& c, const std::string& name);
// The lines a chunk holds: its '\n' bytes, plus one for a last line without one.
std::size_t chunk_lines(const line_chunk& c);

struct chunk_options {
    unsigned workers = 2;                   // threads calling `work`
    std::size_t chunk_bytes = 4u << 20;     // a chunk's size before it is cut back to a line end
    std::size_t ring = 0;                   // chunks in flight at most; 0 = 2 × workers
};

// Cuts `src` into line_chunks (a line longer than chunk_bytes makes its chunk longer) and
// calls work(worker, chunk) on `workers` threads; worker is 0 … workers − 1, each call of one
// worker on one thread, the chunks in any order. A source that maps its input
// (byte_source::map_rest) is cut in place and every thread, the calling one included, takes
// the next chunk as it is free. Any other source is read to its end on the calling thread
// while `workers` threads work (started with the first chunk: an empty input starts none): at
// most `ring` chunks exist at once (reading waits for a free one), so a pipe is read as it is
// consumed. `progress`, when set, is called on the calling thread after each chunk read or
// worked, with the input's bytes handed out so far. When `work` throws, no further chunk is
// started and the first such exception is rethrown once every worker has stopped. An
// exception of the source is not thrown but returned, after every chunk read before it was
// worked: the caller judges what those chunks held (a malformed line before the failure is the
// first error a sequential reader meets).
[[nodiscard]] std::exception_ptr for_each_chunk(byte_source& src, const chunk_options& options,
                                                const std::function<void(unsigned worker, const line_chunk& chunk)>& work,
                                                const std::function<void(std::uint64_t bytes)>& progress = {});

}  // namespace prof
