// prof-report: escaping, scales and ticks, the reading of plan and diff records, and the page
// holding the records' own numbers.
#include "prof/report/report.hpp"
#include "prof/report/svg.hpp"
#include "prof/core/errors.hpp"

#include <doctest/doctest.h>
#include <string>

namespace {

using namespace prof::report;

// One record line read as prof-report reads its input (source "t.jsonl", line 1).
void add_line(report_inputs& in, const std::string& line) {
    prof::parse_object_text(line, [&](simdjson::ondemand::object& o) { add_record(in, o, {"t.jsonl", 1, line}); });
}

std::string field_error_of(const std::string& line) {
    report_inputs in;
    try {
        add_line(in, line);
    } catch (const prof::field_error& e) {
        return e.what();
    }
    return "no error";
}

// A plan of one family "f" with two size classes, its makespans 30 and 12.5 s, a deadline of 60 s.
std::string plan_line(const std::string& class0_slot = "1073741824") {
    std::string layout = R"({"unit":"task","slots_per_unit":1,"units_per_node":8,"unit_cores":2,"unit_memory_bytes":1073741824,)"
                         R"("reserved_units":0,"limited_by":"cores"})";
    auto cls = [&](const std::string& lo, const std::string& hi, const std::string& slot, const std::string& mk) {
        return R"({"n_obs_min":)" + lo + R"(,"n_obs_max":)" + hi + R"(,"first_cell":0,"cells":10,"slot_cores":2,"slot_rss_bytes":)" +
               slot + R"(,"slots_per_node":8,"layout":)" + layout +
               R"(,"work_s":100,"longest_cell_s":2,"slots":8,"waves":2,"makespan_s":)" + mk + "}";
    };
    return R"({"kind":"plan","provenance":{"basis":"measured","source":"prepass","run_id":null,"baseline_version":null,)"
           R"("measured_at":null,"signature":null,"warnings":[]},"node":{"cores":16,"memory_bytes":68719476736,"gpus":0,)"
           R"("gpu_memory_bytes":null},"run":{"series":20,"models":["m"],"skipped_models":[],"length_source":"panel",)"
           R"("max_n_obs":500,"deadline_s":60,"nodes":null,"min_fits":3,"layout":"ray","headroom":0.1,"planned_deadline_s":54},)"
           R"("families":{"f":{"models":["m"],"slot_cores":2,"slot_rss_bytes":2147483648,"slot_gpu_bytes":null,)"
           R"("gpu_fraction":null,"intraop_threads":1,"slots_per_node":8,"layout":)" + layout +
           R"(,"cells":20,"work_s":200,"longest_cell_s":2.5,"longest_cell_model":"m","longest_cell_n_obs":500,)"
           R"("wall_estimator":"curve","cold_start_work_s":null,"oom_floor_bytes":null,"unmeasured_models":[],"nodes":1,)"
           R"("slots":8,"waves":4,"makespan_s":42.5,"makespan_lower_s":25,"meets_deadline":true,"size_classes":[)" +
           cls("10", "100", class0_slot, "30") + "," + cls("101", "500", "2147483648", "12.5") +
           R"(],"one_size_slot_gib_hours":0.1,"slot_gib_hours":0.08,"size_class_saving":0.2,"basis":{"cores":"measured",)"
           R"("memory":"measured","gpu":"assumed","wall":"measured"},"n_ok":8,"failure_share":0,"max_failed_items":0,)"
           R"("low_confidence":false,"warnings":[]}},"totals":{"cells":20,"work_s":200,"nodes":1,"longest_cell_s":2.5,)"
           R"("makespan_s":42.5,"makespan_lower_s":25,"meets_deadline":true},"warnings":[]})";
}

}  // namespace

TEST_CASE("text from records is escaped for HTML, quotes included") {
    CHECK(esc("<script>a&b\"c'd</script>") == "&lt;script&gt;a&amp;b&quot;c&#39;d&lt;/script&gt;");
}

TEST_CASE("a length axis is logarithmic over a span of 20 or more, else linear from 0") {
    // 12 to 2284: a log axis from 10 to 10^4 / 1.3-padded where the decade would squash the data.
    scale a = length_scale(12, 2284, 0, 100);
    CHECK(a.log);
    CHECK(a.lo == doctest::Approx(10));
    CHECK(a.hi == doctest::Approx(2284 * 1.3));
    // 100 to 1000: linear, 0 to 1200 (step 200: 1000 / 5; 1000 × 1.02 rounded up to a step).
    scale b = length_scale(100, 1000, 0, 100);
    CHECK_FALSE(b.log);
    CHECK(b.lo == 0);
    CHECK(b.hi == doctest::Approx(1200));
    CHECK(b.at(600) == doctest::Approx(50));
    CHECK(b.value(50) == doctest::Approx(600));
}

TEST_CASE("ticks fall on round values: 0 to 800 by 200, and a byte axis in MiB") {
    // 713 / 5 = 142.6 → step 200; top ceil(713 × 1.04 / 200) × 200 = 800.
    scale s = zero_based(713, 100, 0);
    CHECK(s.hi == doctest::Approx(800));
    CHECK(ticks(s) == std::vector<double>{0, 200, 400, 600, 800});
    // 190.96 MiB: step 50 MiB (190.96 / 5 = 38.2 → 50); top ceil(190.96 × 1.04 / 50) × 50 = 200 MiB.
    double mib = 1048576;
    CHECK(byte_axis_top(190.96 * mib) == doctest::Approx(200 * mib));
    CHECK(byte_ticks(200 * mib) == std::vector<double>{0, 50 * mib, 100 * mib, 150 * mib, 200 * mib});
    CHECK(bytes_label(150 * mib) == "150 MiB");
    CHECK(seconds_label(0.25) == "250 ms");
    CHECK(count_label(20000) == "20k");
}

TEST_CASE("a plan record is read field by field: its families, size classes and totals") {
    report_inputs in;
    add_line(in, plan_line());
    REQUIRE(in.plans.size() == 1);
    const prof::plan_record& p = in.plans[0].record;
    CHECK(in.plans[0].where == "t.jsonl:1");
    CHECK(p.node.cores == 16);
    CHECK(p.run.deadline_s == 60);
    CHECK(p.run.planned_deadline_s == 54);
    REQUIRE(p.families.size() == 1);
    CHECK(p.families.begin()->first == "f");
    REQUIRE(p.families.at("f").size_classes.size() == 2);
    CHECK(p.families.at("f").size_classes[1].n_obs_min == 101u);
    CHECK(p.families.at("f").size_classes[1].makespan_s == 12.5);
    CHECK(p.totals.makespan_lower_s == 25);
}

TEST_CASE("a plan field of the wrong type is refused with its path") {
    CHECK(field_error_of(plan_line("\"big\"")) ==
          "field 'families.f.size_classes[0].slot_rss_bytes': expected a non-negative integer, found \"big\"");
    CHECK(field_error_of(plan_line("-1")) ==
          "field 'families.f.size_classes[0].slot_rss_bytes': expected a non-negative integer, found -1");
}

TEST_CASE("a record kind the page does not draw is refused, naming the kinds it reads") {
    CHECK(field_error_of(R"({"kind":"cell","ts_id":"a","model_type":"m"})") ==
          "field 'kind': a \"cell\" record is not drawn (prof-report reads profile, plan, diff, fit and sample records)");
    CHECK(field_error_of(R"({"ts_id":"a"})").find("field 'kind': missing") == 0);
}

TEST_CASE("the page shows the plan's own numbers: makespans, deadline and class slots, exact in titles") {
    report_inputs in;
    add_line(in, plan_line());
    std::string page = render_report(in);
    CHECK(page.find("<title>42.5 s</title>") == std::string::npos);  // titles hold words, not bare numbers
    CHECK(page.find("title=\"42.5 s\"") != std::string::npos);      // the family's and the run's makespan_s
    CHECK(page.find("title=\"25 s\"") != std::string::npos);        // makespan_lower_s
    CHECK(page.find("title=\"60 s\"") != std::string::npos);        // deadline_s
    CHECK(page.find("title=\"54 s\"") != std::string::npos);        // planned_deadline_s
    CHECK(page.find("title=\"1073741824 bytes\">1.00 GiB") != std::string::npos);  // class 1's slot
    CHECK(page.find("Meets the planned deadline") != std::string::npos);
}

TEST_CASE("the page holds no script and names no resource outside itself") {
    report_inputs in;
    add_line(in, plan_line());
    add_line(in, R"({"kind":"fit","ts_id":"s","model_type":"<script>","family":"f","n_obs":10,"ok":false,"error":"boom","wall_s":1})");
    std::string page = render_report(in);
    CHECK(page.find("<script") == std::string::npos);
    CHECK(page.find("src=") == std::string::npos);
    // The only URL is the SVG namespace, an identifier that is never fetched.
    std::size_t at = 0, urls = 0, ns = 0;
    while ((at = page.find("://", at)) != std::string::npos) {
        ++urls;
        if (at >= 4 && page.compare(at - 4, 26, "http://www.w3.org/2000/svg") == 0) ++ns;
        ++at;
    }
    CHECK(urls == ns);
    CHECK(page.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("no record, no page") {
    CHECK(render_report(report_inputs{}).empty());
}
