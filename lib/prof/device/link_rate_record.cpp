// The `link_rate` record's schema, reader and writer (see linkrate.hpp).
#include "prof/device/link_rate_record.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

namespace {
// A string that must be one of `allowed`: "field 'F': unknown value \"X\"" otherwise.
std::string one_of(od::value v, std::string_view field, std::initializer_list<std::string_view> allowed) {
    std::string s = require_string(v, field);
    for (auto a : allowed)
        if (s == a) return s;
    throw field_error(fmt::format("field '{}': unknown value \"{}\"", field, s));
}

std::string direction_of(od::value v, std::string_view path) { return one_of(v, path, {"h2d", "d2h"}); }
std::string memory_of(od::value v, std::string_view path) { return one_of(v, path, {"pinned", "pageable"}); }
std::optional<int> numa_node_of(od::value v, std::string_view path) {
    auto n = read_int(v, path);
    return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

od::array require_array(od::value v, std::string_view path) {
    od::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) throw field_error(fmt::format("field '{}': expected an array", path));
    return a;
}
}  // namespace

const record_schema<link_device>& link_device_schema() {
    using D = link_device;
    static const record_schema<D> s{"link_rate.device", "", false, {
        member_via<&D::name, string_or_empty>("name"),
        member<&D::uuid>("uuid").required(),
        member<&D::pci_bus_id>("pci_bus_id"),
        member<&D::numa_node>("numa_node").reads([](D& d, od::value v, std::string_view path) {
            if (auto n = numa_node_of(v, path)) d.numa_node = n;  // null keeps what was there
            return true;
        }),
    }};
    return s;
}

const record_schema<link_rate>& link_rate_schema() {
    using R = link_rate;
    static const record_schema<R> s{"link_rate", "link_rate", true, {
        member<&R::host>("host").required(),
        nested<&R::device, &link_device_schema>("device").required(),
        member_via<&R::direction, direction_of>("direction").required(),
        member_via<&R::memory, memory_of>("memory").required(),
        member_via<&R::transfer_bytes, positive_count>("transfer_bytes").required(),
        member_via<&R::bytes_per_second, positive_number>("bytes_per_second").required(),
        member<&R::samples>("samples").reads([](R& r, od::value v, std::string_view path) {
            for (auto el : require_array(v, path)) {
                auto x = read_number(el.value(), path);
                if (!x || !std::isfinite(*x)) throw field_error("field 'samples': expected finite numbers");
                r.samples.push_back(*x);
            }
            return true;
        }),
        member<&R::measured_at>("measured_at"),
        member_via<&R::method, string_or_empty>("method"),
        member<&R::driver_version>("driver_version"),
        member<&R::runtime_version>("runtime_version"),
        member<&R::cpus>("cpus").reads([](R& r, od::value v, std::string_view path) {
            for (auto el : require_array(v, path)) {
                auto c = read_int(el.value(), path);
                if (c) r.cpus.push_back(static_cast<int>(*c));
            }
            return true;
        }),
    }};
    return s;
}

std::string write_link_rate(const link_rate& r) { return write_record(link_rate_schema(), r); }

link_rate read_link_rate(od::object& obj) { return read_record(link_rate_schema(), obj); }

}  // namespace prof
