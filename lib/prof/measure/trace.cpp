// Chrome trace output for prof-measure --trace (see trace.hpp).
#include "prof/measure/trace.hpp"

#include "prof/io/json_out.hpp"

#include <unistd.h>

namespace prof {

void chrome_trace::add(const measured_fit& f, double start_us, double dur_us) {
    json_writer w;
    w.begin_object();
    w.field("name", f.model_type + " " + f.ts_id);
    w.field("cat", f.ok ? "fit" : "fit,failed");
    w.field("ph", "X");
    w.field("ts", start_us);
    w.field("dur", dur_us);
    w.field("pid", static_cast<std::int64_t>(getpid()));
    w.field("tid", 1);
    w.key("args");
    w.raw(write_fit(f));
    w.end_object();
    events_.push_back(w.take());
}

std::string chrome_trace::render() const {
    std::string out = "{\"traceEvents\":[\n";
    for (std::size_t i = 0; i < events_.size(); ++i) {
        out += events_[i];
        out += i + 1 < events_.size() ? ",\n" : "\n";
    }
    out += "],\"displayTimeUnit\":\"ms\"}\n";
    return out;
}

}  // namespace prof
