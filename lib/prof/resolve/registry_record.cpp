// The registry index line's schema and writer (see registry.hpp); prof-resolve reads the index.
#include "prof/resolve/registry_record.hpp"

namespace prof {

const record_schema<registry_index_line>& registry_index_line_schema() {
    using L = registry_index_line;
    static const record_schema<L> s{"registry index", "", false, {
        member<&L::run_id>("run_id").required(),
        member<&L::signature>("signature"),
        member<&L::measured_at>("measured_at"),
    }};
    return s;
}

std::string write_registry_line(const std::string& run_id, const std::optional<json_value>& signature,
                                const std::optional<std::string>& measured_at) {
    return write_record(registry_index_line_schema(), registry_index_line{run_id, signature, measured_at});
}

}  // namespace prof
