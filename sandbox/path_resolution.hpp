// Path resolution for the filesystem policy (internal to sandbox/): realpath(3) that accepts
// paths that do not exist yet, glob expansion that never follows symlinks, and the small path
// helpers both use. path_policy.cpp turns their results into rules.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/path_glob.hpp"
#include "sandbox/path_policy.hpp"

namespace paddock::sandbox::paths {

// A path that cannot be resolved (a symlink loop, an unreadable link); the caller names the
// field.
struct Unresolvable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where an entry came from, for error messages: "filesystem.denyRead" [2] and its spelling.
// Only put into words on an error: this runs for every entry of every command.
struct Where {
  const char* field;
  std::size_t index;  // npos: not a list
  std::string_view entry;
};

// "filesystem.allowRead[2]: ~/x: why"; invalid() throws it as Error(config_invalid).
std::string where_message(const Where& w, const std::string& why);
[[noreturn]] void invalid(const Where& w, const std::string& why);

std::string join(const std::string& dir, std::string_view name);

// `inner` is `outer` or below it (both canonical).
bool within(std::string_view inner, std::string_view outer);
// `inner` is strictly below `outer` (both canonical).
bool below(std::string_view inner, std::string_view outer);

std::size_t depth(std::string_view path);

// A directory itself, not a symlink to one (lstat).
bool is_real_directory(const std::string& path);
// Whether a sandboxed command could search the directory `st` describes: it runs as this
// process's user and groups, but without privilege over anyone else's files (its user
// namespace maps only our own ids), so root's own override does not count.
bool sandbox_can_search(const struct stat& st);
// Whether `gid` is this process's effective group or one of its supplementary groups.
bool in_own_groups(gid_t gid);

// lstat(2), answered from a memo while a LstatMemo lives on this thread: resolving one plan's
// ~100 rules walks the same leading directories (/, /etc, the workspace, its .git) over and
// over. The memo is the plan's one view of the host's names; the objects the plan names are
// still identified by descriptor and verified in the child (linux/path_identity.hpp).
// Returns 0, or the errno.
int lstat_once(const std::string& path, struct stat& st);
class LstatMemo {
 public:
  LstatMemo();
  ~LstatMemo();
  LstatMemo(const LstatMemo&) = delete;
  LstatMemo& operator=(const LstatMemo&) = delete;

 private:
  friend int lstat_once(const std::string& path, struct stat& st);
  std::map<std::string, std::pair<int, struct stat>, std::less<>> seen_;
  LstatMemo* outer_;
};

std::string_view parent_of(std::string_view path);

std::vector<std::string> components(std::string_view s);

struct Resolved {
  std::string path;
  bool exists = false;
  bool is_dir = false;
  // Missing, but its nearest existing parent is a directory we can search: the command could
  // create it (a path under a regular file, or behind a directory we cannot search, cannot).
  bool creatable = false;
  // Missing because a parent cannot be searched (EACCES): unknown, not absent.
  bool unsearchable = false;
  std::vector<std::string> links;  // where the symlinks followed on the way sit
};

// realpath(3) that also takes paths that do not exist yet. `base` is canonical; `rest` is
// resolved from it (an absolute `rest` starts over at `/`). Symlinks are followed wherever
// they are, so a link in the workspace that points out yields the real target, and `..` after
// a link means the target's parent, as for the kernel. Components past the first missing one
// are applied lexically: nothing on the host can be a symlink there yet.
Resolved resolve_from(std::string_view base, std::string_view rest);

// Directory listings read once per command, to answer "certainly missing" without an lstat
// per path: most built-in entries name something a given home does not have (~/.oci,
// ~/.kshrc, ~/.config/op, ...).
class Listings {
 public:
  // `rel` below the canonical directory `dir` certainly does not exist: one of its components
  // is absent from its parent's listing, reached through real, searchable directories only
  // (so resolve_from would find the same: missing, and creatable). False means "look".
  bool certainly_missing(std::string dir, std::string_view rel);

 private:
  using Names = std::optional<std::map<std::string, unsigned char, std::less<>>>;
  const Names& list(const std::string& dir);
  std::map<std::string, Names, std::less<>> cache_;
};

// The pseudo filesystems a glob walk never enters: huge, synthetic, and the mount layer's.
bool pseudo_fs(std::string_view path);

// Expands the glob components `pattern` below the directory `start`, without following
// symlinks. Every directory entry read (and every literal component looked up) counts
// against kGlobVisitLimit.
class GlobWalk {
 public:
  GlobWalk(const std::vector<std::string>& pattern, const Where& where)
      : pattern_(pattern), where_(where) {}

  struct Match {
    std::string path;
    bool is_dir;
    bool is_link;
  };
  std::vector<Match> matches;

  void run(const std::string& dir, std::size_t i) { step(dir, i, nullptr); }

 private:
  struct Entry {
    std::string name;
    unsigned char type;  // DT_DIR, DT_LNK, ...
  };

  void visit() {
    if (++visited_ > kGlobVisitLimit) {
      invalid(where_, "the pattern visits more than " + std::to_string(kGlobVisitLimit) +
                          " directory entries; make its fixed prefix more specific");
    }
  }

  std::vector<Entry> list(const std::string& dir) {
    std::vector<Entry> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;  // unreadable for us is unreadable for the command too
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      visit();
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
      }
      out.push_back({e->d_name, type});
    }
    ::closedir(d);
    return out;
  }

  void step(const std::string& dir, std::size_t i, const std::vector<Entry>* listing) {
    if (i == pattern_.size()) {
      matches.push_back({dir, true, false});
      return;
    }
    const std::string& comp = pattern_[i];
    const bool last = i + 1 == pattern_.size();
    if (comp == "**") {
      auto entries = list(dir);
      step(dir, i + 1, &entries);  // zero components
      for (const auto& e : entries) {
        std::string child = join(dir, e.name);
        if (e.type == DT_DIR && !pseudo_fs(child)) step(child, i, nullptr);
      }
      return;
    }
    if (is_glob(comp)) {
      std::vector<Entry> own;
      if (listing == nullptr) {
        own = list(dir);
        listing = &own;
      }
      for (const auto& e : *listing) {
        if (::fnmatch(fnmatch_pattern(comp).c_str(), e.name.c_str(), 0) != 0) continue;
        std::string child = join(dir, e.name);
        if (last) {
          matches.push_back({child, e.type == DT_DIR, e.type == DT_LNK});
        } else if (e.type == DT_DIR && !pseudo_fs(child)) {
          step(child, i + 1, nullptr);
        }
      }
      return;
    }
    visit();
    std::string child = join(dir, unescape_glob(comp));
    struct stat st;
    if (::lstat(child.c_str(), &st) != 0) return;
    if (last) {
      matches.push_back({child, S_ISDIR(st.st_mode), S_ISLNK(st.st_mode)});
    } else if (S_ISDIR(st.st_mode) && !pseudo_fs(child)) {
      step(child, i + 1, nullptr);
    }
  }

  const std::vector<std::string>& pattern_;
  const Where& where_;
  std::size_t visited_ = 0;
};

}  // namespace paddock::sandbox::paths
