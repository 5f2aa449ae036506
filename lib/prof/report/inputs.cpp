// prof-report's input: records of every kind it draws, dispatched on their kind, and the typed
// views of the plan and diff records (field by field, each refused with its path when its type
// is wrong, so a page never shows a number the record did not hold).
#include "prof/report/inputs.hpp"

#include "prof/core/errors.hpp"
#include "prof/profile/profile_record.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <fmt/format.h>

namespace prof::report {

namespace {

// One JSON object of a record, read field by field with its path for messages.
class fields {
public:
    fields(const json_value& v, std::string path) : v_(v), path_(std::move(path)) {
        if (!v.is_object()) throw field_error(fmt::format("field '{}': expected an object", path_));
    }
    std::string at_path(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
    const json_value& get(std::string_view key) const {
        const json_value* x = v_.find(key);
        if (!x) throw field_error(fmt::format("field '{}': missing", at_path(key)));
        return *x;
    }
    bool is_null(std::string_view key) const {
        const json_value* x = v_.find(key);
        return !x || x->t == json_value::type::null;
    }
    [[noreturn]] void wrong(std::string_view key, std::string_view expected) const {
        throw field_error(fmt::format("field '{}': expected {}, found {}", at_path(key), expected, shown_value(get(key).dump())));
    }
    std::optional<double> number_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        double d;
        switch (x.t) {
            case json_value::type::integer: d = static_cast<double>(x.i); break;
            case json_value::type::uinteger: d = static_cast<double>(x.u); break;
            case json_value::type::number: d = x.d; break;
            default: wrong(key, "a number");
        }
        if (!std::isfinite(d)) wrong(key, "a finite number");
        return d;
    }
    double number(std::string_view key) const {
        auto d = number_or_null(key);
        if (!d) wrong(key, "a number");
        return *d;
    }
    std::optional<std::uint64_t> count_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        if (x.t == json_value::type::uinteger) return x.u;
        if (x.t == json_value::type::integer && x.i >= 0) return static_cast<std::uint64_t>(x.i);
        if (x.t == json_value::type::number && x.d >= 0 && x.d < 0x1p64 && std::floor(x.d) == x.d)
            return static_cast<std::uint64_t>(x.d);
        wrong(key, "a non-negative integer");
    }
    std::uint64_t count(std::string_view key) const {
        auto c = count_or_null(key);
        if (!c) wrong(key, "a non-negative integer");
        return *c;
    }
    std::optional<std::string> string_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        if (x.t != json_value::type::string) wrong(key, "a string");
        return x.s;
    }
    std::string string(std::string_view key) const {
        auto s = string_or_null(key);
        if (!s) wrong(key, "a string");
        return *s;
    }
    std::optional<bool> boolean_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        if (x.t != json_value::type::boolean) wrong(key, "a boolean");
        return x.b;
    }
    const json_value& array(std::string_view key) const {
        const json_value& x = get(key);
        if (x.t != json_value::type::array) wrong(key, "an array");
        return x;
    }
    std::vector<std::string> strings(std::string_view key) const {
        std::vector<std::string> out;
        for (const auto& e : array(key).arr) {
            if (e.t != json_value::type::string) wrong(key, "an array of strings");
            out.push_back(e.s);
        }
        return out;
    }
    fields object(std::string_view key) const { return fields(get(key), at_path(key)); }
    const json_value& value() const { return v_; }
    const std::string& path() const { return path_; }

private:
    const json_value& v_;
    std::string path_;
};

profile_provenance read_provenance_value(const json_value& v, const std::string& path) {
    if (!v.is_object()) throw field_error(fmt::format("field '{}': expected an object", path));
    profile_provenance pv;
    parse_object_text(v.dump(), [&](simdjson::ondemand::object& o) { read_record(provenance_schema(), o, pv, path); });
    return pv;
}

plan_layout read_layout(const fields& f) {
    plan_layout l;
    l.unit = f.string("unit");
    l.slots_per_unit = f.count("slots_per_unit");
    l.units_per_node = f.count("units_per_node");
    l.unit_cores = f.count("unit_cores");
    l.unit_memory_bytes = f.count("unit_memory_bytes");
    l.reserved_units = f.count("reserved_units");
    l.limited_by = f.string("limited_by");
    return l;
}

plan_size_class read_size_class(const fields& f) {
    plan_size_class c;
    c.n_obs_min = f.count_or_null("n_obs_min");
    c.n_obs_max = f.count_or_null("n_obs_max");
    c.first_cell = f.count("first_cell");
    c.cells = f.count("cells");
    c.slot_cores = f.count("slot_cores");
    c.slot_rss_bytes = f.count("slot_rss_bytes");
    c.slots_per_node = f.count("slots_per_node");
    c.layout = read_layout(f.object("layout"));
    c.work_s = f.number("work_s");
    c.longest_cell_s = f.number("longest_cell_s");
    c.slots = f.count("slots");
    c.waves = f.count("waves");
    c.makespan_s = f.number("makespan_s");
    return c;
}

// Slots, layout and work of a planned family.
void read_family_sizes(const fields& f, plan_family& p) {
    p.models = f.strings("models");
    p.slot_cores = f.count("slot_cores");
    p.slot_rss_bytes = f.count("slot_rss_bytes");
    p.slot_gpu_bytes = f.count_or_null("slot_gpu_bytes");
    p.slots_per_node = f.count("slots_per_node");
    p.layout = read_layout(f.object("layout"));
    p.cells = f.count("cells");
    p.work_s = f.number("work_s");
    p.longest_cell_s = f.number("longest_cell_s");
    p.longest_cell_model = f.string("longest_cell_model");
    p.longest_cell_n_obs = f.count_or_null("longest_cell_n_obs");
    p.wall_estimator = f.string("wall_estimator");
    p.oom_floor_bytes = f.count_or_null("oom_floor_bytes");
}

plan_family read_plan_family(const fields& f, std::string name) {
    plan_family p;
    p.family = std::move(name);
    read_family_sizes(f, p);
    p.nodes = f.count("nodes");
    p.slots = f.count("slots");
    p.waves = f.count("waves");
    p.makespan_s = f.number("makespan_s");
    p.makespan_lower_s = f.number("makespan_lower_s");
    p.meets_deadline = f.boolean_or_null("meets_deadline");
    std::size_t i = 0;
    for (const auto& c : f.array("size_classes").arr)
        p.size_classes.push_back(read_size_class(fields(c, fmt::format("{}[{}]", f.at_path("size_classes"), i++))));
    p.size_class_saving = f.number("size_class_saving");
    fields b = f.object("basis");
    p.basis_cores = b.string("cores");
    p.basis_memory = b.string("memory");
    p.basis_gpu = b.string("gpu");
    p.basis_wall = b.string("wall");
    p.n_ok = f.count("n_ok");
    p.failure_share = f.number("failure_share");
    p.low_confidence = f.boolean_or_null("low_confidence").value_or(false);
    p.warnings = f.strings("warnings");
    return p;
}

void read_plan_run(const fields& r, plan_view& p) {
    p.series = r.count("series");
    p.models = r.strings("models");
    p.length_source = r.string("length_source");
    p.max_n_obs = r.count_or_null("max_n_obs");
    p.deadline_s = r.number_or_null("deadline_s");
    p.nodes_given = r.count_or_null("nodes");
    p.layout = r.string("layout");
    p.headroom = r.number("headroom");
    p.planned_deadline_s = r.number_or_null("planned_deadline_s");
}

// The axes' order in prof-records(5) (DIFF): a model's, then a family's; others after them.
std::size_t axis_rank(const std::string& axis) {
    static const char* order[] = {"median_wall_s", "curve_wall_s_per_series", "median_cpu_s", "max_process_rss_bytes",
                                  "max_peak_rss_bytes", "max_peak_gpu_bytes", "slot_cores", "slot_rss_bytes",
                                  "slot_gpu_bytes", "planning_wall_s_per_cell", "planning_wall_s_per_series",
                                  "oom_floor_bytes", "n_oom_killed"};
    for (std::size_t i = 0; i < std::size(order); ++i)
        if (axis == order[i]) return i;
    return std::size(order);
}

diff_row read_diff_row(const fields& f, bool model) {
    diff_row r;
    r.name = f.string(model ? "model_type" : "family");
    if (model) r.family = f.string("family");
    r.presence = f.string("presence");
    r.old_n_ok = f.count("old_n_ok");
    r.new_n_ok = f.count("new_n_ok");
    // Every other member is an axis, named after it; shown in prof-records(5)'s order.
    for (const auto& [key, v] : f.value().obj) {
        if (key == "model_type" || key == "family" || key == "presence" || key == "old_n_ok" || key == "new_n_ok") continue;
        fields a(v, f.at_path(key));
        r.axes.push_back({key, a.number_or_null("old"), a.number_or_null("new"), a.number_or_null("ratio"),
                          a.string("change"), a.boolean_or_null("regression").value_or(false)});
    }
    std::stable_sort(r.axes.begin(), r.axes.end(), [](const diff_axis& a, const diff_axis& b) { return axis_rank(a.axis) < axis_rank(b.axis); });
    return r;
}

diff_side_view read_diff_side(const fields& f) {
    return {f.string("label"), f.string("basis"), f.string("source"), f.string_or_null("run_id"),
            f.string_or_null("measured_at")};
}

}  // namespace

sample_view read_sample_view(const json_value& v, std::string where) {
    fields f(v, "");
    sample_view s;
    s.where = std::move(where);
    s.n_series = f.count("n_series");
    s.n_obs_min = f.count("n_obs_min");
    s.n_obs_max = f.count("n_obs_max");
    std::size_t i = 0;
    for (const auto& b : f.array("lengths").arr) {
        fields bf(b, fmt::format("lengths[{}]", i++));
        s.lengths.push_back({bf.count("n_obs_min"), bf.count("n_obs_max"), bf.count("n_series")});
    }
    return s;
}

plan_view read_plan_view(const json_value& v) {
    fields f(v, "");
    plan_view p;
    p.provenance = read_provenance_value(f.get("provenance"), "provenance");
    fields n = f.object("node");
    p.node_cores = n.count("cores");
    p.node_memory_bytes = n.count("memory_bytes");
    p.node_gpus = n.count("gpus");
    p.node_gpu_memory_bytes = n.count_or_null("gpu_memory_bytes");
    read_plan_run(f.object("run"), p);
    fields fams = f.object("families");
    for (const auto& [name, fam] : fams.value().obj) p.families.push_back(read_plan_family(fields(fam, fams.at_path(name)), name));
    fields t = f.object("totals");
    p.total_cells = t.count("cells");
    p.total_work_s = t.number("work_s");
    p.total_nodes = t.count("nodes");
    p.total_longest_cell_s = t.number("longest_cell_s");
    p.total_makespan_s = t.number("makespan_s");
    p.total_makespan_lower_s = t.number("makespan_lower_s");
    p.total_meets_deadline = t.boolean_or_null("meets_deadline");
    p.warnings = f.strings("warnings");
    return p;
}

diff_view read_diff_view(const json_value& v) {
    fields f(v, "");
    diff_view d;
    d.old_side = read_diff_side(f.object("old"));
    d.new_side = read_diff_side(f.object("new"));
    fields g = f.object("gate");
    d.max_slower = g.number_or_null("max_slower");
    d.max_bigger = g.number_or_null("max_bigger");
    d.passed = g.boolean_or_null("passed").value_or(false);
    d.curve_lengths = f.string_or_null("curve_lengths");
    for (const char* side : {"models", "families"}) {
        std::size_t i = 0;
        for (const auto& row : f.array(side).arr) {
            fields rf(row, fmt::format("{}[{}]", side, i++));
            (side[0] == 'm' ? d.models : d.families).push_back(read_diff_row(rf, side[0] == 'm'));
        }
    }
    d.regressions = f.strings("regressions");
    d.warnings = f.strings("warnings");
    return d;
}

void add_record(report_inputs& in, simdjson::ondemand::object& obj, const record_place& at) {
    std::string_view raw = obj.raw_json();
    json_value v = parse_json_text(raw);
    std::string where = fmt::format("{}:{}", at.source, at.line);
    const json_value* kind = v.is_object() ? v.find("kind") : nullptr;
    if (!kind || kind->t != json_value::type::string) throw field_error("field 'kind': missing (prof-report reads profile, plan, diff, fit and sample records)");
    const std::string& k = kind->s;
    if (k == "profile") {
        compute_profile p;
        parse_object_text(raw, [&](simdjson::ondemand::object& o) { p = read_profile(o); });
        in.profiles.push_back({where, std::move(p)});
    } else if (k == "fit") {
        measured_fit f;
        parse_object_text(raw, [&](simdjson::ondemand::object& o) { f = read_fit(o); });
        in.fits.push_back({where, std::move(f)});
    } else if (k == "sample") {
        auto s = read_sample_view(v, where);
        if (!in.sample) in.sample = std::move(s);
    } else if (k == "plan") {
        in.plans.push_back({where, read_plan_view(v)});
    } else if (k == "diff") {
        in.diffs.push_back({where, read_diff_view(v)});
    } else {
        throw field_error(fmt::format("field 'kind': a {} record is not drawn (prof-report reads profile, plan, diff, fit "
                                      "and sample records)", shown_value(kind->dump())));
    }
}

report_inputs read_inputs(const std::vector<std::string>& inputs) {
    report_inputs in;
    for (const auto& s : inputs) in.sources.push_back(s == "-" ? "<stdin>" : s);
    bad_line_policy policy(0, "record line");
    for_each_record(inputs, policy, [&](simdjson::ondemand::object& obj, const record_place& at) { add_record(in, obj, at); });
    return in;
}

}  // namespace prof::report
