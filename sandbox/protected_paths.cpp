#include "sandbox/protected_paths.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace paddock::sandbox {
namespace {

// Deeper than this, a created tree is not removed (and the run fails): no legitimate protected
// path is nested a thousand levels, and the removal recurses.
constexpr int kMaxDepth = 1000;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Empties and removes the directory `name` in `parent`, never following a symlink: every
// step is relative to a directory fd opened with O_NOFOLLOW. Returns 0 or an errno.
int remove_tree_at(int parent, const char* name, int depth) {
  if (depth > kMaxDepth) return ELOOP;
  Fd dir(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return errno;
  // A directory the command made unwritable (chmod 555) is ours: make it removable again.
  ::fchmod(dir.get(), 0700);
  int dup = ::dup(dir.get());
  if (dup < 0) return errno;
  DIR* stream = ::fdopendir(dup);
  if (stream == nullptr) {
    ::close(dup);
    return errno;
  }
  int err = 0;
  while (dirent* e = ::readdir(stream)) {
    std::string_view entry = e->d_name;
    if (entry == "." || entry == "..") continue;
    struct stat st;
    if (::fstatat(dir.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    int rc = S_ISDIR(st.st_mode) ? remove_tree_at(dir.get(), e->d_name, depth + 1)
                                 : (::unlinkat(dir.get(), e->d_name, 0) == 0 ? 0 : errno);
    if (rc != 0 && err == 0) err = rc;
  }
  ::closedir(stream);
  if (err != 0) return err;
  return ::unlinkat(parent, name, AT_REMOVEDIR) == 0 ? 0 : errno;
}

// Removes what lies at `path` (absolute, canonical as it was when the command started).
// Walks from "/" one component at a time without following symlinks: the first component that
// is missing means nothing was created; a symlink on the way, or the last component, is what
// the command made, and goes (a symlink as a link, never its target). Returns:
// -1 nothing there, 0 removed, or an errno.
int remove_created(const std::string& path, std::string& removed) {
  // The common case, cheaply: the path is missing and so is everything up to an ancestor that
  // is a real directory (the writable root, or a directory above the protected name):
  // nothing was created on the way. Only otherwise walk it component by component.
  struct stat seen;
  if (::lstat(path.c_str(), &seen) != 0 && errno == ENOENT) {
    std::string up = path;
    while (true) {
      auto slash = up.rfind('/');
      up.resize(slash == 0 ? 1 : slash);
      if (::lstat(up.c_str(), &seen) == 0) {
        if (S_ISDIR(seen.st_mode)) return -1;
        break;
      }
      if (errno != ENOENT || up == "/") break;
    }
  }
  Fd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return errno;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string name = path.substr(start, end - start);
    const bool last = end == path.size();
    start = end + 1;
    if (name.empty()) continue;
    struct stat st;
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return errno == ENOENT ? -1 : errno;
    }
    removed = path.substr(0, end);
    if (!last && S_ISDIR(st.st_mode)) {
      Fd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) return errno;
      dir = Fd(next.release());
      continue;
    }
    if (!last && !S_ISLNK(st.st_mode)) return -1;  // a file where a directory would be
    if (S_ISDIR(st.st_mode)) return remove_tree_at(dir.get(), name.c_str(), 0);
    return ::unlinkat(dir.get(), name.c_str(), 0) == 0 ? 0 : errno;
  }
  return -1;
}

}  // namespace

std::vector<Violation> revert_created_protected_paths(const std::vector<std::string>& paths,
                                                      const std::string& program, bool* failed) {
  std::vector<Violation> out;
  if (failed != nullptr) *failed = false;
  for (const auto& path : paths) {
    std::string removed;
    int rc = remove_created(path, removed);
    if (rc < 0) continue;
    Violation v;
    v.operation = "file-write";
    v.path = removed;
    v.process = program;
    if (rc == 0) {
      v.detail = "created a protected path (read-only in the sandbox); removed after the command";
    } else {
      v.detail = std::string(
                     "created a protected path (read-only in the sandbox); removing it "
                     "failed: ") +
                 std::strerror(rc);
      if (failed != nullptr) *failed = true;
    }
    v.raw = "protected path created: " + path;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace paddock::sandbox
