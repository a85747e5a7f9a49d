#include "config/call_domains.hpp"

#include <string>
#include <utility>
#include <vector>

namespace paddock::configuration {

std::shared_ptr<const net::DomainRules> call_domain_rules(const CallPolicy& call) {
  if (!call.allowed_domains && call.denied_domains.empty()) return nullptr;
  net::RuleOptions options;
  options.allowed_field = "policy.allowed_domains";
  options.denied_field = "policy.denied_domains";
  options.allow_every_host = !call.allowed_domains;
  options.strict = true;  // the call's layer never asks: the Manager's layer did, if anyone
  return std::make_shared<const net::DomainRules>(
      call.allowed_domains.value_or(std::vector<std::string>{}), call.denied_domains,
      std::move(options));
}

}  // namespace paddock::configuration
