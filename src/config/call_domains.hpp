// The domain rules a call's own policy adds (CallPolicy::allowed_domains / denied_domains):
// validated with the rest of the call's policy (config.cpp), and checked by the command's
// proxy session after the Manager's rules (manager/).
#pragma once

#include <memory>

#include "net/domain_rules.hpp"
#include "paddock/command.hpp"

namespace paddock::configuration {

// Null when the call has none. Throws Error(config_invalid) naming the bad entry
// (policy.allowed_domains[1]: ...).
std::shared_ptr<const net::DomainRules> call_domain_rules(const CallPolicy& call);

}  // namespace paddock::configuration
