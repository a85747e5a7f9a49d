// A bounded walk of a directory tree that never follows a symlink: every directory is opened
// relative to its parent's fd with O_NOFOLLOW, so a link a command (or a concurrent one)
// swaps in mid-walk is listed as a link, never entered. Used by git_state.cpp before and after
// a command.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace paddock::sandbox {

struct TreeEntry {
  std::string name;
  unsigned char type;  // DT_DIR, DT_REG, DT_LNK, DT_FIFO, ... (never DT_UNKNOWN)
};

class TreeWalk {
 public:
  TreeWalk(std::size_t max_entries, int max_depth,
           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt)
      : max_entries_(max_entries), max_depth_(max_depth), deadline_(deadline) {}

  // Called once per directory with its entries; returns whether to descend into its
  // subdirectories (`.git` directories are never descended into: git's own data).
  using Visitor = std::function<bool(const std::string& dir, const std::vector<TreeEntry>&)>;

  // Walks `root` (an absolute directory path). False if the bound was hit (nothing more is
  // visited) or a directory could not be listed (the rest still is); error() says why.
  bool run(const std::string& root, const Visitor& visit);

  // The listing of one directory alone (counted against the same bound).
  bool list(const std::string& dir, std::vector<TreeEntry>& out);

  const std::string& error() const noexcept { return error_; }
  std::size_t entries() const noexcept { return entries_; }
  bool bound_hit() const noexcept { return bound_hit_; }

 private:
  bool walk(int fd, const std::string& path, int depth, const Visitor& visit);
  bool read_dir(int fd, const std::string& path, std::vector<TreeEntry>& out);
  struct Opened {
    int fd;         // listable fd, or -errno
    int held;       // O_PATH fd whose mode we changed to list it (-1: none)
    unsigned mode;  // its mode before
  };
  Opened open_child(int parent, const std::string& name);
  bool fail(std::string why);

  std::size_t max_entries_;
  int max_depth_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::size_t entries_ = 0;
  bool bound_hit_ = false;  // entries, depth or time: stop everything
  std::string error_;
};

}  // namespace paddock::sandbox
