// What prof-report draws, read from its input records: profiles, fits and plans (by their own
// readers), and the fields of sample and diff records the page shows (read here, each checked
// for its type: the diff record's schema writes computed fields it cannot read back).
#pragma once

#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/plan/plan.hpp"
#include "prof/profile/profile.hpp"
#include "prof/records/records.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prof::report {

// Where a record was read, as a diagnostic names it: "plan.json:1", "<stdin>:3".
template <class T>
struct placed {
    std::string where;
    T record;
};

// One axis of a diff row: the record's values as written.
struct diff_axis {
    std::string axis;
    std::optional<double> old_value, new_value, ratio;
    std::string change;
    bool regression = false;
};
struct diff_row {
    std::string name, family, presence;
    std::uint64_t old_n_ok = 0, new_n_ok = 0;
    std::vector<diff_axis> axes;
};
struct diff_side_view {
    std::string label, basis, source;
    std::optional<std::string> run_id, measured_at;
};
// A diff record, the fields the page shows.
struct diff_view {
    diff_side_view old_side, new_side;
    std::optional<double> max_slower, max_bigger;
    bool passed = true;
    std::optional<std::string> curve_lengths;
    std::vector<diff_row> models, families;
    std::vector<std::string> regressions, warnings;
};

// A sample record's length distribution (prof-records(5) SAMPLE), from the record or a profile's
// copy of it.
struct length_bar {
    std::uint64_t n_obs_min = 0, n_obs_max = 0, n_series = 0;
};
struct sample_view {
    std::string where;
    std::uint64_t n_series = 0, n_obs_min = 0, n_obs_max = 0;
    std::vector<length_bar> lengths;
};

// Every record of the input, in input order within each kind.
struct report_inputs {
    std::vector<std::string> sources;  // the inputs as named ("<stdin>" for "-")
    std::vector<placed<compute_profile>> profiles;
    std::vector<placed<measured_fit>> fits;
    std::optional<sample_view> sample;  // the first sample record read
    std::vector<placed<plan_record>> plans;
    std::vector<placed<diff_view>> diffs;
    std::size_t records() const { return profiles.size() + fits.size() + plans.size() + diffs.size() + (sample ? 1 : 0); }
};

// Reads one record of any kind prof-report draws into `in`. Throws field_error (which the
// record loop turns into "SOURCE:LINE: ...", exit 65) for a kind it does not draw and for a
// field of the wrong type.
void add_record(report_inputs& in, simdjson::ondemand::object& obj, const record_place& at);

// Reads INPUTS through for_each_record (every malformed line is an error: a page drawn from part
// of its input would mislead).
report_inputs read_inputs(const std::vector<std::string>& inputs);

// The length distribution a sample record (or a profile's copy) holds. Throws field_error.
sample_view read_sample_view(const json_value& v, std::string where);
// The diff view of a record's JSON. Throws field_error naming the field.
diff_view read_diff_view(const json_value& v);

}  // namespace prof::report
