// The inside of apply_change_set (change_apply.hpp): one set's layers read entry by entry,
// judged (change_judge.cpp: git directories, deletions, conflicts, change_rules.hpp's
// reasons) and applied onto the host (change_apply.cpp). Internal to sandbox/.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"
#include "sandbox/change_apply.hpp"
#include "sandbox/change_rules.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox::applying {

// `rel` below `dir` with no symlink, magic link or mount point on the way, never above it.
int open_beneath(int dir, const std::string& rel, int flags);

// "a/b" -> "a" and "b" ("" above a top-level name).
std::string parent_rel(const std::string& rel);
std::string base_name(const std::string& rel);

// overlayfs's mark of a deletion in the upper layer: a 0/0 character device.
bool is_whiteout(const struct stat& st);

// Drops the overlay's own bookkeeping (user.overlay.origin, ...) from a file leaving a layer.
void strip_overlay_xattrs(int fd);

// `size` bytes of `from` at `from_at` to `to` at `to_at`, holes kept (copy_file_range, else
// pread/pwrite). 0 or an errno (EIO: `from` was shorter: changed meanwhile).
int copy_range(int from, off_t from_at, int to, off_t to_at, off_t size);
// A file's first `size` bytes (copy_range), and the copy cut to `size`.
int copy_bytes(int from, int to, off_t size);
// copy_bytes of the whole file as it is now.
int copy_contents(int from, int to);

// Where a layer file's bytes are read from: its staged range (keep_layer), else the layer's
// file itself. fd -1: none to read.
struct LayerBytes {
  UniqueFd owned;
  int fd = -1;
  off_t at = 0;
  off_t size = 0;
  // All `size` bytes into `out`: false when over `max` or unreadable.
  bool read_all(std::size_t max, std::string& out) const;
};

struct Entry {
  std::size_t root = 0;
  std::string rel;  // below the root: "a/b"
  ChangeKind kind = ChangeKind::file;
  bool opaque = false;  // a directory that replaces the host's (its entries are not merged)
  struct stat st {};    // in the layer
  bool host_exists = false;
  struct stat host {};
  std::string held;
  bool made = false;  // a directory paddock made for a stand-in (change_set.hpp)
  // The host's entry is the one an earlier apply of this set wrote (ChangeSetInfo::applied):
  // the command's own, not a conflict.
  bool ours = false;
  bool unchanged = false;  // ... and the layer's entry is as that apply copied it
  // In a git directory (reason_for): applied with no group or other write permission (a
  // 0777 .git/objects would let any local user plant what the owner's git then runs).
  bool in_git_dir = false;
};

// Directory descriptors below one root, opened once each (in the layer or on the host), at
// most kMaxOpen at once: a set of 20,000 directories must not take a descriptor each (a
// process out of them fails every other check open). A descriptor get() returned is valid
// until the next get() or forget() on the same cache: no caller keeps one past that.
class DirCache {
 public:
  static constexpr std::size_t kMaxOpen = 256;
  explicit DirCache(int root) : root_(root) {}
  // -1 when `rel` is not a plain directory below the root (absent, a link, a mount point:
  // errno says which).
  int get(const std::string& rel) {
    auto it = fds_.find(rel);
    if (it != fds_.end() && it->second.get() >= 0) return it->second.get();
    if (fds_.size() >= kMaxOpen) fds_.clear();
    UniqueFd fd(open_beneath(root_, rel, O_RDONLY | O_DIRECTORY));
    const int saved = errno;
    const int raw = fd.get();
    if (raw >= 0) fds_[rel] = std::move(fd);
    errno = saved;
    return raw;
  }
  void forget(const std::string& rel) {
    for (auto it = fds_.begin(); it != fds_.end();) {
      it = paths::within(it->first, rel) ? fds_.erase(it) : std::next(it);
    }
  }

 private:
  int root_;
  std::map<std::string, UniqueFd> fds_;
};

class Applier {
 public:
  Applier(ChangeSetInfo& set, const ApplyOptions& options);
  ChangeSummary run();

 private:
  std::string host_path(const Entry& e) const {
    return e.rel.empty() ? set_.roots[e.root] : set_.roots[e.root] + "/" + e.rel;
  }

  std::string open_roots();

  // Every entry of every layer, parents before children; bounded.
  std::string inspect();

  // The stand-ins paddock made for missing denyWrite paths (change_set.hpp) are no change of
  // the command's: left out while still what paddock made (an empty mode-000 file; the
  // sandbox had it bound read-only), as are the directories made for them that hold nothing
  // else. Anything else at such a path is judged as any change is (denyWrite holds it back).
  void drop_placeholders();

  // The entries below `rel` of root `root`'s layer, depth first, sorted.
  std::string walk(std::size_t root, int dir, const std::string& rel);

  // Is `rel` (a directory below the root, "" the root) a git directory? What git itself
  // checks: HEAD beside objects, refs or commondir (in the layer or on the host), or the name
  // `.git`.
  bool git_dir(std::size_t root, const std::string& rel);
  // The host's `rel` is no git directory yet but has a file git reads in one (config, hooks,
  // ...): its name, else empty.
  std::string unjudged_git_files(std::size_t root, const std::string& rel);

  // The object name lengths (20: SHA-1, 32: SHA-256) the host's git may read the index of the
  // git directory `rel` with: what its config says (the set's new one and the host's; a
  // linked worktree's common directory's), SHA-1 where none says otherwise.
  std::set<std::size_t> object_name_lengths(std::size_t root, const std::string& rel);

  // The whole file, or nullopt: a config judged by a part of it would let the rest through.
  std::optional<std::string> read_small(std::size_t root, const std::string& rel);

  // The entry in the layer holds the same bytes as the host's file.
  bool same_bytes(const Entry& e);

  static bool plausible_head(const std::string& text);

  // For a deletion of the host's directory `rel` (a whiteout, or an opaque directory that
  // replaces it): why not, or empty. Walks what would be deleted (bounded): a repository in it
  // (its history), or anything the host changed during the run (a conflict), keeps it.
  std::string deletion_hold_reason(std::size_t root, const std::string& rel);

  std::string scan_deleted(int dir, std::size_t root, const std::string& rel, std::size_t& budget,
                           int depth);

  // ChangeSetInfo::applied against this apply's entries (judge(), after the host state):
  // marks what is ours, drops what is unchanged, adds the deletions of what left the layer.
  void reconcile_applied();
  // What apply() wrote for `e`, for the next apply (keep_layer).
  void record_applied(const Entry& e, int host_parent);
  // An index file's index_content_key as the layer has it (staged), else empty.
  std::string index_key(const Entry& e);
  bool changed_since(const struct stat& st) const;

  // Every entry's host state, what earlier applies left (reconcile_applied), the files
  // staged (keep_layer), then why each is held back (reason_for), if it is. Empty, or why
  // nothing can be applied.
  std::string judge();

  std::string reason_for(Entry& e);
  // In the session worktree's common git directory (ChangeSetInfo::worktree): why not, or
  // empty to judge it as any git directory's entry.
  std::string worktree_hold_reason(const Entry& e, const std::string& path);

  // keep_layer: each file's bytes copied into a private file first (change_staging.cpp).
  // Empty, or why the set could not be staged (nothing is applied then).
  std::string stage_files();
  // A layer file's bytes: its staged copy under keep_layer (none when it has none), else the
  // layer's file.
  LayerBytes layer_bytes(std::size_t root, const std::string& rel);

  // One entry onto the host (and recorded, keep_layer). 0 or an errno.
  int apply(Entry& e);
  int apply_entry(Entry& e);

  ChangeSetInfo& set_;
  const ApplyOptions& options_;
  ChangeRules rules_;
  std::vector<UniqueFd> host_fds_, upper_fds_;
  std::vector<int> host_, upper_;
  std::vector<dev_t> root_dev_;
  std::vector<DirCache> host_dirs_, upper_dirs_;
  std::vector<Entry> entries_;
  std::set<std::pair<std::size_t, std::string>> walked_;  // every layer entry the walk saw
  std::map<std::pair<std::size_t, std::string>, bool> git_dirs_;
  UniqueFd staging_;  // keep_layer: the staged copies, one after another (stage_files)
  std::map<std::pair<std::size_t, std::string>, std::pair<off_t, off_t>> staged_;  // at, size
};

}  // namespace paddock::sandbox::applying
