// `paddock doctor [--json]`: what this kernel offers and what degrades without it.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli/commands.hpp"
#include "paddock/runtime.hpp"
#include "process/init_image.hpp"
#include "process/syscalls.hpp"
#include "sandbox/linux/features.hpp"
#include "sandbox/linux/netns_pool.hpp"

namespace paddock::cli {
namespace {

struct Check {
  std::string name;
  bool ok;
  std::string detail;     // what it is / what degrades
  bool degraded = false;  // works, with less than the full protection
};

void add_sandbox_checks(std::vector<Check>& checks) {
  const auto& k = sandbox::features();
  const std::string namespaces_error = sandbox::probe_namespaces();
  const bool namespaces = namespaces_error.empty();
  checks.push_back({"namespaces", namespaces,
                    namespaces ? "user, mount, PID, IPC, UTS, cgroup and network namespaces"
                               : namespaces_error +
                                     " -- without them every command is refused (strict) or "
                                     "runs UNSANDBOXED (fallback warn)"});
  if (namespaces) {
    const sandbox::NetnsLease lease = sandbox::lease_network_namespace();
    const bool pooled = lease.fd() >= 0;
    checks.push_back(
        {"network ns", true,
         !pooled ? "one new namespace per command (+~0.5 ms): none could be made ahead here"
         : lease.user_namespace() >= 0
             ? "commands reuse pooled namespaces, kept in a user namespace of paddock's own"
             : "commands reuse pooled namespaces (setns around the clone)",
         !pooled});
  }
  checks.push_back({"mount API", k.mount_api,
                    k.mount_api ? "open_tree/move_mount/mount_setattr: read-only host, "
                                  "re-exposed paths"
                                : "missing (Linux < 5.12): the filesystem policy cannot be built"});
  checks.push_back({"seccomp", k.seccomp,
                    k.seccomp ? "filter applied last: no new namespaces, mount, ptrace, bpf, "
                                "io_uring, AF_UNIX/AF_VSOCK sockets, TIOCSTI ..."
                              : k.seccomp_error});
  const bool full_landlock = k.landlock_abi >= 6;
  Check landlock{"Landlock", true, "", !full_landlock};
  if (k.landlock_abi == 0) {
    landlock.detail = k.landlock_error +
                      " -- second filesystem/network layer missing; the "
                      "mount layer alone enforces the policy";
  } else {
    landlock.detail = "ABI " + std::to_string(k.landlock_abi) + ": writes only in writable roots";
    landlock.detail +=
        k.landlock_abi >= 4 ? ", TCP bind/connect rules" : " (no TCP rules: ABI < 4)";
    landlock.detail += k.landlock_abi >= 6 ? ", abstract unix sockets and signals scoped"
                                           : " (no scoping of abstract sockets/signals: ABI < 6)";
  }
  checks.push_back(landlock);
  checks.push_back({"process limit", true,
                    k.per_namespace_pid_max
                        ? "RLIMIT_NPROC per sandbox, plus the PID namespace's pid_max (binds a "
                          "root supervisor too)"
                        : "RLIMIT_NPROC only (Linux < 6.14 has no per-namespace pid_max): not "
                          "enforced when the supervisor is root",
                    !k.per_namespace_pid_max});
  checks.push_back(
      {"cgroup v2", true,
       k.cgroup_detail + (k.cgroup2_delegated ? ""
                                              : " -- limits are rlimits only (memory as address "
                                                "space, no memory.max / pids.max / cgroup.kill)"),
       !k.cgroup2_delegated});
  // What no layer bounds today, said plainly rather than implied.
  checks.push_back({"not bounded", true,
                    "memory: RLIMIT_AS is per process (many processes each get the limit); the "
                    "private writes to /tmp, /var/tmp and /dev/shm (a copy of a host file written "
                    "there included) share the memory limit between them, and without one each "
                    "may take half the RAM; "
                    "kernel memory (sockets, pipes, page tables) is not bounded; disk space and "
                    "inodes in the writable roots are not bounded",
                    true});
}

std::vector<Check> run_checks() {
  std::vector<Check> checks;
  utsname u{};
  ::uname(&u);
  checks.push_back({"kernel", true, std::string(u.sysname) + " " + u.release + " " + u.machine});

  // The CLI is one short-lived process: it runs on epoll (CMakeLists.txt says why). What matters
  // to an embedder or a long-lived process is whether the library's backend works here.
  auto io = probe_io_backend();
  checks.push_back(
      {"event backend", io.usable,
       io.usable ? io.backend + " (this CLI; one-shot runs need no io_uring ring)" : io.problem});
  if (std::string_view(PADDOCK_LIBRARY_BACKEND) == "io_uring") {
    auto ring = probe_io_uring();
    checks.push_back({"libpaddock backend", ring.usable,
                      ring.usable ? "io_uring (compiled in, a full ring fits now)" : ring.problem});
  }

  int pidfd = sys::pidfd_open(::getpid());
  checks.push_back({"pidfd", pidfd >= 0,
                    pidfd >= 0 ? "pidfd_open works: exits are watched without SIGCHLD"
                               : "pidfd_open failed: paddock needs Linux >= 5.3"});
  if (pidfd >= 0) ::close(pidfd);

  const int init = process::init_image_fd();
  checks.push_back(
      {"paddock-init", init >= 0,
       init >= 0 ? "PID 1 of every sandbox: commands get their signals (SIGTERM, SIGPIPE, ...)"
                 : std::string("no executable memfd (") + std::strerror(errno) +
                       "; vm.memfd_noexec=2?): commands run as PID 1 of their namespace and "
                       "ignore signals they have no handler for"});

  int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  bool close_range_ok = probe >= 0 && sys::close_range(static_cast<unsigned>(probe),
                                                       static_cast<unsigned>(probe)) == 0;
  checks.push_back({"close_range", close_range_ok,
                    close_range_ok ? "children get only fds 0-2"
                                   : "close_range failed: paddock needs Linux >= 5.9"});

  if (std::string_view(PADDOCK_LIBRARY_BACKEND) == "io_uring") {
    // Asio 1.22's ring (16,384 entries) locks ~2 MiB, charged to RLIMIT_MEMLOCK unless the
    // user has CAP_IPC_LOCK: that bounds how many paddock processes one user can run at once.
    rlimit memlock{};
    ::getrlimit(RLIMIT_MEMLOCK, &memlock);
    constexpr rlim_t kRingBytes = 2048 * 1024;  // measured as nobody: 1.5 MiB fails, 2 MiB fits
    const bool unlimited = memlock.rlim_cur == RLIM_INFINITY || ::geteuid() == 0;
    const rlim_t loops = unlimited ? 0 : memlock.rlim_cur / kRingBytes;
    checks.push_back({"RLIMIT_MEMLOCK", unlimited || loops >= 1,
                      unlimited ? "not a constraint here (root or unlimited)"
                                : std::to_string(memlock.rlim_cur / 1024) + " KiB: about " +
                                      std::to_string(loops) +
                                      " io_uring event loops (embedding processes) at once for "
                                      "this user (the CLI needs none); raise it with ulimit -l"});
  }

  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  bool enough = lim.rlim_max >= 3 * 1000 + 64;
  checks.push_back({"RLIMIT_NOFILE", enough,
                    "hard limit " + std::to_string(lim.rlim_max) + ": about " +
                        std::to_string(lim.rlim_max / 3) +
                        " commands can be supervised at once (3 fds each)"});
  add_sandbox_checks(checks);
  return checks;
}

}  // namespace

std::function<int()> add_doctor_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("doctor", "Report kernel features and what is degraded");
  cmd->add_flag("--json", *json, "One JSON object");
  return [json] {
    auto checks = run_checks();
    bool all_ok = true;
    for (const auto& c : checks) all_ok = all_ok && c.ok;
    if (*json) {
      nlohmann::json out;
      out["ok"] = all_ok;
      for (const auto& c : checks)
        out["checks"].push_back(
            {{"name", c.name}, {"ok", c.ok}, {"degraded", c.degraded}, {"detail", c.detail}});
      std::printf("%s\n", out.dump().c_str());
    } else {
      for (const auto& c : checks) {
        const char* status = !c.ok ? "FAIL" : c.degraded ? "warn" : "ok";
        std::printf("%-4s %-18s %s\n", status, c.name.c_str(), c.detail.c_str());
      }
    }
    return all_ok ? 0 : kExitPaddockFailed;
  };
}

}  // namespace paddock::cli
