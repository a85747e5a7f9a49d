#include "sandbox/linux/plan_builder.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "paddock/errors.hpp"
#include "sandbox/linux/landlock_abi.hpp"
#include "sandbox/linux/path_identity.hpp"
#include "sandbox/path_policy.hpp"

namespace paddock::sandbox {
namespace {

// Device nodes of the minimal /dev, bound from the host's.
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};

// What the sandbox's /sys shows of the host's (read-only; the rest of /sys is an empty tmpfs
// of ours). A fresh sysfs is only possible in a network namespace the sandbox's user
// namespace owns, and even then it shows the host's firmware (ACPI tables, DMI: readable by a
// root-mapped command), kernel and cgroup trees; a pooled namespace or an allowed network
// leaves the host's whole /sys, NICs included. Ordinary programs read only these (traced):
// glibc's sysconf(_SC_NPROCESSORS_ONLN/CONF) and get_nprocs read cpu/online and list cpu/;
// libuv (node) cpu*/cpufreq; lscpu and libnuma node/; JVMs, Go and jemalloc size their heaps
// from transparent_hugepage. Missing ones (no sysfs on the host) are left out.
constexpr const char* kHostSysfs[] = {"/sys/devices/system/cpu", "/sys/devices/system/node",
                                      "/sys/kernel/mm/transparent_hugepage"};

// The source of every denied file's cover: made in our /dev tmpfs, bound over each denied
// file, then unlinked before /dev is sealed (the covers keep the inode).
constexpr const char* kDeniedFile = "/dev/.paddock-denied";

bool is_under(const std::string& path, const std::string& dir) {
  if (dir == "/") return path.size() > 1 && path.front() == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::size_t depth(const std::string& path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool is_real_directory(const char* path);

// Existing directories strictly between a protected path (read-only rule, or missing path
// watched after the command) and the writable root it lies in, minus those a rule already
// mounts on.
std::vector<std::string> directories_to_pin(const ResolvedFilesystem& fs) {
  std::vector<std::string> roots, mounted;
  for (const auto& r : fs.rules) {
    mounted.push_back(r.path);
    if (r.access == PathAccess::writable) roots.push_back(r.path);
  }
  auto deepest_root = [&roots](const std::string& path) -> const std::string* {
    const std::string* best = nullptr;
    for (const auto& root : roots) {
      if (is_under(path, root) && (best == nullptr || root.size() > best->size())) best = &root;
    }
    return best;
  };
  std::vector<std::string> pins;
  auto pin_above = [&](const std::string& path) {
    const std::string* root = deepest_root(path);
    if (root == nullptr) return;
    for (std::string dir = parent_of(path); is_under(dir, *root); dir = parent_of(dir)) {
      if (std::find(pins.begin(), pins.end(), dir) != pins.end()) continue;
      if (std::find(mounted.begin(), mounted.end(), dir) != mounted.end()) continue;
      if (is_real_directory(dir.c_str())) pins.push_back(dir);
    }
  };
  for (const auto& r : fs.rules) {
    // Renaming a parent away would make the rule miss on the next run (and for runs in the
    // same root at the same time): read-only and hidden paths alike.
    if (r.access == PathAccess::read_only || r.access == PathAccess::deny_read) pin_above(r.path);
  }
  for (const auto& path : fs.protected_missing) pin_above(path);
  for (const auto& link : fs.protected_links) {
    pin_above(link);
    if (std::find(pins.begin(), pins.end(), link) == pins.end() &&
        std::find(mounted.begin(), mounted.end(), link) == mounted.end()) {
      pins.push_back(link);  // the link itself (pinned without being followed)
    }
  }
  return pins;
}

bool is_real_directory(const char* path) {
  struct stat st;
  return ::lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// A private tmpfs is memory that RLIMIT_AS does not see. With a memory limit the three of
// them (/tmp, /var/tmp, /dev/shm) share it: `share` of `kTmpfsShares` each, so together they
// hold at most the limit (each alone at the limit would triple it). Without a limit, the
// kernel's default (half of RAM each). Inodes bounded too, so a command cannot pin kernel
// memory with millions of empty files.
constexpr std::uint64_t kTmpfsShares = 4;  // /tmp 2, /var/tmp 1, /dev/shm 1
std::string tmpfs_options(const ResourceLimits& limits, std::uint64_t share) {
  std::string options = "mode=1777,nr_inodes=" + std::to_string(262144 * share);
  if (limits.memory_bytes > 0) {
    options += ",size=" + std::to_string(std::max<std::uint64_t>(
                              limits.memory_bytes / kTmpfsShares * share, 1 << 20));
  }
  return options;
}

std::string home_directory() {
  const char* home = std::getenv("HOME");
  return home != nullptr && home[0] == '/' ? home : "/";
}

}  // namespace

SandboxContext::SandboxContext(SandboxPolicy policy)
    : policy_(std::move(policy)), features_(&features()), home_(home_directory()) {
  const Features& k = *features_;
  std::string missing;
  errc code = errc::unsupported_platform;
  if (!k.mount_api) {
    missing = "the mount API (open_tree, move_mount, mount_setattr: Linux 5.12+) is missing";
  } else if (!k.seccomp) {
    missing = k.seccomp_error;
  }
  if (missing.empty()) {
    SeccompOptions options;
    options.allow_unix_sockets =
        policy_.network.allow_all_unix_sockets || !policy_.network.allow_unix_sockets.empty();
    try {
      seccomp_ = std::make_unique<SeccompProgram>(build_seccomp_program(options));
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

PathIdentity SandboxPlan::identity(const std::string& path) {
  auto it = identities_.find(path);
  if (it != identities_.end()) return it->second;
  PathIdentity id = capture_identity(path);
  identities_.emplace(path, id);
  return id;
}

const char* SandboxPlan::keep(std::string s) {
  strings_.push_back(std::move(s));
  return strings_.back().c_str();
}

SandboxPlan::SandboxPlan(const SandboxContext& context, const std::string& cwd,
                         const PathIdentity& cwd_identity, const std::string& program) {
  const SandboxPolicy& policy = context.policy();
  clone_flags_ =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (policy.network.mode != NetworkMode::allowed) {
    netns_ = lease_network_namespace();
    if (netns_.fd() < 0) clone_flags_ |= CLONE_NEWNET;
  }

  child_.uid_map = keep(std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1");
  child_.gid_map = keep(std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1");
  child_.cwd = identity(cwd);
  if (cwd_identity.ino != 0 &&
      (child_.cwd.dev != cwd_identity.dev || child_.cwd.ino != cwd_identity.ino)) {
    throw Error(errc::spawn_failed,
                "working directory " + cwd + ": replaced while the sandbox was planned; try again");
  }
  plan_mounts(context, cwd, program);
  plan_limits(policy.limits);
  plan_landlock(context);

  child_.mounts = mounts_.data();
  child_.mount_count = mounts_.size();
  child_.slot_count = slots_;
  child_.hostname = keep(policy.hostname);
  child_.hostname_len = policy.hostname.size();
  child_.loopback_up = (clone_flags_ & CLONE_NEWNET) != 0;
  child_.proxy_handoff_fd = -1;
  child_.proxy_port = kSandboxProxyPort;
  child_.rlimits = rlimits_.data();
  child_.rlimit_count = rlimits_.size();
  child_.landlock_rules = landlock_rules_.data();
  child_.landlock_rule_count = landlock_rules_.size();
  child_.cap_last_cap = context.kernel().cap_last_cap;
  child_.seccomp = context.seccomp() != nullptr ? context.seccomp()->fprog() : nullptr;
}

// The layout, in order: detached copies of everything a cover would hide; the host read-only;
// fresh /proc, minimal /sys and /dev, private /tmp; then the policy's rules shallow to deep (so a deeper
// rule wins over a shallower one); last, our tmpfs covers sealed read-only.
void SandboxPlan::plan_mounts(const SandboxContext& context, const std::string& cwd,
                              const std::string& program) {
  const SandboxPolicy& policy = context.policy();
  ResolvedFilesystem fs = resolve_filesystem(policy.filesystem, cwd, context.home());
  missing_ = fs.protected_missing;
  audit_ = {fs.protected_missing, std::move(fs.protected_existing), std::move(fs.git)};
  for (const auto& rule : fs.rules) {
    // The policy resolves the cwd by name once more: a symlink swapped in since the cwd was
    // resolved would make it name another directory (identities are captured from this path).
    if (rule.access == PathAccess::writable && std::strcmp(rule.origin, "working directory") == 0 &&
        rule.path != cwd) {
      throw Error(errc::spawn_failed, "working directory " + cwd +
                                          ": replaced while the sandbox was planned; try again");
    }
  }
  for (const auto& rule : fs.rules) {
    if (rule.exists && rule.access == PathAccess::writable) writable_.push_back(rule.path);
  }

  // `host`: a host object the child must find again at `path` (see path_identity.hpp).
  auto op = [this](MountStep step, std::string path, std::string data = {},
                   bool host = false) -> MountOp& {
    MountOp m{};
    if (host) m.host = identity(path);
    m.step = step;
    m.path = keep(std::move(path));
    m.data = data.empty() ? nullptr : keep(std::move(data));
    m.slot = -1;
    mounts_.push_back(m);
    return mounts_.back();
  };
  auto take_slot = [this] {
    if (slots_ >= kMaxCloneSlots) {
      throw Error(errc::config_invalid, "filesystem: more than " + std::to_string(kMaxCloneSlots) +
                                            " re-exposed paths in one policy");
    }
    return slots_++;
  };

  // Covers we mount: anything below one of them is created in our tmpfs, never on the host.
  std::vector<std::string> covers = {"/dev", "/sys"};
  if (policy.filesystem.private_tmp) {
    covers.push_back("/tmp");
    if (is_real_directory("/var/tmp")) covers.push_back("/var/tmp");
  }
  for (const auto& rule : fs.rules) {
    if (rule.exists && rule.is_dir && rule.access == PathAccess::deny_read) {
      covers.push_back(rule.path);
    }
  }
  auto under_cover = [&covers](const std::string& path) {
    return std::any_of(covers.begin(), covers.end(),
                       [&](const std::string& c) { return is_under(path, c); });
  };
  // Inside a path attached back into a cover (a writable root under /tmp): the host's tree
  // is visible there again, so rules below it apply.
  auto under_exposure = [&fs, &under_cover](const std::string& path) {
    return std::any_of(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
      return r.exists && (r.access == PathAccess::writable || r.access == PathAccess::allow_read) &&
             under_cover(r.path) && is_under(path, r.path);
    });
  };

  // A working directory hidden by a cover of ours (a read-only run from a checkout under
  // /tmp): shown again, read-only, so the command starts where it was asked to start. Inside
  // a denied directory it stays hidden: the run is refused.
  const bool cwd_exposed = std::any_of(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
    return r.exists && r.path == cwd &&
           (r.access == PathAccess::writable || r.access == PathAccess::allow_read);
  });
  if (under_cover(cwd) && !cwd_exposed && !under_exposure(cwd)) {
    for (const auto& r : fs.rules) {
      if (r.exists && r.is_dir && r.access == PathAccess::deny_read && is_under(cwd, r.path)) {
        throw Error(errc::config_invalid, "working directory " + cwd + ": inside the denied path " +
                                              r.path + "; run it from elsewhere (--cwd)");
      }
    }
    PathRule shown{cwd, PathAccess::allow_read, true, true, "working directory"};
    auto at = std::find_if(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
      return depth(r.path) > depth(cwd);
    });
    fs.rules.insert(at, shown);
  }

  // The program itself, when it lies under the private /tmp or /var/tmp and nothing shows
  // it (a tool or test binary built in a checkout under /tmp): the file alone, read-only, so
  // execve finds what the caller named. Inside a denied directory it stays hidden.
  if (!program.empty() && policy.filesystem.private_tmp) {
    char* real = ::realpath(program.c_str(), nullptr);
    const std::string file = real != nullptr ? real : "";
    std::free(real);
    const bool shown = std::any_of(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
      return r.exists && r.path == file &&
             (r.access == PathAccess::writable || r.access == PathAccess::allow_read);
    });
    const bool in_tmp = is_under(file, "/tmp") || is_under(file, "/var/tmp");
    const bool denied = std::any_of(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
      return r.exists && r.access == PathAccess::deny_read && (r.path == file || is_under(file, r.path));
    });
    if (!file.empty() && in_tmp && !shown && !under_exposure(file) && !denied &&
        !is_real_directory(file.c_str())) {
      PathRule exe{file, PathAccess::allow_read, true, false, "program"};
      auto at = std::find_if(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
        return depth(r.path) > depth(file);
      });
      fs.rules.insert(at, exe);
    }
  }

  // 1. Copies taken while the host tree is still whole.
  std::vector<int> device_slot;
  for (const char* dev : kDevices) {
    int slot = take_slot();
    op(MountStep::clone_tree, std::string("/dev/") + dev, {}, true).slot = slot;
    device_slot.push_back(slot);
  }
  std::vector<std::pair<std::string, int>> sysfs_slot;
  for (const char* dir : kHostSysfs) {
    if (!is_real_directory(dir)) continue;
    int slot = take_slot();
    op(MountStep::clone_tree, dir, {}, true).slot = slot;
    sysfs_slot.emplace_back(dir, slot);
  }
  std::vector<int> rule_slot(fs.rules.size(), -1);
  for (std::size_t i = 0; i < fs.rules.size(); ++i) {
    const PathRule& r = fs.rules[i];
    if (!r.exists) continue;
    if (r.access == PathAccess::writable || r.access == PathAccess::allow_read) {
      rule_slot[i] = take_slot();
      op(MountStep::clone_tree, r.path, {}, true).slot = rule_slot[i];
    }
  }

  // 2. The host read-only (and nosuid), all of it.
  op(MountStep::readonly_root, "/");

  // 3. /proc of our PID namespace: writable only while we set pid_max, then read-only (as
  // root-in-namespace the command would otherwise pass the owner check on host-global
  // sysctls such as kernel.core_pattern, and on /proc/sysrq-trigger).
  op(MountStep::proc, "/proc");
  if (policy.limits.processes > 0 && context.kernel().per_namespace_pid_max) {
    // pid_max bounds PID values (1..pid_max-1); the kernel's floor is 301.
    auto pid_max = std::max<std::uint64_t>(policy.limits.processes + 1, 301);
    op(MountStep::write_file, "/proc/sys/kernel/pid_max", std::to_string(pid_max));
  }
  op(MountStep::seal_readonly, "/proc");
  // /sys: a tmpfs of ours with the few host directories programs need (kHostSysfs), the
  // same in every network mode. Sealed read-only at the end, with /dev.
  op(MountStep::tmpfs, "/sys", "mode=0755,size=64k,nr_inodes=64");
  for (const auto& [dir, slot] : sysfs_slot) {
    MountOp& m = op(MountStep::attach_clone, dir);
    m.slot = slot;
    m.create = true;
    m.is_dir = true;
    m.writable = false;
  }

  // 4. A minimal /dev: the harmless device nodes, a private pty instance and /dev/shm.
  op(MountStep::tmpfs, "/dev", "mode=0755,size=64k,nr_inodes=64");
  for (std::size_t i = 0; i < std::size(kDevices); ++i) {
    MountOp& m = op(MountStep::attach_clone, std::string("/dev/") + kDevices[i]);
    m.slot = device_slot[i];
    m.create = true;
    // Read-only mounts: device I/O still works, but chmod/utimes on the host's nodes (which a
    // root-mapped sandbox owns) fail.
    m.writable = false;
    m.device = true;
  }
  op(MountStep::make_dir, "/dev/pts");
  op(MountStep::devpts, "/dev/pts");
  op(MountStep::make_symlink, "/dev/ptmx", "pts/ptmx");
  op(MountStep::make_dir, "/dev/shm");
  op(MountStep::tmpfs, "/dev/shm", tmpfs_options(policy.limits, 1));
  op(MountStep::make_symlink, "/dev/fd", "/proc/self/fd");
  op(MountStep::make_symlink, "/dev/stdin", "/proc/self/fd/0");
  op(MountStep::make_symlink, "/dev/stdout", "/proc/self/fd/1");
  op(MountStep::make_symlink, "/dev/stderr", "/proc/self/fd/2");
  const bool covers_files = std::any_of(fs.rules.begin(), fs.rules.end(), [](const PathRule& r) {
    return r.exists && !r.is_dir && r.access == PathAccess::deny_read;
  });
  if (covers_files) op(MountStep::make_file, kDeniedFile);

  // 5. Private /tmp (and /var/tmp).
  if (policy.filesystem.private_tmp) {
    op(MountStep::tmpfs, "/tmp", tmpfs_options(policy.limits, 2));
    if (is_real_directory("/var/tmp"))
      op(MountStep::tmpfs, "/var/tmp", tmpfs_options(policy.limits, 1));
  }

  // 6. The policy, shallow to deep, with the directories between a writable root and a
  // protected path inside it pinned (else `mv .git x; mkdir -p .git/hooks` would sidestep
  // the read-only `.git/hooks`, which moves along with its parent).
  std::vector<std::string> pins = directories_to_pin(fs);
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (depth, index); pins after rules
  for (std::size_t i = 0; i < fs.rules.size(); ++i) order.emplace_back(depth(fs.rules[i].path), i);
  for (std::size_t i = 0; i < pins.size(); ++i) {
    order.emplace_back(depth(pins[i]), fs.rules.size() + i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> deny_dirs;
  for (const auto& [unused_depth, i] : order) {
    if (i >= fs.rules.size()) {
      op(MountStep::pin, pins[i - fs.rules.size()], {}, true);
      continue;
    }
    const PathRule& r = fs.rules[i];
    if (!r.exists) continue;
    // Under a cover of ours (private /tmp, a hidden directory) the host's path is not there
    // to hide or protect; only re-exposures are attached into it.
    if ((r.access == PathAccess::deny_read || r.access == PathAccess::read_only) &&
        under_cover(r.path) && !under_exposure(r.path)) {
      continue;
    }
    switch (r.access) {
      case PathAccess::deny_read:
        if (r.is_dir) {
          // Empty and mode 000: listing it fails with EACCES for everyone in the sandbox.
          op(MountStep::tmpfs, r.path, "mode=000,size=4k", true);
          deny_dirs.push_back(r.path);
        } else {
          op(MountStep::cover_file, r.path, kDeniedFile, true);
        }
        break;
      case PathAccess::allow_read:
      case PathAccess::writable: {
        const bool create = under_cover(r.path);
        // On a cover of ours itself (`allowWrite: /tmp` over the private /tmp) the target is
        // our mount, not the host object: nothing to verify there.
        const bool on_cover = std::find(covers.begin(), covers.end(), r.path) != covers.end();
        MountOp& m = op(MountStep::attach_clone, r.path, {}, !create && !on_cover);
        m.slot = rule_slot[i];
        m.writable = r.access == PathAccess::writable;
        m.create = create;
        m.is_dir = r.is_dir;
        break;
      }
      case PathAccess::read_only:
        op(MountStep::bind_readonly, r.path, {}, true);
        break;
    }
  }
  for (const auto& dir : deny_dirs) op(MountStep::seal_readonly, dir);
  if (covers_files) op(MountStep::remove_file, kDeniedFile);
  // After our /dev, /tmp and /var/tmp are mounted, a path at or below one of them is ours, not
  // the host's (`denyRead: /tmp` covers the private /tmp), unless a writable or readable rule
  // attached the host's tree back there. The copies were taken before: they stay verified.
  std::vector<std::string> own = {"/dev", "/proc", "/sys"};
  if (policy.filesystem.private_tmp) {
    own.push_back("/tmp");
    if (is_real_directory("/var/tmp")) own.push_back("/var/tmp");
  }
  auto in_own = [&](const std::string& path) {
    return std::any_of(own.begin(), own.end(), [&](const std::string& o) {
             return path == o || is_under(path, o);
           }) &&
           !under_exposure(path) &&
           std::none_of(fs.rules.begin(), fs.rules.end(), [&](const PathRule& r) {
             return r.exists && r.path == path &&
                    (r.access == PathAccess::writable || r.access == PathAccess::allow_read);
           });
  };
  for (MountOp& m : mounts_) {
    if (m.step != MountStep::clone_tree && m.host.ino != 0 && in_own(m.path)) m.host = {};
  }
  // A working directory on a mount of ours (a run from /tmp itself, which is private, or from
  // /proc) is entered there: the host object is not there to verify.
  if (in_own(cwd)) child_.cwd = PathIdentity{};
  op(MountStep::seal_readonly, "/dev");
  op(MountStep::seal_readonly, "/sys");
}

void SandboxPlan::plan_limits(const ResourceLimits& limits) {
  auto set = [this](int resource, std::uint64_t value, std::uint64_t hard) {
    // Never above the hard limit we have: an unprivileged child may lower it, not raise it
    // (the policy asks for at most this much, so the host's lower limit also satisfies it).
    struct rlimit now {};
    ::getrlimit(resource, &now);
    RlimitSetting s{};
    s.resource = resource;
    s.value.rlim_max = std::min(static_cast<rlim_t>(hard), now.rlim_max);
    s.value.rlim_cur = std::min(static_cast<rlim_t>(value), s.value.rlim_max);
    rlimits_.push_back(s);
  };
  if (limits.processes > 0) set(RLIMIT_NPROC, limits.processes, limits.processes);
  if (limits.memory_bytes > 0) set(RLIMIT_AS, limits.memory_bytes, limits.memory_bytes);
  if (limits.open_files > 0) set(RLIMIT_NOFILE, limits.open_files, limits.open_files);
  // CPU: SIGXCPU at the limit (catchable, a chance to report), SIGKILL a second later.
  if (limits.cpu_seconds > 0) set(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1);
  if (limits.file_size_bytes > 0) {
    set(RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes);
  }
  set(RLIMIT_CORE, 0, 0);  // no core files of sandboxed programs left on the host
}

// Landlock, the second layer: the whole tree readable and executable, writes only where the
// mounts allow them too, TCP per the network mode, abstract unix sockets and signals scoped
// to the sandbox. (Read denials are the mount layer's: Landlock only grants, so hiding a
// subtree of a readable tree would need a rule for every sibling on the way down.)
void SandboxPlan::plan_landlock(const SandboxContext& context) {
  namespace ll = landlock;
  const int abi = context.kernel().landlock_abi;
  child_.landlock_abi = abi;
  if (abi <= 0) return;
  const SandboxPolicy& policy = context.policy();
  const std::uint64_t handled = ll::fs_rights_for_abi(abi);
  const std::uint64_t read = ll::kExecute | ll::kReadFile | ll::kReadDir;
  const std::uint64_t write =
      (ll::kWriteFile | ll::kRemoveDir | ll::kRemoveFile | ll::kMakeDir | ll::kMakeReg |
       ll::kMakeSock | ll::kMakeFifo | ll::kMakeSym | ll::kRefer | ll::kTruncate) &
      handled;
  child_.landlock_handled_fs = handled;
  auto rule = [this](const std::string& path, std::uint64_t access, bool host = false) {
    landlock_rules_.push_back({keep(path), access, host ? identity(path) : PathIdentity{}});
  };
  rule("/", read);
  rule("/dev", read | ((ll::kWriteFile | ll::kIoctlDev | ll::kTruncate) & handled));
  rule("/dev/shm", read | write);
  if (policy.filesystem.private_tmp) {
    rule("/tmp", read | write);
    if (is_real_directory("/var/tmp")) rule("/var/tmp", read | write);
  }
  for (const auto& root : writable_) rule(root, read | write, true);

  if (abi >= 4 && policy.network.mode == NetworkMode::blocked &&
      !policy.network.allow_local_binding) {
    child_.landlock_handled_net = ll::kBindTcp | ll::kConnectTcp;  // no rule grants any port
  }
  if (abi >= 6) child_.landlock_scoped = ll::kScopeAbstractUnixSocket | ll::kScopeSignal;
}

}  // namespace paddock::sandbox
