// Fuzz target: whole JSON texts (--signature, --family-map, cache records) and the depth bound:
// parse_json_object_file reads or refuses with a line inside the text; a value read dumps to
// canonical text that reads back equal; the cache's record checks never throw past their own
// error types.
#include "fuzz_util.hpp"

#include "prof/io/json_in.hpp"
#include "prof/device/linkrate.hpp"
#include "prof/spans/spans.hpp"

#include <algorithm>
#include <cmath>

namespace {
bool finite_everywhere(const prof::json_value& v) {
    if (v.t == prof::json_value::type::number && !std::isfinite(v.d)) return false;
    for (const auto& a : v.arr)
        if (!finite_everywhere(a)) return false;
    for (const auto& [k, x] : v.obj)
        if (!finite_everywhere(x)) return false;
    return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    std::string_view text = fuzz::text_of(data, size);
    try {
        json_value v = parse_json_object_file(text, "f.json", "--signature");
        if (finite_everywhere(v)) {
            std::string d = v.dump();
            if (!(parse_json_text(d) == v)) fuzz::finding("canonical dump does not read back equal: " + d);
            if (parse_json_text(d).dump() != d) fuzz::finding("canonical dump is not a fixed point: " + d);
        }
    } catch (const input_error& e) {
        std::size_t lines = 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
        if (e.line_number < 1 || e.line_number > lines)
            fuzz::finding("an error names line " + std::to_string(e.line_number) + " of a " + std::to_string(lines) +
                          "-line text");
    } catch (const std::exception& e) {
        fuzz::finding(std::string("parse_json_object_file threw something else: ") + e.what());
    }
    fuzz::outcome([&] { link_rate_record_key(text); }, true);
    fuzz::outcome([&] { query_profile_record_key(text); }, true);
    return 0;
}
