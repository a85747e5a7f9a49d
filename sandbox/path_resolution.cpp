#include "sandbox/path_resolution.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox::paths {
namespace {
constexpr int kMaxSymlinks = 40;  // the kernel's limit for one lookup
}  // namespace

std::string where_message(const Where& w, const std::string& why) {
  std::string msg = w.field;
  if (w.index != std::string::npos) msg += "[" + std::to_string(w.index) + "]";
  msg += ": ";
  for (char c : w.entry) c == '\0' ? msg += "\\0" : msg += c;  // a NUL would end it early
  return msg + ": " + why;
}

[[noreturn]] void invalid(const Where& w, const std::string& why) {
  throw Error(errc::config_invalid, where_message(w, why));
}

std::string join(const std::string& dir, std::string_view name) {
  std::string out = dir;
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

// `inner` is `outer` or below it (both canonical).
bool within(std::string_view inner, std::string_view outer) {
  if (outer == "/") return true;
  return inner.size() >= outer.size() && inner.substr(0, outer.size()) == outer &&
         (inner.size() == outer.size() || inner[outer.size()] == '/');
}

bool below(std::string_view inner, std::string_view outer) {
  return inner != outer && within(inner, outer);
}

std::size_t depth(std::string_view path) {
  return path == "/" ? 0 : static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

namespace {
thread_local LstatMemo* t_memo = nullptr;
}

LstatMemo::LstatMemo() : outer_(t_memo) { t_memo = this; }
LstatMemo::~LstatMemo() { t_memo = outer_; }

int lstat_once(const std::string& path, struct stat& st) {
  if (t_memo != nullptr) {
    if (auto it = t_memo->seen_.find(path); it != t_memo->seen_.end()) {
      st = it->second.second;
      return it->second.first;
    }
  }
  const int err = ::lstat(stable_path(path).c_str(), &st) == 0 ? 0 : errno;
  if (t_memo != nullptr) t_memo->seen_.emplace(path, std::make_pair(err, st));
  return err;
}

bool is_real_directory(const std::string& path) {
  struct stat st;
  return lstat_once(path, st) == 0 && S_ISDIR(st.st_mode);
}

bool in_own_groups(gid_t gid) {
  if (gid == ::getegid()) return true;
  gid_t groups[256];
  const int n = ::getgroups(256, groups);
  return std::find(groups, groups + std::max(n, 0), gid) != groups + std::max(n, 0);
}

bool sandbox_can_search(const struct stat& st) {
  if (st.st_uid == ::geteuid()) return (st.st_mode & S_IXUSR) != 0;
  return (st.st_mode & (in_own_groups(st.st_gid) ? S_IXGRP : S_IXOTH)) != 0;
}

std::string_view parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

std::vector<std::string> components(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t end = s.find('/', i);
    if (end == std::string_view::npos) end = s.size();
    if (end > i) out.emplace_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

// realpath(3) that also takes paths that do not exist yet. `base` is canonical; `rest` is
// resolved from it (an absolute `rest` starts over at `/`). Symlinks are followed wherever
// they are, so a link in the workspace that points out yields the real target, and `..` after
// a link means the target's parent, as for the kernel. Components past the first missing one
// are applied lexically: nothing on the host can be a symlink there yet.
Resolved resolve_from(std::string_view base, std::string_view rest) {
  Resolved r;
  std::string& cur = r.path;  // built in place: this runs ~100 times per command
  cur.reserve(base.size() + rest.size() + 32);
  cur = rest.starts_with('/') ? std::string_view("/") : base;
  std::string pending;  // owns what `todo` views once a symlink was expanded
  std::string_view todo = rest;
  std::size_t missing = 0;  // trailing components of `cur` that do not exist
  mode_t mode = S_IFDIR;    // of `cur` when missing == 0, else of its existing part
  int first_missing_errno = 0;
  int followed = 0;
  while (true) {
    while (todo.starts_with('/')) todo.remove_prefix(1);
    if (todo.empty()) break;
    std::string_view comp = todo.substr(0, todo.find('/'));
    todo.remove_prefix(comp.size());
    if (comp == ".") continue;
    if (comp == "..") {
      if (cur != "/") cur.resize(std::max<std::size_t>(cur.rfind('/'), 1));
      if (missing > 0) {
        --missing;
      } else {
        mode = S_IFDIR;
      }
      continue;
    }
    const std::size_t keep = cur.size();
    if (cur != "/") cur += '/';
    cur += comp;
    if (missing > 0) {
      ++missing;
      continue;
    }
    struct stat st;
    if (const int err = lstat_once(cur, st); err != 0) {
      if (err != ENOENT && err != ENOTDIR && err != EACCES) {
        throw Unresolvable(cur + ": " + std::strerror(err));
      }
      missing = 1;
      first_missing_errno = err;
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++followed > kMaxSymlinks) throw Unresolvable("too many levels of symbolic links");
      char buf[4096];
      ssize_t n = ::readlink(stable_path(cur).c_str(), buf, sizeof buf);
      if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) {
        throw Unresolvable(cur + ": unreadable symbolic link");
      }
      r.links.push_back(cur);
      std::string next(buf, static_cast<std::size_t>(n));
      next += '/';
      next += todo;
      pending = std::move(next);
      todo = pending;
      cur.resize(keep);
      if (todo.front() == '/') cur = "/";
      continue;
    }
    mode = st.st_mode;
  }
  r.exists = missing == 0;
  r.is_dir = r.exists && S_ISDIR(mode);
  r.creatable = !r.exists && first_missing_errno == ENOENT;
  r.unsearchable = !r.exists && first_missing_errno == EACCES;
  return r;
}

bool Listings::certainly_missing(std::string dir, std::string_view rel) {
  for (const std::string& comp : components(rel)) {
    const Names& names = list(dir);
    if (!names) return false;
    auto it = names->find(comp);
    if (it == names->end()) return true;
    if (it->second != DT_DIR) return false;  // a file, or a link resolve_from must follow
    dir = join(dir, comp);
  }
  return false;
}

const Listings::Names& Listings::list(const std::string& dir) {
  auto [it, fresh] = cache_.try_emplace(dir);
  if (!fresh) return it->second;
  // Not searchable: an lstat below it fails with EACCES (unknown, not missing).
  const std::string seen = stable_path(dir);
  if (::faccessat(AT_FDCWD, seen.c_str(), X_OK, AT_EACCESS) != 0) return it->second;
  UniqueFd fd(::open(seen.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return it->second;
  Names::value_type names;
  if (base::for_each_directory_entry(fd.get(), [&](const char* name, unsigned char type) {
        names.emplace(name, type);
        return true;
      }) == 0) {
    it->second = std::move(names);
  }
  return it->second;
}

// The pseudo filesystems a glob walk never enters: huge, synthetic, and the mount layer's.
bool pseudo_fs(std::string_view path) { return within(path, "/proc") || within(path, "/sys"); }

}  // namespace paddock::sandbox::paths
