// Diagnostics on stderr: "prof-x: message", warnings that say what to do next.
// Nothing here throws: a diagnostic that cannot be written (stderr on a full disk, a closed
// pipe) is lost, never turned into an exception inside an error handler.
#pragma once

#include <string>
#include <string_view>

namespace prof {

void set_program_name(std::string name);
const std::string& program_name() noexcept;
// "prof-x: warning: MSG" on stderr (stdout is flushed first so the streams interleave sanely),
// MSG through printable() (warn and note alike): one line, whatever names it quotes.
void warn(std::string_view msg) noexcept;
// "prof-x: MSG" on stderr, for notes that are not warnings (a skipped gate, a cleanup).
void note(std::string_view msg) noexcept;
// TEXT written to stderr as it is (no prefix, no newline added), after flushing stdout; a
// failed or short write is ignored.
void write_stderr(std::string_view text) noexcept;

// TEXT with every control character written as \xHH (C0 and DEL) or \u00HH (C1, U+0080..U+009F
// in UTF-8), tab kept, and newline kept when `keep_newlines`: a name read from the input (a
// ts_id, a model, a run id) cannot clear the screen, ring the bell, move the cursor or forge
// a line of its own on a terminal (ECMA-48 control functions start with these).
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace prof
