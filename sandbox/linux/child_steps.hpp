// Shared by the child-side files (child_sandbox.cpp: the order of the steps and the
// process's own state; child_mounts.cpp: the mount layout; child_network.cpp: loopback and the
// proxy listener). All of it runs between clone() and execve() on the parent's memory: raw
// syscalls only, no allocation (see child_sandbox.cpp).
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/linux/child_plan.hpp"

namespace paddock::sandbox::child {

// Result of one step: 0 or an errno, with the step's name and path for the parent.
struct Failure {
  StepFailure* out;
  int fail(const char* what, const char* where) const { return report(what, where, false); }
  // A step that only a missing feature or a host's refusal makes fail (see StepFailure).
  int fail_feature(const char* what, const char* where) const { return report(what, where, true); }
  int report(const char* what, const char* where, bool feature) const {
    int err = errno != 0 ? errno : EINVAL;
    out->step = what;
    out->path = where;
    out->needs_feature = feature;
    return err;
  }
};

inline long sys_open(const char* path, int flags, int mode = 0) {
  return ::syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

// Writes all of `data` to the existing file `path`; false with errno set otherwise.
bool write_whole_file(const char* path, const char* data);

// The step name when a path is not the object the parent checked (ESTALE) or now has a
// symlink on the way (ELOOP): a concurrent rename, never a missing kernel feature.
inline constexpr const char* kVerify = "reach the checked path (renamed or replaced during set-up)";

// The mount layout (child_mounts.cpp); 0 or an errno, with `f` saying where.
// `tmp_uppers`: descriptors of the private /tmp's and /var/tmp's writes (in_child_apply_sandbox).
int run_mounts(const ChildSandbox& p, const Failure& f, int tmp_uppers[2]);
// Own network namespace: `lo` up (child_network.cpp).
int bring_loopback_up(const Failure& f);
// Filtered network: the proxy's listener made here and sent to the supervisor.
int hand_over_proxy_listener(const ChildSandbox& p, const Failure& f);

}  // namespace paddock::sandbox::child
