#include "sandbox/working_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"

namespace paddock::sandbox {
namespace {

// The kernel's own limit for symlinks followed in one lookup.
constexpr int kMaxLinks = 40;

using Fd = UniqueFd;

bool within(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          path[dir.size()] == '/');
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class Walk {
 public:
  explicit Walk(const std::string& spelled) : spelled_(spelled) {}

  // Resolves `components` from (dir, real); both are updated to the result.
  void resolve(Fd& dir, std::string& real, const std::vector<std::string>& components) {
    for (const std::string& comp : components) {
      if (comp == ".") continue;
      if (comp == "..") {
        // The physical parent of a directory reached without links is its lexical parent.
        dir = open_at(dir, "..");
        real = parent_of(real);
        continue;
      }
      Fd next = open_at(dir, comp.c_str());
      struct stat st;
      if (::fstat(next.get(), &st) != 0) fail_changed(real + "/" + comp, errno);
      const std::string here = real == "/" ? "/" + comp : real + "/" + comp;
      if (S_ISDIR(st.st_mode)) {
        dir = std::move(next);
        real = here;
        continue;
      }
      if (!S_ISLNK(st.st_mode)) {
        throw Error(errc::spawn_failed,
                    "working directory " + spelled_ + ": " + here + " is not a directory");
      }
      if (++links_ > kMaxLinks) {
        throw Error(errc::spawn_failed,
                    "working directory " + spelled_ + ": " + std::strerror(ELOOP));
      }
      // Read from the link's own descriptor: the link that was opened, not whatever the name
      // holds now.
      char buf[4096];
      ssize_t n = ::readlinkat(next.get(), "", buf, sizeof(buf));
      if (n <= 0 || static_cast<std::size_t>(n) >= sizeof(buf)) fail_changed(here, errno);
      std::string target(buf, static_cast<std::size_t>(n));
      const std::string link_dir = real;
      if (target.front() == '/') {
        dir = Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        real = "/";
      }
      resolve(dir, real, split(target));
      if (!within(real, link_dir)) {
        throw Error(errc::config_invalid,
                    "working directory " + spelled_ + ": reached through the symlink " + here +
                        " -> " + real +
                        ", which points out of its directory; give the real path instead");
      }
    }
  }

 private:
  Fd open_at(const Fd& dir, const char* name) {
    int fd = ::openat(dir.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      throw Error(errc::spawn_failed,
                  "working directory " + spelled_ + ": " + name + ": " + std::strerror(err));
    }
    return Fd(fd);
  }
  [[noreturn]] void fail_changed(const std::string& where, int err) {
    throw Error(errc::spawn_failed, "working directory " + spelled_ + ": " + where +
                                        " changed while it was resolved (" +
                                        std::strerror(err != 0 ? err : ESTALE) + "); try again");
  }

  const std::string& spelled_;
  int links_ = 0;
};

}  // namespace

WorkingDirectory resolve_working_directory(const std::string& cwd) {
  const std::string spelled = cwd.empty() ? "." : cwd;
  Fd dir(::open(cwd.starts_with('/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    throw Error(errc::spawn_failed, "working directory " + spelled + ": " + std::strerror(errno));
  }
  // A relative path starts at our own working directory: the object we are in, named by the
  // kernel (it cannot be swapped under us, only renamed, and the final name is read below).
  std::string real = "/";
  if (!cwd.starts_with('/')) {
    char buf[4096];
    if (::getcwd(buf, sizeof(buf)) == nullptr) {
      throw Error(errc::spawn_failed, "working directory: " + std::string(std::strerror(errno)));
    }
    real = buf;
  }
  Walk walk(spelled);
  walk.resolve(dir, real, split(cwd));

  struct stat st;
  if (::fstat(dir.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw Error(errc::spawn_failed, "working directory " + spelled + ": not a directory");
  }
  // The kernel's name for the object we hold. It differs from the walk's only if a directory
  // on the way was renamed meanwhile: then the checks above may have been about another path.
  const std::string proc = "/proc/self/fd/" + std::to_string(dir.get());
  char name[4096];
  ssize_t n = ::readlink(proc.c_str(), name, sizeof(name));
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof(name) ||
      std::string(name, static_cast<std::size_t>(n)) != real) {
    throw Error(errc::spawn_failed,
                "working directory " + spelled + ": renamed while it was resolved; try again");
  }
  return {real, {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)}};
}

}  // namespace paddock::sandbox
