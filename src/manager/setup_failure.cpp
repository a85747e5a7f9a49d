#include "manager/setup_failure.hpp"

#include <errno.h>

#include <cstring>

#include "sandbox/linux/features.hpp"

namespace paddock::manager {
namespace {

// What a step that needs a feature answers where the feature is missing or denied: no
// syscall (ENOSYS), not compiled in (EOPNOTSUPP), refused by a sysctl, an LSM or a
// container's seccomp profile (EPERM, EACCES), an unknown flag (EINVAL).
bool missing_feature_errno(int err) {
  return err == EPERM || err == EACCES || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

bool clone_refused_for_good(int err, int namespace_flags) {
  if (missing_feature_errno(err) || err == EUSERS) return true;  // EUSERS: nesting too deep
  // ENOSPC: a user.max_*_namespaces limit. Set to 0 it switches the kind off; otherwise it
  // was reached by what runs right now (our own commands under load among them).
  if (err == ENOSPC) return sandbox::namespaces_switched_off(namespace_flags);
  return false;  // EAGAIN, ENOMEM, EMFILE (the pidfd): this moment's
}

std::string describe(const process::SpawnResult& s) {
  std::string out = s.failed_step != nullptr ? s.failed_step : "sandbox set-up";
  if (s.failed_path != nullptr) out += std::string(" ") + s.failed_path;
  return out + ": " + std::strerror(s.error);
}

}  // namespace

std::optional<SetupFailure> classify_setup_failure(const process::SpawnResult& s,
                                                   int namespace_flags) {
  if (s.error == 0) return std::nullopt;
  SetupFailure f;
  if (s.pid < 0) {
    // Nothing was started: clone itself, the setns into a pooled namespace or the child's
    // stack failed. Only clone's namespace flags can be the platform's doing.
    f.platform = s.feature_step && clone_refused_for_good(s.error, namespace_flags);
    f.reason = f.platform ? "sandbox unavailable: " + sandbox::explain_namespace_failure(s.error)
                          : "sandbox set-up failed: " + describe(s);
    return f;
  }
  if (!s.sandbox_failed) return std::nullopt;  // execve, or the plain spawn steps before it
  f.platform = s.feature_step && missing_feature_errno(s.error);
  f.reason = "sandbox set-up failed: " + describe(s);
  return f;
}

}  // namespace paddock::manager
