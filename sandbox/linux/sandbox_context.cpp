#include "sandbox/linux/sandbox_context.hpp"

#include <cstdlib>
#include <optional>
#include <utility>

#include "paddock/errors.hpp"
#include "sandbox/linux/seccomp_precompiled.hpp"

namespace paddock::sandbox {
namespace {

std::string home_directory() {
  const char* home = std::getenv("HOME");
  return home != nullptr && home[0] == '/' ? home : "/";
}

}  // namespace

SandboxContext::SandboxContext(SandboxPolicy policy, bool reuse_network_namespaces,
                               bool mount_templates)
    : policy_(std::move(policy)),
      features_(&features()),
      home_(home_directory()),
      reuse_netns_(reuse_network_namespaces),
      mount_templates_(mount_templates) {
  const Features& k = *features_;
  std::string missing;
  errc code = errc::unsupported_platform;
  if (!k.mount_api) {
    missing = "the mount API (open_tree, move_mount, mount_setattr: Linux 5.12+) is missing";
  } else if (!k.seccomp) {
    missing = k.seccomp_error;
  } else if (policy_.fallback == FallbackMode::warn) {
    // Host or sandbox is decided here, once: under warn a command must know before it is
    // planned whether it runs on the host. Namespaces are what hosts lack most (containers,
    // AppArmor's userns restriction, a sysctl); one clone with every flag tells. A failure at
    // spawn time after this passed is a failure, never a reason to run on the host (it may
    // be this moment's load: a namespace limit reached).
    missing = probe_namespaces();
  }
  if (missing.empty()) {
    SeccompOptions options;
    // A list of single sockets cannot be enforced (config validation refuses it alone).
    options.allow_unix_sockets = policy_.network.allow_all_unix_sockets;
    try {
      std::optional<SeccompProgram> ready = precompiled_seccomp_program(options);
      seccomp_ = std::make_unique<SeccompProgram>(ready ? std::move(*ready)
                                                        : build_seccomp_program(options));
    } catch (const Error& e) {
      missing = e.what();
      code = errc::dependency_missing;
    }
  }
  if (missing.empty()) {
    usable_ = true;
    return;
  }
  reason_ = "sandbox unavailable: " + missing;
  if (policy_.fallback == FallbackMode::strict) {
    throw Error(code, reason_ +
                          " (strict fallback: refusing to run unsandboxed; "
                          "sandbox.fallback=warn runs commands unsandboxed instead)");
  }
}

}  // namespace paddock::sandbox
