// The gate (should_profile) and the sample prof-sample draws.
#pragma once

#include "prof/profile/curve.hpp"
#include "prof/io/input.hpp"
#include "prof/io/json_in.hpp"
#include "prof/records/records.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

enum class profile_mode { off, always, automatic };
// "off" | "always" | "auto"; throws usage_error naming `flag` otherwise.
profile_mode parse_profile_mode(const std::string& text, const std::string& flag);

struct gate_decision {
    bool sample = false;
    std::string reason;  // one line for stderr when the gate is skipped
};

// The gate compares cells (usable series × models), not series: off → never; always → always;
// auto → only when cells >= min_cells.
gate_decision should_profile(profile_mode mode, std::uint64_t cells, std::uint64_t min_cells);

// Indices of a k-point spread over n sorted items: floor(j·(n−1)/(k−1) + 0.5) for j = 0…k−1,
// k = min(k, n); k = 1 gives floor((n−1)/2). Exact integer arithmetic; the first and last item
// are always in when k >= 2.
std::vector<std::size_t> spread_indices(std::size_t n, std::size_t k);

struct series_ref {
    std::string ts_id;
    std::uint64_t n_obs = 0;
};
struct model_spec {
    std::string model_type, family;
};
// "NAME" or "NAME:FAMILY" (family defaults to the model name); throws usage_error naming `flag`.
model_spec parse_model_spec(const std::string& text, std::string_view flag = "--model");

// How the K series are spread over the panel (prof-sample --spread; the sample record's rule).
//   rank  ("rank-spread"):     spread_indices(n, k) over the series sorted by (n_obs, ts_id).
//   mixed ("rank-log-spread"): k_r = min(k, max(2, ceil(k/2))) by the rank spread (the bulk of
//                              the panel, where most cells are), the other k − k_r each splitting
//                              the widest gap in ln n_obs (select_sample): the long tail.
//   log   ("log-spread"):      k_r = min(k, 2) by the rank spread (the shortest and the longest;
//                              the median for k = 1), the other k − 2 splitting gaps in ln n_obs.
// Every rule gives k = min(K, n) distinct series; mixed and log equal rank for k <= 2.
enum class spread_rule { rank, mixed, log };
// "rank" | "mixed" | "log"; throws usage_error naming `flag` otherwise.
spread_rule parse_spread_rule(const std::string& text, std::string_view flag = "--spread");
// The sample record's name for a rule: "rank-spread", "rank-log-spread", "log-spread".
std::string_view spread_rule_name(spread_rule rule);
// How many of k picks a rule takes by the rank spread (the rest split gaps in ln n_obs).
std::size_t rank_picks(spread_rule rule, std::size_t k);

// Sorts usable series by (n_obs, ts_id) and picks k = min(K, n) of them by `rule`; returns them
// in that order. Past the rank part, each pick goes into the widest gap in ln n_obs between
// neighbouring picks that holds a length strictly between its ends' (ties: the shorter gap), at
// the series inside nearest the gap's geometric mean in |ln n_obs − ln target| (ties: the
// shorter, then the smaller ts_id): the largest ratio between a length and the next pick at or
// above it shrinks step by step. When no gap holds a new length, the pick is the middle index of
// the gap with the most series inside (ties: the shorter gap). Deterministic.
std::vector<series_ref> select_sample(std::vector<series_ref> usable, std::size_t k,
                                      spread_rule rule = spread_rule::mixed);
// Cells series-outer, models-inner (every model sees the same spread of lengths).
std::vector<cell> sample_cells(const std::vector<series_ref>& sample, const std::vector<model_spec>& models);

// A panel file as prof-sample and prof-plan --panel read it: one {"ts_id", "n_obs", ...} object
// per line (other fields ignored); ts_id a string or an integer kept as its decimal text
// (read_id, as prof-harvest reads it). A series with n_obs null, missing or 0 is not usable; a
// ts_id given twice is a field_error naming the first line (→ exit 65 with the location).
struct panel {
    std::vector<series_ref> usable;
    std::size_t unusable = 0;
    std::size_t bad_lines = 0;  // malformed lines skipped under the policy (and warned of)
};
// Reads the panel at SPEC (io/input.hpp: open_input) under `policy`.
panel read_panel(const std::string& spec, const bad_line_policy& policy);

// The `sample` record prof-sample writes ahead of its cells, so the profile built from them
// knows the run they stand for (prof-measure passes it through; prof-aggregate keeps it):
// {"kind":"sample","rule":"rank-log-spread","samples":K,"n_series":N,"n_unusable":U,
//  "n_obs_min":…,"n_obs_max":…,"lengths":[{"n_obs","n_obs_min","n_obs_max","n_series"},…],
//  "ts_ids":[the sampled ids, shortest first],"models":[{"model_type","family"},…]}
// rule: spread_rule_name of the rule that picked ts_ids (select_sample).
// lengths: distribution_of_lengths over every usable series of the panel (at most
// max_length_bins bins).
struct sample_record {
    spread_rule rule = spread_rule::mixed;
    std::uint64_t samples = 0;
    std::uint64_t n_unusable = 0;
    length_distribution lengths;
    std::vector<std::string> ts_ids;
    std::vector<model_spec> models;
};
std::string write_sample(const sample_record& s);  // one line, no '\n'
// The length distribution a sample record carries (as read back from a profile's `sample`).
// Throws field_error naming the field when `lengths` is missing or malformed.
length_distribution sample_lengths(const json_value& sample);
// Whether a record object is a `sample` record (its kind); the object is rewound either way.
// The kind is read from the object's raw text by a parser of its own, never through obj, so
// the caller's reader may then read every string of obj once (simdjson's string buffer holds
// one copy of each string of a document: reading a string twice can write past its end).
bool is_sample_record(simdjson::ondemand::object& obj);
// Keeps the first sample record of an input in `kept`; a second one must be the same record
// (a pre-pass split over files), else field_error: a profile stands for one sample.
void keep_sample_record(std::optional<json_value>& kept, json_value record);
// A whole object as a json_value (a record carried verbatim).
json_value read_object_value(simdjson::ondemand::object& obj);

}  // namespace prof
