// What every prof program shares on the command line: CLI11 parsing with --help/--version,
// misuse → 64 with a hint, typed errors → exit codes in one place, the record output stream.
#pragma once

#include <CLI/CLI.hpp>

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
// codes (SPEC §1), prints "prof-x: message" (plus the --help hint for misuse), and checks
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

// The inputs a filter reads: the named files, or stdin ("-") when none are named.
std::vector<std::string> inputs_or_stdin(const std::vector<std::string>& files);

}  // namespace prof::cli
