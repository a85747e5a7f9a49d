// A session's apply (ApplyOptions::keep_layer) runs while the session's processes still run
// and may write the layer. So every regular file is first copied, once, into a private
// unlinked file of ours (O_TMPFILE in the set's directory), and the judge reads and the apply
// writes exactly those bytes: what a process changes between the judge's read and the copy
// (an index swapped for one the judge refused, a config grown a hook) never reaches the host
// unjudged. A file that changes while it is copied waits for a later apply.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sandbox/change_applier.hpp"

namespace paddock::sandbox::applying {

int copy_range(int from, off_t from_at, int to, off_t to_at, off_t size) {
  // Holes stay holes (a sparse terabyte in the layer must not become a full disk on the
  // host), and nothing past `size` is copied (a file growing meanwhile is cut there).
  off_t pos = 0;
  while (pos < size) {
    off_t data = ::lseek(from, from_at + pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;   // only a hole from here
    data = data < 0 ? pos : data - from_at;  // no SEEK_DATA here: all of it is data
    if (data >= size) break;
    off_t hole = ::lseek(from, from_at + data, SEEK_HOLE);
    hole = hole < 0 ? size : std::min(hole - from_at, size);
    off_t in = from_at + data, out = to_at + data;
    const off_t end = from_at + hole;
    while (in < end) {
      const ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<size_t>(end - in), 0);
      if (n > 0) continue;
      if (n == 0) return EIO;  // shorter than it said: changed under us
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS) {
        return errno;
      }
      char buf[65536];
      const ssize_t r =
          ::pread(from, buf, static_cast<size_t>(std::min<off_t>(end - in, 65536)), in);
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
  return 0;
}

int copy_bytes(int from, int to, off_t size) {
  if (int err = copy_range(from, 0, to, 0, size)) return err;
  return ::ftruncate(to, size) == 0 ? 0 : errno;
}

int copy_contents(int from, int to) {
  struct stat st;
  if (::fstat(from, &st) != 0) return errno;
  return copy_bytes(from, to, st.st_size);
}

bool LayerBytes::read_all(std::size_t max, std::string& out) const {
  if (fd < 0 || size < 0 || static_cast<std::size_t>(size) > max) return false;
  out.resize(static_cast<std::size_t>(size));
  for (off_t got = 0; got < size;) {
    const ssize_t n = ::pread(fd, out.data() + got, static_cast<size_t>(size - got), at + got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += n;
  }
  return true;
}

namespace {
bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}
constexpr off_t kBlock = 4096;  // ranges start on a block: a file's holes stay holes
}  // namespace

std::string Applier::stage_files() {
  // One private file holds every staged copy, each at its own range: a descriptor per file
  // would run a session's process out of them (npm install writes tens of thousands).
  off_t end = 0;
  std::string error;
  std::erase_if(entries_, [&](Entry& e) {
    if (e.kind != ChangeKind::file || !error.empty()) return false;
    UniqueFd src(open_beneath(upper_fds_[e.root].get(), e.rel, O_RDONLY | O_NONBLOCK));
    struct stat before, after;
    if (src.get() < 0 || ::fstat(src.get(), &before) != 0 || !S_ISREG(before.st_mode) ||
        before.st_ino != e.st.st_ino) {
      return true;  // replaced since the walk: the next apply sees what it is then
    }
    if (staging_.get() < 0) {
      staging_ = UniqueFd(::open(set_.dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
      if (staging_.get() < 0) {
        error = set_.dir + ": a private copy (O_TMPFILE): " + std::strerror(errno);
        return false;
      }
    }
    const off_t at = (end + kBlock - 1) / kBlock * kBlock;
    // Past this range whether the copy is kept or not: a dropped copy's bytes must not show
    // in the holes of the next file staged there.
    end = at + before.st_size;
    if (int err = copy_range(src.get(), 0, staging_.get(), at, before.st_size); err != 0) {
      if (err != EIO) error = set_.upper(e.root) + "/" + e.rel + ": " + std::strerror(err);
      return err == EIO;
    }
    // Written while it was copied: not these bytes, nor any; a later apply takes it.
    if (::fstat(src.get(), &after) != 0 || after.st_size != before.st_size ||
        !same_time(after.st_ctim, before.st_ctim) || !same_time(after.st_mtim, before.st_mtim)) {
      return true;
    }
    e.st = before;
    staged_[{e.root, e.rel}] = {at, before.st_size};
    return false;
  });
  // A last file ending in a hole reads its zeros, not the end of the staging file.
  if (error.empty() && staging_.get() >= 0 && ::ftruncate(staging_.get(), end) != 0) {
    error = set_.dir + ": a private copy: " + std::strerror(errno);
  }
  return error;
}

LayerBytes Applier::layer_bytes(std::size_t root, const std::string& rel) {
  LayerBytes bytes;
  if (auto it = staged_.find({root, rel}); it != staged_.end()) {
    bytes.fd = staging_.get();
    bytes.at = it->second.first;
    bytes.size = it->second.second;
    return bytes;
  }
  // keep_layer: not staged (changed while it was copied, or not a file): nothing of the
  // layer is read unstaged while the session's processes run.
  if (options_.keep_layer) return bytes;
  bytes.owned = UniqueFd(open_beneath(upper_fds_[root].get(), rel, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (bytes.owned.get() < 0 || ::fstat(bytes.owned.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return LayerBytes{};
  }
  bytes.fd = bytes.owned.get();
  bytes.size = st.st_size;
  return bytes;
}

}  // namespace paddock::sandbox::applying
