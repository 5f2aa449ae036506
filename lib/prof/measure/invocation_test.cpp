// prof-measure's invocation rules: the "--" split, the mode checks, time(1)'s exit status.
#include "prof/measure/invocation.hpp"

#include "prof/core/errors.hpp"

#include <csignal>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("the words after -- are the command and are not parsed as options") {
    const char* args[] = {"prof-measure", "--ts-id", "a", "--", "sleep", "--help"};
    measure_invocation m;
    CHECK(split_command(6, const_cast<char**>(args), m) == 3);
    CHECK(m.dash_dash);
    CHECK(m.command == std::vector<std::string>{"sleep", "--help"});
    measure_invocation none;
    CHECK(split_command(3, const_cast<char**>(args), none) == 3);
    CHECK_FALSE(none.dash_dash);
}

TEST_CASE("exactly one mode, and only the flags that mode reads") {
    measure_invocation m;
    CHECK_THROWS_WITH_AS(check_invocation(m), "give exactly one of: -- CMD ARGS..., --run 'TEMPLATE', --worker 'CMD'",
                         usage_error);
    m.dash_dash = true;
    CHECK_THROWS_WITH_AS(check_invocation(m), "nothing to run after '--'", usage_error);
    m.command = {"true"};
    m.run_template = "fit {ts_id}";
    CHECK_THROWS_AS(check_invocation(m), usage_error);
    m.run_template.clear();
    CHECK(check_invocation(m) == worker_scope::run);  // -- CMD: one process, no worker
    m.command.clear();
    m.dash_dash = false;
    m.worker_cmd = "python3 w.py";
    CHECK(check_invocation(m) == worker_scope::model);  // a worker per model unless told
    m.worker_scope = "run";
    CHECK(check_invocation(m) == worker_scope::run);
    m.worker_scope.clear();
    m.worker_cmd.clear();
    m.dash_dash = true;
    m.command = {"true"};
    m.files = {"cells.jsonl"};
    CHECK_THROWS_WITH_AS(check_invocation(m), "-- CMD measures one command and reads no cells", usage_error);
    measure_invocation r;
    r.run_template = "fit {ts_id}";
    r.ts_id = "a";
    CHECK_THROWS_AS(check_invocation(r), usage_error);
    r.ts_id.clear();
    r.ready = true;
    CHECK_THROWS_WITH_AS(check_invocation(r), "--ready applies to --worker only", usage_error);
    r.ready = false;
    r.worker_scope = "family";
    CHECK_THROWS_WITH_AS(check_invocation(r), "--worker-scope applies to --worker only", usage_error);
    measure_invocation w;
    w.worker_cmd = "python3 w.py";
    w.worker_scope = "model";
    CHECK(check_invocation(w) == worker_scope::model);
    w.no_cgroup = true;
    w.memory_limit = "1GiB";
    CHECK_THROWS_AS(check_invocation(w), usage_error);
}

TEST_CASE("the one cell of -- CMD takes the command's base name as its model") {
    measure_invocation m;
    m.command = {"/usr/bin/sleep", "1"};
    cell c = command_cell(m);
    CHECK(c.model_type == "sleep");
    CHECK(c.family == "sleep");
    m.model_type = "theta";
    m.family = "statistical";
    c = command_cell(m);
    CHECK(c.model_type == "theta");
    CHECK(c.family == "statistical");
}

TEST_CASE("the exit status follows time(1): 128 + signal, else the exit code, else ok or not") {
    measured_fit f;
    f.ok = true;
    CHECK(time_exit_status(f) == 0);
    f.ok = false;
    CHECK(time_exit_status(f) == 1);
    f.exit_code = 3;
    CHECK(time_exit_status(f) == 3);
    f.signal = "SIGKILL";
    CHECK(time_exit_status(f) == 128 + SIGKILL);  // 137
    f.signal = "SIGTERM";
    CHECK(time_exit_status(f) == 128 + SIGTERM);  // 143
}

TEST_CASE("an empty --run template or --worker command is a usage error") {
    CHECK(command_words("", "--run: empty command template").empty());
    CHECK(command_words("fit {ts_id}", "x") == std::vector<std::string>{"fit", "{ts_id}"});
    CHECK_THROWS_WITH_AS(command_words("   ", "--run: empty command template"), "--run: empty command template",
                         usage_error);
}
