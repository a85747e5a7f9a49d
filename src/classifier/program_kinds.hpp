// What kind of program a name is, for the classifier: shells, interpreters, downloaders,
// decoders; which spellings of a name earn an allow rule; which words name a credential;
// which variables make programs run something else (and which of those hold a command line).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::classifier {

bool trusted_spelling(std::string_view p);
bool is_shell(std::string_view name);
bool is_interpreter(std::string_view name);
bool is_downloader(std::string_view name);
bool is_decoder(std::string_view name);
bool names_credential(const std::string& word, const std::string& home);
// Whether one of the policy's allowRead entries shows (part of) the credential `word` names
// again: an entry inside a credential (the list wins over one above it), at, above or below
// the word, a glob from its literal start. A relative entry is taken from `cwd` (unknown:
// it reaches).
bool allow_read_reaches(const std::string& word, const std::vector<std::string>& allow_read,
                        const std::string& cwd, const std::string& home);
// The option that gives an interpreter its program text on the command line (-c, -e, ...).
bool inline_code_option(std::string_view interpreter, std::string_view option);
// A variable whose value is a command line a program runs (PAGER, GIT_SSH_COMMAND, EDITOR,
// PROMPT_COMMAND, ...): its value is judged as a script.
bool holds_command_line(std::string_view name);

}  // namespace paddock::classifier
