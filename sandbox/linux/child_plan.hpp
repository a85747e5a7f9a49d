// The sandbox steps a child runs between clone() and execve(), as plain data. The parent
// builds it (plan_builder.cpp) with every string, number and BPF instruction precomputed;
// child_sandbox.cpp walks it with raw syscalls only (async-signal-safe: no allocation, no
// locks), because the child shares the parent's memory until execve (CLONE_VM | CLONE_VFORK).
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#include "sandbox/linux/path_identity.hpp"

namespace paddock::sandbox {

// One step of the mount layout, in order. Paths are absolute, canonical (host view).
enum class MountStep : std::uint8_t {
  // Detached copy of the tree at `path` into slot `slot` (open_tree OPEN_TREE_CLONE): taken
  // before anything covers it, attached later with attach_clone.
  clone_tree,
  // A writable root seen through a copy-on-write layer, into slot `slot`: a detached overlay
  // (fsopen/fsmount) whose lower layer is the host's directory at `path` (verified), whose
  // upper layer is `data` and work directory `work` (the change set's, in the store). Made
  // while the host is still writable (overlayfs refuses a read-only upper mount) and before
  // anything covers it; attached later with attach_clone, like a clone. The command's writes
  // land in `data`; paddock applies them after it exits (sandbox/change_apply.hpp).
  overlay_root,
  // Every mount read-only and nosuid, recursively (mount_setattr on "/").
  readonly_root,
  // A fresh tmpfs on `path` (`data` = mount options), writable until seal_readonly.
  tmpfs,
  // The host's directory at `path` shown through an overlay whose upper layer is a fresh
  // tmpfs (`data` = its options): the host's entries readable, every write private. The
  // mount points the plan later creates below `path` (attach_clone with `create`) are made
  // in the upper layer first, so no change in the host's tree can redirect them. Where the
  // kernel refuses the overlay (mounts below the host's directory are locked in our user
  // namespace, no overlayfs, a stack too deep) a plain tmpfs, as `tmpfs`: less is shown,
  // nothing more is reachable.
  overlay,
  // A denied path below an overlay (deny_read of a host path under /tmp): made in that
  // overlay's upper layer before it is mounted, so the merged tree has our entry at that name,
  // whatever the host has there: an empty opaque directory or an empty file, mode 000
  // (EACCES, as every other denial). Done by the overlay step; nothing to do at its turn.
  hide,
  // A new proc for the PID namespace on `path`.
  proc,
  // A new devpts instance on `path`.
  devpts,
  // Attach slot `slot` on `path`; `writable` clears read-only on it, otherwise it is made
  // read-only. With `create` the mount point is made first (inside a tmpfs of ours only).
  attach_clone,
  // Bind `path` onto itself, read-only (deny_write inside a writable root).
  bind_readonly,
  // Bind `path` onto itself as it is: a mount point cannot be renamed or removed, so the
  // directories above a protected path (`.git` above `.git/hooks`) stay where they are, and a
  // protected name that is a symlink (`.bashrc -> dotfiles/bashrc`) keeps pointing where
  // the host will follow it (the link itself is the mount point; it is never followed).
  pin,
  // Cover a file with `data`, an empty mode-000 file of ours (make_file), read-only (deny_read
  // of a file): opening it fails with EACCES like a denied directory, where an empty file
  // would pass for content.
  cover_file,
  // Create a directory (inside a tmpfs of ours).
  make_dir,
  // Create a symlink `path` -> `data`.
  make_symlink,
  // Make the mount at `path` read-only (a tmpfs of ours, once populated).
  seal_readonly,
  // Write `data` to the existing file `path` (e.g. our PID namespace's pid_max).
  write_file,
  // Create the file `path` (mode 0444) holding `data`, and the directories above it that are
  // missing (inside a tmpfs of ours: a hidden home's ~/.gitconfig with the git identity).
  create_file,
  // Create an empty file `path` with mode 000 (inside a tmpfs of ours): the source of every
  // cover_file. Removed again (remove_file) before its tmpfs is sealed; the covers keep it.
  make_file,
  remove_file,
  // Make the mount point `path` (a directory with `is_dir`, else an empty file) and the
  // directories above it, inside a tmpfs of ours, for a later attach_clone with `create` that
  // a mount template leaves to the command's own steps (mount_template.hpp).
  make_mount_point,
};

struct MountOp {
  MountStep step;
  bool writable;
  bool create;  // attach_clone: create the mount point (file or dir per `is_dir`)
  bool is_dir;
  bool device;  // attach_clone of a device node: no nodev on it
  // hide of a directory: search-only (0111) instead of 000, because something below it is
  // shown (a mount point, a created file): the way down passes, listing still fails.
  bool passable;
  int slot;  // clone_tree / attach_clone
  const char* path;
  const char* data;  // tmpfs options, symlink target, overlay_root's upper layer
  const char* work;  // overlay_root's work directory
  // The host object at `path` when the parent checked it (ino 0: a path of ours, not
  // verified). The child reaches `path` without following symlinks and refuses another object.
  PathIdentity host;
};

struct LandlockRule {
  const char* path;
  std::uint64_t access;
  PathIdentity host;  // as MountOp::host
};

struct RlimitSetting {
  int resource;
  struct rlimit value;
};

// A mount namespace holding the plan's view, made once (mount_template.hpp). The joiner
// (process/spawn.cpp) makes the writable roots' overlays where the host's paths resolve,
// enters `mntns` and clones the sandbox there, so the kernel copies the view; the child then
// runs only `mounts` (the steps that differ per command), with the overlays in `preset_slots`.
struct MountTemplateUse {
  int mntns;         // the template: an nsfs descriptor
  int source_mntns;  // where the overlays are made: -1, ours (root); else a copy of the
                     // host's owned by the pool's user namespace (unprivileged)
  const MountOp* mounts;
  std::size_t mount_count;
  int* preset_slots;  // slot_count entries, -1 or an overlay's mount (written by the joiner)
  // Where the view put a mount, and the unique ID of each such mount in the template: the
  // joiner checks them once it is in the template, right before the clone copies it.
  const char* const* points;
  const std::uint64_t* point_ids;
  std::size_t point_count;
};

// At most this many writable roots behind overlays in a sandbox made from a template: their
// mounts are kept open through the child's close_range (process/child_side.cpp).
inline constexpr int kMaxTemplateLayers = 16;

// Everything a sandboxed child applies, in this order: user namespace maps, mounts, hostname,
// loopback up, chdir, rlimits, NO_NEW_PRIVS, Landlock, securebits and capabilities dropped,
// parent-death signal, seccomp — then the caller's execve.
struct ChildSandbox {
  // User namespace maps ("inner outer 1"), written by the child for itself: an unprivileged
  // process may map exactly its own ids, and a root supervisor gains nothing by mapping more.
  const char* uid_map;
  const char* gid_map;

  const MountOp* mounts;
  std::size_t mount_count;
  int slot_count;  // clone slots used (fds held by the child during setup)

  const char* hostname;
  std::size_t hostname_len;
  bool loopback_up;  // own network namespace: bring `lo` up
  // Filtered network: the child makes the proxy's listener (127.0.0.1:proxy_port) inside its
  // own network namespace and hands it to the supervisor over this unix socket (SCM_RIGHTS),
  // which serves it from its event loop. -1: none. The supervisor cannot make it itself when
  // unprivileged: it may not setns into a namespace owned by the sandbox's user namespace.
  int proxy_handoff_fd;
  std::uint16_t proxy_port;

  const RlimitSetting* rlimits;
  std::size_t rlimit_count;

  // Landlock (abi 0: not available; nothing applied).
  int landlock_abi;
  std::uint64_t landlock_handled_fs;
  std::uint64_t landlock_handled_net;  // TCP bind/connect denied when handled and not granted
  std::uint64_t landlock_scoped;
  const LandlockRule* landlock_rules;
  std::size_t landlock_rule_count;

  int cap_last_cap;  // from /proc/sys/kernel/cap_last_cap, read by the parent

  // The working directory's host object: the child enters the directory it verified (fchdir
  // on that descriptor), never a path re-resolved after the check.
  PathIdentity cwd;

  const sock_fprog* seccomp;  // installed last; null: none

  // Made from a template: the view is copied, `mounts` above only describe it (for the mount
  // check and the fingerprint). Null: every step is run here.
  const MountTemplateUse* mount_template;
};

// Fixed upper bound of clone slots (fds held during mount setup); the parent refuses plans
// with more (a policy with hundreds of re-exposed paths is a configuration problem).
inline constexpr int kMaxCloneSlots = 256;

// Which step failed, for the parent to word and to classify.
struct StepFailure {
  const char* step = nullptr;  // a string literal
  const char* path = nullptr;  // what the step was about (from the plan), if anything
  // The step needs a kernel feature or a permission the host may withhold (the id maps, new
  // proc/devpts instances, mount attributes on "/", Landlock, capability bits,
  // seccomp): refused with EPERM/EACCES/EINVAL/ENOSYS/EOPNOTSUPP it means "not on this
  // host". Any other step (a port, a descriptor, a path of the policy) fails for this moment
  // or this command only, and says nothing about the platform.
  bool needs_feature = false;
};

// Applies the plan in the child. Returns 0, or an errno with *failure saying where.
// `cwd` (may be null) is entered once the mounts are in place. `supervisor_pidfd` (-1: none)
// is checked right after PR_SET_PDEATHSIG, then closed. `tmp_uppers` (set by the caller to
// -1 each): close-on-exec descriptors of what holds the writes to the private /tmp and
// /var/tmp (their overlays' upper layers), for paddock-init's count of what is discarded.
int in_child_apply_sandbox(const ChildSandbox& plan, const char* cwd, int supervisor_pidfd,
                           StepFailure* failure, int tmp_uppers[2]);

// The joiner's part of a sandbox made from a template (MountTemplateUse): each writable root's
// overlay made, detached, into preset_slots, where the host's paths resolve. Raw syscalls
// only, as the child. 0, or an errno with *failure saying where.
int in_joiner_make_layers(const ChildSandbox& plan, StepFailure* failure);

// Once the joiner is in the template: whether every mount of the view is still where it was
// put (statmount by ID; mount_template.cpp). A host that replaced a covered name since the
// supervisor's last look dropped that cover, and the clone would copy the template without it.
bool in_joiner_template_intact(const MountTemplateUse& from);

}  // namespace paddock::sandbox
