// Every record schema, in the order of prof-records(5): what scripts/records-check compares with
// the page.
#include "prof/records/kinds.hpp"

namespace prof {

std::vector<schema_description> all_schemas() {
    return {
        describe(cell_schema()),
        describe(sample_schema()),
        describe(length_bin_schema()),
        describe(model_spec_schema()),
        describe(fit_schema()),
        describe(profile_schema()),
        describe(provenance_schema()),
        describe(model_cost_schema()),
        describe(curve_point_schema()),
        describe(family_cost_schema()),
        describe(registry_index_line_schema()),
        describe(plan_schema()),
        describe(node_shape_schema()),
        describe(plan_run_schema()),
        describe(plan_totals_schema()),
        describe(family_plan_schema()),
        describe(family_layout_schema()),
        describe(size_class_schema()),
        describe(axis_basis_schema()),
        describe(diff_schema()),
        [] {
            auto d = diff_side_description();
            d.name = "diff.old, diff.new";
            return d;
        }(),
        describe(diff_gate_schema()),
        describe(diff_model_row_schema()),
        describe(diff_family_row_schema()),
        describe(axis_change_schema()),
        describe(query_profile_schema()),
        describe(query_node_schema()),
        describe(query_fit_point_schema()),
        describe(link_rate_schema()),
        describe(link_device_schema()),
    };
}

}  // namespace prof
