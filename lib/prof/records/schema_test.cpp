// Record schemas: reading and writing by the table, and each reader rule.
#include "prof/records/fit_record.hpp"

#include <doctest/doctest.h>

using namespace prof;
namespace od = simdjson::ondemand;

namespace {

struct point {
    std::string name;
    std::optional<std::uint64_t> size_bytes;
    std::optional<double> wall_s;
    std::string label;
};

const record_schema<point>& point_schema() {
    static const record_schema<point> s{"point", "point", false, {
        member<&point::name>("name").required(),
        member<&point::size_bytes>("size_bytes"),
        member<&point::wall_s>("wall_s"),
        member<&point::label>("label").defaults([](point& p) { p.label = p.name; }),
    }};
    return s;
}

point read_point(std::string_view text, std::string_view prefix = {}) {
    point p;
    parse_object_text(text, [&](od::object& o) { read_record(point_schema(), o, p, prefix); });
    return p;
}

std::string error_of(std::string_view text, std::string_view prefix = {}) {
    try {
        read_point(text, prefix);
    } catch (const field_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a record is written kind first, then its fields in the table's order") {
    point p{"a", 7, 0.5, "x"};
    CHECK(write_record(point_schema(), p) == R"({"kind":"point","name":"a","size_bytes":7,"wall_s":0.5,"label":"x"})");
}

TEST_CASE("a record's fields are read in any key order, unknown keys ignored") {
    point p = read_point(R"({"label":"l","other":[1,2],"wall_s":2.5,"name":"n","size_bytes":"12"})");
    CHECK(p.name == "n");
    CHECK(p.size_bytes == 12u);  // a quoted count reads as the number
    CHECK(p.wall_s == 2.5);
    CHECK(p.label == "l");
}

TEST_CASE("a required field absent is named, with the path of its object") {
    CHECK(error_of(R"({"wall_s":1})") == "field 'name': missing");
    CHECK(error_of(R"({"wall_s":1})", "outer") == "field 'outer.name': missing");
}

TEST_CASE("a field's reader error names the field with its path") {
    CHECK(error_of(R"({"name":"n","size_bytes":1.5})", "models.m") ==
          "field 'models.m.size_bytes': expected a non-negative integer, found 1.5");
}

TEST_CASE("a defaulted field absent is filled in by its rule, a given one is kept") {
    CHECK(read_point(R"({"name":"n"})").label == "n");
    CHECK(read_point(R"({"name":"n","label":"own"})").label == "own");
}

TEST_CASE("a record of another kind is refused") {
    CHECK(error_of(R"({"kind":"fit","name":"n"})").find("kind") != std::string::npos);
}

TEST_CASE("a fit's derived effective_cores is recomputed, never read") {
    // cpu 3 s over wall 2 s: 1.5 cores, whatever the record said.
    measured_fit f;
    parse_object_text(R"({"kind":"fit","ts_id":"t","model_type":"m","ok":true,"wall_s":2,"cpu_s":3,"effective_cores":99})",
                      [&](od::object& o) { f = read_fit(o); });
    CHECK(write_fit(f).find(R"("effective_cores":1.5,)") != std::string::npos);
}

TEST_CASE("a fit's null family defaults to its model, as an absent one does") {
    measured_fit f;
    parse_object_text(R"({"ts_id":"t","model_type":"theta","family":null,"ok":false})",
                      [&](od::object& o) { f = read_fit(o); });
    CHECK(f.family == "theta");
}

TEST_CASE("a cell without a family gives a fit whose family is written null, not the model's name") {
    cell c;
    parse_object_text(R"({"ts_id":"t","model_type":"theta","n_obs":5})", [&](od::object& o) { c = read_cell(o); });
    CHECK(c.family == "theta");
    CHECK_FALSE(c.family_named);
    measured_fit f;
    f.ts_id = c.ts_id;
    f.model_type = c.model_type;
    f.family = c.family;
    f.family_named = c.family_named;
    const std::string text = write_fit(f);
    CHECK(text.find(R"("model_type":"theta","family":null,)") != std::string::npos);
    measured_fit back;
    parse_object_text(text, [&](od::object& o) { back = read_fit(o); });
    CHECK(back.family == "theta");
    CHECK_FALSE(back.family_named);
    // A named family is written as it is, and reads back as named.
    f.family = "stat";
    f.family_named = true;
    CHECK(write_fit(f).find(R"("family":"stat",)") != std::string::npos);
    cell named;
    parse_object_text(R"({"ts_id":"t","model_type":"theta","family":"stat"})",
                      [&](od::object& o) { named = read_cell(o); });
    CHECK(named.family_named);
}

TEST_CASE("a unit follows from a field's name") {
    CHECK(unit_of_name("wall_s") == "s");
    CHECK(unit_of_name("planning_wall_s_per_cell") == "s");
    CHECK(unit_of_name("fixed_seconds") == "s");
    CHECK(unit_of_name("peak_rss_bytes") == "bytes");
    CHECK(unit_of_name("n_obs").empty());
    CHECK(unit_of_name("effective_cores").empty());
}

namespace {
struct total {
    double makespan_s = 0;
    std::optional<double> cold_start_s;
};
const record_schema<total>& total_schema() {
    static const record_schema<total> s{"total", "total", false, {
        member<&total::makespan_s>("makespan_s"),
        member<&total::cold_start_s>("cold_start_s"),
    }};
    return s;
}
}  // namespace

TEST_CASE("a field documented as always a number is refused when not finite, never written as null") {
    CHECK(write_record(total_schema(), total{1.5, std::nullopt}) == R"({"kind":"total","makespan_s":1.5,"cold_start_s":null})");
    for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
        try {
            write_record(total_schema(), total{bad, 2.0});
            FAIL("a non-finite makespan_s was written");
        } catch (const prof::error& e) {
            CHECK(e.code() == exit_code::data_err);
            CHECK(std::string(e.what()).find("field 'makespan_s' is not a finite number") == 0);
        }
    }
}
