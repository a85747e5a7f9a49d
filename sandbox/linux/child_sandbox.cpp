// Child side of the Linux sandbox: runs between clone() and execve() on the parent's memory
// (CLONE_VM), so raw syscalls only — no allocation, no errno-setting libc wrappers that might
// take locks, no stdio. Every string comes from the plan the parent built.
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "sandbox/linux/child_plan.hpp"
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
namespace {

// Result of one step: 0 or an errno, with the step's name and path for the parent.
struct Failure {
  StepFailure* out;
  int fail(const char* what, const char* where) const { return report(what, where, false); }
  // A step that only a missing feature or a host's refusal makes fail (see StepFailure).
  int fail_feature(const char* what, const char* where) const {
    return report(what, where, true);
  }
  int report(const char* what, const char* where, bool feature) const {
    int err = errno != 0 ? errno : EINVAL;
    out->step = what;
    out->path = where;
    out->needs_feature = feature;
    return err;
  }
};

long sys_open(const char* path, int flags, int mode = 0) {
  return ::syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

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

bool exists_nofollow(const char* path) {
  struct stat st;
  return ::syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// mkdir -p of every parent of `path` (and of `path` itself when `include_self`). Only ever
// called for mount points inside a tmpfs of ours; the host tree is read-only by then.
bool make_parents(const char* path, bool include_self) {
  char buf[4096];
  std::size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof(buf)) {
    errno = ENAMETOOLONG;
    return false;
  }
  std::memcpy(buf, path, len + 1);
  for (std::size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    if (buf[i] == '\0' && !include_self) break;
    char saved = buf[i];
    buf[i] = '\0';
    if (::syscall(SYS_mkdirat, AT_FDCWD, buf, 0755) != 0 && errno != EEXIST) return false;
    buf[i] = saved;
  }
  return true;
}

bool set_mount_attr(int dirfd, const char* path, unsigned flags, std::uint64_t set,
                    std::uint64_t clear) {
  struct mount_attr attr = {};
  attr.attr_set = set;
  attr.attr_clr = clear;
  return ::syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof(attr)) == 0;
}

// The step name when a path is not the object the parent checked (ESTALE) or now has a
// symlink on the way (ELOOP): a concurrent rename, never a missing kernel feature.
constexpr const char* kVerify = "reach the checked path (renamed or replaced during set-up)";

// A detached copy of the mount tree at a verified descriptor.
long clone_of(int fd) {
  return ::syscall(SYS_open_tree, fd, "",
                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
}

// Attaches a detached tree onto the object a verified descriptor names.
long attach_onto(int tree, int target) {
  return ::syscall(SYS_move_mount, tree, "", target, "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

int run_mounts(const ChildSandbox& p, const Failure& f) {
  int slots[kMaxCloneSlots];
  for (int i = 0; i < p.slot_count; ++i) slots[i] = -1;
  int result = 0;

  // No mount event propagates in either direction.
  // Private, not slave: a mount the host makes while the command runs must not appear in the
  // sandbox either (it would arrive writable).
  if (::syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return f.fail_feature("make / a private mount", "/");
  }
  for (std::size_t i = 0; i < p.mount_count && result == 0; ++i) {
    const MountOp& op = p.mounts[i];
    switch (op.step) {
      case MountStep::clone_tree: {
        int src = in_child_open_verified(op.path, op.host);
        if (src < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        long fd = clone_of(src);
        if (fd < 0) result = f.fail("open_tree", op.path);
        slots[op.slot] = static_cast<int>(fd);
        ::syscall(SYS_close, src);
        break;
      }
      case MountStep::readonly_root:
        if (!set_mount_attr(AT_FDCWD, "/", AT_RECURSIVE,
                            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) {
          result = f.fail_feature("make the host read-only", "/");
        }
        break;
      case MountStep::tmpfs: {
        // A host directory (deny_read) is mounted on through its verified descriptor.
        int target = op.host.ino != 0 ? in_child_open_verified(op.path, op.host) : -1;
        if (op.host.ino != 0 && target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        char via[32];
        const char* where = target >= 0 ? in_child_fd_path(target, via) : op.path;
        if (::syscall(SYS_mount, "tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, op.data) != 0) {
          result = f.fail("mount tmpfs", op.path);
        }
        if (target >= 0) ::syscall(SYS_close, target);
        break;
      }
      case MountStep::proc:
        if (::syscall(SYS_mount, "proc", op.path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      nullptr) != 0) {
          result = f.fail_feature("mount proc", op.path);
        }
        break;
      case MountStep::devpts:
        if (::syscall(SYS_mount, "devpts", op.path, "devpts", MS_NOSUID | MS_NOEXEC,
                      "newinstance,ptmxmode=0666,mode=0620") != 0) {
          result = f.fail_feature("mount devpts", op.path);
        }
        break;
      case MountStep::attach_clone: {
        int fd = slots[op.slot];
        if (op.create && !exists_nofollow(op.path)) {
          bool ok = make_parents(op.path, op.is_dir);
          if (ok && !op.is_dir) {
            long file = sys_open(op.path, O_WRONLY | O_CREAT | O_EXCL, 0600);
            ok = file >= 0;
            if (ok) ::syscall(SYS_close, file);
          }
          if (!ok) {
            result = f.fail("create mount point", op.path);
            break;
          }
        }
        // Writable roots keep the host's flags (the clone was taken before / went read-only);
        // everything else is read-only. nosuid everywhere, nodev except on device nodes.
        std::uint64_t set = MOUNT_ATTR_NOSUID | (op.writable ? 0 : MOUNT_ATTR_RDONLY) |
                            (op.device ? 0 : MOUNT_ATTR_NODEV);
        if (!set_mount_attr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, set, 0)) {
          result = f.fail("set mount attributes", op.path);
          break;
        }
        // Onto the host path itself: the object the parent checked. A mount point we created
        // inside our own tmpfs has nothing to verify.
        int target = op.create ? -1 : in_child_open_verified(op.path, op.host);
        if (!op.create && target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        if ((target >= 0 ? attach_onto(fd, target)
                         : ::syscall(SYS_move_mount, fd, "", AT_FDCWD, op.path,
                                     MOVE_MOUNT_F_EMPTY_PATH)) != 0) {
          result = f.fail("attach mount", op.path);
        }
        if (target >= 0) ::syscall(SYS_close, target);
        ::syscall(SYS_close, fd);
        slots[op.slot] = -1;
        break;
      }
      case MountStep::bind_readonly:
      case MountStep::pin:
      case MountStep::cover_file: {
        // Onto the verified object; a protected name that is a symlink is the link itself
        // (opened O_NOFOLLOW), so it can be neither replaced nor retargeted.
        int target = in_child_open_verified(op.path, op.host);
        if (target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        long tree = op.step == MountStep::cover_file
                        ? ::syscall(SYS_open_tree, AT_FDCWD, op.data,
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
                        : clone_of(target);
        const char* what = op.step == MountStep::pin           ? "pin"
                           : op.step == MountStep::cover_file ? "cover file"
                                                               : "bind read-only";
        if (tree < 0) {
          result = f.fail(what, op.path);
        } else {
          // A pin keeps the attributes it has (a pinned directory inside a writable root stays
          // writable); the others are read-only.
          std::uint64_t set = op.step == MountStep::pin
                                  ? 0
                                  : MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                        (op.step == MountStep::cover_file ? MOUNT_ATTR_NODEV : 0);
          if ((set != 0 && !set_mount_attr(static_cast<int>(tree), "",
                                           AT_EMPTY_PATH | AT_RECURSIVE, set, 0)) ||
              attach_onto(static_cast<int>(tree), target) != 0) {
            result = f.fail(what, op.path);
          }
          ::syscall(SYS_close, tree);
        }
        ::syscall(SYS_close, target);
        break;
      }
      case MountStep::make_dir:
        if (::syscall(SYS_mkdirat, AT_FDCWD, op.path, 0755) != 0 && errno != EEXIST) {
          result = f.fail("mkdir", op.path);
        }
        break;
      case MountStep::make_symlink:
        if (::syscall(SYS_symlinkat, op.data, AT_FDCWD, op.path) != 0 && errno != EEXIST) {
          result = f.fail("symlink", op.path);
        }
        break;
      case MountStep::seal_readonly:
        if (!set_mount_attr(AT_FDCWD, op.path, 0, MOUNT_ATTR_RDONLY, 0)) {
          result = f.fail("make read-only", op.path);
        }
        break;
      case MountStep::write_file:
        if (!write_whole_file(op.path, op.data)) result = f.fail_feature("write", op.path);
        break;
      case MountStep::make_file: {
        long fd = sys_open(op.path, O_WRONLY | O_CREAT | O_EXCL, 0);
        if (fd < 0) {
          result = f.fail("create", op.path);
        } else {
          ::syscall(SYS_close, fd);
        }
        break;
      }
      case MountStep::remove_file:
        if (::syscall(SYS_unlinkat, AT_FDCWD, op.path, 0) != 0) result = f.fail("unlink", op.path);
        break;
    }
  }
  for (int i = 0; i < p.slot_count; ++i) {
    if (slots[i] >= 0) ::syscall(SYS_close, slots[i]);
  }
  return result;
}

int bring_loopback_up(const Failure& f) {
  long s = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return f.fail("socket for loopback", "lo");
  struct ifreq ifr;
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (::syscall(SYS_ioctl, s, SIOCGIFFLAGS, &ifr) != 0) {
    err = f.fail("read loopback flags", "lo");
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::syscall(SYS_ioctl, s, SIOCSIFFLAGS, &ifr) != 0) err = f.fail("bring loopback up", "lo");
  }
  ::syscall(SYS_close, s);
  return err;
}

// The proxy's listener, made here so that it lives in the sandbox's network namespace, then
// sent to the supervisor and closed: the command never holds it, so it cannot accept the
// connections meant for the proxy.
int hand_over_proxy_listener(const ChildSandbox& p, const Failure& f) {
  long s = ::syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return f.fail("socket for the proxy listener", nullptr);
  int err = 0;
  int one = 1;
  struct sockaddr_in addr;
  std::memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons(p.proxy_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // SO_REUSEADDR: a reused network namespace may still hold the last command's connections
  // to the port in TIME_WAIT.
  if (::syscall(SYS_setsockopt, s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::syscall(SYS_bind, s, &addr, sizeof(addr)) != 0) {
    err = f.fail("bind the proxy listener", "127.0.0.1");
  } else if (::syscall(SYS_listen, s, 1024) != 0) {
    err = f.fail("listen on the proxy listener", nullptr);
  } else {
    char control[CMSG_SPACE(sizeof(int))];
    std::memset(control, 0, sizeof(control));
    char byte = 'L';
    struct iovec iov = {&byte, 1};
    struct msghdr msg;
    std::memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    int fd = static_cast<int>(s);
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    if (::syscall(SYS_sendmsg, p.proxy_handoff_fd, &msg, MSG_NOSIGNAL) != 1) {
      err = f.fail("hand the proxy listener to the supervisor", nullptr);
    }
  }
  ::syscall(SYS_close, s);
  ::syscall(SYS_close, p.proxy_handoff_fd);
  return err;
}

int apply_landlock(const ChildSandbox& p, const Failure& f) {
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
                           StepFailure* failure) {
  const Failure f{failure};
  int err = 0;

  if (!write_whole_file("/proc/self/uid_map", p.uid_map)) {
    return f.fail_feature("write uid_map", nullptr);
  }
  if (!write_whole_file("/proc/self/setgroups", "deny")) {
    return f.fail_feature("deny setgroups", nullptr);
  }
  if (!write_whole_file("/proc/self/gid_map", p.gid_map)) {
    return f.fail_feature("write gid_map", nullptr);
  }

  if ((err = run_mounts(p, f)) != 0) return err;

  if (p.hostname != nullptr && ::syscall(SYS_sethostname, p.hostname, p.hostname_len) != 0) {
    return f.fail_feature("sethostname", nullptr);
  }
  if (p.loopback_up && (err = bring_loopback_up(f)) != 0) return err;
  if (p.proxy_handoff_fd >= 0 && (err = hand_over_proxy_listener(p, f)) != 0) return err;
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
  if (p.landlock_abi > 0 && (err = apply_landlock(p, f)) != 0) return err;
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
