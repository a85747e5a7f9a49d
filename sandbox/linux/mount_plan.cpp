// The mount half of the plan: the layout the child builds (child_plan.hpp), in order.
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "paddock/errors.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/change_set_standins.hpp"
#include "sandbox/git_home_config.hpp"
#include "sandbox/linux/mount_rules.hpp"
#include "sandbox/linux/own_mounts.hpp"
#include "sandbox/linux/plan_builder.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

// Stand-ins for missing denyWrite paths per command (a mount each).
constexpr std::size_t kMaxStandIns = 256;

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

}  // namespace

// The layout, in order: detached copies of everything a cover would hide; the host read-only;
// fresh /proc, minimal /sys and /dev, private /tmp; then the policy's rules shallow to deep
// (so a deeper rule wins over a shallower one); last, our tmpfs covers sealed read-only.
void SandboxPlan::plan_mounts(const SandboxContext& context, const std::string& cwd,
                              const std::string& program) {
  const SandboxPolicy& policy = *policy_;
  ResolvedFilesystem fs = resolve_filesystem(policy.filesystem, cwd, context.home());
  // Identities below a writable root come from the tree the policy scanned (root_views.hpp).
  roots_ = fs.roots;
  const RootViews::Active through_roots(roots_.get());
  // The working directory was identified by name before its root was opened (by name once
  // more, in resolve_filesystem): two directories exchanged in between (RENAME_EXCHANGE, no
  // symlink needed) would have the policy scan one and the child attach the other, the
  // identified one, unprotected (hostile review). Seen through the roots it must be the same.
  if (child_.cwd.ino != 0) {
    const PathIdentity seen = capture_identity(cwd);
    if (seen.dev != child_.cwd.dev || seen.ino != child_.cwd.ino) {
      throw Error(errc::spawn_failed, "working directory " + cwd +
                                          ": replaced while the sandbox was planned; try again");
    }
  }
  missing_ = fs.protected_missing;
  audit_.protected_missing = fs.protected_missing;
  audit_.protected_existing = std::move(fs.protected_existing);
  audit_.git = std::move(fs.git);
  audit_.roots = roots_;
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

  const OwnMounts own(fs.private_tmp, fs.rules);
  private_tmp_ = own.private_tmp();
  show_start_points(fs, own, cwd, program);

  // 1. Copies taken while the host tree is still whole.
  std::vector<int> device_slot;
  for (const char* dev : kDevices) {
    int slot = take_slot();
    op(MountStep::clone_tree, std::string("/dev/") + dev, {}, true).slot = slot;
    device_slot.push_back(slot);
  }
  std::vector<std::pair<std::string, int>> sysfs_slot;
  for (const char* dir : kHostSysfs) {
    if (!own.sys() || !paths::is_real_directory(dir)) continue;
    int slot = take_slot();
    op(MountStep::clone_tree, dir, {}, true).slot = slot;
    sysfs_slot.emplace_back(dir, slot);
  }
  // Writable directories get a copy-on-write layer each (change sets): the command's writes
  // wait in the store until paddock applies them after it exits (change_apply.hpp).
  std::vector<std::string> layered;
  if (policy.filesystem.change_sets) {
    for (const PathRule& r : fs.rules) {
      if (r.exists && r.is_dir && r.access == PathAccess::writable) {
        layered.push_back(r.path);
      }
    }
  }
  if (!layered.empty()) {
    const std::string store = change_store(policy.filesystem.change_store, context.home(), layered);
    ChangeSetInfo proto;
    proto.roots = layered;
    const bool made_ahead = making_ == ChangeSetMaking::made_ahead;
    proto.command = made_ahead ? "" : program.empty() ? "(shell)" : program;
    if (made_ahead) proto.state = "waiting";
    proto.cwd = cwd;
    proto.homes = fs.homes;
    for (const PathRule& r : fs.rules) {
      if (r.access == PathAccess::read_only) proto.deny_write.push_back(r.path);
    }
    for (const auto& path : fs.protected_missing) proto.deny_write.push_back(path);
    proto.deny_write_patterns = fs.deny_write_patterns;
    // A denyWrite path that does not exist yet fails at once in the sandbox, not only when
    // the set is applied: a stand-in is made in the layer (below, bound read-only). One below
    // another needs none (the one above already stops it).
    for (const auto& path : fs.deny_write_missing) {
      // Each costs a mount, and the init reads back the whole mount table: past a bound the
      // rest are held back only when the set is applied (documented in sandbox/README.md).
      if (proto.placeholders.size() >= kMaxStandIns) break;
      const bool covered = std::any_of(proto.placeholders.begin(), proto.placeholders.end(),
                                       [&](const std::string& p) { return paths::below(path, p); });
      if (!covered) proto.placeholders.push_back(path);
    }
    store_ = store;
    audit_.change_store = store;
    if (making_ == ChangeSetMaking::on_demand) {
      // Stamped now, before anything of the host below is looked at (identities, names):
      // whatever the host changes from here on is a change made during the command.
      stamp_change_set_start(proto, store);
      plan_placeholders(proto);
      planned_set_ = std::move(proto);
    } else {
      change_set_ = std::make_shared<ChangeSetInfo>(create_change_set(store, std::move(proto)));
      audit_.change_set = change_set_;
    }
    // What the audit after the command would look for below a layered root cannot be there:
    // the command never wrote the host's tree. The change set is judged instead.
    auto layered_path = [&](const std::string& path) {
      return std::any_of(layered.begin(), layered.end(),
                         [&](const std::string& root) { return paths::within(path, root); });
    };
    std::erase_if(audit_.protected_missing, layered_path);
    std::erase_if(audit_.protected_existing,
                  [&](const ResolvedFilesystem::Identity& id) { return layered_path(id.path); });
    std::erase_if(missing_, layered_path);
  }
  auto layer_of = [&](const std::string& path) -> int {
    auto it = std::find(layered.begin(), layered.end(), path);
    return it == layered.end() ? -1 : static_cast<int>(it - layered.begin());
  };
  auto under_layer = [&](const std::string& path) {
    return std::any_of(layered.begin(), layered.end(),
                       [&](const std::string& root) { return paths::within(path, root); });
  };

  std::vector<int> rule_slot(fs.rules.size(), -1);
  for (std::size_t i = 0; i < fs.rules.size(); ++i) {
    const PathRule& r = fs.rules[i];
    if (!r.exists) continue;
    if (r.access == PathAccess::writable || r.access == PathAccess::allow_read) {
      rule_slot[i] = take_slot();
      const int layer = r.access == PathAccess::writable ? layer_of(r.path) : -1;
      if (layer >= 0) {
        // The layers' directories are the set's; a set made later puts them in then.
        MountOp& m =
            op(MountStep::overlay_root, r.path,
               change_set_ ? change_set_->upper(static_cast<std::size_t>(layer)) : std::string(),
               true);
        m.slot = rule_slot[i];
        if (change_set_) m.work = keep(change_set_->work(static_cast<std::size_t>(layer)));
        overlay_ops_.emplace_back(mounts_.size() - 1, static_cast<std::size_t>(layer));
      } else {
        op(MountStep::clone_tree, r.path, {}, true).slot = rule_slot[i];
      }
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
  if (own.sys()) op(MountStep::tmpfs, "/sys", "mode=0755,size=64k,nr_inodes=64");
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

  // 5. /tmp and /var/tmp: the host's entries shown read-only below private writes (an
  // overlay), as srt shows the host's /tmp read-only; a plain empty tmpfs where the kernel
  // refuses the overlay (child_plan.hpp). A denied path inside is made in the upper layer
  // (MountStep::hide below), by name: nothing is mounted by path through the host's live tree.
  for (const auto& tmp : private_tmp_) {
    op(MountStep::overlay, tmp, tmpfs_options(policy.limits, tmp == "/tmp" ? 2 : 1));
  }
  auto below_overlay = [&](const std::string& path) {
    return std::any_of(private_tmp_.begin(), private_tmp_.end(),
                       [&](const std::string& tmp) { return paths::below(path, tmp); });
  };
  // The change store is hidden: it holds other commands' pending changes (other workspaces'
  // files) and this command's own layers.
  std::string hidden_store;
  if (change_set_ || planned_set_) {
    hidden_store = audit_.change_store;
    if (below_overlay(hidden_store)) {
      op(MountStep::hide, hidden_store).is_dir = true;
      hidden_store.clear();
    }
  }

  // A hidden home gets a ~/.gitconfig of its own with only the host's settings that hold no
  // secret (git_home_config.hpp), unless a rule shows the home's own file there.
  std::vector<std::pair<std::string, std::string>> identity_files;
  for (std::size_t i = 0; i < fs.own_homes && i < fs.homes.size(); ++i) {
    const std::string& home = fs.homes[i];
    const std::string file = home + "/.gitconfig";
    const bool hidden = std::any_of(fs.hidden_homes.begin(), fs.hidden_homes.end(),
                                    [&](const std::string& h) { return paths::within(home, h); });
    if (!hidden || !own.under_cover(file) || own.under_exposure(file) || own.attached_at(file)) {
      continue;
    }
    std::string text = git_home_config(home);
    if (!text.empty()) identity_files.emplace_back(file, std::move(text));
  }
  // Something is shown below `dir`: a re-exposed path or an identity file.
  auto shows_below = [&](const std::string& dir) {
    return std::any_of(
               fs.rules.begin(), fs.rules.end(),
               [&](const PathRule& o) {
                 return o.exists && paths::below(o.path, dir) &&
                        (o.access == PathAccess::allow_read || o.access == PathAccess::writable);
               }) ||
           std::any_of(identity_files.begin(), identity_files.end(),
                       [&](const auto& f) { return paths::below(f.first, dir); });
  };

  // 6. The policy, shallow to deep, with the directories between a writable root and a
  // protected path inside it pinned (else `mv .git x; mkdir -p .git/hooks` would sidestep
  // the read-only `.git/hooks`, which moves along with its parent).
  std::vector<std::string> pins = directories_to_pin(fs);
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (depth, index); pins after rules
  for (std::size_t i = 0; i < fs.rules.size(); ++i)
    order.emplace_back(paths::depth(fs.rules[i].path), i);
  for (std::size_t i = 0; i < pins.size(); ++i) {
    order.emplace_back(paths::depth(pins[i]), fs.rules.size() + i);
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
    // Under a cover of ours (a hidden directory, /dev, /sys) the host's path is not there to
    // hide or protect; only re-exposures are attached into it. Under the overlaid /tmp it is
    // there to read: a denied one is hidden in the upper layer; writes are private anyway.
    if ((r.access == PathAccess::deny_read || r.access == PathAccess::read_only) &&
        own.under_cover(r.path) && !own.under_exposure(r.path)) {
      if (r.access == PathAccess::deny_read && below_overlay(r.path)) {
        MountOp& m = op(MountStep::hide, r.path);
        m.is_dir = r.is_dir;
        m.passable = r.is_dir && shows_below(r.path);
      }
      continue;
    }
    switch (r.access) {
      case PathAccess::deny_read:
        if (r.is_dir) {
          // Empty and mode 000: listing it fails with EACCES for everyone in the sandbox.
          // With a path re-exposed below it (`denyRead: ~`, `allowRead: ~/proj`), search only
          // (0111): the way down to what is allowed passes, listing still fails, and every
          // other name is absent (git walking up from ~/proj finds no ~/.git, and goes on).
          // A hidden home is a new, empty home instead (0555): what it lacks is absent
          // (ENOENT), as on a machine the tools never ran on. EACCES there made git warn on
          // every run ("unable to access ~/.config/git/ignore"), and other tools fail where
          // a missing file is normal. Its listing names only the directories made for what
          // shows below it (the tmpfs holds them).
          const bool exposes = shows_below(r.path);
          const bool home = std::strcmp(r.origin, kHiddenHomeOrigin) == 0;
          const char* options = home       ? "mode=0555,size=64k,nr_inodes=256"
                                : !exposes ? "mode=000,size=4k"
                                           : "mode=0111,size=4k";
          op(MountStep::tmpfs, r.path, options, true);
          deny_dirs.push_back(r.path);
        } else {
          op(MountStep::cover_file, r.path, kDeniedFile, true);
        }
        break;
      case PathAccess::allow_read:
      case PathAccess::writable: {
        const bool create = own.under_cover(r.path);
        // On a cover of ours itself (`allowWrite: /tmp` over the private /tmp) the target is
        // our mount, not the host object: nothing to verify there.
        const bool on_cover = own.is_cover(r.path);
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
  if (!hidden_store.empty() && !own.under_cover(hidden_store)) {
    op(MountStep::tmpfs, hidden_store, "mode=000,size=4k", true);
    deny_dirs.push_back(hidden_store);
  }
  if (const ChangeSetInfo* set = change_set_ ? change_set_.get() : planned_change_set()) {
    // The stand-ins of missing denyWrite paths, once their root's overlay is attached (above):
    // the directories made for them pinned (a mount point cannot be renamed or removed, so the
    // stand-in stays at its name), then each stand-in bound read-only onto itself: creating,
    // writing, replacing or removing the name fails (EEXIST, EROFS, EBUSY).
    for (const auto& dir : set->placeholder_dirs) op(MountStep::pin, dir);
    for (const auto& file : set->placeholders) op(MountStep::bind_readonly, file);
  }
  for (auto& [file, text] : identity_files) op(MountStep::create_file, file, std::move(text));
  for (const auto& dir : deny_dirs) op(MountStep::seal_readonly, dir);
  if (covers_files) op(MountStep::remove_file, kDeniedFile);
  // After our /dev, /sys, /tmp and /var/tmp are mounted, a path at or below one is ours, not
  // the host's (`denyRead: /tmp` covers the private /tmp), unless a writable or readable rule
  // attached the host's tree back there. The copies were taken before: they stay verified.
  for (MountOp& m : mounts_) {
    if (m.step != MountStep::clone_tree && m.host.ino != 0 && own.ours(m.path)) m.host = {};
  }
  // Below a layered root the child sees the overlay, not the host's objects: it finds those
  // paths without following a link, but their identities are the overlay's (the overlay
  // itself was made from the verified host directory, and only paddock writes the host's
  // tree there until the command has exited).
  for (MountOp& m : mounts_) {
    if (m.step == MountStep::overlay_root || m.step == MountStep::clone_tree) continue;
    const bool on_own_root = m.step == MountStep::attach_clone && layer_of(m.path) >= 0 &&
                             std::none_of(layered.begin(), layered.end(), [&](const auto& root) {
                               return paths::below(m.path, root);
                             });
    if (!on_own_root && under_layer(m.path)) m.host = {};
  }
  layered_ = layered;
  // A working directory on a mount of ours (a run from /tmp itself, which is private, or from
  // /proc) is entered there: the host object is not there to verify.
  if (own.ours(cwd) || under_layer(cwd)) child_.cwd = PathIdentity{};
  op(MountStep::seal_readonly, "/dev");
  if (own.sys()) op(MountStep::seal_readonly, "/sys");
}

}  // namespace paddock::sandbox
