// The measured run as a Chrome Trace Event Format file (one complete "X" event per cell, its
// readings as args), so an operator can open the pre-pass in Perfetto or chrome://tracing.
#pragma once

#include "prof/records/records.hpp"

#include <string>
#include <vector>

namespace prof {

class chrome_trace {
public:
    // start_us: microseconds since the run began; dur_us: the fit's wall time in microseconds.
    void add(const measured_fit& f, double start_us, double dur_us);
    // {"traceEvents":[...],"displayTimeUnit":"ms"}
    std::string render() const;
    bool empty() const { return events_.empty(); }

private:
    std::vector<std::string> events_;
};

}  // namespace prof
