// Prints every record schema, one field a line: what scripts/records-check compares with the
// field tables of man/prof-records.5.
//   SCHEMA<TAB>FIELD<TAB>TYPE<TAB>UNIT<TAB>NULLABLE<TAB>RULE
#include "prof/records/schema.hpp"

#include <cstdio>

int main() {
    for (const auto& s : prof::all_schemas())
        for (const auto& f : s.fields)
            std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", s.name.c_str(), f.name.c_str(),
                        std::string(prof::json_kind_name(f.type)).c_str(), f.unit.empty() ? "-" : f.unit.c_str(),
                        f.nullable ? "null" : "-", std::string(prof::read_rule_name(f.rule)).c_str());
    return std::fclose(stdout) == 0 ? 0 : 74;
}
