#include "sandbox/tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string_view>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "sandbox/quarantine.hpp"
#include "sandbox/root_views.hpp"
#include "sandbox/scan_cache.hpp"

namespace paddock::sandbox {
namespace {

unsigned char type_of(mode_t m) {
  if (S_ISDIR(m)) return DT_DIR;
  if (S_ISLNK(m)) return DT_LNK;
  if (S_ISFIFO(m)) return DT_FIFO;
  if (S_ISSOCK(m)) return DT_SOCK;
  if (S_ISCHR(m)) return DT_CHR;
  if (S_ISBLK(m)) return DT_BLK;
  return DT_REG;
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The directory `rel` below `base` as an O_PATH fd, one component at a time, each with
// O_NOFOLLOW: a symlink a command swaps in anywhere on the way fails (ELOOP, ENOTDIR), never
// leads out. (Not openat2 with RESOLVE_NO_SYMLINKS: a supervisor inside another sandbox's
// seccomp filter gets ENOSYS.) The fds of the last path's components are kept: the walk is
// breadth-first, so the next directory whose children come up is a sibling or a cousin of
// the last, and only the components after the common prefix are opened (at most one fd per
// level is held: the depth bound).
class FdChain {
 public:
  int open(int base, const std::string& rel) {
    if (rel.empty()) return base;
    std::size_t level = 0, start = 0;
    while (true) {
      const std::size_t end = rel.find('/', start);
      const std::string_view name(rel.data() + start,
                                  (end == std::string::npos ? rel.size() : end) - start);
      if (level < names_.size() && names_[level] == name) {
        ++level;
      } else {
        names_.resize(level);
        fds_.resize(level);
        const std::string n(name);
        int fd = ::openat(level == 0 ? base : fds_.back().get(), n.c_str(),
                          O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return -errno;
        names_.push_back(n);
        fds_.emplace_back(fd);
        ++level;
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    names_.resize(level);
    fds_.resize(level);
    return fds_.back().get();
  }
  void clear() {
    names_.clear();
    fds_.clear();
  }

 private:
  std::vector<std::string> names_;
  std::vector<UniqueFd> fds_;
};

// Directories whose mode one walk changes at most: each is held open until the walk ends.
constexpr std::size_t kMaxGranted = 256;

}  // namespace

bool TreeWalk::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return false;
}

bool TreeWalk::run(const std::string& root, const Visitor& visit, const TooDeep& too_deep) {
  UniqueFd base(::open(stable_path(root).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (base.get() < 0) {
    if (errno == ENOENT) return true;
    return fail(root + ": " + std::strerror(errno));
  }
  struct Pending {
    std::string rel;  // below root; empty for root itself
    int depth;
  };
  std::deque<Pending> queue;
  queue.push_back({"", 0});
  std::vector<Granted> granted;  // modes put back when the walk ends, last changed first
  FdChain parents;
  bool ok = true;
  while (!queue.empty() && !bound_hit_) {
    Pending p = std::move(queue.front());
    queue.pop_front();
    const std::string path = p.rel.empty() ? root : join(root, p.rel);
    int fd = 0;
    std::shared_ptr<const std::vector<TreeEntry>> entries;
    if (p.rel.empty()) {
      fd = ::fcntl(base.get(), F_DUPFD_CLOEXEC, 0);
      if (fd >= 0) entries = listing(fd, path, true);
    } else {
      const std::size_t slash = p.rel.rfind('/');
      const int parent =
          parents.open(base.get(), slash == std::string::npos ? "" : p.rel.substr(0, slash));
      fd = parent < 0 ? parent : child(parent, p.rel.substr(slash + 1), path, granted, entries);
    }
    if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP) continue;  // gone or swapped
    if (fd == -ENAMETOOLONG && too_deep && too_deep(path)) continue;
    if (fd < 0) {
      // Recorded (the walk's result is a failure), but the rest is still walked: a visitor
      // that quarantines should move everything it can reach.
      ok = fail(path + ": cannot be listed: " + std::strerror(fd == -1 ? errno : -fd));
      continue;
    }
    if (entries == nullptr) {
      ok = false;
      if (bound_hit_) {
        error_ += " (every directory less than " + std::to_string(p.depth) + " levels below " +
                  root + " was checked; deeper ones were not)";
      }
      continue;
    }
    if (!visit(path, *entries)) continue;
    for (const auto& e : *entries) {
      if (e.type != DT_DIR || e.name == ".git") continue;
      std::string rel = p.rel.empty() ? e.name : p.rel + "/" + e.name;
      if (p.depth + 1 > max_depth_) {
        if (too_deep && too_deep(join(root, rel))) continue;
        bound_hit_ = true;
        ok = fail(join(root, rel) + ": deeper than " + std::to_string(max_depth_) + " directories");
        break;
      }
      queue.push_back({std::move(rel), p.depth + 1});
    }
  }
  parents.clear();
  for (auto it = granted.rbegin(); it != granted.rend(); ++it) {
    chmod_fd(it->held, it->mode);
    ::close(it->held);
  }
  return ok;
}

bool TreeWalk::count(std::size_t n) {
  entries_ += n;
  if (entries_ <= max_entries_) return true;
  bound_hit_ = true;
  return fail("more than " + std::to_string(max_entries_) +
              " directory entries (each entry listed, each unchanged directory checked)");
}

bool TreeWalk::cacheable_fs(int fd, unsigned long dev) {
  for (const auto& [d, yes] : fs_checked_) {
    if (d == dev) return yes;
  }
  const bool yes = ScanCache::cacheable_fs(fd);
  fs_checked_.emplace_back(dev, yes);
  return yes;
}

// A subdirectory `name` of `parent`: its listing into `out` (null if it could not be had:
// error() says why), or -errno if it cannot be opened. A directory whose inode and times are
// those of a cached listing is not even opened: one fstatat, with AT_SYMLINK_NOFOLLOW, of a
// name in a directory opened with O_NOFOLLOW all the way down.
int TreeWalk::child(int parent, const std::string& name, const std::string& path,
                    std::vector<Granted>& granted,
                    std::shared_ptr<const std::vector<TreeEntry>>& out) {
  bool looked_up = false;
  struct stat st;
  if (cache_ != nullptr && ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return -ELOOP;  // swapped for a link: not followed
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    // Its file system was seen (and checked) in this walk; a new one is opened below.
    auto fs = std::find_if(fs_checked_.begin(), fs_checked_.end(),
                           [&](const auto& d) { return d.first == st.st_dev; });
    if (fs != fs_checked_.end() && fs->second) {
      looked_up = true;
      if (auto hit = cache_->find(st)) {
        out = counted_hit(std::move(hit));
        return 0;
      }
    }
  }
  int fd = open_below(parent, name, granted);
  if (fd < 0) return fd;
  out = listing(fd, path, !looked_up);
  return 0;
}

std::shared_ptr<const std::vector<TreeEntry>> TreeWalk::counted_hit(
    std::shared_ptr<const std::vector<TreeEntry>> hit) {
  if (!count(1)) return nullptr;
  if (deadline_ && std::chrono::steady_clock::now() > *deadline_) {
    bound_hit_ = true;
    fail("the time limit was reached after " + std::to_string(entries_) + " entries");
    return nullptr;
  }
  return hit;
}

// Takes ownership of `fd`.
std::shared_ptr<const std::vector<TreeEntry>> TreeWalk::listing(int fd, const std::string& path,
                                                                bool try_cache) {
  std::chrono::nanoseconds started{0};
  struct stat st;
  bool cacheable = false;
  if (cache_ != nullptr) {
    // Before the fstat: a change after this instant gets a later ctime (scan_cache.hpp).
    started = ScanCache::now();
    cacheable = ::fstat(fd, &st) == 0 && cacheable_fs(fd, st.st_dev);
  }
  if (cacheable && try_cache) {
    if (auto hit = cache_->find(st)) {
      ::close(fd);
      return counted_hit(std::move(hit));
    }
  }
  auto fresh = std::make_shared<std::vector<TreeEntry>>();
  if (!read_dir(fd, path, *fresh)) return nullptr;
  if (cacheable) cache_->store(st, started, fresh);
  return fresh;
}

// Takes ownership of `fd`.
bool TreeWalk::read_dir(int fd, const std::string& path, std::vector<TreeEntry>& out) {
  bool ok = true;
  const int err = base::for_each_directory_entry(fd, [&](const char* name, unsigned char type) {
    if (!count(1)) {
      ok = false;
      return false;
    }
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
      type = type_of(st.st_mode);
    }
    if (type == DT_REG && std::none_of(std::begin(kWalkedFileNames), std::end(kWalkedFileNames),
                                       [&](const char* n) { return std::strcmp(n, name) == 0; })) {
      return true;
    }
    out.push_back({name, type});
    return true;
  });
  ::close(fd);
  if (err != 0) return fail(path + ": " + std::strerror(err));
  if (ok && deadline_ && std::chrono::steady_clock::now() > *deadline_) {
    bound_hit_ = true;
    return fail("the time limit was reached after " + std::to_string(entries_) + " entries");
  }
  return ok;
}

// A directory we cannot read: made so by its owner. If that is us (a command runs with our
// uid: chmod 000 after planting a `.git` inside), we give ourselves u+rx through an O_PATH fd
// for the rest of the walk (its children are looked up through it) and put the mode back
// when the walk ends. If it is not ours and we cannot write it either, the command (same
// uid, no capabilities) could not create anything in it: skipped. Otherwise it cannot be
// known what is inside: an error.
int TreeWalk::open_below(int parent, const std::string& name, std::vector<Granted>& granted) {
  constexpr int kFlags = O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(parent, name.c_str(), O_RDONLY | kFlags);
  if (fd >= 0 || errno != EACCES) return fd >= 0 ? fd : -errno;
  int held = ::openat(parent, name.c_str(), O_PATH | kFlags);
  if (held < 0) return -errno;
  struct stat st;
  if (granted.size() < kMaxGranted && ::fstat(held, &st) == 0 && st.st_uid == ::geteuid() &&
      chmod_fd(held, (st.st_mode | S_IRUSR | S_IXUSR) & 07777) == 0) {
    granted.push_back({held, st.st_mode & 07777});
    char proc[64];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", held);
    fd = ::open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  const bool writable = ::faccessat(held, "", W_OK, AT_EACCESS | AT_EMPTY_PATH) == 0;
  ::close(held);
  // Neither listable nor writable for us: nothing could have been made there.
  return writable ? -EACCES : -ENOENT;
}

}  // namespace paddock::sandbox
