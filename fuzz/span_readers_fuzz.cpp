// Fuzz target: the other query-profile readers (DuckDB JSON profiles, Polars JSON Lines and CSV)
// and the format detector: each either reads or throws prof's typed error; a DuckDB profile read
// must have finite, non-negative times.
#include "fuzz_util.hpp"

#include "prof/spans/spans.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string text = fuzz::padded_copy(fuzz::text_of(data, size));
    std::string_view t(text.data(), size);
    fuzz::outcome([&] { detect_span_format(t, "in"); });
    fuzz::outcome([&] {
        duckdb_profile d = read_duckdb_profile(t, "in.json");
        if (!std::isfinite(d.latency_s)) fuzz::finding("a DuckDB latency that is not finite was read");
        for (const auto& [name, s] : d.operators)
            if (!std::isfinite(s)) fuzz::finding("a DuckDB operator time that is not finite was read: " + name);
    });
    fuzz::outcome([&] { read_polars_jsonl(t, "in.jsonl"); });
    fuzz::outcome([&] { read_polars_csv(t, "in.csv"); });
    return 0;
}
