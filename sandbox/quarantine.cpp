#include "sandbox/quarantine.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <random>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox {
namespace {

constexpr std::string_view kSuffix = ".paddock-quarantine-";

using Fd = UniqueFd;

// The walk's state: the directory it stands in, and every mode it changed on the way (put
// back, deepest first, when the walk ends: the host finds its modes as the command left them,
// minus the entry that was moved).
class Walk {
 public:
  // From `/`, or from a writable root's descriptor (root_views.hpp) when `path` lies below
  // one: `skip()` characters of `path` are then already walked.
  explicit Walk(const std::string& path) {
    auto [root, rest] = stable_beneath(path);
    if (root >= 0) {
      dir_ = Fd(::openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
      skip_ = path.size() - rest.size();
    } else {
      dir_ = Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    }
  }
  ~Walk() {
    for (auto it = changed_.rbegin(); it != changed_.rend(); ++it)
      chmod_fd(it->first.get(), it->second);
  }
  Walk(const Walk&) = delete;

  int dir() const noexcept { return dir_.get(); }
  std::size_t skip() const noexcept { return skip_; }

  // Gives the current directory the permission bits `need` for its owner, if it lacks them
  // and we own it (a root supervisor overrides modes anyway). True if something changed.
  bool grant(mode_t need) {
    struct stat st;
    if (::fstat(dir_.get(), &st) != 0) return false;
    if ((st.st_mode & need) == need || st.st_uid != ::geteuid()) return false;
    Fd keep(::fcntl(dir_.get(), F_DUPFD_CLOEXEC, 0));
    if (keep.get() < 0 || chmod_fd(dir_.get(), (st.st_mode | need) & 07777) != 0) return false;
    changed_.emplace_back(std::move(keep), st.st_mode & 07777);
    return true;
  }

  int lstat_at(const char* name, struct stat& st) {
    if (::fstatat(dir_.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0) return 0;
    // chmod 000 on a directory of the path: search permission is ours to give back.
    if (errno == EACCES && grant(S_IXUSR) &&
        ::fstatat(dir_.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      return 0;
    }
    return errno;
  }

  int enter(const char* name) {
    Fd next(::openat(dir_.get(), name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) return errno;
    dir_ = std::move(next);
    return 0;
  }

  // Renames `name` in the current directory to a quarantine name no other entry has.
  // `hidden`: the new name starts with a dot, which git's iteration of refs/, logs/ and
  // objects/ skips (`git log --all` opens every loose ref by name, a quarantined one too).
  int move(const std::string& name, const std::string& tag, std::string& new_name, bool hidden) {
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::string extra = attempt == 0 ? "" : "-" + std::to_string(attempt);
      new_name =
          (hidden && !name.starts_with('.') ? "." : "") + name + std::string(kSuffix) + tag + extra;
      // NAME_MAX: a long name loses its own spelling, never the quarantine marker.
      if (new_name.size() > 255) new_name = std::string(kSuffix) + tag + extra;
      int rc = rename_noreplace(name, new_name);
      if ((rc == EACCES || rc == EPERM) && grant(S_IWUSR | S_IXUSR)) {
        rc = rename_noreplace(name, new_name);
      }
      if (rc != EEXIST) return rc;
    }
    return EEXIST;
  }

 private:
  int rename_noreplace(const std::string& from, const std::string& to) {
    // NOREPLACE: the quarantine never overwrites anything, the host's files included.
    return ::renameat2(dir_.get(), from.c_str(), dir_.get(), to.c_str(), RENAME_NOREPLACE) == 0
               ? 0
               : errno;
  }

  Fd dir_;
  std::size_t skip_ = 0;
  std::vector<std::pair<Fd, mode_t>> changed_;
};

bool special(mode_t mode) {
  return S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISCHR(mode) || S_ISBLK(mode);
}

enum class Mode { created, special_only, replaced, changed };

QuarantineOutcome walk_and_move(const std::string& path, const std::string& tag, Mode mode,
                                const ResolvedFilesystem::Identity* was = nullptr) {
  QuarantineOutcome out;
  Walk walk(path);
  if (walk.dir() < 0) {
    return {QuarantineOutcome::failed, path, {}, errno, ""};
  }
  std::size_t start = std::max<std::size_t>(walk.skip(), 1);
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(start, end - start);
    const bool last = end == path.size();
    start = end + 1;
    if (name.empty()) continue;
    struct stat st;
    if (int rc = walk.lstat_at(name.c_str(), st); rc != 0) {
      if (rc == ENOENT || rc == ENOTDIR) return out;
      return {QuarantineOutcome::failed, path.substr(0, end), {}, rc, ""};
    }
    if (!last && S_ISDIR(st.st_mode)) {
      if (int rc = walk.enter(name.c_str()); rc != 0) {
        if (rc == ENOENT) return out;  // moved away meanwhile (a concurrent audit)
        return {QuarantineOutcome::failed, path.substr(0, end), {}, rc, "directory"};
      }
      continue;
    }
    if (!last && !S_ISLNK(st.st_mode))
      return out;  // a file where a directory was: nothing under it
    if (mode == Mode::special_only) {
      if (!last) return out;  // the git dir itself moved away: not this check's business
      struct stat target = st;
      if (S_ISLNK(st.st_mode) && ::fstatat(walk.dir(), name.c_str(), &target, 0) != 0) return out;
      if (!special(target.st_mode)) return out;
    }
    // The same file, unless it gained a second name during the run (a file with one name at
    // planning (two are refused then) that has two now was linked by a command, which can
    // put it back after a concurrent audit moved it, and rewrite it through the other name),
    // or changed at all (its ctime: see quarantine_if_replaced).
    if ((mode == Mode::replaced || mode == Mode::changed) && last && st.st_dev == was->dev &&
        st.st_ino == was->ino && !(S_ISREG(st.st_mode) && st.st_nlink > 1) &&
        (mode == Mode::replaced || S_ISDIR(st.st_mode) ||
         (st.st_ctim.tv_sec == was->ctime_sec && st.st_ctim.tv_nsec == was->ctime_nsec &&
          st.st_size == was->size && st.st_mtim.tv_sec == was->mtime_sec &&
          st.st_mtim.tv_nsec == was->mtime_nsec))) {
      return out;
    }
    out.path = path.substr(0, end);
    out.type = describe_mode(st.st_mode);
    std::string new_name;
    if (int rc = walk.move(name, tag, new_name, mode == Mode::special_only); rc != 0) {
      // Gone between the lstat and the rename: another audit (a concurrent sandbox's) moved
      // it first. Nothing is at the path any more, which is all this walk is for.
      if (rc == ENOENT) return {};
      out.kind = QuarantineOutcome::failed;
      out.error = rc;
      return out;
    }
    out.kind = QuarantineOutcome::moved;
    out.moved_to = out.path.substr(0, out.path.size() - name.size()) + new_name;
    return out;
  }
  return out;
}

}  // namespace

std::string new_quarantine_tag() {
  static std::atomic<unsigned> counter{0};
  static const unsigned salt = std::random_device{}();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%d-%u-%08x", static_cast<int>(::getpid()), ++counter, salt);
  return buf;
}

std::vector<bool> certainly_absent(const std::vector<std::string>& paths) {
  std::vector<bool> absent(paths.size(), false);
  std::unordered_map<std::string, Fd> parents;  // "" when the walk to it failed: not certain
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::size_t slash = path.rfind('/');
    if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size())
      continue;
    const std::string parent = path.substr(0, slash);
    auto it = parents.find(parent);
    if (it == parents.end()) {
      // As the quarantine's walk: from the writable root holding it, else from `/`.
      auto [root, rest] = stable_beneath(parent);
      Fd dir(root >= 0 ? ::openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
                       : ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
      for (std::size_t start = std::max<std::size_t>(parent.size() - rest.size(), 1);
           dir.get() >= 0 && start <= parent.size();) {
        std::size_t end = parent.find('/', start);
        if (end == std::string::npos) end = parent.size();
        const std::string name = parent.substr(start, end - start);
        start = end + 1;
        if (name.empty()) continue;
        dir = Fd(::openat(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      }
      it = parents.emplace(parent, std::move(dir)).first;
    }
    if (it->second.get() < 0) continue;
    struct stat st;
    absent[i] =
        ::fstatat(it->second.get(), path.c_str() + slash + 1, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
        errno == ENOENT;
  }
  return absent;
}

QuarantineOutcome quarantine_created(const std::string& path, const std::string& tag) {
  return walk_and_move(path, tag, Mode::created);
}

QuarantineOutcome quarantine_if_replaced(const ResolvedFilesystem::Identity& was,
                                         const std::string& tag, bool compare_ctime) {
  return walk_and_move(was.path, tag, compare_ctime ? Mode::changed : Mode::replaced, &was);
}

QuarantineOutcome quarantine_if_special(const std::string& path, const std::string& tag) {
  return walk_and_move(path, tag, Mode::special_only);
}

int chmod_fd(int fd, unsigned mode) {
  char proc[64];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  return ::chmod(proc, static_cast<mode_t>(mode)) == 0 ? 0 : errno;
}

const char* describe_mode(unsigned mode) noexcept {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  return "file";
}

}  // namespace paddock::sandbox
