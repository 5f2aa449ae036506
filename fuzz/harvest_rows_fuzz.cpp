// Fuzz target, differential: prof-harvest's fast row reader (read_harvest_row_fast, and the
// shape-predicting harvest_row_reader across lines) against the simdjson reader behind
// for_each_object. Wherever a fast reader accepts a line, the simdjson path must accept it too
// and read the same row; where it declines, nothing is claimed. The reader that cuts its own
// lines (read_line, over the whole input) must take a line exactly when the line reader's
// unchecked read takes it and a '\n' ends it, reading the same row, and never past that '\n'.
#include "fuzz_util.hpp"

#include "prof/harvest/harvest.hpp"
#include "prof/io/json_in.hpp"

#include <fmt/format.h>

namespace {
std::string show(const prof::harvest_row& r) {
    auto o = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("-"); };
    auto d = [](const std::optional<double>& v) {
        if (!v) return std::string("-");
        if (*v != *v) return std::string("nan");
        return fmt::format("{}", *v);
    };
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.run_id, r.ts_id, r.model_type, o(r.family),
                       o(r.error), o(r.finished_at_ns), o(r.n_obs), o(r.process_rss_bytes), o(r.peak_rss_bytes),
                       o(r.peak_gpu_bytes), d(r.fit_seconds), d(r.cpu_seconds), r.fold, r.ensemble);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string_view all = fuzz::text_of(data, size);
    harvest_row_reader reader, unchecked_reader, cut_reader;
    const std::string whole = fuzz::padded_copy(all);
    const char* whole_end = whole.data() + all.size();
    std::size_t at = 0;
    while (at <= all.size()) {
        std::size_t nl = all.find('\n', at);
        std::string line(all.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at));
        const std::size_t line_at = at;
        at = nl == std::string_view::npos ? all.size() + 1 : nl + 1;
        std::string padded = fuzz::padded_copy(line);
        std::string_view view(padded.data(), line.size());
        // Unchecked, the row reader validates UTF-8 itself: it must never take an invalid line.
        harvest_row unchecked;
        bool unchecked_ok = false;
        fuzz::outcome([&] { unchecked_ok = unchecked_reader.read(view, unchecked, true, false); }, true);
        // The line reader strips a '\r' before the '\n'; the row reader's whitespace takes it alike.
        harvest_row cut;
        const char* cut_end = nullptr;
        fuzz::outcome([&] {
            cut_end = cut_reader.read_line(whole.data() + line_at, whole_end, whole_end + simdjson::SIMDJSON_PADDING, cut);
        }, true);
        const bool cut_ok = cut_end != nullptr;
        if (cut_ok && cut_end != whole.data() + nl) fuzz::finding("cutting reader ended a row off its '\\n': " + line);
        if (cut_ok != (unchecked_ok && nl != std::string_view::npos) || (cut_ok && show(cut) != show(unchecked)))
            fuzz::finding("cutting reader read a line unlike the line reader's: " + line);
        if (!simdjson::validate_utf8(line.data(), line.size())) {
            if (unchecked_ok) fuzz::finding("row reader took a line of invalid UTF-8 unchecked: " + line);
            continue;
        }
        harvest_row fast, shaped;
        bool fast_ok = false, shaped_ok = false;
        std::string fast_err = fuzz::outcome([&] { fast_ok = read_harvest_row_fast(view, fast); }, true);
        std::string shaped_err = fuzz::outcome([&] { shaped_ok = reader.read(view, shaped, true); }, true);
        if (!fast_ok && !shaped_ok) continue;
        // The reference: the line as for_each_object reads it without a fast path.
        std::string ref, ref_err = fuzz::outcome([&] {
            line_reader in(string_source(line, "row"));
            for_each_object(in, 0, [&](simdjson::ondemand::object& o, std::size_t) { ref = show(read_harvest_row(o)); });
        });
        if (fast_ok) {
            if (!fast_err.empty()) fuzz::finding("the fast reader accepted and threw: " + fast_err);
            if (!ref_err.empty()) fuzz::finding("fast reader accepted a line simdjson refuses (" + ref_err + "): " + line);
            if (show(fast) != ref) fuzz::finding("fast reader read " + show(fast) + ", simdjson " + ref + ": " + line);
        }
        if (unchecked_ok && (!shaped_ok || show(unchecked) != show(shaped)))
            fuzz::finding("row reader read a valid line differently unchecked: " + line);
        if (shaped_ok) {
            if (!ref_err.empty()) fuzz::finding("row reader accepted a line simdjson refuses (" + ref_err + "): " + line);
            if (show(shaped) != ref) fuzz::finding("row reader read " + show(shaped) + ", simdjson " + ref + ": " + line);
        }
    }
    return 0;
}
