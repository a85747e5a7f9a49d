// A bounded walk of a directory tree that never follows a symlink: every directory is opened
// from the root's fd one component at a time with O_NOFOLLOW, so a link a command (or a
// concurrent one) swaps in mid-walk is refused, never entered. Breadth-first: when the
// entry or time bound is hit, every shallower level has been visited in full (a tree made
// deep or wide to exhaust the bound hides nothing near the top). Used by git_state.cpp
// before and after a command, with the process's ScanCache: a directory whose inode, mtime
// and ctime are those of a listing stored before is not listed again (scan_cache.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paddock::sandbox {

struct TreeEntry {
  std::string name;
  unsigned char type;  // DT_DIR, DT_REG, DT_LNK, DT_FIFO, ... (never DT_UNKNOWN)
};

// What a visitor is shown of a directory, cached or not: every entry that is not a regular
// file, and regular files with one of these names (a gitfile; what makes a git dir to git's
// discovery: git_dir.cpp). The visitors in git_state.cpp look at nothing else; a new name
// a visitor needs as a regular file goes here, or cached and fresh walks would differ.
inline constexpr const char* kWalkedFileNames[] = {".git", "HEAD", "objects", "refs", "commondir"};

class ScanCache;
class TreeWalk {
 public:
  // `max_entries` bounds the work: every entry listed from the disk counts one, and so does
  // every directory whose listing came from `cache` (null: no cache).
  TreeWalk(std::size_t max_entries, int max_depth,
           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
           ScanCache* cache = nullptr)
      : max_entries_(max_entries), max_depth_(max_depth), deadline_(deadline), cache_(cache) {}

  // Called once per directory with its entries; returns whether to descend into its
  // subdirectories (`.git` directories are never descended into: git's own data).
  using Visitor = std::function<bool(const std::string& dir, const std::vector<TreeEntry>&)>;

  // Called with a directory deeper than the depth bound (or whose path is too long to open);
  // true if it was dealt with (moved out of the way): the walk goes on. Without one, or
  // when it returns false, the bound was hit.
  using TooDeep = std::function<bool(const std::string& dir)>;

  // Walks `root` (an absolute directory path). False if the bound was hit (nothing more is
  // visited) or a directory could not be listed (the rest still is); error() says why.
  bool run(const std::string& root, const Visitor& visit, const TooDeep& too_deep = {});

  const std::string& error() const noexcept { return error_; }
  std::size_t entries() const noexcept { return entries_; }
  bool bound_hit() const noexcept { return bound_hit_; }

 private:
  bool read_dir(int fd, const std::string& path, std::vector<TreeEntry>& out);
  struct Granted;
  // The listing of the directory open as `fd` (closed): from the cache (unless it was looked
  // up already) or read. Null on error.
  std::shared_ptr<const std::vector<TreeEntry>> listing(int fd, const std::string& path,
                                                        bool try_cache);
  int child(int parent, const std::string& name, const std::string& path,
            std::vector<Granted>& granted, std::shared_ptr<const std::vector<TreeEntry>>& out);
  std::shared_ptr<const std::vector<TreeEntry>> counted_hit(
      std::shared_ptr<const std::vector<TreeEntry>> hit);
  bool count(std::size_t n);
  bool cacheable_fs(int fd, unsigned long dev);
  struct Granted {
    int held;       // O_PATH fd of a directory whose mode we changed to list it
    unsigned mode;  // its mode before
  };
  // A listable fd of `name` in the directory `parent`, or -errno.
  int open_below(int parent, const std::string& name, std::vector<Granted>& granted);
  bool fail(std::string why);

  std::size_t max_entries_;
  int max_depth_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  ScanCache* cache_;
  std::vector<std::pair<unsigned long, bool>> fs_checked_;  // st_dev: may it be cached
  std::size_t entries_ = 0;
  bool bound_hit_ = false;  // entries, depth or time: stop everything
  std::string error_;
};

}  // namespace paddock::sandbox
