// Where bash itself gives up on a script. `bash -c` reads one complete command at a time
// (a line, or more when a quote or a compound command spans lines) and runs it; a syntax
// error in a command exits the shell (status 2) before anything of that command or after it
// runs. Agents send text that is not bash (SWE-agent's `edit` blocks of Python, prose with an
// unclosed apostrophe, `\n` typed as two characters): bash runs the lines before the first
// error and stops. Judging only those lines is judging what runs, not "unanalysable".
//
// Only two errors are claimed, each checked against bash in the tests, and the scan gives up
// (claims nothing) on anything it does not lex exactly as bash does ($(...), `...`, ${...},
// compound commands, a line continuation):
//   - `(` after two or more words of a simple command (`p = remote("host", 8000)`), which is
//     neither a subshell, a function definition, an array, a process substitution nor an
//     extended glob;
//   - a quote that nothing after it closes (bash hits the end looking for it).
// Whether a line really starts a command (not the inside of a heredoc or a string) is for the
// caller to check: the text before it must parse completely (shell_syntax.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace paddock::classifier {

// Why bash rejects the command that starts at `start` (read from the top level) before
// running any of it; nullopt when that is not certain.
std::optional<std::string> bash_rejects_command_at(std::string_view script, std::size_t start);

}  // namespace paddock::classifier
