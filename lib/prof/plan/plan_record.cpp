// The `plan` record's schemas (the plan, its node, run, families with their layout and basis,
// and totals), its writer and its reader (see plan.hpp). The renderings are computed from the
// plan_record itself; prof-report reads a plan back to draw it.
#include "prof/plan/plan_record.hpp"
#include "prof/profile/profile_record.hpp"

#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

const record_schema<node_shape>& node_shape_schema() {
    using N = node_shape;
    static const record_schema<N> s{"plan.node", "", false, {
        member<&N::cores>("cores"),
        member<&N::memory_bytes>("memory_bytes"),
        member<&N::gpus>("gpus"),
        member<&N::gpu_memory_bytes>("gpu_memory_bytes"),
    }};
    return s;
}

const record_schema<plan_run>& plan_run_schema() {
    using R = plan_run;
    static const record_schema<R> s{"plan.run", "", false, {
        member<&R::series>("series"),
        member<&R::models>("models"),
        member<&R::skipped_models>("skipped_models"),
        member<&R::length_source>("length_source"),
        member<&R::max_n_obs>("max_n_obs"),
        member<&R::deadline_s>("deadline_s"),
        member<&R::nodes>("nodes"),
        member<&R::min_fits>("min_fits"),
        member<&R::layout>("layout"),
        computed<R>("max_container_memory_bytes", json_kind::integer, true, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.limits.max_container_memory_bytes);
        }),
        computed<R>("max_pods_per_node", json_kind::integer, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.limits.max_pods_per_node);
        }),
        computed<R>("spark_cluster", json_kind::string, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.limits.spark_cluster);
        }),
        computed<R>("yarn_min_allocation_bytes", json_kind::integer, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.limits.yarn_min_allocation_bytes);
        }),
        computed<R>("yarn_max_vcores", json_kind::integer, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.limits.yarn_max_vcores);
        }),
        computed<R>("headroom", json_kind::number, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.slack.headroom);
        }),
        member<&R::planned_deadline_s>("planned_deadline_s"),
        computed<R>("pod_start_s", json_kind::number, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.slack.pod_start_s);
        }),
        computed<R>("job_pod_rate", json_kind::number, false, [](const R& r, json_writer& w, std::string_view key) {
            w.field(key, r.slack.job_pod_rate);
        }),
        member<&R::size_classes>("size_classes"),
        member<&R::min_class_saving>("min_class_saving"),
        member<&R::confidence>("confidence"),
        member<&R::resamples>("resamples"),
        member<&R::seed>("seed"),
        member<&R::target_width>("target_width").typed(json_kind::number, false).writes([](const R& r, json_writer& w, std::string_view key) {
            if (r.target_width) w.field(key, *r.target_width);  // absent without --target-width
        }),
    }};
    return s;
}

const record_schema<plan_interval>& plan_interval_schema() {
    using I = plan_interval;
    static const record_schema<I> s{"plan.interval", "", false, {
        member<&I::low_s>("low_s"),
        member<&I::p50_s>("p50_s"),
        member<&I::high_s>("high_s"),
    }};
    return s;
}

const record_schema<family_layout>& family_layout_schema() {
    using L = family_layout;
    static const record_schema<L> s{"plan.families.*.layout", "", false, {
        member<&L::unit>("unit"),
        member<&L::slots_per_unit>("slots_per_unit"),
        member<&L::units_per_node>("units_per_node"),
        member<&L::unit_cores>("unit_cores"),
        member<&L::unit_memory_bytes>("unit_memory_bytes"),
        member<&L::unit_gpus>("unit_gpus"),
        member<&L::slots_per_device>("slots_per_device"),
        member<&L::heap_bytes>("heap_bytes"),
        member<&L::overhead_bytes>("overhead_bytes"),
        member<&L::cells_per_item>("cells_per_item"),
        member<&L::work_items>("work_items"),
        member<&L::reserved_units>("reserved_units"),
        member<&L::container_bytes>("container_bytes"),
        member<&L::unit_start_s>("unit_start_s"),
        member<&L::retry_unit_memory_bytes>("retry_unit_memory_bytes"),
        member<&L::retry_units_per_node>("retry_units_per_node"),
        member<&L::retry_items>("retry_items"),
        member<&L::retry_makespan_s>("retry_makespan_s"),
        member<&L::limited_by>("limited_by"),
    }};
    return s;
}

const record_schema<size_class>& size_class_schema() {
    using C = size_class;
    static const record_schema<C> s{"plan.families.*.size_classes[]", "", false, {
        member<&C::n_obs_min>("n_obs_min"),
        member<&C::n_obs_max>("n_obs_max"),
        member<&C::first_cell>("first_cell"),
        member<&C::cells>("cells"),
        member<&C::slot_cores>("slot_cores"),
        member<&C::slot_rss_bytes>("slot_rss_bytes"),
        member<&C::slots_per_node>("slots_per_node"),
        nested<&C::layout, &family_layout_schema>("layout"),
        member<&C::work_s>("work_s"),
        member<&C::longest_cell_s>("longest_cell_s"),
        member<&C::cold_start_work_s>("cold_start_work_s"),
        member<&C::slots>("slots"),
        member<&C::waves>("waves"),
        member<&C::makespan_s>("makespan_s"),
        member<&C::slot_gib_hours>("slot_gib_hours"),
    }};
    return s;
}

const record_schema<model_sample_width>& model_sample_width_schema() {
    using W = model_sample_width;
    static const record_schema<W> s{"plan.families.*.sample_widths[]", "", false, {
        member<&W::model_type>("model_type"),
        member<&W::n_fits>("n_fits"),
        nested<&W::work_interval, &plan_interval_schema>("work_interval"),
        member<&W::width>("width"),
        member<&W::fits_needed>("fits_needed"),
        member<&W::narrow_enough>("narrow_enough"),
    }};
    return s;
}

namespace {
// A family's sample_widths (--target-width only): an array of objects, each read by
// model_sample_width_schema under "PATH[i]".
bool read_sample_widths(family_plan& f, od::value v, std::string_view path) {
    f.sample_widths.clear();
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of sample widths", path));
    for (auto el : v.get_array()) {
        std::string at = fmt::format("{}[{}]", path, f.sample_widths.size());
        od::object o = require_object(el.value(), at);
        read_record(model_sample_width_schema(), o, f.sample_widths.emplace_back(), at);
    }
    return true;
}

// A family's size_classes: an array of objects, each read by size_class_schema under
// "PATH[i]".
bool read_size_classes(family_plan& f, od::value v, std::string_view path) {
    f.size_classes.clear();
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of size classes", path));
    for (auto el : v.get_array()) {
        std::string at = fmt::format("{}[{}]", path, f.size_classes.size());
        od::object o = require_object(el.value(), at);
        read_record(size_class_schema(), o, f.size_classes.emplace_back(), at);
    }
    return true;
}
}  // namespace

const record_schema<axis_basis>& axis_basis_schema() {
    using B = axis_basis;
    static const record_schema<B> s{"plan.families.*.basis", "", false, {
        member<&B::cores>("cores"),
        member<&B::memory>("memory"),
        member<&B::gpu>("gpu"),
        member<&B::wall>("wall"),
    }};
    return s;
}

const record_schema<family_plan>& family_plan_schema() {
    using F = family_plan;
    static const record_schema<F> s{"plan.families.*", "", false, {
        member<&F::models>("models"),
        member<&F::slot_cores>("slot_cores"),
        member<&F::slot_rss_bytes>("slot_rss_bytes"),
        member<&F::slot_gpu_bytes>("slot_gpu_bytes"),
        member<&F::gpu_fraction>("gpu_fraction"),
        member<&F::intraop_threads>("intraop_threads"),
        member<&F::slots_per_node>("slots_per_node"),
        nested<&F::layout, &family_layout_schema>("layout"),
        member<&F::cells>("cells"),
        member<&F::work_s>("work_s"),
        member<&F::longest_cell_s>("longest_cell_s"),
        member<&F::longest_cell_model>("longest_cell_model"),
        member<&F::longest_cell_n_obs>("longest_cell_n_obs"),
        member<&F::wall_estimator>("wall_estimator"),
        member<&F::cold_start_work_s>("cold_start_work_s"),
        member<&F::beside_slowdown>("beside_slowdown").writes([](const F& f, json_writer& w, std::string_view key) {
            if (f.beside_slowdown) w.field(key, *f.beside_slowdown);  // absent when none applied
        }),
        member<&F::oom_floor_bytes>("oom_floor_bytes"),
        member<&F::unmeasured_models>("unmeasured_models"),
        member<&F::nodes>("nodes"),
        member<&F::slots>("slots"),
        member<&F::waves>("waves"),
        member<&F::makespan_s>("makespan_s"),
        member<&F::makespan_lower_s>("makespan_lower_s"),
        member<&F::meets_deadline>("meets_deadline"),
        nested<&F::work_interval, &plan_interval_schema>("work_interval"),
        nested<&F::longest_cell_interval, &plan_interval_schema>("longest_cell_interval"),
        nested<&F::makespan_interval, &plan_interval_schema>("makespan_interval"),
        member<&F::makespan_bound_s>("makespan_bound_s"),
        member<&F::resampled_models>("resampled_models"),
        member<&F::cores_from_cap_models>("cores_from_cap_models"),
        object_array<&F::sample_widths, &model_sample_width_schema>("sample_widths")
            .reads(read_sample_widths)
            .writes([](const F& f, json_writer& w, std::string_view key) {
                if (f.sample_widths.empty()) return;  // absent without --target-width
                w.key(key);
                w.begin_array();
                for (const auto& e : f.sample_widths) write_record(model_sample_width_schema(), e, w);
                w.end_array();
            }),
        object_array<&F::size_classes, &size_class_schema>("size_classes").reads(read_size_classes),
        member<&F::one_size_slot_gib_hours>("one_size_slot_gib_hours"),
        member<&F::slot_gib_hours>("slot_gib_hours"),
        member<&F::size_class_saving>("size_class_saving"),
        nested<&F::basis, &axis_basis_schema>("basis"),
        member<&F::n_ok>("n_ok"),
        member<&F::failure_share>("failure_share"),
        member<&F::max_failed_items>("max_failed_items"),
        member<&F::low_confidence>("low_confidence"),
        member<&F::warnings>("warnings"),
    }};
    return s;
}

const record_schema<plan_totals>& plan_totals_schema() {
    using T = plan_totals;
    static const record_schema<T> s{"plan.totals", "", false, {
        member<&T::cells>("cells"),
        member<&T::work_s>("work_s"),
        member<&T::nodes>("nodes"),
        member<&T::longest_cell_s>("longest_cell_s"),
        member<&T::makespan_s>("makespan_s"),
        member<&T::makespan_lower_s>("makespan_lower_s"),
        member<&T::meets_deadline>("meets_deadline"),
        nested<&T::work_interval, &plan_interval_schema>("work_interval"),
        nested<&T::longest_cell_interval, &plan_interval_schema>("longest_cell_interval"),
        nested<&T::makespan_interval, &plan_interval_schema>("makespan_interval"),
        member<&T::makespan_bound_s>("makespan_bound_s"),
    }};
    return s;
}

const record_schema<plan_record>& plan_schema() {
    using P = plan_record;
    static const record_schema<P> s{"plan", "plan", true, {
        nested<&P::provenance, &provenance_schema>("provenance"),
        nested<&P::node, &node_shape_schema>("node"),
        nested<&P::run, &plan_run_schema>("run"),
        object_map<&P::families, &family_plan_schema>("families").reads([](P& p, od::value v, std::string_view path) {
            read_object_map(v, path, family_plan_schema(), [&](std::string name, family_plan f) {
                p.families[std::move(name)] = std::move(f);
            });
            return true;
        }),
        nested<&P::totals, &plan_totals_schema>("totals"),
        member<&P::warnings>("warnings"),
    }};
    return s;
}

std::string write_plan(const plan_record& p) { return write_record(plan_schema(), p); }

plan_record read_plan(od::object& obj) { return read_record(plan_schema(), obj); }

}  // namespace prof
