// The settings file's `commands` section: deciding before running (paddock/classifier.hpp).
//   "commands": {
//     "classify": true,                       // false: no rule is consulted
//     "approvalTimeoutSeconds": 300,          // an escalated command's approval deadline
//     "rules": [{"match": "npm test", "decision": "allow", "description": "..."}],
//     "overrides": {"process-kill": "sandboxed"},   // a built-in rule's decision, by name
//     "allowPrograms": ["git", "make"],       // any other program is escalated
//     "denyPrograms": ["curl"]                // forbidden
//   }
// `match` is the words a command starts with (a string split at spaces, or an array); "*" is
// any one word.
#pragma once

#include <string>

#include "config/json_fields.hpp"
#include "paddock/config.hpp"

namespace paddock::configuration {

void read_commands_section(const json& v, const std::string& path, Config::Commands& out);

}  // namespace paddock::configuration
