// The platform-independent half of the filesystem policy: FilesystemPolicy plus a command's
// working directory and $HOME become a concrete, ordered list of path rules on canonical
// paths. The mount layer applies them shallow-to-deep; Landlock gets the writable roots; the
// runtime checks `protected_missing` after the command. Runs per command, so files created on
// the host after the Manager started (a new `.env`, a fresh `~/.aws`) are covered.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "paddock/sandbox_policy.hpp"
#include "sandbox/default_paths.hpp"
#include "sandbox/git_state.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox {

// What a rule does at its path (and below it, until a deeper rule says otherwise). Each rule
// changes the state it inherits from its nearest ancestor rule (the host: readable, not
// writable), so the mount layer needs no other context:
//   deny_read   hide the host's content (tmpfs on a directory, an empty file on a file)
//   allow_read  inside a hidden region: show the host's path again, read-only
//   read_only   inside a writable region: the host's path, read-only
//   writable    the host's path, read-write (also re-exposes a path inside a hidden region)
// allow_read and read_only mount the same way (a read-only bind of the host path); the name
// says which region they sit in.
enum class PathAccess { deny_read, allow_read, read_only, writable };

// The origin of the rules that hide a home (FilesystemPolicy::hide_home).
inline constexpr const char* kHiddenHomeOrigin = "hidden home";
const char* to_string(PathAccess a) noexcept;

struct PathRule {
  std::string path;  // absolute and canonical: no symlink, `.` or `..` in it
  PathAccess access;
  bool exists;         // at resolve time; always true today (missing paths never need a mount)
  bool is_dir;         // a directory (else a file, a socket, ...)
  const char* origin;  // "policy", "default credential", "mandatory read-only",
                       // "home start-up", "working directory"
};

struct ResolvedFilesystem {
  // Shallow to deep (component count), then by path; one rule per path, none a no-op.
  std::vector<PathRule> rules;
  // The paths of the writable rules, in the same order (for Landlock).
  std::vector<std::string> writable_roots;
  // Protected paths (deny_write, mandatory read-only names, credentials, git pointers) that do
  // not exist yet but could be created by the command because they lie in a writable region.
  // No stub is created on the host: the runtime checks them after the command and removes
  // what appeared. Canonical: the nearest existing parent's real path plus the rest. Sorted.
  std::vector<std::string> protected_missing;
  // Of those, the ones the policy names in denyWrite (not the built-in names): below a
  // copy-on-write root each gets a stand-in the command cannot write, rename or remove, so
  // creating it fails at once (mount_plan.cpp). Sorted.
  std::vector<std::string> deny_write_missing;
  // The policy's denyWrite globs, absolute (a canonical prefix, escaped, then the pattern):
  // what they match among paths made during the run is held back when the set is applied.
  std::vector<std::string> deny_write_patterns;
  // Symlinks in a writable region on the way to a protected path (a `.git/hooks` or
  // `.bashrc` that is a link, or a link above one): the mount layer pins each link itself,
  // so the name keeps resolving where the host will resolve it. Canonical parent plus the
  // link's name. Sorted.
  std::vector<std::string> protected_links;
  // The read-only rules' paths and the inodes there now: after the command, a different inode
  // at one of them means it was replaced from outside the sandbox (see quarantine.hpp).
  struct Identity {
    std::string path;
    unsigned long dev, ino;
    // The inode's change time: a write, chmod, link or unlink during the run changes it. The
    // same (dev, ino) is not enough: another mount namespace can unlink the name (the kernel
    // then drops the read-only mount on it in every other namespace, this sandbox's too) and
    // link the same inode back, after which the command writes it.
    long ctime_sec, ctime_nsec;
    // Its size and modification time too: ext4 and tmpfs stamp times from a coarse clock
    // (a few ms), so a write in the same tick as the snapshot leaves the ctime equal (the
    // likely cause of a planted config that stayed once in the unprivileged suite under
    // load; a same-size rewrite in that tick still passes).
    long long size;
    long mtime_sec, mtime_nsec;
  };
  std::vector<Identity> protected_existing;
  // The sandbox's own /tmp and /var/tmp (policy.private_tmp, where the host has them and no
  // rule attaches the host's directory right there).
  std::vector<std::string> private_tmp;
  // The writable directories, each opened once (root_views.hpp): the plan and the audit after
  // the command look below them through these descriptors only.
  std::shared_ptr<const RootViews> roots;
  // The protected homes, canonical: `~` and the passwd entry's home when they differ, then
  // another user's home around the working directory or a writable root (home_view.hpp).
  std::vector<std::string> homes;
  std::size_t own_homes = 0;  // how many of `homes` are this user's (they get the git identity)
  // The directories hidden because they are homes (policy.hide_home; home_view.hpp): the
  // protected homes, /root and /home, where they exist. Their rules' origin is
  // kHiddenHomeOrigin.
  std::vector<std::string> hidden_homes;
  // Every existing path the policy's denyRead or the credential list names, including those a
  // hidden home hides anyway (no rule of their own): nothing inside one is shown again.
  std::vector<std::string> denied;
  // Git repositories at every depth of the writable roots (when policy.default_denies): what
  // git reads as config, hook or pointer in them is among the rules above; the post-run audit
  // compares against the rest.
  GitState git;
};

// Resolves `policy` for one command. `cwd` must be absolute; `home` expands `~` (an empty
// `home` falls back to the passwd entry of the effective user). Throws
// paddock::Error(errc::config_invalid, "filesystem.<field>[i]: <entry>: <why>") for bad
// input: an empty entry, a NUL byte, `~user`, `**` that is not a whole component, `..` after
// a wildcard, a rule on `/`, `/proc`, `/dev` or `/sys`, a glob that visits more than
// kGlobVisitLimit directory entries, an allow rule that reaches outside a writable root
// through a symlink inside it (a sandboxed command could have planted that symlink), or a
// writable root (the cwd included) that a protection could not hold in (root_guard.hpp: a
// home without allow_write_home, anything above a home, a git directory, a mandatory name, a
// credential, a start-up file, or a path inside one).
//
// Homes: `home` (policy.home when set; else the passwd entry of the effective user) is what
// `~` means; the passwd entry's home, when different, is protected the same way (a caller that
// points $HOME elsewhere still has its keys and rc files in the real one).
//
// Paths: `~` and `~/x` use `home`; relative paths are relative to `cwd`; then every symlink is
// resolved like realpath(3), and a path that does not exist yet resolves through its nearest
// existing parent. Globs: `*` and `?` and `[...]` within one component (also matching names
// that start with '.'), `**` any number of components (including none); a trailing `/**`
// means the directory itself (like srt); no escapes, but a pattern whose literal spelling exists
// (`app/[id]`) also names that path. Globs are expanded now by walking the filesystem from
// their longest glob-free prefix, without following symlinks and never under /proc or /sys.
ResolvedFilesystem resolve_filesystem(const FilesystemPolicy& policy, const std::string& cwd,
                                      const std::string& home);

// Directory entries one glob pattern may visit; past it the pattern is refused (a deny must
// never be silently truncated, and the walk runs before every command).
inline constexpr std::size_t kGlobVisitLimit = 10'000;

// One path canonicalised the way the rules are: symlinks resolved, `.`/`..` applied, and a
// missing tail appended to the real path of its nearest existing parent. `path` must be
// absolute. For the path guard and for tests; throws config_invalid on a symlink loop.
struct CanonicalPath {
  std::string path;
  bool exists = false;
  bool is_dir = false;
};
CanonicalPath canonicalize(std::string_view path);

}  // namespace paddock::sandbox
