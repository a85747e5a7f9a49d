#include "sandbox/linux/features.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sandbox/linux/landlock_abi.hpp"

namespace paddock::sandbox {
namespace {

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

int probe_child(void*) {
  ::syscall(SYS_exit_group, 0);
  return 0;
}

void probe_cgroup(Features& f) {
  // Where the unified hierarchy is: /sys/fs/cgroup (pure v2) or /sys/fs/cgroup/unified (hybrid).
  std::string root;
  for (const char* candidate : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct stat st;
    if (::stat((std::string(candidate) + "/cgroup.controllers").c_str(), &st) == 0) {
      root = candidate;
      break;
    }
  }
  if (root.empty()) {
    f.cgroup_detail = "no cgroup v2 hierarchy mounted (cgroup v1 only)";
    return;
  }
  f.cgroup2_mounted = true;
  // Our own cgroup: the "0::/path" line of /proc/self/cgroup.
  std::ifstream in("/proc/self/cgroup");
  std::string line, own;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) own = line.substr(3);
  }
  std::string dir = root + own;
  std::string controllers = read_first_line((dir + "/cgroup.controllers").c_str());
  bool has_memory = (" " + controllers + " ").find(" memory ") != std::string::npos;
  bool has_pids = (" " + controllers + " ").find(" pids ") != std::string::npos;
  bool writable = ::access(dir.c_str(), W_OK) == 0 &&
                  ::access((dir + "/cgroup.subtree_control").c_str(), W_OK) == 0;
  f.cgroup2_delegated = writable && has_memory && has_pids;
  std::ostringstream detail;
  detail << "cgroup v2 at " << root << ", ours " << (own.empty() ? "/" : own) << ": "
         << (writable ? "writable" : "not writable (not delegated to us)") << ", controllers '"
         << controllers << "'";
  if (!has_memory || !has_pids) detail << " (memory and pids controllers not available there)";
  f.cgroup_detail = detail.str();
}

bool kernel_at_least(int major, int minor) {
  struct utsname u;
  if (::uname(&u) != 0) return false;
  int ma = 0, mi = 0;
  if (std::sscanf(u.release, "%d.%d", &ma, &mi) != 2) return false;
  return ma > major || (ma == major && mi >= minor);
}

Features probe() {
  Features f;

  f.landlock_abi = landlock::abi_version();
  if (f.landlock_abi == 0) {
    f.landlock_error = errno == EOPNOTSUPP ? "Landlock is built in but disabled (add landlock to "
                                             "the lsm= boot parameter)"
                                           : "Landlock is not available in this kernel";
  }

  // seccomp filters need CONFIG_SECCOMP_FILTER; PR_GET_SECCOMP fails with EINVAL without it.
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0) {
    f.seccomp = true;
  } else {
    f.seccomp_error = std::string("seccomp unavailable: ") + std::strerror(errno);
  }

  long fd = ::syscall(SYS_open_tree, AT_FDCWD, "/", 0x80000 /* OPEN_TREE_CLOEXEC */);
  if (fd >= 0) {
    f.mount_api = true;
    ::close(static_cast<int>(fd));
  } else {
    f.mount_api = errno != ENOSYS;
  }
  f.per_namespace_pid_max = kernel_at_least(6, 14);

  std::string last = read_first_line("/proc/sys/kernel/cap_last_cap");
  if (!last.empty()) f.cap_last_cap = std::atoi(last.c_str());

  probe_cgroup(f);
  return f;
}

}  // namespace

std::string explain_namespace_failure(int err) {
  std::string why = std::strerror(err);
  std::string userns_clone = read_first_line("/proc/sys/kernel/unprivileged_userns_clone");
  std::string max_userns = read_first_line("/proc/sys/user/max_user_namespaces");
  std::string apparmor = read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  std::string hint;
  if (userns_clone == "0") hint = "; kernel.unprivileged_userns_clone=0 (set it to 1)";
  if (max_userns == "0") hint += "; user.max_user_namespaces=0 (raise it)";
  if (apparmor == "1") {
    hint +=
        "; AppArmor restricts unprivileged user namespaces "
        "(kernel.apparmor_restrict_unprivileged_userns=1)";
  }
  if (hint.empty() && err == EPERM) {
    hint =
        "; a container's seccomp profile may deny clone(CLONE_NEWUSER) (Docker: run with "
        "--security-opt seccomp=unconfined or a profile that allows it)";
  }
  if (err == ENOSPC || err == EUSERS) hint += "; the per-user namespace limit is reached";
  return "creating user/mount/PID/network namespaces failed: " + why + hint;
}

bool namespaces_switched_off(int clone_flags) {
  static const struct {
    int flag;
    const char* sysctl;
  } kinds[] = {{CLONE_NEWUSER, "/proc/sys/user/max_user_namespaces"},
               {CLONE_NEWNS, "/proc/sys/user/max_mnt_namespaces"},
               {CLONE_NEWPID, "/proc/sys/user/max_pid_namespaces"},
               {CLONE_NEWNET, "/proc/sys/user/max_net_namespaces"},
               {CLONE_NEWIPC, "/proc/sys/user/max_ipc_namespaces"},
               {CLONE_NEWUTS, "/proc/sys/user/max_uts_namespaces"},
               {CLONE_NEWCGROUP, "/proc/sys/user/max_cgroup_namespaces"}};
  for (const auto& kind : kinds) {
    if ((clone_flags & kind.flag) != 0 && read_first_line(kind.sysctl) == "0") return true;
  }
  return false;
}

std::string probe_namespaces() {
  constexpr std::size_t kStack = 16 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return "mmap failed";
  const int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                    CLONE_NEWCGROUP | CLONE_NEWNET | CLONE_VM | CLONE_VFORK | SIGCHLD;
  pid_t pid = ::clone(probe_child, static_cast<char*>(stack) + kStack, flags, nullptr);
  int err = errno;
  std::string result;
  if (pid > 0) {
    int status = 0;
    while (::waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
    }
  } else {
    result = explain_namespace_failure(err);
  }
  ::munmap(stack, kStack);
  return result;
}

const Features& features() {
  static const Features probed = probe();
  return probed;
}

}  // namespace paddock::sandbox
