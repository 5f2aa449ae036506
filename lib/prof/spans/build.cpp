// One run's query_profile (see build.hpp).
#include "prof/spans/build.hpp"

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/byte_source.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/http.hpp"
#include "prof/spans/chrome.hpp"
#include "prof/spans/polars.hpp"

#include <ctime>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>

namespace prof {

namespace {

double cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

span_set read_spans(span_format f, std::string_view text, const std::string& source, unsigned jobs, chrome_read_stats* how,
                    const memory_region* mapped) {
    switch (f) {
    case span_format::polars_jsonl: return read_polars_jsonl(text, source);
    case span_format::polars_csv: return read_polars_csv(text, source);
    case span_format::chrome: return read_chrome_trace(text, source, jobs, how, mapped);
    case span_format::duckdb: break;
    }
    throw error(exit_code::software, "read_spans: a DuckDB profile has no spans");
}

namespace {

// The profile of spans read (from `bytes` bytes of input, from t0 in CPU seconds on).
std::optional<query_profile> profile_of_spans(span_set s, const chrome_read_stats& how, std::size_t bytes, double t0,
                                              const std::string& source, const run_input& in) {
    const bool chrome = in.format == span_format::chrome;
    if (chrome) {
        if (in.strict) refuse_defects(s, source);
        auto report = report_trace(s, source);
        for (const auto& n : report.notes) note(n);
        for (const auto& w : report.warnings) warn(w);
    }
    if (s.spans.empty()) {  // no evidence: nothing to price
        std::string why = no_spans_reason(in.format, s, source);
        if (in.strict) throw error(exit_code::data_err, why + " (--strict)");
        warn(why);
        return std::nullopt;
    }
    double t1 = cpu_seconds();
    query_profile p = build_from_spans(s, in.opts, default_fixed_nodes(in.format), record_source(in.format), in.jobs);
    if (in.stats) {
        std::string way;
        if (chrome) {
            std::string skipped = defect_counts(s);
            way = stats_words(how) + "; defects: " + (skipped.empty() ? std::string("none") : skipped);
        }
        note(fmt::format("stats: {} bytes, {} spans of {} nodes; cpu s: read+parse {:.6f}, union {:.6f}{}", bytes,
                         s.spans.size(), s.names.size(), t1 - t0, cpu_seconds() - t1, way));
    }
    return p;
}

// The run in `text` (the whole input, padded; in the file mapping `mapped`, when given).
std::optional<query_profile> build_from_text(std::string_view text, const std::string& name, std::string_view format_word,
                                             bool strict, const std::function<run_input()>& options,
                                             const memory_region* mapped = nullptr) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {  // empty input → empty output
        if (strict) throw error(exit_code::data_err, fmt::format("{}: empty input (--strict)", name));
        return std::nullopt;
    }
    run_input in = options();
    in.format = span_format_named(format_word, text, name);
    in.mapped = mapped;
    return build_run_profile(text, name, in);
}

// Whether padded_input reads `path` as a stream, not mapped in place: stdin, a pipe or another
// file that is not regular, a URL, a gzip file. A path that cannot be opened is not: the
// mapped path's open reports it.
bool streamed(const std::string& path) {
    if (path == "-" || is_http_url(path)) return true;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    if (!S_ISREG(st.st_mode)) return true;
    unsigned char magic[2] = {};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, magic, 2);
    ::close(fd);
    return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// Up to `n` first bytes of `src` (fewer only at its end). Read in pieces and appended, never
// into a string of n zeros made first: zeroing (and faulting in) a whole megabyte cost more
// than the rest of the start of a run on empty or short input.
std::string read_head(byte_source& src, std::size_t n) {
    std::string head;
    char piece[64 * 1024];
    while (head.size() < n) {
        const std::size_t k = src.read(piece, std::min(sizeof piece, n - head.size()));
        if (k == 0) break;
        head.append(piece, k);
    }
    return head;
}

}  // namespace

std::optional<query_profile> build_run_profile(std::string_view text, const std::string& source, const run_input& in) {
    if (in.format == span_format::duckdb) return build_from_duckdb(read_duckdb_profile(text, source), in.opts, source);
    double t0 = cpu_seconds();
    chrome_read_stats how;
    span_set s = read_spans(in.format, text, source, in.jobs, &how, in.mapped);
    return profile_of_spans(std::move(s), how, text.size(), t0, source, in);
}

std::optional<query_profile> build_run_profile(const std::string& path, std::string_view format_word, bool strict,
                                               const std::function<run_input()>& options) {
    const std::string name = path == "-" ? "<stdin>" : path;
    if (!streamed(path)) {
        padded_input input(path);
        // A mapped file that shrinks inside its last page reads as zeros there, with no SIGBUS:
        // its size is checked before any verdict on its bytes, a result or an error.
        try {
            auto p = build_from_text(input.text(), name, format_word, strict, options, input.mapped());
            input.verify_mapped();
            return p;
        } catch (const error&) {
            input.verify_mapped();
            throw;
        }
    }
    // A stream: its head tells a Chrome trace, whose events are read through a ring of chunks
    // as the stream comes (read_chrome_stream); any other input is read whole, as a file is.
    auto src = open_input(path);
    constexpr std::size_t head_bytes = std::size_t{1} << 20;
    std::string head = read_head(*src, head_bytes);
    if (!chrome_by_head(format_word, head, head.size() < head_bytes)) {
        std::string text = std::move(head);
        std::uint64_t bytes = 0;
        return build_from_text(read_rest_padded(*src, text, bytes), name, format_word, strict, options);
    }
    run_input in = options();
    in.format = span_format::chrome;
    double t0 = cpu_seconds();
    chrome_read_stats how;
    std::uint64_t bytes = 0;
    span_set s = read_chrome_stream(head, *src, name, in.jobs, &how, bytes);
    return profile_of_spans(std::move(s), how, bytes, t0, name, in);
}

}  // namespace prof
