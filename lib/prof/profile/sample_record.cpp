// The `sample` record's schemas (the record, its length bins and its models) and its writer
// (see sample.hpp). A profile carries the record as a JSON value; sample_lengths reads it back.
#include "prof/profile/sample_record.hpp"

#include <cmath>

namespace prof {

const record_schema<length_bin>& length_bin_schema() {
    using B = length_bin;
    static const record_schema<B> s{"sample.lengths[]", "", false, {
        member<&B::n_obs>("n_obs"),
        member<&B::n_obs_min>("n_obs_min"),
        member<&B::n_obs_max>("n_obs_max"),
        computed<B>("n_series", json_kind::integer, false, [](const B& b, json_writer& w, std::string_view key) {
            w.field(key, static_cast<std::uint64_t>(std::llround(b.n_series)));
        }),
    }};
    return s;
}

const record_schema<model_spec>& model_spec_schema() {
    using M = model_spec;
    static const record_schema<M> s{"sample.models[]", "", false, {
        member<&M::model_type>("model_type"),
        member<&M::family>("family"),
    }};
    return s;
}

const record_schema<sample_record>& sample_schema() {
    using S = sample_record;
    static const record_schema<S> s{"sample", "sample", true, {
        computed<S>("rule", json_kind::string, false, [](const S& r, json_writer& w, std::string_view key) {
            w.field(key, spread_rule_name(r.rule));
        }),
        member<&S::samples>("samples"),
        computed<S>("n_series", json_kind::integer, false, [](const S& r, json_writer& w, std::string_view key) {
            w.field(key, static_cast<std::uint64_t>(std::llround(r.lengths.series())));
        }),
        member<&S::n_unusable>("n_unusable"),
        computed<S>("n_obs_min", json_kind::integer, false, [](const S& r, json_writer& w, std::string_view key) {
            w.field(key, r.lengths.min_n_obs());
        }),
        computed<S>("n_obs_max", json_kind::integer, false, [](const S& r, json_writer& w, std::string_view key) {
            w.field(key, r.lengths.max_n_obs());
        }),
        computed<S>("lengths", json_kind::array, false, [](const S& r, json_writer& w, std::string_view key) {
            w.key(key);
            w.begin_array();
            for (const auto& b : r.lengths.bins) write_record(length_bin_schema(), b, w);
            w.end_array();
        }),
        member<&S::ts_ids>("ts_ids"),
        object_array<&S::models, &model_spec_schema>("models"),
    }};
    return s;
}

std::string write_sample(const sample_record& s) { return write_record(sample_schema(), s); }

}  // namespace prof
