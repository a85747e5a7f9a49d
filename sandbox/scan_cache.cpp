#include "sandbox/scan_cache.hpp"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <time.h>

namespace paddock::sandbox {
namespace {

long long ns_of(const struct timespec& t) {
  return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

// What one node costs: the node in the list and in the index, the vector, and every name
// longer than the string's inline buffer.
std::size_t bytes_of(const Listing& l) {
  std::size_t n = 160 + l.capacity() * sizeof(TreeEntry);
  for (const auto& e : l) {
    if (e.name.capacity() > 15) n += e.name.capacity() + 1;
  }
  return n;
}

// Not every header spells these.
constexpr unsigned long kXfs = 0x58465342, kF2fs = 0xF2F52010, kBcachefs = 0xca451a4e,
                        kOverlay = 0x794c7630;

}  // namespace

ScanCache& ScanCache::process() {
  // Never destroyed: an audit on the Manager's pool may still walk while the process exits.
  static ScanCache* cache = new ScanCache;
  return *cache;
}

std::chrono::nanoseconds ScanCache::now() {
  struct timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return std::chrono::nanoseconds(ns_of(t));
}

bool ScanCache::cacheable_fs(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2 and ext3 share it
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case kXfs:
    case kF2fs:
    case kBcachefs:
    // A merged directory reports its upper directory's times once anything in it changed
    // (copy-up makes one, with a new ctime); the lower layers must not change while mounted.
    case kOverlay:
      return true;
    default:
      return false;
  }
}

std::shared_ptr<const Listing> ScanCache::find(const struct stat& st) {
  std::lock_guard lock(mutex_);
  auto it = index_.find({st.st_dev, st.st_ino});
  if (it == index_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  Node& n = *it->second;
  if (n.mtime_ns != ns_of(st.st_mtim) || n.ctime_ns != ns_of(st.st_ctim)) {
    ++stats_.misses;
    erase(it->second);  // changed: its listing is of no use any more
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second);
  return n.listing;
}

void ScanCache::store(const struct stat& st, std::chrono::nanoseconds listed_at,
                      std::shared_ptr<const Listing> listing) {
  const long long ctime = ns_of(st.st_ctim);
  const std::size_t bytes = bytes_of(*listing);
  std::lock_guard lock(mutex_);
  if (ctime + settle_.count() >= listed_at.count()) {
    ++stats_.too_recent;
    return;
  }
  if (bytes > max_bytes_) return;
  if (auto it = index_.find({st.st_dev, st.st_ino}); it != index_.end()) erase(it->second);
  lru_.push_front({{st.st_dev, st.st_ino}, ns_of(st.st_mtim), ctime, bytes, std::move(listing)});
  index_.emplace(lru_.front().key, lru_.begin());
  stats_.bytes += bytes;
  ++stats_.directories;
  ++stats_.stored;
  while (stats_.bytes > max_bytes_) {
    erase(std::prev(lru_.end()));
    ++stats_.evicted;
  }
}

void ScanCache::erase(std::list<Node>::iterator it) {
  stats_.bytes -= it->bytes;
  --stats_.directories;
  index_.erase(it->key);
  lru_.erase(it);
}

void ScanCache::clear() {
  std::lock_guard lock(mutex_);
  index_.clear();
  lru_.clear();
  stats_.bytes = 0;
  stats_.directories = 0;
}

ScanCache::Stats ScanCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace paddock::sandbox
