// Fuzz target: JSON Lines records (cells and fits) through the line reader and for_each_object,
// with a bad-line budget taken from the first byte; a record read is written and read back, and
// must come out byte-identical (write ∘ read is a fixed point). A third pass reads each record
// as prof-aggregate does: is_sample_record first (which rewinds the object), then the fit reader
// or the verbatim sample over the same object, so a reader that reads strings again after a
// reset (and overruns simdjson's string buffer on a long string) is caught.
#include "fuzz_util.hpp"

#include "prof/io/json_in.hpp"
#include "prof/profile/sample.hpp"
#include "prof/records/records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace prof;
    if (size == 0) return 0;
    std::size_t budget = data[0] % 4;
    std::string text(fuzz::text_of(data + 1, size - 1));
    for (int kind = 0; kind < 2; ++kind) {
        fuzz::outcome([&] {
            line_reader in(string_source(text, "in.jsonl"));
            for_each_object(in, budget, [&](simdjson::ondemand::object& o, std::size_t) {
                std::string once = kind == 0 ? write_cell(read_cell(o)) : write_fit(read_fit(o));
                std::string twice;
                parse_object_text(once, [&](simdjson::ondemand::object& o2) {
                    twice = kind == 0 ? write_cell(read_cell(o2)) : write_fit(read_fit(o2));
                });
                if (once != twice) fuzz::finding("record changed on a second read: " + once + " -> " + twice);
            });
        });
    }
    fuzz::outcome([&] {
        line_reader in(string_source(text, "in.jsonl"));
        for_each_object(in, budget, [&](simdjson::ondemand::object& o, std::size_t) {
            if (is_sample_record(o)) (void)read_object_value(o);
            else (void)write_fit(read_fit(o));
        });
    });
    return 0;
}
