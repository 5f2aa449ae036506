// The `diff` record's schemas (the record, its two sides, its gate, its model and family rows
// and their axes) and its writer (see diff.hpp). No prof program reads a diff back.
#include "prof/profile/diff_record.hpp"

namespace prof {

namespace {
// Each side of a diff: its label and its profile's provenance.
struct diff_side {
    const std::string& label;
    const profile_provenance& pv;
};
}  // namespace

static const record_schema<diff_side>& diff_side_schema() {
    using D = diff_side;
    static const record_schema<D> s{"diff.old", "", false, {
        computed<D>("label", json_kind::string, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.label); }),
        computed<D>("basis", json_kind::string, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.pv.basis); }),
        computed<D>("source", json_kind::string, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.pv.source); }),
        computed<D>("run_id", json_kind::string, true, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.pv.run_id); }),
        computed<D>("measured_at", json_kind::string, true, [](const D& d, json_writer& w, std::string_view k) {
            w.field(k, d.pv.measured_at);
        }),
    }};
    return s;
}

schema_description diff_side_description() { return describe(diff_side_schema()); }

const record_schema<profile_diff>& diff_gate_schema() {
    using D = profile_diff;
    static const record_schema<D> s{"diff.gate", "", false, {
        computed<D>("max_slower", json_kind::number, true, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.gate.max_slower); }),
        computed<D>("max_bigger", json_kind::number, true, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.gate.max_bigger); }),
        computed<D>("confidence", json_kind::number, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.gate.confidence); }),
        computed<D>("resamples", json_kind::integer, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.gate.resamples); }),
        computed<D>("seed", json_kind::integer, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.gate.seed); }),
        computed<D>("passed", json_kind::boolean, false, [](const D& d, json_writer& w, std::string_view k) { w.field(k, d.passed()); }),
    }};
    return s;
}

const record_schema<axis_change>& axis_change_schema() {
    using A = axis_change;
    static const record_schema<A> s{"diff.models[].<axis>", "", false, {
        member<&A::old_value>("old"),
        member<&A::new_value>("new"),
        member<&A::ratio>("ratio"),
        member<&A::change>("change"),
        member<&A::regression>("regression"),
        member<&A::old_low>("old_low"),
        member<&A::old_high>("old_high"),
        member<&A::new_low>("new_low"),
        member<&A::new_high>("new_high"),
    }};
    return s;
}

namespace {
// One object per axis, keyed by the axis's name (median_wall_s, slot_cores, ...).
void write_axes(const row_diff& r, json_writer& w, std::string_view) {
    for (const auto& a : r.axes) {
        w.key(a.axis);
        write_record(axis_change_schema(), a, w);
    }
}
}  // namespace

namespace {
// A model row names its model and family; a family row only its family.
record_schema<row_diff> diff_row_schema(std::string_view name, bool models) {
    using R = row_diff;
    record_schema<R> s{name, "", false, {member<&R::name>(models ? "model_type" : "family")}};
    if (models) s.fields.push_back(member<&R::family>("family"));
    for (auto f : {member<&R::presence>("presence"), member<&R::old_n_ok>("old_n_ok"), member<&R::new_n_ok>("new_n_ok"),
                   computed<R>("<axis>", json_kind::object, false, write_axes)})
        s.fields.push_back(f);
    return s;
}
}  // namespace

const record_schema<row_diff>& diff_model_row_schema() {
    static const record_schema<row_diff> s = diff_row_schema("diff.models[]", true);
    return s;
}

const record_schema<row_diff>& diff_family_row_schema() {
    static const record_schema<row_diff> s = diff_row_schema("diff.families[]", false);
    return s;
}

const record_schema<profile_diff>& diff_schema() {
    using D = profile_diff;
    static const record_schema<D> s{"diff", "diff", true, {
        computed<D>("old", json_kind::object, false, [](const D& d, json_writer& w, std::string_view k) {
            w.key(k);
            write_record(diff_side_schema(), diff_side{d.old_label, d.old_provenance}, w);
        }),
        computed<D>("new", json_kind::object, false, [](const D& d, json_writer& w, std::string_view k) {
            w.key(k);
            write_record(diff_side_schema(), diff_side{d.new_label, d.new_provenance}, w);
        }),
        computed<D>("gate", json_kind::object, false, [](const D& d, json_writer& w, std::string_view k) {
            w.key(k);
            write_record(diff_gate_schema(), d, w);
        }),
        computed<D>("curve_lengths", json_kind::string, true, [](const D& d, json_writer& w, std::string_view k) {
            if (d.lengths_source.empty()) w.null_field(k);  // neither side has a cost curve
            else w.field(k, d.lengths_source);
        }),
        object_array<&D::models, &diff_model_row_schema>("models"),
        object_array<&D::families, &diff_family_row_schema>("families"),
        member<&D::regressions>("regressions"),
        member<&D::warnings>("warnings"),
    }};
    return s;
}

std::string write_diff(const profile_diff& d) { return write_record(diff_schema(), d); }

}  // namespace prof
