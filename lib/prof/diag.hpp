// Diagnostics on stderr: "prof-x: message", warnings that say what to do next.
#pragma once

#include <string>
#include <string_view>

namespace prof {

void set_program_name(std::string name);
const std::string& program_name();
// "prof-x: warning: MSG" on stderr (stdout is flushed first so the streams interleave sanely).
void warn(std::string_view msg);
// "prof-x: MSG" on stderr, for notes that are not warnings (a skipped gate, a cleanup).
void note(std::string_view msg);

}  // namespace prof
