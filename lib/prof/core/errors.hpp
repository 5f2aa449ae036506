// Exit codes (sysexits, prof(7) EXIT STATUS) and the typed errors that become them in exactly one place.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace prof {

// The only exit statuses a prof program uses (prof-measure -- CMD also passes through
// the measured command's own status, as time(1) does).
enum class exit_code : int {
    ok = 0,
    negative = 1,       // a documented "no" to a yes/no question (prof-spans stale)
    usage = 64,         // EX_USAGE: bad flags or flag values
    data_err = 65,      // EX_DATAERR: malformed input records
    no_input = 66,      // EX_NOINPUT: an input file is missing or unreadable
    unavailable = 69,   // EX_UNAVAILABLE: a required service or device is absent
    software = 70,      // EX_SOFTWARE: internal error
    cant_create = 73,   // EX_CANTCREAT: cannot write an output file or cache
    io_err = 74,        // EX_IOERR: read/write failure, truncated transfer
    temp_fail = 75,     // EX_TEMPFAIL: a remote source still failing after retries
    config = 78,        // EX_CONFIG: configuration refused (a pinned source has drifted)
};

// Base of every error a prof program reports: a message (without the "prof-x: " prefix)
// and the exit code it maps to.
class error : public std::runtime_error {
public:
    error(exit_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
    exit_code code() const noexcept { return code_; }

private:
    exit_code code_;
};

// Misuse of the command line: printed with a "Try 'prof-x --help'" hint, exit 64.
struct usage_error : error {
    explicit usage_error(const std::string& m) : error(exit_code::usage, m) {}
};

// Bad input data at a known place: "SOURCE:LINE: what", exit 65.
struct input_error : error {
    input_error(const std::string& source, std::size_t line, const std::string& what)
        : error(exit_code::data_err, source + ":" + std::to_string(line) + ": " + what),
          source_name(source), line_number(line), detail(what) {}
    std::string source_name;
    std::size_t line_number;
    std::string detail;
};

// A record field is wrong; the line reader adds source and line (becomes an input_error).
struct field_error : std::runtime_error {
    explicit field_error(const std::string& m) : std::runtime_error(m) {}
};

struct no_input_error : error {
    explicit no_input_error(const std::string& m) : error(exit_code::no_input, m) {}
};
struct io_error : error {
    explicit io_error(const std::string& m) : error(exit_code::io_err, m) {}
};
struct unavailable_error : error {
    explicit unavailable_error(const std::string& m) : error(exit_code::unavailable, m) {}
};
struct cant_create_error : error {
    explicit cant_create_error(const std::string& m) : error(exit_code::cant_create, m) {}
};

// The reader of our stdout went away (EPIPE with SIGPIPE ignored): stop quietly, exit 0.
struct broken_pipe {};

}  // namespace prof
