// How `paddock run` answers for an escalated command (Config::commands): --yes approves it;
// otherwise a person on the controlling terminal is asked; without a terminal it is refused
// (exit 126, E_ESCALATED_COMMAND), as for a library caller with no approval callback.
#pragma once

#include <string>

#include "paddock/command.hpp"

namespace paddock::cli {

// Empty when there is no one to ask (no --yes, no terminal).
CommandApprovalCallback approval_for_cli(bool yes);

// Why an escalated command did not run when no one could be asked, as the user reads it (on
// stderr and as --json's "error"), in process and through a helper or daemon alike.
std::string unasked_approval_text(const std::string& rule, const std::string& reason);

}  // namespace paddock::cli
