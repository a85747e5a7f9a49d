// A session's apply (ApplyOptions::keep_layer) runs while the session's processes still run
// and may write the layer. So every regular file is first copied, once, into a private
// unlinked file of ours (O_TMPFILE in the set's directory), and the judge reads and the apply
// writes exactly those bytes: what a process changes between the judge's read and the copy
// (an index swapped for one the judge refused, a config grown a hook) never reaches the host
// unjudged. A file that changes while it is copied waits for a later apply.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/change_applier.hpp"

namespace paddock::sandbox::applying {

int copy_bytes(int from, int to, off_t size) {
  // Holes stay holes (a sparse terabyte in the layer must not become a full disk on the
  // host), and nothing past `size` is copied (a file growing meanwhile is cut there).
  off_t pos = 0;
  while (pos < size) {
    off_t data = ::lseek(from, pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole from here
    if (data < 0) data = pos;               // no SEEK_DATA here: all of it is data
    if (data >= size) break;
    off_t hole = ::lseek(from, data, SEEK_HOLE);
    if (hole < 0 || hole > size) hole = size;
    off_t in = data, out = data;
    while (in < hole) {
      const ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<size_t>(hole - in), 0);
      if (n > 0) continue;
      if (n == 0) return EIO;  // shorter than it said: changed under us
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS) {
        return errno;
      }
      char buf[65536];
      const ssize_t r =
          ::pread(from, buf, static_cast<size_t>(std::min<off_t>(hole - in, 65536)), in);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return errno;
      if (r == 0) return EIO;
      for (ssize_t off = 0; off < r;) {
        const ssize_t w = ::pwrite(to, buf + off, static_cast<size_t>(r - off), out);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        off += w;
        out += w;
      }
      in += r;
    }
    pos = hole;
  }
  return ::ftruncate(to, size) == 0 ? 0 : errno;
}

int copy_contents(int from, int to) {
  struct stat st;
  if (::fstat(from, &st) != 0) return errno;
  return copy_bytes(from, to, st.st_size);
}

namespace {
bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}
}  // namespace

std::string Applier::stage_files() {
  std::erase_if(entries_, [&](Entry& e) {
    if (e.kind != ChangeKind::file) return false;
    UniqueFd src(open_beneath(upper_fds_[e.root].get(), e.rel, O_RDONLY | O_NONBLOCK));
    struct stat before, after;
    if (src.get() < 0 || ::fstat(src.get(), &before) != 0 || !S_ISREG(before.st_mode) ||
        before.st_ino != e.st.st_ino) {
      return true;  // replaced since the walk: the next apply sees what it is then
    }
    UniqueFd copy(::open(set_.dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (copy.get() < 0) {
      staging_error_ = set_.dir + ": a private copy (O_TMPFILE): " + std::strerror(errno);
      return false;
    }
    if (int err = copy_bytes(src.get(), copy.get(), before.st_size); err != 0) {
      if (err != EIO) staging_error_ = set_.upper(e.root) + "/" + e.rel + ": " + std::strerror(err);
      return err == EIO;
    }
    // Written while it was copied: not these bytes, nor any; a later apply takes it.
    if (::fstat(src.get(), &after) != 0 || after.st_size != before.st_size ||
        !same_time(after.st_ctim, before.st_ctim) || !same_time(after.st_mtim, before.st_mtim)) {
      return true;
    }
    e.st = before;
    staged_[{e.root, e.rel}] = std::move(copy);
    return false;
  });
  return staging_error_;
}

int Applier::open_layer(std::size_t root, const std::string& rel) {
  if (auto it = staged_.find({root, rel}); it != staged_.end()) {
    // A descriptor of its own (its own offset), from the start.
    UniqueFd fd(::open(("/proc/self/fd/" + std::to_string(it->second.get())).c_str(),
                       O_RDONLY | O_CLOEXEC));
    return fd.release();
  }
  if (options_.keep_layer) {
    // Not staged: a file that changed while it was copied, or not a file; nothing of the
    // layer is read unstaged while the session's processes run.
    errno = ENOENT;
    return -1;
  }
  return open_beneath(upper_fds_[root].get(), rel, O_RDONLY | O_NONBLOCK);
}

}  // namespace paddock::sandbox::applying
