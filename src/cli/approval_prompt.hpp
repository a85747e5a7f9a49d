// How `paddock run` answers for an escalated command (Config::commands): --yes approves it;
// otherwise a person on the controlling terminal is asked; without a terminal it is refused
// (exit 126, E_ESCALATED_COMMAND), as for a library caller with no approval callback.
#pragma once

#include "paddock/command.hpp"

namespace paddock::cli {

// Empty when there is no one to ask (no --yes, no terminal).
CommandApprovalCallback approval_for_cli(bool yes);

}  // namespace paddock::cli
