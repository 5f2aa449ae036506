// prof-harvest's parallel ingest: one source's chunks parsed by worker harvesters, merged, and
// its malformed lines judged in input order (see harvester::read in harvest.hpp).
#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/harvest/harvest.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>

namespace prof {

std::size_t harvester::read_chunk(const line_chunk& chunk, const std::string& source, std::vector<chunk_bad_line>& bad) {
    line_reader in = chunk_reader(chunk, source);
    // A budget of 0: each malformed line ends read_lines with its input_error, and the next call
    // goes on from the line after it.
    for (;;) {
        try {
            read_lines(in, 0, {});
            return in.lines_read();
        } catch (const input_error& e) {
            bad.push_back({chunk.index, e.line_number, e.detail});
        }
    }
}

void harvester::merge(harvester&& other) {
    for (auto& [run_id, r] : other.runs_) {
        auto it = runs_.find(run_id);
        if (it == runs_.end()) {
            runs_.emplace(run_id, std::move(r));
            continue;
        }
        run_acc& m = it->second;
        m.counts.rows_read += r.counts.rows_read;
        m.counts.fold_rows_skipped += r.counts.fold_rows_skipped;
        m.counts.ensemble_rows_skipped += r.counts.ensemble_rows_skipped;
        m.latest.add(r.latest);
        m.builder.merge(std::move(r.builder));
    }
    bad_lines_ += other.bad_lines_;
    other.runs_.clear();
    other.last_run_ = nullptr;
}

void harvester::read(std::unique_ptr<byte_source> src, unsigned jobs,
                     const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    threads_ = std::max(threads_, jobs);
    if (jobs <= 1) {
        line_reader in(std::move(src));
        read(in, progress);
        return;
    }
    const std::string source = src->name();
    std::vector<harvester> workers;
    workers.reserve(jobs);
    for (unsigned w = 0; w < jobs; ++w) workers.emplace_back(config_);
    std::vector<std::vector<chunk_bad_line>> bad(jobs);
    std::vector<std::vector<std::pair<std::uint64_t, std::size_t>>> lines(jobs);  // (chunk, its lines)
    std::atomic<std::uint64_t> lines_done{0};
    std::uint64_t bytes = 0;
    chunk_options options;
    options.workers = jobs;
    // 2 x jobs chunks are in flight: past 8 threads they shrink (to 1 MiB at least) so the ring
    // stays near 64 MiB.
    options.chunk_bytes = std::min(config_.chunk_bytes, std::max<std::size_t>(1u << 20, (64u << 20) / (2 * jobs)));
    std::exception_ptr read_error = for_each_chunk(
        *src, options,
        [&](unsigned w, const line_chunk& c) {
            std::size_t n = workers[w].read_chunk(c, source, bad[w]);
            lines[w].emplace_back(c.index, n);
            lines_done += n;
        },
        [&](std::uint64_t b) {
            bytes = b;
            if (progress) progress(lines_seen_ + lines_done, bytes_base_ + b);
        });

    // Bytes that changed under the mapping make every verdict below wrong (harvest.hpp).
    src->verify_mapped();
    // The input's line numbers: each chunk's lines follow the lines of the chunks before it.
    std::vector<std::pair<std::uint64_t, std::size_t>> all_lines;
    for (auto& l : lines) all_lines.insert(all_lines.end(), l.begin(), l.end());
    std::sort(all_lines.begin(), all_lines.end());
    std::vector<std::size_t> before(all_lines.size() + 1, 0);
    for (std::size_t k = 0; k < all_lines.size(); ++k) before[k + 1] = before[k] + all_lines[k].second;
    std::vector<chunk_bad_line> all_bad;
    for (auto& b : bad) std::move(b.begin(), b.end(), std::back_inserter(all_bad));
    std::sort(all_bad.begin(), all_bad.end(), [](const chunk_bad_line& a, const chunk_bad_line& b) {
        return a.chunk != b.chunk ? a.chunk < b.chunk : a.line < b.line;
    });
    for (const auto& b : all_bad) {
        std::size_t line = before[b.chunk] + b.line - chunk_line_bias(b.chunk);
        if (bad_lines_ >= config_.max_bad_lines) throw_with_export_hint(input_error(source, line, b.what), config_.table);
        ++bad_lines_;
        warn(fmt::format("{}:{}: {} (skipped)", source, line, b.what));
    }
    if (read_error) std::rethrow_exception(read_error);
    for (auto& w : workers) merge(std::move(w));
    lines_seen_ += lines_done;
    bytes_base_ += bytes;
}

}  // namespace prof
