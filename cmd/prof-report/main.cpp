// prof-report: profile, plan, diff, fit and sample records → one self-contained HTML page.
#include "prof/core/cli.hpp"
#include "prof/report/report.hpp"

#include <string>
#include <vector>

namespace {

struct config {
    std::vector<std::string> files;
};

int run(int argc, char** argv) {
    config c;
    CLI::App app{"Draw profile, plan, diff, fit and sample records as one self-contained HTML page (inline SVG\n"
                 "and CSS, no script, nothing loaded from the network): per model the fits with the cost and\n"
                 "memory curves against series length, per family the slot against the measured peaks, the\n"
                 "plan's slots per node and schedule against the deadline, a diff's verdict, provenance on top.",
                 "prof-report"};
    prof::cli::configure(app, "prof-aggregate fits.jsonl | prof-report fits.jsonl - > report.html",
                         "reads profile, plan, diff, fit and sample records (any mix, any order); writes one HTML "
                         "document");
    app.add_option("files", c.files, "Record files ('-' = stdin; default stdin)");
    prof::cli::parse(app, argc, argv);
    auto in = prof::report::read_inputs(prof::cli::inputs_or_stdin(c.files));
    std::string page = prof::report::render_report(in);
    if (!page.empty()) {
        page.pop_back();  // emit_line writes the last '\n' and flushes
        prof::cli::emit_line(page);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return prof::cli::run_tool("prof-report", argc, argv, run); }
