#include "sandbox/change_apply.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_rules.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

// `rel` below `dir` with no symlink, magic link or mount point on the way, never above it.
int open_beneath(int dir, const std::string& rel, int flags) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<std::uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  const std::string below = rel.empty() ? std::string(".") : rel;
  return static_cast<int>(::syscall(SYS_openat2, dir, below.c_str(), &how, sizeof how));
}

std::string parent_rel(const std::string& rel) {
  const std::size_t slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}
std::string base_name(const std::string& rel) { return rel.substr(rel.rfind('/') + 1); }

struct Entry {
  std::size_t root = 0;
  std::string rel;  // below the root: "a/b"
  ChangeKind kind = ChangeKind::file;
  bool opaque = false;  // a directory that replaces the host's (its entries are not merged)
  struct stat st {};    // in the layer
  bool host_exists = false;
  struct stat host {};
  std::string held;
};

// Directory descriptors below one root, opened once each (in the layer or on the host).
class DirCache {
 public:
  explicit DirCache(int root) : root_(root) {}
  // -1 when `rel` is not a plain directory below the root (absent, a link, a mount point).
  int get(const std::string& rel) {
    auto it = fds_.find(rel);
    if (it != fds_.end() && it->second.get() >= 0) return it->second.get();
    UniqueFd fd(open_beneath(root_, rel, O_RDONLY | O_DIRECTORY));
    const int raw = fd.get();
    fds_[rel] = std::move(fd);
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

bool is_whiteout(const struct stat& st) {
  return S_ISCHR(st.st_mode) && major(st.st_rdev) == 0 && minor(st.st_rdev) == 0;
}

// Drops the overlay's own bookkeeping (user.overlay.origin, ...) from a file leaving a layer.
void strip_overlay_xattrs(int fd) {
  char names[4096];
  const ssize_t n = ::flistxattr(fd, names, sizeof names);
  for (ssize_t i = 0; i < n;) {
    const char* name = names + i;
    if (std::strncmp(name, "user.overlay.", 13) == 0) ::fremovexattr(fd, name);
    i += static_cast<ssize_t>(std::strlen(name)) + 1;
  }
}

int copy_contents(int from, int to) {
  while (true) {
    const ssize_t n = ::copy_file_range(from, nullptr, to, nullptr, 1 << 30, 0);
    if (n == 0) return 0;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS) return errno;
    char buf[65536];
    while (true) {
      const ssize_t r = ::read(from, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return errno;
      if (r == 0) return 0;
      for (ssize_t off = 0; off < r;) {
        const ssize_t w = ::write(to, buf + off, static_cast<std::size_t>(r - off));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        off += w;
      }
    }
  }
}

class Applier {
 public:
  Applier(ChangeSetInfo& set, const ApplyOptions& options) : set_(set), options_(options) {
    rules_.homes = set.homes;
    rules_.roots = set.roots;
    rules_.deny_write = set.deny_write;
  }

  ChangeSummary run() {
    ChangeSummary summary;
    summary.id = set_.id;
    std::string failure = open_roots();
    if (failure.empty()) failure = inspect();
    if (failure.empty()) judge();
    if (!failure.empty()) {
      // Nothing applied: the set waits whole for a person (`paddock changes`).
      summary.pending = failure;
      if (!options_.dry_run) {
        set_.state = "pending";
        set_.note = failure;
        save_change_set(set_);
      }
      return summary;
    }
    // Marked before the first write to the workspace: killed while applying, the set says so
    // (`paddock changes apply` finishes it: what was applied has left the layers).
    if (!options_.dry_run && !entries_.empty() && set_.state != "applying") {
      set_.state = "applying";
      save_change_set(set_);
    }
    for (Entry& e : entries_) {
      const std::string path = host_path(e);
      const bool container =
          e.kind == ChangeKind::directory && e.host_exists && S_ISDIR(e.host.st_mode) && !e.opaque;
      if (options_.on_entry && !container && (e.kind != ChangeKind::whiteout || e.host_exists)) {
        const char what = !e.held.empty()                  ? 'H'
                          : e.kind == ChangeKind::whiteout ? 'D'
                          : e.host_exists                  ? 'M'
                                                           : 'A';
        options_.on_entry({what, path, set_.upper(e.root) + "/" + e.rel, e.held});
      }
      if (!e.held.empty()) {
        // A directory the host has, only holding other changes, is no change of its own.
        if (!container) summary.held.push_back({path, e.held});
        continue;
      }
      if (container) {
        // The command changed only the directory's mode (chmod): that is a change too.
        if ((e.st.st_mode & 01777) != (e.host.st_mode & 07777)) {
          ++summary.modified;
          if (!options_.dry_run) {
            const int hp = host_dirs_[e.root].get(parent_rel(e.rel));
            if (hp < 0 || ::fchmodat(hp, base_name(e.rel).c_str(), e.st.st_mode & 01777, 0) != 0) {
              summary.pending = path + ": chmod: " + std::strerror(errno) +
                                "; applying stopped there (what came before it is in the "
                                "workspace, the rest waits in the change set)";
              break;
            }
          }
        }
        continue;
      }
      if (e.kind == ChangeKind::whiteout) {
        if (!e.host_exists) continue;
        ++summary.deleted;
      } else {
        ++(e.host_exists ? summary.modified : summary.added);
        if (e.kind == ChangeKind::file) summary.bytes += static_cast<std::uint64_t>(e.st.st_size);
      }
      if (options_.dry_run) continue;
      if (int err = apply(e)) {
        summary.pending = path + ": " + std::strerror(err) +
                          "; applying stopped there (what came before it is in the workspace, "
                          "the rest waits in the change set)";
        break;
      }
    }
    if (options_.dry_run) return summary;
    set_.held = summary.held;
    if (!summary.pending.empty()) {
      set_.state = "pending";
      set_.note = summary.pending;
      save_change_set(set_);
    } else if (!summary.held.empty()) {
      set_.state = "held";
      set_.note.clear();
      save_change_set(set_);
    } else {
      remove_change_set(set_);
    }
    return summary;
  }

 private:
  std::string host_path(const Entry& e) const {
    return e.rel.empty() ? set_.roots[e.root] : set_.roots[e.root] + "/" + e.rel;
  }

  std::string open_roots() {
    for (std::size_t i = 0; i < set_.roots.size(); ++i) {
      struct open_how how;
      std::memset(&how, 0, sizeof how);
      how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
      const int given = i < options_.root_fds.size() ? options_.root_fds[i] : -1;
      UniqueFd host(given >= 0
                        ? ::openat(given, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                        : static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, set_.roots[i].c_str(),
                                                     &how, sizeof how)));
      if (host.get() < 0) {
        return set_.roots[i] + ": " + std::strerror(errno) +
               " (the workspace moved or a link appeared on its path)";
      }
      UniqueFd upper(
          ::open(set_.upper(i).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (upper.get() < 0) return set_.upper(i) + ": " + std::strerror(errno);
      struct stat st;
      if (::fstat(host.get(), &st) != 0) return set_.roots[i] + ": " + std::strerror(errno);
      root_dev_.push_back(st.st_dev);
      host_.emplace_back(host.get());
      upper_.emplace_back(upper.get());
      host_fds_.push_back(std::move(host));
      upper_fds_.push_back(std::move(upper));
    }
    return {};
  }

  // Every entry of every layer, parents before children; bounded.
  std::string inspect() {
    for (std::size_t i = 0; i < set_.roots.size(); ++i) {
      if (std::string failure = walk(i, upper_fds_[i].get(), ""); !failure.empty()) return failure;
    }
    drop_placeholders();
    return {};
  }

  // The stand-ins paddock made for missing denyWrite paths (change_set.hpp) are no change of
  // the command's: left out while still what paddock made (an empty mode-000 file; the
  // sandbox had it bound read-only), as are the directories made for them that hold nothing
  // else. Anything else at such a path is judged as any change is (denyWrite holds it back).
  void drop_placeholders() {
    if (set_.placeholders.empty()) return;
    auto is = [&](const std::vector<std::string>& list, const Entry& e) {
      return std::find(list.begin(), list.end(), host_path(e)) != list.end();
    };
    std::erase_if(entries_, [&](const Entry& e) {
      return e.kind == ChangeKind::file && e.st.st_size == 0 && (e.st.st_mode & 07777) == 0 &&
             e.st.st_nlink == 1 && is(set_.placeholders, e);
    });
    // Deepest first, so a made directory holding only made directories goes too.
    for (std::size_t i = entries_.size(); i-- > 0;) {
      const Entry& e = entries_[i];
      if (e.kind != ChangeKind::directory || e.opaque || !is(set_.placeholder_dirs, e)) continue;
      const bool holds = i + 1 < entries_.size() && entries_[i + 1].root == e.root &&
                         paths::below(entries_[i + 1].rel, e.rel);
      if (!holds) entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  std::string walk(std::size_t root, int dir, const std::string& rel) {
    std::vector<std::string> names;
    if (int err = base::for_each_directory_entry(dir, [&](const char* n, unsigned char) {
          names.emplace_back(n);
          return true;
        })) {
      return set_.upper(root) + "/" + rel + ": " + std::strerror(err);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      if (entries_.size() >= options_.max_entries) {
        return "more than " + std::to_string(options_.max_entries) +
               " changed entries: not inspected whole, so nothing was applied";
      }
      Entry e;
      e.root = root;
      e.rel = rel.empty() ? name : rel + "/" + name;
      if (::fstatat(dir, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
        return set_.upper(root) + "/" + e.rel + ": " + std::strerror(errno);
      }
      UniqueFd sub;
      if (S_ISDIR(e.st.st_mode)) {
        e.kind = ChangeKind::directory;
        sub =
            UniqueFd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub.get() < 0) return set_.upper(root) + "/" + e.rel + ": " + std::strerror(errno);
        char value[4];
        const ssize_t n = ::fgetxattr(sub.get(), "user.overlay.opaque", value, sizeof value);
        e.opaque = n >= 1 && value[0] == 'y';
      } else if (S_ISREG(e.st.st_mode)) {
        e.kind = ChangeKind::file;
      } else if (S_ISLNK(e.st.st_mode)) {
        e.kind = ChangeKind::symlink;
      } else if (is_whiteout(e.st)) {
        e.kind = ChangeKind::whiteout;
      } else {
        e.kind = ChangeKind::special;
      }
      const std::string below = e.rel;  // a copy: entries_ grows under the recursion
      entries_.push_back(std::move(e));
      if (sub.get() >= 0) {
        if (std::string failure = walk(root, sub.get(), below); !failure.empty()) {
          return failure;
        }
      }
    }
    return {};
  }

  // Is `rel` (a directory below the root, "" the root) a git directory? What git itself
  // checks: HEAD beside objects, refs or commondir (in the layer or on the host), or the name
  // `.git`.
  bool git_dir(std::size_t root, const std::string& rel) {
    const auto key = std::make_pair(root, rel);
    if (auto it = git_dirs_.find(key); it != git_dirs_.end()) return it->second;
    bool yes = !rel.empty() && base_name(rel) == ".git";
    // HEAD on one side and objects on the other count too: the host will see them merged.
    // As git's own test: HEAD, and objects with refs, or a commondir (logs/ has HEAD and
    // refs/ too, and is no git directory).
    bool head = false, objects = false, refs = false, common = false;
    for (DirCache* cache : {&host_dirs_[root], &upper_dirs_[root]}) {
      const int fd = cache->get(rel);
      if (fd < 0) continue;
      struct stat st;
      head = head || ::fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
      objects = objects || ::fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0;
      refs = refs || ::fstatat(fd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0;
      // A linked worktree's git dir: objects, refs, config and hooks come from there.
      common = common || ::fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0;
    }
    yes = yes || (head && ((objects && refs) || common));
    git_dirs_[key] = yes;
    return yes;
  }

  // The whole file, or nullopt: a config judged by a part of it would let the rest through.
  std::optional<std::string> read_small(std::size_t root, const std::string& rel) {
    UniqueFd fd(open_beneath(upper_fds_[root].get(), rel, O_RDONLY | O_NONBLOCK));
    struct stat st;
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 65536) {
      return std::nullopt;
    }
    std::string text;
    char buf[8192];
    while (true) {
      const ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::nullopt;
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > 65536) return std::nullopt;
    }
    if (static_cast<off_t>(text.size()) != st.st_size) return std::nullopt;
    return text;
  }

  // The entry in the layer holds the same bytes as the host's file.
  bool same_bytes(const Entry& e) {
    if (!S_ISREG(e.host.st_mode) || e.host.st_size != e.st.st_size) return false;
    const int hp = host_dirs_[e.root].get(parent_rel(e.rel));
    const int up = upper_dirs_[e.root].get(parent_rel(e.rel));
    if (hp < 0 || up < 0) return false;
    const std::string name = base_name(e.rel);
    UniqueFd a(::openat(hp, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    UniqueFd b(::openat(up, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (a.get() < 0 || b.get() < 0) return false;
    char x[65536], y[65536];
    while (true) {
      const ssize_t n = ::read(a.get(), x, sizeof x);
      if (n < 0) return false;
      ssize_t got = 0;
      while (got < n) {
        const ssize_t m = ::read(b.get(), y + got, static_cast<std::size_t>(n - got));
        if (m <= 0) return false;
        got += m;
      }
      if (n == 0) return ::read(b.get(), y, 1) == 0;
      if (std::memcmp(x, y, static_cast<std::size_t>(n)) != 0) return false;
    }
  }

  static bool plausible_head(const std::string& text) {
    if (text.starts_with("ref: refs/")) return text.find('\0') == std::string::npos;
    std::size_t n = 0;
    while (n < text.size() && std::isxdigit(static_cast<unsigned char>(text[n])) != 0) ++n;
    return (n == 40 || n == 64) && (n == text.size() || text.substr(n) == "\n");
  }

  // For a deletion of the host's directory `rel` (a whiteout, or an opaque directory that
  // replaces it): why not, or empty. Walks what would be deleted (bounded): a repository in it
  // (its history), or anything the host changed during the run (a conflict), keeps it.
  std::string deletion_hold_reason(std::size_t root, const std::string& rel) {
    const int parent = host_dirs_[root].get(parent_rel(rel));
    if (parent < 0) return {};
    UniqueFd dir(
        ::openat(parent, base_name(rel).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0) return {};
    std::size_t budget = 100000;
    return scan_deleted(dir.get(), budget, 0);
  }

  std::string scan_deleted(int dir, std::size_t& budget, int depth) {
    std::vector<std::pair<std::string, unsigned char>> names;
    if (base::for_each_directory_entry(dir,
                                       [&](const char* n, unsigned char t) {
                                         names.emplace_back(n, t);
                                         return true;
                                       }) != 0 ||
        depth > 64) {
      return "a deletion of a directory that cannot be read whole";
    }
    struct stat st;
    const bool head = ::fstatat(dir, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
    for (const auto& [name, type] : names) {
      if (budget-- == 0) return "a deletion too large to check (over 100,000 entries)";
      if (name == ".git" ||
          (head && (name == "objects" || name == "refs" || name == "commondir"))) {
        return "deletes a git repository (its history)";
      }
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (st.st_ctim.tv_sec > set_.start_sec ||
          (st.st_ctim.tv_sec == set_.start_sec && st.st_ctim.tv_nsec >= set_.start_nsec)) {
        return "conflict: deletes what the host changed while the command ran (" + name + ")";
      }
      if (S_ISDIR(st.st_mode)) {
        UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub.get() < 0) return "a deletion of a directory that cannot be read whole";
        if (std::string why = scan_deleted(sub.get(), budget, depth + 1); !why.empty()) return why;
      }
    }
    return {};
  }

  void judge() {
    for (std::size_t i = 0; i < set_.roots.size(); ++i) {
      host_dirs_.emplace_back(host_fds_[i].get());
      upper_dirs_.emplace_back(upper_fds_[i].get());
    }
    // Host state of every entry, and the git directories and work trees the set touches.
    std::set<std::string> tops;
    for (std::size_t i = 0; i < set_.roots.size(); ++i) {
      // The repository around the root (its config names paths inside the root, too).
      for (std::string dir = set_.roots[i]; dir.size() > 1;
           dir = std::string(paths::parent_of(dir))) {
        struct stat st;
        if (::lstat((dir + "/.git").c_str(), &st) == 0) {
          tops.insert(dir);
          break;
        }
      }
    }
    for (Entry& e : entries_) {
      errno = 0;
      const int parent = host_dirs_[e.root].get(parent_rel(e.rel));
      // The host has a mount point or a link where the layer has a directory: applying would
      // cross it (refused below, so the entry is held, not half applied).
      if (parent < 0 && (errno == EXDEV || errno == ELOOP || errno == ENOTDIR)) {
        e.held = "a mount point or a link on the host's path to it";
      }
      e.host_exists = parent >= 0 && ::fstatat(parent, base_name(e.rel).c_str(), &e.host,
                                               AT_SYMLINK_NOFOLLOW) == 0;
      if (e.kind == ChangeKind::directory && git_dir(e.root, e.rel)) {
        const std::string path = host_path(e);
        tops.insert(base_name(e.rel) == ".git" ? std::string(paths::parent_of(path)) : path);
      }
    }
    if (!entries_.empty()) {
      for (const auto& top : tops) add_git_named_paths(rules_, top);
    }
    std::vector<std::pair<std::string, std::string>> held_dirs;  // "<root>:<rel>", reason
    for (Entry& e : entries_) {
      const std::string key = std::to_string(e.root) + ":" + e.rel;
      for (const auto& [dir, reason] : held_dirs) {
        if (paths::below(key, dir)) {
          e.held = reason;
          break;
        }
      }
      if (e.held.empty()) e.held = reason_for(e);
      if (!e.held.empty() && e.kind == ChangeKind::directory) held_dirs.emplace_back(key, e.held);
      if (options_.include_held) e.held.clear();
    }
  }

  std::string reason_for(Entry& e) {
    const std::string path = host_path(e);
    // A conflict: the host changed this entry while the command ran (or since).
    const bool replaces = e.kind != ChangeKind::directory || e.opaque || !S_ISDIR(e.host.st_mode);
    if (e.host_exists && replaces &&
        (e.host.st_ctim.tv_sec > set_.start_sec ||
         (e.host.st_ctim.tv_sec == set_.start_sec && e.host.st_ctim.tv_nsec >= set_.start_nsec))) {
      return "conflict: changed on the host while the command ran";
    }
    // A deletion of a host directory: never a repository, never what the host just wrote.
    const bool deletes_dir =
        e.host_exists && S_ISDIR(e.host.st_mode) && (e.kind != ChangeKind::directory || e.opaque);
    if (deletes_dir) {
      if (std::string why = deletion_hold_reason(e.root, e.rel); !why.empty()) return why;
    }
    // Inside a git directory: what git's porcelain writes only. Every git directory on the
    // way is asked (one can sit inside another's objects/).
    // The root itself counts: git falls back to a directory as a bare repository.
    const auto parts = paths::components(e.rel);
    std::string dir;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (k > 0) dir = dir.empty() ? parts[k - 1] : dir + "/" + parts[k - 1];
      if (!git_dir(e.root, dir)) continue;
      std::vector<std::string_view> inside(parts.begin() + static_cast<long>(k), parts.end());
      std::optional<std::string> config;
      const bool is_config = inside.size() == 1 && inside[0] == "config";
      // HEAD is read too: one that is not a ref or an object name makes git give up on this
      // directory and look further (the root as a bare repository).
      const bool is_head = inside.size() == 1 && inside[0] == "HEAD";
      if ((is_config || is_head) && e.kind == ChangeKind::file) {
        config = read_small(e.root, e.rel);
      }
      if (is_head && (e.kind == ChangeKind::whiteout ||
                      (e.kind == ChangeKind::file && (!config || !plausible_head(*config))))) {
        return "a missing or malformed HEAD (git would look for another repository)";
      }
      // git freshens an object it would write again (utime): the copy is the same bytes.
      if (inside.size() >= 2 && inside[0] == "objects" && e.kind == ChangeKind::file &&
          e.host_exists && same_bytes(e)) {
        continue;
      }
      std::string why = git_dir_hold_reason(inside, e.kind, e.host_exists,
                                            config ? &*config : nullptr, deletes_dir);
      if (!why.empty()) return why;
    }
    if (base_name(e.rel) == ".git") {
      if (e.kind == ChangeKind::whiteout || e.opaque) return "deletes a git directory";
      if (e.kind != ChangeKind::directory) {
        return "a gitfile or link named .git (it points the host's git at another directory)";
      }
    }
    // Replacing a directory (a link, a file, a deletion, an opaque directory) moves whatever
    // a protected path below it names.
    const bool replaces_dir = e.kind != ChangeKind::directory || e.opaque;
    return hold_reason(rules_, set_.roots[e.root], path, e.kind, e.st.st_mode, replaces_dir);
  }

  // One entry onto the host. 0 or an errno.
  int apply(Entry& e) {
    DirCache& hosts = host_dirs_[e.root];
    const int hp = hosts.get(parent_rel(e.rel));
    const int up = upper_dirs_[e.root].get(parent_rel(e.rel));
    if (hp < 0 || up < 0) return errno != 0 ? errno : ENOENT;
    const std::string name = base_name(e.rel);
    const dev_t dev = root_dev_[e.root];
    struct stat now;
    const bool there = ::fstatat(hp, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
    switch (e.kind) {
      case ChangeKind::whiteout:
        if (there) {
          hosts.forget(e.rel);
          if (int err = remove_tree(hp, name.c_str(), dev)) return err;
        }
        ::unlinkat(up, name.c_str(), 0);
        return 0;
      case ChangeKind::directory: {
        if (there && (!S_ISDIR(now.st_mode) || e.opaque)) {
          hosts.forget(e.rel);
          if (int err = remove_tree(hp, name.c_str(), dev)) return err;
        }
        if (!there || !S_ISDIR(now.st_mode) || e.opaque) {
          if (::mkdirat(hp, name.c_str(), 0700) != 0 && errno != EEXIST) return errno;
          // The mode the command gave it, not mkdir's mode less our umask.
          if (::fchmodat(hp, name.c_str(), e.st.st_mode & 01777, 0) != 0) return errno;
        }
        if (e.opaque) {
          // Once: a resumed apply must not clear what this one put there.
          UniqueFd fd(::openat(up, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
          if (fd.get() >= 0) ::fremovexattr(fd.get(), "user.overlay.opaque");
        }
        return 0;
      }
      case ChangeKind::file:
      case ChangeKind::symlink:
      case ChangeKind::special:
        break;
    }
    if (there && S_ISDIR(now.st_mode)) {
      hosts.forget(e.rel);
      if (int err = remove_tree(hp, name.c_str(), dev)) return err;
    }
    const unsigned flags = there && !S_ISDIR(now.st_mode) ? 0 : RENAME_NOREPLACE;
    if (e.kind == ChangeKind::file) {
      UniqueFd fd(::openat(up, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (fd.get() >= 0) strip_overlay_xattrs(fd.get());
    }
    // Same file system: the entry itself moves, in one rename (atomic on the target).
    if (::renameat2(up, name.c_str(), hp, name.c_str(), flags) == 0) return 0;
    if (errno != EXDEV) return errno == EEXIST ? EEXIST : errno;
    // Another file system: a copy beside the target, then one rename over it.
    const std::string tmp = (".paddock-apply-" + set_.id + "-" + name).substr(0, 255);
    if (e.kind == ChangeKind::symlink) {
      std::string target(static_cast<std::size_t>(e.st.st_size) + 1, '\0');
      const ssize_t n = ::readlinkat(up, name.c_str(), target.data(), target.size());
      if (n < 0) return errno;
      target.resize(static_cast<std::size_t>(n));
      ::unlinkat(hp, tmp.c_str(), 0);
      if (::symlinkat(target.c_str(), hp, tmp.c_str()) != 0) return errno;
    } else {
      UniqueFd from(::openat(up, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (from.get() < 0) return errno;
      ::unlinkat(hp, tmp.c_str(), 0);
      UniqueFd to(
          ::openat(hp, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (to.get() < 0) return errno;
      int err = S_ISREG(e.st.st_mode) ? copy_contents(from.get(), to.get()) : EINVAL;
      if (err == 0 && ::fchmod(to.get(), e.st.st_mode & 0777) != 0) err = errno;
      const struct timespec times[2] = {e.st.st_atim, e.st.st_mtim};
      if (err == 0) ::futimens(to.get(), times);
      if (err != 0) {
        ::unlinkat(hp, tmp.c_str(), 0);
        return err;
      }
    }
    if (::renameat2(hp, tmp.c_str(), hp, name.c_str(), flags) != 0) {
      const int err = errno;
      ::unlinkat(hp, tmp.c_str(), 0);
      return err;
    }
    ::unlinkat(up, name.c_str(), 0);
    return 0;
  }

  ChangeSetInfo& set_;
  const ApplyOptions& options_;
  ChangeRules rules_;
  std::vector<UniqueFd> host_fds_, upper_fds_;
  std::vector<int> host_, upper_;
  std::vector<dev_t> root_dev_;
  std::vector<DirCache> host_dirs_, upper_dirs_;
  std::vector<Entry> entries_;
  std::map<std::pair<std::size_t, std::string>, bool> git_dirs_;
};

}  // namespace

ChangeSummary apply_change_set(ChangeSetInfo& set, const ApplyOptions& options) {
  return Applier(set, options).run();
}

}  // namespace paddock::sandbox
