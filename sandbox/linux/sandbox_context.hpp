// Per Manager: what a sandboxed command needs that does not change from one command to the
// next (the policy, what the kernel offers, the compiled seccomp program), built once.
#pragma once

#include <memory>
#include <string>

#include "paddock/sandbox_policy.hpp"
#include "sandbox/linux/features.hpp"
#include "sandbox/linux/seccomp_filter.hpp"

namespace paddock::sandbox {

class SandboxContext {
 public:
  // Throws Error(unsupported_platform / dependency_missing) naming what is missing, unless
  // the policy's fallback is warn — then usable() is false and reason() says why.
  explicit SandboxContext(SandboxPolicy policy, bool reuse_network_namespaces = true,
                          bool mount_templates = true);

  bool usable() const noexcept { return usable_; }
  const std::string& reason() const noexcept { return reason_; }
  const SandboxPolicy& policy() const noexcept { return policy_; }
  const Features& kernel() const noexcept { return *features_; }
  const SeccompProgram* seccomp() const noexcept { return seccomp_.get(); }
  const std::string& home() const noexcept { return home_; }
  bool reuse_network_namespaces() const noexcept { return reuse_netns_; }
  // Plans take their view from a template made once (mount_template.hpp) where they can.
  bool mount_templates() const noexcept { return mount_templates_; }

 private:
  SandboxPolicy policy_;
  const Features* features_;
  std::unique_ptr<SeccompProgram> seccomp_;
  std::string home_;
  bool reuse_netns_ = true;
  bool mount_templates_ = true;
  bool usable_ = false;
  std::string reason_;
};

}  // namespace paddock::sandbox
