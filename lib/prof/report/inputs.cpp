// prof-report's input: records of every kind it draws, dispatched on their kind and read by their
// own readers, and the typed views of the diff and sample records (field by field, each refused
// with its path when its type is wrong, so a page never shows a number the record did not hold).
#include "prof/report/inputs.hpp"

#include "prof/core/errors.hpp"

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
    // A field that must hold a value: its reading, or the error naming it.
    template <class T>
    T required(std::optional<T> v, std::string_view key, std::string_view expected) const {
        if (!v) wrong(key, expected);
        return *std::move(v);
    }
    double number(std::string_view key) const { return required(number_or_null(key), key, "a number"); }
    std::optional<std::uint64_t> count_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        if (x.t == json_value::type::uinteger) return x.u;
        if (x.t == json_value::type::integer && x.i >= 0) return static_cast<std::uint64_t>(x.i);
        if (x.t == json_value::type::number && x.d >= 0 && x.d < 0x1p64 && std::floor(x.d) == x.d)
            return static_cast<std::uint64_t>(x.d);
        wrong(key, "a non-negative integer");
    }
    std::uint64_t count(std::string_view key) const { return required(count_or_null(key), key, "a non-negative integer"); }
    std::optional<std::string> string_or_null(std::string_view key) const {
        if (is_null(key)) return std::nullopt;
        const json_value& x = get(key);
        if (x.t != json_value::type::string) wrong(key, "a string");
        return x.s;
    }
    std::string string(std::string_view key) const { return required(string_or_null(key), key, "a string"); }
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
    std::string where = fmt::format("{}:{}", at.source, at.line);
    // The kind first, then the object again from its start, read once by its kind's reader.
    json_value kind;
    {
        simdjson::ondemand::value v;
        if (obj.find_field_unordered("kind").get(v) == simdjson::SUCCESS) kind = read_json_value(v);
    }
    if (kind.t != json_value::type::string)
        throw field_error("field 'kind': missing (prof-report reads profile, plan, diff, fit and sample records)");
    const std::string& k = kind.s;
    obj.reset();
    if (k == "profile") {
        in.profiles.push_back({where, read_profile(obj)});
    } else if (k == "fit") {
        in.fits.push_back({where, read_fit(obj)});
    } else if (k == "plan") {
        in.plans.push_back({where, read_plan(obj)});
    } else if (k == "sample") {
        auto s = read_sample_view(parse_json_text(std::string_view(obj.raw_json())), where);
        if (!in.sample) in.sample = std::move(s);
    } else if (k == "diff") {
        in.diffs.push_back({where, read_diff_view(parse_json_text(std::string_view(obj.raw_json())))});
    } else {
        throw field_error(fmt::format("field 'kind': a {} record is not drawn (prof-report reads profile, plan, diff, fit "
                                      "and sample records)", shown_value(kind.dump())));
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
