// What every prof program shares on the command line: CLI11 parsing with --help/--version,
// misuse → 64 with a hint, typed errors → exit codes in one place, the record output stream.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace prof::cli {

// Thrown after --help or --version has been printed: the program exits with `code`.
struct exit_request {
    int code;
};

// Sets up `app` the prof way: the version flag ("prof-x (prof) X.Y.Z") and a footer holding
// the example pipeline and the record kinds read and written.
void configure(CLI::App& app, const std::string& example, const std::string& records);

// Parses argv. --help prints to stdout and throws exit_request{0}; --version likewise; any
// CLI11 parse error becomes prof::usage_error (so CLI11's own codes 100-115 never leak).
void parse(CLI::App& app, int argc, char** argv);

// For a program that fills and frees large arrays one after another (prof-spans):
// glibc serves large blocks from the heap and keeps freed memory there instead of mapping each
// block afresh and unmapping it when freed, so a later block reuses pages already faulted in
// instead of faulting fresh ones. Call first in main.
void prefer_heap_reuse();

// Runs a program's body: sets the program name for diagnostics, maps typed errors to exit
// codes (the sysexits values of errors.hpp), prints "prof-x: message" (plus the --help hint for misuse), and checks
// that stdout was written and closed without error (74 otherwise).
int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body);

// Writes one record and '\n' to stdout and flushes it (records stream out one by one).
// EPIPE (a downstream `head` has gone, SIGPIPE ignored) throws prof::broken_pipe; any other
// write error throws prof::io_error.
void emit_line(const std::string& line);

// A non-negative integer option read exactly (digits only, up to 2^64-1): CLI11's own unsigned
// conversion accepts "-5" (wrapping it) and clamps values past 2^64, so counts use this.
CLI::Option* add_count_option(CLI::App& app, const std::string& name, std::uint64_t& var, const std::string& desc);
CLI::Option* add_count_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& var,
                              const std::string& desc);

// ---- flags several programs share, each declared here once with its help text ----------

// A word option that takes one of `choices`, its default shown in --help ("--format json|table").
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& var, const std::string& desc,
                               const std::vector<std::string>& choices);
// --host NAME: the host identity the records carry (host_identity() applies the default).
CLI::Option* add_host_option(CLI::App& app, std::optional<std::string>& host);
// --quiet, -q: no progress display and no summary line on stderr.
CLI::Option* add_quiet_flag(CLI::App& app, bool& quiet);
// --max-bad-lines N: "Skip up to N malformed <lines> (counted on stderr)"; `lines` names what
// the program reads ("cell lines", "--panel lines").
CLI::Option* add_max_bad_lines_option(CLI::App& app, std::uint64_t& n, const std::string& lines = "lines");

// The HTTP flags of a program that reads URLs, as given (io/http.hpp's http_options_from
// reads them): --header, --header-from-env, --connect-timeout, --timeout, --stall-timeout,
// --min-speed, --retries, --retry-backoff. The limits' defaults are far beyond what a real
// export needs (24 h for a whole transfer; 1 KiB/s over the stall time) and only cut off a
// server that never ends or drips a byte at a time.
struct http_flags {
    std::vector<std::string> headers, headers_from_env;
    std::string connect_timeout = "10s", timeout = "24h", stall_timeout = "60s", min_speed = "1KiB",
                retry_backoff = "1s";
    unsigned retries = 3;
};
void add_http_options(CLI::App& app, http_flags& f);

// Progress on stderr for a person watching (stderr a terminal, not --quiet: show_progress):
// "\rprof-x: N lines, SIZE (RATE/s)" at most twice a second. The line is cleared when the
// meter goes, however the work ends, so an error message starts on a clean line.
bool show_progress(bool quiet);
class progress_meter {
public:
    explicit progress_meter(bool show) : show_(show) {}
    ~progress_meter();
    progress_meter(const progress_meter&) = delete;
    progress_meter& operator=(const progress_meter&) = delete;
    // What a reader calls with the lines and bytes read so far; empty when not shown.
    std::function<void(std::uint64_t, std::uint64_t)> callback();

private:
    void update(std::uint64_t lines, std::uint64_t bytes);
    bool show_, shown_ = false;
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now(), last_ = t0_;
};

// The inputs a filter reads: the named files, or stdin ("-") when none are named. Throws
// usage_error (64) when "-" is named twice: the second reader would find stdin drained.
std::vector<std::string> inputs_or_stdin(const std::vector<std::string>& files);

// An input a run reads, as the user named it: what it is ("--family-map", "the rows") and its
// spec ("-" is stdin; empty: not given).
struct named_input {
    std::string what;
    std::string spec;
};
// Throws usage_error (64) when two of `inputs` are "-": stdin holds one input, and a second
// reader would find it already drained (an empty input, never an error).
void check_one_stdin(const std::vector<named_input>& inputs);

}  // namespace prof::cli
