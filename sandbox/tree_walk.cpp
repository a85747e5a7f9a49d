#include "sandbox/tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sandbox/quarantine.hpp"

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

}  // namespace

bool TreeWalk::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return false;
}

bool TreeWalk::run(const std::string& root, const Visitor& visit) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    return fail(root + ": " + std::strerror(errno));
  }
  return walk(fd, root, 0, visit);
}

bool TreeWalk::list(const std::string& dir, std::vector<TreeEntry>& out) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
  return read_dir(fd, dir, out);
}

// Takes ownership of `fd`.
bool TreeWalk::read_dir(int fd, const std::string& path, std::vector<TreeEntry>& out) {
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return fail(path + ": " + std::strerror(errno));
  }
  bool ok = true;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (++entries_ > max_entries_) {
      bound_hit_ = true;
      ok = fail("more than " + std::to_string(max_entries_) + " directory entries");
      break;
    }
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = type_of(st.st_mode);
    }
    out.push_back({e->d_name, type});
  }
  ::closedir(d);
  if (ok && deadline_ && std::chrono::steady_clock::now() > *deadline_) {
    bound_hit_ = true;
    return fail("the time limit was reached after " + std::to_string(entries_) + " entries");
  }
  return ok;
}

// A directory we cannot read: made so by its owner. If that is us (a command runs with our
// uid: chmod 000 after planting a `.git` inside), we give ourselves u+rx through an O_PATH fd
// for as long as we walk below it (its children are looked up through it) and put the mode
// back afterwards. If it is not ours and we cannot write it either, the command (same uid, no
// capabilities) could not create anything in it: skipped. Otherwise it cannot be known what
// is inside: an error.
TreeWalk::Opened TreeWalk::open_child(int parent, const std::string& name) {
  int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 || errno != EACCES) return {fd >= 0 ? fd : -errno, -1, 0};
  int held = ::openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (held < 0) return {-errno, -1, 0};
  struct stat st;
  if (::fstat(held, &st) == 0 && st.st_uid == ::geteuid() &&
      chmod_fd(held, (st.st_mode | S_IRUSR | S_IXUSR) & 07777) == 0) {
    char proc[64];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", held);
    fd = ::open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return {fd, held, st.st_mode & 07777};
    int err = errno;
    chmod_fd(held, st.st_mode & 07777);
    ::close(held);
    return {-err, -1, 0};
  }
  const bool writable =
      ::faccessat(parent, name.c_str(), W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
  ::close(held);
  // Neither listable nor writable for us: nothing could have been made there.
  return {writable ? -EACCES : -ENOENT, -1, 0};
}

bool TreeWalk::walk(int fd, const std::string& path, int depth, const Visitor& visit) {
  std::vector<TreeEntry> entries;
  int keep = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // read_dir consumes fd; children open from keep
  if (keep < 0) {
    ::close(fd);
    return fail(path + ": " + std::strerror(errno));
  }
  if (!read_dir(fd, path, entries)) {
    ::close(keep);
    return false;
  }
  bool ok = true;
  if (visit(path, entries)) {
    for (const auto& e : entries) {
      if (e.type != DT_DIR || e.name == ".git") continue;
      std::string child = join(path, e.name);
      if (depth + 1 > max_depth_) {
        bound_hit_ = true;
        ok = fail(child + ": deeper than " + std::to_string(max_depth_) + " directories");
        break;
      }
      Opened c = open_child(keep, e.name);
      if (c.fd == -ENOENT || c.fd == -ENOTDIR || c.fd == -ELOOP) continue;  // gone or swapped
      if (c.fd < 0) {
        // Recorded (the walk's result is a failure), but the rest is still walked: a visitor
        // that quarantines should move everything it can reach.
        ok = fail(child + ": cannot be listed: " + std::strerror(-c.fd));
        continue;
      }
      bool sub = walk(c.fd, child, depth + 1, visit);
      if (c.held >= 0) {
        chmod_fd(c.held, c.mode);
        ::close(c.held);
      }
      if (!sub) {
        ok = false;
        if (bound_hit_) break;
      }
    }
  }
  ::close(keep);
  return ok;
}

}  // namespace paddock::sandbox
