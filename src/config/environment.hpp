// The child's environment: an allow-list of the supervisor's variables plus what the caller
// sets explicitly. The supervisor's secrets (API keys, tokens) never reach a command.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::configuration {

// `parent` is a NULL-terminated environ-style array: its variables named by `allow` (NAME or
// PREFIX*) and not by `deny` are inherited. Explicit entries (`set`) win over inherited ones.
// Throws paddock::Error(errc::config_invalid) for a malformed explicit entry.
std::vector<std::string> build_child_environment(const std::vector<std::string>& allow,
                                                 const std::map<std::string, std::string>& set,
                                                 const char* const* parent,
                                                 const std::vector<std::string>& deny = {});

// Value of NAME in a KEY=VALUE list, or nullptr.
const char* find_variable(const std::vector<std::string>& env, std::string_view name);

}  // namespace paddock::configuration
