// The cost model of one run (ComputeProfile): ModelCost,
// FamilyCost, ProfileProvenance, build_profile (the arithmetic), and reading/writing.
#pragma once

#include "prof/profile/curve.hpp"
#include "prof/core/blocks.hpp"
#include "prof/core/median.hpp"
#include "prof/io/interner.hpp"
#include "prof/io/json_in.hpp"
#include "prof/profile/rules.hpp"
#include "prof/records/records.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace prof {

class json_writer;

// One thread cap a model's fits ran under (null: no cap) and how many of its voting fits did.
struct thread_cap_count {
    std::optional<std::uint64_t> intraop_threads;
    std::uint64_t n_fits = 0;
    auto operator<=>(const thread_cap_count&) const = default;
};

// Raw per-model costs, no margin applied. Bytes are integers, seconds doubles; null = no
// usable value for that axis.
struct model_cost {
    std::string model_type, family;
    std::uint64_t n_fits = 0, n_ok = 0;
    std::optional<std::uint64_t> max_n_obs;
    std::optional<std::uint64_t> max_process_rss_bytes, max_peak_rss_bytes, max_peak_gpu_bytes;
    std::optional<double> median_wall_s, median_cpu_s, max_effective_cores;
    // How its ok fits' memory and CPU were read: the rss_method (a fit record's, a harvested
    // row's) they name when they agree, "mixed" when they differ; null when none names one.
    std::optional<std::string> rss_method;
    // The cap it is sized under: the one its fits ran under, or with several, sized_thread_cap
    // of thread_caps; null = no cap (or none recorded).
    std::optional<std::uint64_t> intraop_threads;
    // The caps its fits ran under with their counts (no cap first, then ascending), when they
    // ran under more than one; empty when one (or none recorded). Fits that ran vote; failed
    // ones only while none has run.
    std::vector<thread_cap_count> thread_caps;
    std::vector<curve_point> wall_curve;  // wall (and CPU) seconds against n_obs; empty = no length known
    // Its ok fits with a usable wall, sorted, while there are at most max_model_readings of
    // them (curve.hpp); empty past that, and in an older profile.
    std::vector<fit_reading> readings;
    std::uint64_t n_oom_killed = 0;       // failed fits killed for memory (see fit_was_oom_killed)
    std::optional<std::uint64_t> oom_limit_bytes;  // the largest limit one of them was killed at
    // Failed fits whose device ran out of memory (see fit_was_device_oom): evidence about GPU
    // memory, never host memory. The device limit they hit is seldom recorded.
    std::uint64_t n_gpu_oom = 0;
    std::optional<std::uint64_t> gpu_oom_peak_bytes;  // the largest peak_gpu_bytes one of them reached
    // Beside the sample (prof-measure --warmup and --replay), never in the values above:
    std::uint64_t n_warmup = 0, n_replay = 0;  // ok warm-up and replay runs read
    // The cost of a cold start: the median over the cold warm-up runs (a worker's first cell
    // of the model) of max(0, their wall - the warm wall at their length: on the wall curve,
    // else median_wall_s). Null without a cold warm-up run.
    std::optional<double> cold_start_s;
    // The largest worker lifetime peak (worker_peak_bytes, else process_rss_bytes) of its
    // replay runs: what a worker reaches after the heaviest cells back to back.
    std::optional<std::uint64_t> max_replay_rss_bytes;
    // What a neighbour costs the model: the ratio of the walls of its ok replay runs measured
    // beside another fit (concurrent_fits >= 1: prof-measure replays in a second worker beside
    // the first), uncontended and of at least contended_min_wall_s, to the walls of the same
    // lengths on its cost curve (its sample, measured alone), sum over sum; 1.3 = 30 % slower
    // beside a neighbour. Raw: below 1 is noise, which
    // prof-plan reads as 1. Null without such a run or without a curve. n_beside: those runs.
    std::optional<double> beside_slowdown;
    std::uint64_t n_beside = 0;
    // Which reading sizes the model's memory (derived): "replay" when max_replay_rss_bytes is
    // above max_process_rss_bytes, "per-cell" otherwise; null with neither.
    std::optional<std::string> memory_basis;
};

// The memory a slot for the model must hold, raw: the larger of its largest per-cell peak and
// its replayed worker peak (model_memory_basis says which).
std::optional<std::uint64_t> slot_memory_evidence(const model_cost& m);
std::optional<std::string> model_memory_basis(const model_cost& m);

// The raw roll-up of a family's models, then the sized values (margins applied).
struct family_cost {
    std::string family;
    std::vector<std::string> models;  // sorted
    std::uint64_t n_fits = 0, n_ok = 0;
    std::optional<std::uint64_t> max_process_rss_bytes, max_peak_rss_bytes, max_peak_gpu_bytes;
    std::optional<double> max_effective_cores;
    std::optional<double> median_wall_s;            // the median cell of the family (raw)
    std::optional<double> total_wall_s_per_series;  // sum of its models' median_wall_s
    std::optional<std::uint64_t> intraop_threads;
    std::optional<std::uint64_t> oom_floor_bytes;   // max over models of oom_floor_bytes(limit)
    std::optional<std::uint64_t> gpu_oom_floor_bytes;  // max over models of oom_floor_bytes(gpu_oom_peak_bytes)
    std::optional<std::uint64_t> max_replay_rss_bytes;  // max over models (see model_cost)
    // "replay" when a replayed worker peak sizes slot_rss_bytes, "per-cell" when a cell's
    // peak does; null without a memory reading.
    std::optional<std::string> memory_basis;
    double memory_margin = default_memory_margin, time_margin = default_time_margin;
    // sized (derived) values; slot_rss_bytes is never below oom_floor_bytes, slot_gpu_bytes never
    // below gpu_oom_floor_bytes
    std::optional<std::uint64_t> slot_cores, slot_rss_bytes, slot_gpu_bytes;
    std::optional<double> planning_wall_s_per_cell, planning_wall_s_per_series;
};

// Where the numbers came from. basis: "measured" | "reference" | "assumed".
struct profile_provenance {
    std::string basis = "measured";
    std::string source = "prepass";  // prepass | harvest | run:<id> | auto:<id> | baseline | none
    std::optional<std::string> run_id;
    std::optional<std::string> baseline_version;
    std::optional<std::string> measured_at;  // RFC 3339 UTC: latest input measured_at
    std::optional<json_value> signature;     // the data signature, any JSON object
    std::vector<std::string> warnings;
};

struct compute_profile {
    int schema_version = 1;
    profile_provenance provenance;
    double memory_margin = default_memory_margin, time_margin = default_time_margin;
    std::uint64_t n_measurements = 0, n_ok = 0, n_failed = 0, n_sample_series = 0;
    std::vector<std::string> sample_ts_ids;  // sorted, unique, first 100
    std::vector<std::string> dropped_models; // sorted
    std::map<std::string, std::string> dropped_model_families;  // the family each was declared in
    std::map<std::string, std::string> first_error_by_model;
    std::map<std::string, model_cost> models;
    std::map<std::string, family_cost> families;
    std::optional<json_value> sample;   // prof-sample's `sample` record, carried verbatim
    std::optional<json_value> harvest;  // prof-harvest's counts, written after families
};

// The fields of one measured fit that a profile depends on, with its texts as views (valid
// for the call): what profile_builder::add reads. prof-harvest fills one per warehouse row
// without copying a string. An aggregate: each source of fits (a fit record, a warehouse row)
// gives one in a single designated initializer, each field named once (every member has an
// initializer, so an initializer may leave any out).
struct fit_evidence {
    std::string_view ts_id = {}, model_type = {}, family = {};
    // false: the source gave no family and `family` is the fallback (the model's name); such a
    // fit does not vote on its model's family (family_choice).
    bool family_named = true;
    std::optional<std::uint64_t> n_obs = {};
    bool ok = false;
    std::optional<std::string_view> error = {};
    std::optional<double> wall_s = {}, cpu_s = {};
    std::optional<std::uint64_t> process_rss_bytes = {}, peak_rss_bytes = {}, peak_gpu_bytes = {}, intraop_threads = {};
    std::optional<std::string_view> measured_at = {};
    std::optional<std::string_view> signal = {};           // the signal that ended the fit, e.g. "SIGKILL"
    std::optional<std::uint64_t> memory_limit_bytes = {};  // the memory limit it ran under
    std::optional<bool> oom_killed = {};                   // the kernel killed it for that limit
    std::optional<std::string_view> params_digest = {};    // the tuned params it ran under; null = none
    bool contended = false;                                // measured on a busy host (records.hpp contended())
    std::string_view phase = fit_phase_sample;             // sample, warmup, replay or superseded (records.hpp)
    std::optional<bool> cold = {};                         // the first cell of its model in a process
    std::optional<std::uint64_t> worker_peak_bytes = {};   // the worker's lifetime peak through it
    std::optional<std::string_view> rss_method = {};       // how its memory and CPU were read (records.hpp)
    std::optional<std::uint64_t> concurrent_fits = {};     // the most other fits beside it (records.hpp)
    std::optional<std::uint64_t> worker_max_n_obs = {};    // the longest n_obs its worker had served
};

// Whether a failed fit was killed for memory, from its record:
//   oom_killed true; or oom_killed not false, a memory_limit_bytes, and signal SIGKILL (the
//   kernel's OOM killer sends SIGKILL); or its error text holds one of memory_error_patterns
//   (always), or one of killed_error_patterns while a memory_limit_bytes is known (a bare
//   kill or exit 137 without a limit may as well be a timeout). An ok fit never is, and neither
//   is a device OOM (fit_was_device_oom) unless oom_killed or a SIGKILL under a limit says so:
//   "CUDA out of memory" also holds "out of memory", but it is no evidence about host memory.
bool fit_was_oom_killed(const fit_evidence& f);
// Whether a failed fit's error text holds one of device_memory_error_patterns: a device
// (GPU, TPU) allocation failed. Such a fit is counted in n_gpu_oom, never as a host OOM kill.
bool fit_was_device_oom(const fit_evidence& f);
// Texts that mean a device allocation failed (CUDA runtime, PyTorch, cuBLAS/cuDNN, JAX/XLA),
// matched case-sensitively anywhere in the error.
inline constexpr std::string_view device_memory_error_patterns[] = {
    "CUDA out of memory", "CUDA error: out of memory", "cudaErrorMemoryAllocation", "torch.cuda.OutOfMemoryError",
    "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED", "CUFFT_ALLOC_FAILED", "hipErrorOutOfMemory",
    "RESOURCE_EXHAUSTED: Out of memory"};
// Texts that always mean a memory kill, matched case-sensitively anywhere in the error.
inline constexpr std::string_view memory_error_patterns[] = {
    "OOMKilled", "MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory",
    "OutOfMemoryError"};
// Texts that mean a kill (SIGKILL, exit 128 + 9), read as a memory kill under a known limit.
inline constexpr std::string_view killed_error_patterns[] = {"Killed", "SIGKILL", "signal 9", "exit 137",
                                                             "exit code 137", "exit status 137"};

// The warnings profile_builder::finish gives for one model, in its order: fits killed for
// memory under no known limit, then device OOMs (with the largest peak one reached).
void append_oom_warnings(std::vector<std::string>& out, const std::string& model, std::uint64_t n_oom_no_limit,
                         std::uint64_t n_gpu_oom, const std::optional<std::uint64_t>& gpu_oom_peak);
// What a reading taken by `rss_method` (a model's, a fit's) covers, in words: the fit's whole
// process tree (cgroup-v2, cgroup-v1), the fitting process only (proc: a warm worker,
// prof_record.py), the largest single process (rusage), several methods (mixed), not recorded
// (null), or an unknown method. Two readings compare as like for like only when they cover the
// same (reading_coverage equal): prof-diff warns otherwise.
std::string reading_coverage(const std::optional<std::string>& rss_method);

// The cap a model whose fits ran under several caps is sized and run under: the largest, no cap
// counting as larger than any. A fit under a smaller cap reads fewer cores and a longer wall,
// so sizing the slot's cores, memory (the max over all fits) and the pool variables from the
// largest cap covers every reading, and the mixed wall reads long, never short.
std::optional<std::uint64_t> sized_thread_cap(const std::vector<thread_cap_count>& caps);
// "none (2 fits), 1 (3 fits), 2 (5 fits)"
std::string thread_caps_text(const std::vector<thread_cap_count>& caps);
// The warning for a model whose fits ran under several thread caps (nothing under one): each
// cap with its count, and the cap it is sized under.
void append_thread_cap_warning(std::vector<std::string>& out, const std::string& model,
                               const std::vector<thread_cap_count>& caps);
// The families one model's fits name, each with its count of fits, sorted by family; and
// the count of its fits that name none.
struct family_votes {
    std::vector<std::pair<std::string, std::uint64_t>> named;
    std::uint64_t n_unnamed = 0;
};
// The family a model is counted under: the one most of its fits name. A fit that names no
// family does not vote; the model's own name is its family only when no fit names one. Neither
// the order of the fits nor the names' sort order decides: two families named by as many fits
// each are refused (error, exit 65) naming the model and each family with its count.
std::string family_choice(const std::string& model, const family_votes& votes);
// The warning for a model whose fits name several families, or name one while some name none
// (nothing when neither): which families, how many fits each, and the one it is counted under.
void append_family_warning(std::vector<std::string>& out, const std::string& model, const family_votes& votes);

// The warning of a profile with no usable model (every fit failed, or none measured an axis):
// it sizes nothing. profile_builder::finish adds it last, so prof-aggregate's and prof-harvest's
// profiles carry it alike; a profile made another way (the warehouse's aggregate rows) adds it
// through warn_if_sizes_nothing, and prof-resolve quotes it for reference evidence.
extern const char* const sizes_nothing_warning;
// Adds sizes_nothing_warning to p's provenance warnings when p has no model.
void warn_if_sizes_nothing(compute_profile& p);

// Streaming form of build_profile: add() each record (any order), then finish(). An ok fit of
// phase warmup or replay is kept beside the sample (model_cost's n_warmup, cold_start_s,
// n_replay, max_replay_rss_bytes, beside_slowdown) and counts in nothing else; an ok superseded attempt
// (prof-measure --remeasure-busy) counts in the memory values only (max_process_rss_bytes and
// the memory curve, max_peak_rss_bytes, max_peak_gpu_bytes), never in a count, a clock or a
// reading; a failed fit of any phase counts as a failed
// fit of its model, as a fit of the sample would (an OOM kill in a replay is evidence). Memory per
// usable record is the two clock values and the n_obs beside each (24 bytes) plus the set of
// distinct ts_ids; finish() copies one model's (n_obs, seconds) pairs at a time for its curve.
class profile_builder {
public:
    explicit profile_builder(const margins& m);
    void add(const measured_fit& f);
    void add(const fit_evidence& f);
    // Folds in what `other` was given (same margins): afterwards finish() is what one builder
    // given both builders' fits would return, in any order (every rule is order-independent:
    // medians and curves of all values, maxima, the first error by ts_id, sorted families).
    // The one exception is which two params digests mixed_params() names. `other` is emptied.
    void merge(profile_builder&& other);
    // Builds the profile; `provenance` is copied in, with measured_at set to the latest input
    // measured_at and warnings appended (e.g. a model seen under two families). The models'
    // medians and curves are computed on up to `threads` threads; the result does not depend
    // on how many.
    compute_profile finish(profile_provenance provenance, unsigned threads = 1) const;
    // One line per model whose fits ran under different params (params_digest), naming two of
    // them; a profile folded from them sizes neither (prof-aggregate refuses it unless told).
    std::vector<std::string> mixed_params() const;
    // The models none of whose fits named a family (each counted as its own), sorted.
    std::vector<std::string> models_without_family() const;

private:
    struct model_acc {
        // The counts and maxima, in the fields of the model_cost they become: n_fits, n_ok,
        // max_n_obs, the max_*_bytes peaks, max_effective_cores, the OOM counts and peaks, the
        // warm-up and replay counts. The rest of the model's cost is computed from the fields
        // below when the profile is finished.
        model_cost raw;
        value_blocks wall, cpu;  // the usable wall and CPU seconds
        blocks<std::uint32_t> wall_n, cpu_n;  // the n_obs of each; 0 = none (or past 2^32 - 1)
        std::vector<fit_reading> readings;    // the fits with a usable wall, until too many
        bool readings_full = false;           // more than max_model_readings: none kept
        void add_readings(const std::vector<fit_reading>& more);
        // The largest usable process RSS at each n_obs (the memory curve's peaks): indexed by
        // n_obs below rss_dense_lengths, in a map above; 0 = none.
        std::vector<std::uint64_t> rss_by_n;
        std::map<std::uint32_t, std::uint64_t> rss_by_long_n;
        void add_rss(std::uint32_t n, std::uint64_t rss) {
            // A length seen before (nearly every fit's): inline. Else grown, or the map.
            if (n < rss_by_n.size()) rss_by_n[n] = std::max(rss_by_n[n], rss);
            else add_rss_new(n, rss);
        }
        void add_rss_new(std::uint32_t n, std::uint64_t rss);
        // A fit's memory readings (a sample fit's, a superseded attempt's): the process RSS
        // maximum and, at length n (0: none), the memory curve; the peak RSS and GPU maxima.
        void add_memory(const fit_evidence& f, std::uint32_t n);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> rss_peaks() const;  // (n_obs, peak), n_obs > 0
        std::uint64_t n_oom_no_limit = 0;  // OOM kills with no limit recorded (warned)
        std::vector<thread_cap_count> threads;  // the thread caps' votes, sorted by cap
        std::optional<std::string> rss_method;  // the first its ok fits name
        bool rss_mixed = false;                 // another named too
        family_votes families;  // the families its fits name, sorted, with their counts
        std::optional<std::pair<std::string, std::string>> first_error;  // (ts_id, error)
        bool params_seen = false;
        std::optional<std::string> params, other_params;  // the first digest, and another seen
        // (n_obs or 0, wall) of each cold warm-up run, and of each replay run beside another fit
        std::vector<std::pair<std::uint32_t, double>> cold_walls, beside_walls;
    };
    static constexpr std::uint32_t rss_dense_lengths = 1u << 16;
    // Up to this many models, a new series prefetches each model's memory-curve entry at its
    // length (add): a few dozen loads a series, where more models would cost more than they hide.
    static constexpr std::size_t max_prefetched_models = 64;
    model_acc& model_of(const fit_evidence& f);  // the model's accumulator, its family noted
    void add_beside_sample(const fit_evidence& f);
    margins margins_;
    std::uint64_t n_measurements_ = 0, n_ok_ = 0, n_contended_ = 0;
    string_interner model_ids_;     // model name → index into models_ (finish() sorts by name)
    std::vector<model_acc> models_;
    // The distinct series (open addressing: no node, no modulo per series). Rows of one series
    // come together: the ts_id added last is interned when the next one comes (its slot
    // prefetched meanwhile), or when the series are counted (settle_series; logically const).
    void settle_series() const;
    mutable string_interner ts_ids_;
    mutable std::string last_ts_id_;
    mutable std::uint32_t last_ts_hash_ = 0;
    mutable bool last_ts_pending_ = false;
    latest_instant latest_;
};

// build_profile: pure and order-independent.
compute_profile build_profile(const std::vector<measured_fit>& fits, const margins& m,
                              profile_provenance provenance = {});

// Recomputes every derived value of a profile from its raw fields: the families' roll-ups
// from `models`, their sized values from the margins, n_failed, each model's memory_basis. Family median_wall_s (which
// needs the records) is kept. Throws field_error when a model's family has no entry.
void recompute_derived(compute_profile& p);

// The sized values of one family from its raw roll-up: its slot (size_slot, no fallback) and
// its planning walls (the raw walls × the time margin).
void size_family(family_cost& f, const margins& m);

// One line (no '\n'), keys in the order of prof-records(5).
std::string write_profile(const compute_profile& p);
// The provenance object alone, as write_profile writes it (a plan carries its profile's).
void write_provenance(json_writer& w, const profile_provenance& pv);
// Reads raw fields only and recomputes every derived one, so a derived field is never trusted.
compute_profile read_profile(simdjson::ondemand::object& obj);
// A whole-file profile (one JSON object) from text; errors name `source`.
compute_profile parse_profile_text(std::string_view text, const std::string& source);
// The one profile record of the JSON Lines file `path` ('-' = stdin), or nothing when it holds
// no record (a skipped gate, an empty pre-pass). A second record is refused with the line's
// input_error "a second record: WHY_ONE" (e.g. "prof-plan sizes one profile (pick one with
// prof-resolve)"); the bad-line policy is the default one (none skipped).
std::optional<compute_profile> read_one_profile(const std::string& path, std::string_view why_one);

// The operator's table (prof-aggregate --format table): one row per family and model.
std::string format_profile_table(const compute_profile& p);

}  // namespace prof
