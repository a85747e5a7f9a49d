// The supervisor's side of a filtered-network command: its proxy credential, the proxy
// variables in its environment, and the listener its child hands over (see
// sandbox/linux/child_sandbox.cpp, hand_over_proxy_listener).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace paddock::manager {

// "paddock:<32 hex digits>" from getrandom; throws Error(spawn_failed) if that fails.
std::string random_credential();

inline constexpr std::size_t kProxyVariableCount = 8;
extern const char* const kProxyVariables[kProxyVariableCount];

// Replaces any proxy variables in `env` ("NAME=value" entries) with ours.
void add_proxy_environment(std::vector<std::string>& env, const std::string& credential);

// The listener fd sent over `handoff_fd` (SCM_RIGHTS), or -1 if none came.
int receive_listener(int handoff_fd);

}  // namespace paddock::manager
