// Git state the host runs later, at every depth of the writable roots.
//
// The host's git reads configuration, hooks and repository pointers from many places besides
// `./.git/{hooks,config}`: a linked worktree's `.git/worktrees/<name>/{commondir,gitdir,
// config.worktree}`, a submodule's `sub/.git` gitfile and `.git/modules/<name>/config`,
// nested repositories, bare repositories (a directory with HEAD, objects/ and refs/ is a git
// dir wherever it is), and any new `.git` a command creates, pointing at a config of its own
// (core.fsmonitor, core.hooksPath, core.pager, aliases, filters all run programs).
//
// Before the command: a bounded walk of the writable roots finds every `.git` and bare git dir;
// what git reads as configuration, hook or pointer in each becomes a protected path
// (read-only mount if it exists, audited afterwards if not). After the command: the same walk
// finds what is new (a `.git` or bare repository that was not there) and what git would block
// on (a FIFO, socket or device where git opens a file), and quarantines it (quarantine.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paddock/exec_result.hpp"
#include "sandbox/scan_cache.hpp"

namespace paddock::sandbox {

// The walk's bound, before and after the command: work (each directory entry listed from the
// disk, each directory whose listing came from the process's ScanCache unchanged) and depth.
// Cold, every entry is listed: a 300k-file node_modules-like tree costs about 0.5 s per walk
// on this 2-core VM under load; warm, only its directories are checked (about 40k: ~0.1 s).
// The bound keeps one run's cost bounded (a home directory of millions of files is not
// walked before every command). Past either bound the run is refused before the command
// (the protection cannot be established) and fails after it (the audit cannot be
// completed): never a silently partial scan.
inline constexpr std::size_t kGitScanEntryLimit = 1'000'000;
inline constexpr int kGitScanDepthLimit = 64;
// After the command, a time bound as well (a slow or huge filesystem).
inline constexpr std::chrono::milliseconds kGitAuditTimeLimit{10'000};

// The bounds one scan and its audit use (the constants above unless a test lowers them).
struct GitScanLimits {
  std::size_t entries = kGitScanEntryLimit;
  int depth = kGitScanDepthLimit;
  std::chrono::milliseconds audit_time = kGitAuditTimeLimit;
};

// Thrown by scan_git_state when the protection cannot be established; the caller turns it
// into config_invalid.
struct GitScanRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Past the bound.
struct GitScanTooLarge : GitScanRefused {
  using GitScanRefused::GitScanRefused;
};

// Which inode lay at a path, and when it last changed (ctime: a rename sets it). A
// concurrent sandbox's audit moves a `.git` or a HEAD away by renaming it; this command can
// rename it back (same inode) or write a new one (another inode): either differs from this.
struct EntryId {
  unsigned long dev = 0, ino = 0;  // (0, 0): nothing was there
  long long ctime_ns = 0;
  bool operator==(const EntryId&) const = default;
};
// Of `path` without following a symlink; (0, 0, 0) if there is nothing.
EntryId entry_id(const std::string& path);

// What the walk before the command found. Paths are canonical.
struct GitState {
  std::vector<std::string> roots;  // the writable directories walked
  GitScanLimits limits;
  // Every `.git` entry (directory, gitfile, anything) and its inode (dev, ino): after the
  // command, one at the same path with another inode was replaced (a concurrent sandbox's
  // audit moved the original, and this one made a new one).
  std::map<std::string, EntryId> dot_git;
  std::vector<std::string> bare;      // bare git dirs (HEAD + objects/ + refs/), sorted
  std::vector<std::string> git_dirs;  // every git dir reached (for the special-file check), sorted
  // The HEAD of every git dir (bare ones included). A HEAD that differs afterwards may be one
  // this command put back after a concurrent sandbox's audit moved the original away (its
  // way to disarm a new repository): the git dir is judged again as if new.
  std::map<std::string, EntryId> heads;
  std::vector<std::string> protect;  // paths git reads as config, hook or pointer: protected
  ScanCache* cache = nullptr;        // the listings the scan used, for the audit (null: none)
};

// Walks `roots` (directories, canonical) without following symlinks. Throws GitScanTooLarge,
// and GitScanRefused when a protected regular file (a git dir's config, a hook, ...) has
// another name: the read-only mount covers one name, the other stays writable. Directory
// listings come from `cache` where it proves them unchanged (null: every directory is
// listed); what files say (gitfiles, commondir, HEAD) is read again every time.
GitState scan_git_state(const std::vector<std::string>& roots, GitScanLimits limits = {},
                        ScanCache* cache = &ScanCache::process());

// After the command: quarantines every `.git` and bare git dir that `before` did not know, and
// every FIFO, socket or device at a path git opens (top-level files and refs/ of each git dir,
// `.gitignore`, `.gitattributes`, `.gitmodules`, `.mailmap` anywhere). `tag` names the
// quarantine; `program` goes into the violations. `*incomplete` is set (with a reason) when
// the walk hit its bound or something could not be moved: the run must then fail.
std::vector<Violation> audit_git_state(const GitState& before, const std::string& tag,
                                       const std::string& program, std::string* incomplete);

}  // namespace paddock::sandbox
