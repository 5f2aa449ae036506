// The parts of prof-report's page shared by its sections (report.cpp, report_plan.cpp,
// report_diff.cpp): number cells that keep the record's exact value in their title, badges,
// and the measured memory points a family's chart draws.
#pragma once

#include "prof/report/inputs.hpp"
#include "prof/report/svg.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prof::report {

// A number as the page shows it: human units in the text, the record's exact value (as JSON
// writes it) in the title; "—" titled "null" for a value the record did not hold.
std::string html_seconds(std::optional<double> s);
std::string html_bytes(std::optional<std::uint64_t> b);
std::string html_number(std::optional<double> v);
std::string html_count(std::optional<std::uint64_t> v);
std::string html_bool(std::optional<bool> v, std::string_view yes, std::string_view no);
// A basis as a coloured badge: measured, reference, assumed.
std::string basis_badge(std::string_view basis);
// "a, b and c"
std::string joined(const std::vector<std::string>& items);

// A section's opening: <section id="ID-INDEX"> and its heading "TITLE INDEX (NOTE)"; the note
// is HTML (escape what it quotes).
std::string section_head(std::string_view id, std::string_view title, std::size_t index, std::string_view note_html);

// A table column: its heading (plain text) and whether its cells are text, aligned left, or
// numbers, aligned right.
struct column {
    std::string heading;
    bool text = false;
};
// A table: the heading row, then a row per entry of `rows`, each a cell (HTML) per column.
std::string html_table(const std::vector<column>& columns, const std::vector<std::vector<std::string>>& rows);

// One reading of memory at a series length, for a family's chart: from a fit (ok or not), or
// from a curve point of the profile when no fit record was given.
struct memory_point {
    std::uint64_t n_obs = 0;
    std::uint64_t bytes = 0;
    bool failed = false;
    std::string title;
};
// The readings of `models`: their sample fits when the input held any, else the profile's
// curve points (nullptr: none).
std::vector<memory_point> measured_memory(const std::vector<std::string>& models, const compute_profile* profile,
                                          const report_inputs& in);

// The profile a plan was made from: the one with the plan's provenance, else the only one.
const compute_profile* profile_of(const plan_record& plan, const report_inputs& in);

// Sections.
std::string profile_section(const placed<compute_profile>& p, std::size_t index, const report_inputs& in);
std::string plan_section(const placed<plan_record>& p, std::size_t index, const report_inputs& in);
std::string diff_section(const placed<diff_view>& d, std::size_t index);
// The models of the fits when the input held fit records but no profile.
std::string fits_only_section(const report_inputs& in);

}  // namespace prof::report
