#include "sandbox/root_views.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "paddock/errors.hpp"

namespace paddock::sandbox {
namespace {

thread_local const RootViews* t_active = nullptr;

bool holds(std::string_view root, std::string_view path) {
  if (root == "/") return true;
  return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

void RootViews::add(const std::string& path) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  // A root inside one opened before is opened from that one's descriptor: it is then the
  // directory the outer root's tree holds, even if the names above were swapped in between.
  int from = AT_FDCWD;
  std::string name = path, from_path;
  if (const Root* outer = holding(path); outer != nullptr) {
    from = outer->fd.get();
    from_path = outer->path;
    const auto rest = beneath(path).second;
    name = rest.empty() ? std::string(".") : std::string(rest);
    how.resolve |= RESOLVE_BENEATH;
  }
  const long fd = ::syscall(SYS_openat2, from, name.c_str(), &how, sizeof how);
  if (fd < 0) {
    const int err = errno;
    throw Error(errc::spawn_failed, path + ": changed while the sandbox was planned (" +
                                        (err == ELOOP ? std::string("a symlink appeared on the way")
                                                      : std::string(std::strerror(err))) +
                                        "); try again");
  }
  roots_.push_back({path, UniqueFd(static_cast<int>(fd)), std::move(from_path)});
}

void RootViews::add_all(std::vector<std::string> paths) {
  // By length: a root inside another is longer; the map order kept for equal lengths.
  std::stable_sort(paths.begin(), paths.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  for (const auto& p : paths) add(p);
}

std::string RootViews::opened_from(std::string_view path) const {
  for (const Root& r : roots_) {
    if (r.path == path) return r.from;
  }
  return {};
}

const RootViews::Root* RootViews::holding(std::string_view path) const {
  const Root* best = nullptr;
  for (const Root& r : roots_) {
    if (holds(r.path, path) && (best == nullptr || r.path.size() > best->path.size())) best = &r;
  }
  return best;
}

std::string RootViews::view(const std::string& path) const {
  const auto [fd, rest] = beneath(path);
  if (fd < 0) return path;
  // "/." for the root itself: the magic link alone would be the link, not the directory
  // (an lstat or an O_NOFOLLOW open would see a symlink).
  std::string out = "/proc/self/fd/" + std::to_string(fd) + "/";
  out += rest.empty() ? std::string_view(".") : rest;
  return out;
}

std::pair<int, std::string_view> RootViews::beneath(std::string_view path) const {
  const Root* r = holding(path);
  if (r == nullptr) return {-1, path};
  std::string_view rest = path.substr(r->path == "/" ? 0 : r->path.size());
  while (rest.starts_with('/')) rest.remove_prefix(1);
  return {r->fd.get(), rest};
}

RootViews::Active::Active(const RootViews* views) : outer_(t_active) {
  if (views != nullptr) t_active = views;
}
RootViews::Active::~Active() { t_active = outer_; }

std::string stable_path(const std::string& path) {
  return t_active != nullptr ? t_active->view(path) : path;
}

std::pair<int, std::string_view> stable_beneath(std::string_view path) {
  return t_active != nullptr ? t_active->beneath(path) : std::pair<int, std::string_view>{-1, path};
}

}  // namespace paddock::sandbox
