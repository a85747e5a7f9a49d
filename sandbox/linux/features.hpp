// What this kernel and process can do for the sandbox, probed once per process. The Manager
// decides strict/warn from it; `paddock doctor` prints it.
#pragma once

#include <string>

namespace paddock::sandbox {

struct Features {
  int landlock_abi = 0;  // 0: Landlock unavailable
  std::string landlock_error;
  bool seccomp = false;
  std::string seccomp_error;
  bool mount_api = false;              // open_tree / move_mount / mount_setattr (Linux 5.12+)
  bool per_namespace_pid_max = false;  // Linux 6.14+: a process limit that also binds root
  int cap_last_cap = 40;
  // cgroup v2: mounted, and a subtree we may write (memory.max, pids.max, cgroup.kill).
  bool cgroup2_mounted = false;
  bool cgroup2_delegated = false;
  std::string cgroup_detail;
};

// The cheap probes, once per process (no child is started).
const Features& features();

// Creates the namespaces every sandbox needs once, for real (sysctls, AppArmor's
// restrict_unprivileged_userns and container seccomp profiles all say no differently): for
// `paddock doctor`. The runtime does not pay for it; a failing clone says the same through
// explain_namespace_failure. Returns "" when they work, else the reason.
std::string probe_namespaces();

// Why clone() with namespace flags failed with `err`, with the knob to turn.
std::string explain_namespace_failure(int err);

// For clone()'s ENOSPC: whether a user.max_*_namespaces sysctl of a kind in `clone_flags` is 0
// (the kind is switched off on this host) rather than reached by what runs right now.
bool namespaces_switched_off(int clone_flags);

}  // namespace paddock::sandbox
