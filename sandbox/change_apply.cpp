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
#include "sandbox/change_applier.hpp"
#include "sandbox/change_rules.hpp"
#include "sandbox/git_index_paths.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox::applying {

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

bool is_whiteout(const struct stat& st) {
  return S_ISCHR(st.st_mode) && major(st.st_rdev) == 0 && minor(st.st_rdev) == 0;
}

void strip_overlay_xattrs(int fd) {
  char names[4096];
  const ssize_t n = ::flistxattr(fd, names, sizeof names);
  for (ssize_t i = 0; i < n;) {
    const char* name = names + i;
    if (std::strncmp(name, "user.overlay.", 13) == 0) ::fremovexattr(fd, name);
    i += static_cast<ssize_t>(std::strlen(name)) + 1;
  }
}

Applier::Applier(ChangeSetInfo& set, const ApplyOptions& options) : set_(set), options_(options) {
  rules_.homes = set.homes;
  rules_.roots = set.roots;
  rules_.deny_write = set.deny_write;
  rules_.deny_write_patterns = set.deny_write_patterns;
}

ChangeSummary Applier::run() {
  ChangeSummary summary;
  summary.id = set_.id;
  std::string failure = open_roots();
  if (failure.empty()) failure = inspect();
  if (failure.empty()) failure = judge();
  if (!failure.empty()) {
    // Nothing applied: the set waits whole for a person (`paddock changes`).
    summary.pending = failure;
    if (!options_.dry_run) {
      // A session's set stays "open" (its layers are mounted, its commands still write
      // them): `paddock changes` must never take it from under a live sandbox.
      if (!options_.keep_layer) set_.state = "pending";
      set_.note = failure;
      save_change_set(set_);
    }
    return summary;
  }
  // Marked before the first write to the workspace: killed while applying, the set says so
  // (`paddock changes apply` finishes it: what was applied has left the layers).
  if (!options_.dry_run && !options_.keep_layer && !entries_.empty() && set_.state != "applying") {
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
      // The command changed only the directory's mode (chmod): that is a change too. The
      // host's set-id bits stay as they are (a command never adds one, and a layer's copy of
      // the directory may have lost them); a directory paddock made has no mode of the
      // command's.
      // The owner keeps rwx: a directory the apply cannot open again would hide what it holds
      // from the next judge (taken for absent, its git files unseen).
      // Only a mode the command changed: the layer's copy of a directory (copied up for a
      // write below it, or mirrored for a stand-in) has the host's own, and a read-only one
      // (0555) must not come back with the owner's rwx (hostile review helper-43).
      const bool chmodded = (e.st.st_mode & 01777) != (e.host.st_mode & 01777);
      const mode_t want = ((e.st.st_mode & 01777) | 0700 | (e.host.st_mode & 06000)) &
                          ~static_cast<mode_t>(e.in_git_dir ? 022 : 0);
      if (!e.made && chmodded && want != (e.host.st_mode & 07777)) {
        ++summary.modified;
        if (!options_.dry_run) {
          const int hp = host_dirs_[e.root].get(parent_rel(e.rel));
          if (hp < 0 || ::fchmodat(hp, base_name(e.rel).c_str(), want, 0) != 0) {
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
  if (options_.keep_layer) {
    // The session goes on: the set stays open, saying what waits (held, or a stop).
    if (set_.held != summary.held || set_.note != summary.pending) {
      set_.held = summary.held;
      set_.note = summary.pending;
      save_change_set(set_);
    }
    return summary;
  }
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
    retire_change_set(set_);
  }
  return summary;
}

std::string Applier::open_roots() {
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
    UniqueFd upper(::open(set_.upper(i).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
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

std::string Applier::inspect() {
  for (std::size_t i = 0; i < set_.roots.size(); ++i) {
    if (std::string failure = walk(i, upper_fds_[i].get(), ""); !failure.empty()) return failure;
  }
  drop_placeholders();
  return {};
}

void Applier::drop_placeholders() {
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
    Entry& e = entries_[i];
    if (e.kind != ChangeKind::directory || e.opaque || !is(set_.placeholder_dirs, e)) continue;
    const bool holds = i + 1 < entries_.size() && entries_[i + 1].root == e.root &&
                       paths::below(entries_[i + 1].rel, e.rel);
    if (!holds) {
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      e.made = true;  // kept for what it holds; its mode is paddock's
    }
  }
}

std::string Applier::walk(std::size_t root, int dir, const std::string& rel) {
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
      sub = UniqueFd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
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
    walked_.emplace(root, below);
    entries_.push_back(std::move(e));
    if (sub.get() >= 0) {
      if (std::string failure = walk(root, sub.get(), below); !failure.empty()) {
        return failure;
      }
    }
  }
  return {};
}

void Applier::record_applied(const Entry& e, int host_parent) {
  ChangeSetInfo::Applied a;
  a.layer_ino = e.st.st_ino;
  a.layer_size = e.st.st_size;
  a.layer_ctime = e.st.st_ctim;
  a.directory = e.kind == ChangeKind::directory;
  struct stat now;
  if (e.kind != ChangeKind::whiteout &&
      ::fstatat(host_parent, base_name(e.rel).c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0) {
    a.host_present = true;
    a.host_dev = now.st_dev;
    a.host_ino = now.st_ino;
    a.host_ctime = now.st_ctim;
  }
  a.index_key = index_key(e);
  set_.applied[{e.root, e.rel}] = a;
}

std::string Applier::index_key(const Entry& e) {
  if (e.kind != ChangeKind::file || base_name(e.rel) != "index") return {};
  std::string text;
  if (!layer_bytes(e.root, e.rel).read_all(std::size_t{512} << 20, text)) return {};
  const auto key = index_content_key(text, *object_name_lengths(e.root, parent_rel(e.rel)).begin());
  return key.value_or(std::string());
}

int Applier::apply(Entry& e) {
  const int err = apply_entry(e);
  if (err == 0 && options_.keep_layer) {
    const int hp = host_dirs_[e.root].get(parent_rel(e.rel));
    if (hp >= 0) record_applied(e, hp);
  }
  return err;
}

int Applier::apply_entry(Entry& e) {
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
      if (!options_.keep_layer) ::unlinkat(up, name.c_str(), 0);
      return 0;
    case ChangeKind::directory: {
      if (there && (!S_ISDIR(now.st_mode) || e.opaque)) {
        hosts.forget(e.rel);
        if (int err = remove_tree(hp, name.c_str(), dev)) return err;
      }
      if (!there || !S_ISDIR(now.st_mode) || e.opaque) {
        if (::mkdirat(hp, name.c_str(), 0700) != 0 && errno != EEXIST) return errno;
        // The mode the command gave it, not mkdir's mode less our umask.
        // (Never less than rwx for the owner: see the container's chmod in run().)
        const mode_t mode =
            ((e.st.st_mode & 01777) | 0700) & ~static_cast<mode_t>(e.in_git_dir ? 022 : 0);
        if (::fchmodat(hp, name.c_str(), mode, 0) != 0) return errno;
      }
      if (e.opaque && !options_.keep_layer) {
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
  if (!options_.keep_layer) {
    if (e.kind == ChangeKind::file) {
      UniqueFd fd(::openat(up, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (fd.get() >= 0) strip_overlay_xattrs(fd.get());
      // No group or other write permission in a git directory (Entry::in_git_dir).
      if (fd.get() >= 0 && e.in_git_dir && (e.st.st_mode & 022) != 0) {
        ::fchmod(fd.get(), e.st.st_mode & 07755);
      }
    }
    // Same file system: the entry itself moves, in one rename (atomic on the target).
    if (::renameat2(up, name.c_str(), hp, name.c_str(), flags) == 0) return 0;
    if (errno != EXDEV) return errno == EEXIST ? EEXIST : errno;
  }
  // Another file system, or a layer still mounted: a copy beside the target, then one
  // rename over it.
  const std::string tmp = (".paddock-apply-" + set_.id + "-" + name).substr(0, 255);
  if (e.kind == ChangeKind::symlink) {
    std::string target(static_cast<std::size_t>(e.st.st_size) + 1, '\0');
    const ssize_t n = ::readlinkat(up, name.c_str(), target.data(), target.size());
    if (n < 0) return errno;
    target.resize(static_cast<std::size_t>(n));
    ::unlinkat(hp, tmp.c_str(), 0);
    if (::symlinkat(target.c_str(), hp, tmp.c_str()) != 0) return errno;
  } else {
    // Under keep_layer, the bytes the judge read (their staged copy).
    if (!S_ISREG(e.st.st_mode)) return EINVAL;
    const LayerBytes from = layer_bytes(e.root, e.rel);
    if (from.fd < 0) return ENOENT;
    ::unlinkat(hp, tmp.c_str(), 0);
    UniqueFd to(
        ::openat(hp, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (to.get() < 0) return errno;
    int err = copy_range(from.fd, from.at, to.get(), 0, from.size);
    if (err == 0 && ::ftruncate(to.get(), from.size) != 0) err = errno;
    const mode_t mode = e.st.st_mode & (e.in_git_dir ? 0755 : 0777);
    if (err == 0 && ::fchmod(to.get(), mode) != 0) err = errno;
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
  if (!options_.keep_layer) ::unlinkat(up, name.c_str(), 0);
  return 0;
}

}  // namespace paddock::sandbox::applying

namespace paddock::sandbox {

ChangeSummary apply_change_set(ChangeSetInfo& set, const ApplyOptions& options) {
  return applying::Applier(set, options).run();
}

}  // namespace paddock::sandbox
