// Child side of the Linux sandbox: runs between clone() and execve() on the parent's memory
// (CLONE_VM), so raw syscalls only — no allocation, no errno-setting libc wrappers that might
// take locks, no stdio. Every string comes from the plan the parent built.
#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "sandbox/linux/child_plan.hpp"
#include "sandbox/linux/child_steps.hpp"
#include "sandbox/linux/landlock_abi.hpp"
#include "sandbox/linux/path_identity.hpp"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

namespace paddock::sandbox {
namespace child {

bool write_whole_file(const char* path, const char* data) {
  long fd = sys_open(path, O_WRONLY);
  if (fd < 0) return false;
  std::size_t len = std::strlen(data);  // strlen is async-signal-safe (no state)
  long n = ::syscall(SYS_write, fd, data, len);
  int saved = errno;
  ::syscall(SYS_close, fd);
  errno = saved;
  return n == static_cast<long>(len);
}

}  // namespace child

namespace {

using child::Failure;
using child::kVerify;

// `readable`: directory descriptors (or -1) that stay readable beneath them: the private
// /tmp's and /var/tmp's upper layers, detached from every path, which paddock-init reads after
// the command (process/init_tmp_tally.hpp). Nothing else in the sandbox holds them.
int apply_landlock(const ChildSandbox& p, const Failure& f, const int readable[2]) {
  landlock::RulesetAttr attr{p.landlock_handled_fs, p.landlock_handled_net, p.landlock_scoped};
  // The attribute struct grew with the ABI; pass only the part this kernel knows.
  std::size_t size = p.landlock_abi >= 6   ? sizeof(attr)
                     : p.landlock_abi >= 4 ? 2 * sizeof(std::uint64_t)
                                           : sizeof(std::uint64_t);
  long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return f.fail_feature("landlock_create_ruleset", nullptr);
  int err = 0;
  for (std::size_t i = 0; i < p.landlock_rule_count && err == 0; ++i) {
    const LandlockRule& rule = p.landlock_rules[i];
    long fd = in_child_open_verified(rule.path, rule.host);
    if (fd < 0) {
      err = f.fail(rule.host.ino != 0 ? kVerify : "open for a Landlock rule", rule.path);
      break;
    }
    landlock::PathBeneathAttr beneath{rule.access, static_cast<std::int32_t>(fd)};
    if (::syscall(SYS_landlock_add_rule, ruleset, landlock::kRulePathBeneath, &beneath, 0) != 0) {
      err = f.fail("landlock_add_rule", rule.path);
    }
    ::syscall(SYS_close, fd);
  }
  const std::uint64_t read = (landlock::kReadFile | landlock::kReadDir) & p.landlock_handled_fs;
  for (int i = 0; i < 2 && err == 0 && read != 0; ++i) {
    if (readable[i] < 0) continue;
    landlock::PathBeneathAttr beneath{read, readable[i]};
    if (::syscall(SYS_landlock_add_rule, ruleset, landlock::kRulePathBeneath, &beneath, 0) != 0) {
      err = f.fail("landlock_add_rule", "the private /tmp's upper layer");
    }
  }
  if (err == 0 && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    err = f.fail_feature("landlock_restrict_self", nullptr);
  }
  ::syscall(SYS_close, ruleset);
  return err;
}

int drop_capabilities(const ChildSandbox& p, const Failure& f) {
  // Root inside the namespace must not regain capabilities through execve, setuid fix-ups or
  // ambient raises; lock that before giving up CAP_SETPCAP.
  unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                       SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                       SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (::syscall(SYS_prctl, PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) {
    return f.fail_feature("set securebits", nullptr);
  }
  for (int cap = 0; cap <= p.cap_last_cap; ++cap) {
    if (::syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return f.fail_feature("drop bounding capability", nullptr);
    }
  }
  if (::syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
      errno != EINVAL) {
    return f.fail_feature("clear ambient capabilities", nullptr);
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  std::memset(data, 0, sizeof(data));
  if (::syscall(SYS_capset, &header, data) != 0) return f.fail_feature("capset", nullptr);
  return 0;
}

}  // namespace

int in_child_apply_sandbox(const ChildSandbox& p, const char* cwd, int supervisor_pidfd,
                           StepFailure* failure, int tmp_uppers[2]) {
  const Failure f{failure};
  int err = 0;

  if (!child::write_whole_file("/proc/self/uid_map", p.uid_map)) {
    return f.fail_feature("write uid_map", nullptr);
  }
  if (!child::write_whole_file("/proc/self/setgroups", "deny")) {
    return f.fail_feature("deny setgroups", nullptr);
  }
  if (!child::write_whole_file("/proc/self/gid_map", p.gid_map)) {
    return f.fail_feature("write gid_map", nullptr);
  }

  if ((err = child::run_mounts(p, f, tmp_uppers)) != 0) return err;

  if (p.hostname != nullptr && ::syscall(SYS_sethostname, p.hostname, p.hostname_len) != 0) {
    return f.fail_feature("sethostname", nullptr);
  }
  if (p.loopback_up && (err = child::bring_loopback_up(f)) != 0) return err;
  if (p.proxy_handoff_fd >= 0 && (err = child::hand_over_proxy_listener(p, f)) != 0) return err;
  if (cwd != nullptr) {
    // The directory the parent checked, entered by descriptor (see path_identity.hpp).
    int dir = in_child_open_verified(cwd, p.cwd);
    if (dir < 0) return f.fail(p.cwd.ino != 0 ? kVerify : "open the working directory", cwd);
    long rc = ::syscall(SYS_fchdir, dir);
    int saved = errno;
    ::syscall(SYS_close, dir);
    errno = saved;
    if (rc != 0) return f.fail("chdir", cwd);
  }

  for (std::size_t i = 0; i < p.rlimit_count; ++i) {
    if (::syscall(SYS_prlimit64, 0, p.rlimits[i].resource, &p.rlimits[i].value, nullptr) != 0) {
      return f.fail("setrlimit", nullptr);
    }
  }

  if (::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return f.fail_feature("PR_SET_NO_NEW_PRIVS", nullptr);
  }
  if (p.landlock_abi > 0 && (err = apply_landlock(p, f, tmp_uppers)) != 0) return err;
  if ((err = drop_capabilities(p, f)) != 0) return err;

  // The sandbox dies with its supervisor (even kill -9): PID 1 of the namespace gets SIGKILL,
  // which takes every other process of the namespace with it.
  if (::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    return f.fail("PR_SET_PDEATHSIG", nullptr);
  }
  // The signal only comes for a death after the prctl: if the supervisor was killed while we
  // set up, nobody would stop us (getppid() is 0 in a new PID namespace; its pidfd tells).
  if (supervisor_pidfd >= 0) {
    struct pollfd pfd = {supervisor_pidfd, POLLIN, 0};
    if (::syscall(SYS_poll, &pfd, 1, 0) != 0) {
      errno = ESRCH;
      return f.fail("supervisor gone during set-up", nullptr);
    }
    ::syscall(SYS_close, supervisor_pidfd);
  }
  // Last: from here on, only the execve the caller does next.
  if (p.seccomp != nullptr && ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p.seccomp) != 0) {
    return f.fail_feature("install seccomp filter", nullptr);
  }
  return 0;
}

}  // namespace paddock::sandbox
