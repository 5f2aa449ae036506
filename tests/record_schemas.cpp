// Prints every record schema, one field a line: what scripts/records-check compares with the
// field tables of man/prof-records.5.
//   SCHEMA<TAB>FIELD<TAB>TYPE<TAB>UNIT<TAB>NULLABLE<TAB>RULE
// Before printing it checks what every schema must hold (distinct schema names, distinct field
// names, at most 64 fields, `kind` only first) and exits 1 naming the schema that breaks it.
#include "prof/device/link_rate_record.hpp"
#include "prof/plan/plan_record.hpp"
#include "prof/profile/diff_record.hpp"
#include "prof/profile/profile_record.hpp"
#include "prof/profile/sample_record.hpp"
#include "prof/records/fit_record.hpp"
#include "prof/resolve/registry_record.hpp"
#include "prof/spans/query_profile_record.hpp"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace {

using prof::describe;
using prof::schema_description;

// Every schema prof has, in the order of prof-records(5).
std::vector<schema_description> all_schemas() {
    auto diff_side = prof::diff_side_description();
    diff_side.name = "diff.old, diff.new";
    return {
        describe(prof::cell_schema()),         describe(prof::sample_schema()),
        describe(prof::length_bin_schema()),   describe(prof::model_spec_schema()),
        describe(prof::fit_schema()),          describe(prof::profile_schema()),
        describe(prof::provenance_schema()),   describe(prof::model_cost_schema()),
        describe(prof::curve_point_schema()),  describe(prof::fit_reading_schema()),
        describe(prof::thread_cap_schema()),
        describe(prof::family_cost_schema()),
        describe(prof::registry_index_line_schema()),
        describe(prof::plan_schema()),         describe(prof::node_shape_schema()),
        describe(prof::plan_run_schema()),     describe(prof::plan_totals_schema()),
        describe(prof::family_plan_schema()),  describe(prof::family_layout_schema()),
        describe(prof::size_class_schema()),   describe(prof::axis_basis_schema()),
        describe(prof::plan_interval_schema()),  describe(prof::model_sample_width_schema()),
        describe(prof::diff_schema()),         diff_side,
        describe(prof::diff_gate_schema()),    describe(prof::diff_model_row_schema()),
        describe(prof::diff_family_row_schema()), describe(prof::axis_change_schema()),
        describe(prof::query_profile_schema()), describe(prof::query_node_schema()),
        describe(prof::query_fit_point_schema()), describe(prof::link_rate_schema()),
        describe(prof::link_device_schema()),
    };
}

// The first rule a schema breaks, or "".
std::string broken_rule(const schema_description& s, std::set<std::string>& names) {
    if (!names.insert(s.name).second) return "its name is used twice";
    if (s.fields.size() > 64) return "more than 64 fields";
    std::set<std::string> fields;
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
        if (!fields.insert(s.fields[i].name).second) return "field '" + s.fields[i].name + "' twice";
        if (i > 0 && s.fields[i].name == "kind") return "'kind' not first";
    }
    return "";
}

}  // namespace

int main() {
    const auto schemas = all_schemas();
    std::set<std::string> names;
    for (const auto& s : schemas) {
        if (auto why = broken_rule(s, names); !why.empty()) {
            std::fprintf(stderr, "record-schemas: schema '%s': %s\n", s.name.c_str(), why.c_str());
            return 1;
        }
    }
    for (const auto& s : schemas)
        for (const auto& f : s.fields)
            std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", s.name.c_str(), f.name.c_str(),
                        std::string(prof::json_kind_name(f.type)).c_str(), f.unit.empty() ? "-" : f.unit.c_str(),
                        f.nullable ? "null" : "-", std::string(prof::read_rule_name(f.rule)).c_str());
    return std::fclose(stdout) == 0 ? 0 : 74;
}
