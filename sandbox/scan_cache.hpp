// A per-process cache of directory listings for the git-state walks (tree_walk.hpp): before
// and after every sandboxed command the writable roots are walked in full; in a workspace
// that did not change, nearly every directory holds the same names as last time, and listing
// it again (getdents of every file in node_modules) is most of a run's cost.
//
// What is cached, and why it cannot make a scan weaker than a fresh one:
//  - Only a directory's listing, as the walk filters it (tree_walk.hpp: every entry that is
//    not a regular file, and regular files with the names git's discovery looks at). Nothing
//    read from a file (a gitfile's target, commondir, HEAD) is cached: git_state.cpp reads
//    those again on every scan, so a gitfile rewritten in place (which leaves its directory's
//    times alone) is followed to its new target.
//  - Keyed by the directory's (st_dev, st_ino), valid only while its st_mtime and st_ctime
//    (nanoseconds) are those seen when it was listed. Creating, removing, renaming an entry
//    in or out, or replacing one (a `.git` file by a `.git` dir, a dir by a symlink) sets
//    both. The command can set mtime back (`touch -d`), but not ctime: utimensat itself sets
//    ctime to now, and only the clock (CAP_SYS_TIME) could bring it back. A renamed subtree
//    keeps its inodes: its listings stay right, and where it now lies comes from the walk.
//  - A listing is stored only if the directory's ctime was already `settle` old when the
//    listing began. Timestamps are coarse (the kernel's tick, unless multigrain timestamps
//    apply; a whole second on ext4 with 128-byte inodes): a change in the same tick as the
//    one before it can leave ctime as it was. A change made after the listing began gets a
//    ctime of at least (start - tick - granularity), later than one `settle` older than the
//    start: it invalidates the entry.
//  - Only on local file systems whose kernel code sets ctime on every directory change
//    (ext2/3/4, xfs, btrfs, tmpfs, f2fs, bcachefs, overlayfs). NFS, FUSE, 9p, CIFS report a
//    server's times (another client can change a directory without a local change of
//    ctime): always listed afresh.
//  - Mount points need nothing: the key is the inode the walk opened, on whichever file
//    system it lies.
//
// Thread-safe (one mutex: a look-up is a hash probe); bounded: past `max_bytes` (an estimate
// of what the listings hold) the least recently used are evicted. Separate processes do not
// share it.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "sandbox/tree_walk.hpp"

namespace paddock::sandbox {

using Listing = std::vector<TreeEntry>;

class ScanCache {
 public:
  // The process's cache: 64 MiB of listings at most. A node_modules tree's directories take
  // ~200 bytes each (their listings keep subdirectories and symlinks only: 2.4 MB measured
  // for the 12k directories of 300k files), so about 300k directories fit.
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{64} << 20;
  // Covers a 1 s timestamp granularity plus a tick (see above).
  static constexpr std::chrono::milliseconds kDefaultSettle{2'500};
  static ScanCache& process();

  explicit ScanCache(std::size_t max_bytes = kDefaultMaxBytes,
                     std::chrono::nanoseconds settle = kDefaultSettle)
      : max_bytes_(max_bytes), settle_(settle) {}
  ScanCache(const ScanCache&) = delete;
  ScanCache& operator=(const ScanCache&) = delete;

  // The listing of the directory `st` describes, if one was stored for the same inode with
  // the same mtime and ctime; null otherwise.
  std::shared_ptr<const Listing> find(const struct stat& st);
  // Stores `listing` of the directory `st` describes (fstat'ed after `listed_at`, the
  // CLOCK_REALTIME time taken before the listing began) unless its ctime is too recent.
  void store(const struct stat& st, std::chrono::nanoseconds listed_at,
             std::shared_ptr<const Listing> listing);
  void clear();

  struct Stats {
    std::size_t directories = 0, bytes = 0;
    std::size_t hits = 0, misses = 0, stored = 0, too_recent = 0, evicted = 0;
  };
  Stats stats() const;

  // True if directories on the file system `fd` lies on may be cached (fstatfs).
  static bool cacheable_fs(int fd);
  // CLOCK_REALTIME, the clock file timestamps come from.
  static std::chrono::nanoseconds now();

 private:
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<unsigned long long>{}(k.ino * 0x9E3779B97F4A7C15ull ^ k.dev);
    }
  };
  struct Node {
    Key key;
    long long mtime_ns, ctime_ns;
    std::size_t bytes;
    std::shared_ptr<const Listing> listing;
  };
  void erase(std::list<Node>::iterator it);

  const std::size_t max_bytes_;
  const std::chrono::nanoseconds settle_;
  mutable std::mutex mutex_;
  std::list<Node> lru_;  // most recently used first
  std::unordered_map<Key, std::list<Node>::iterator, KeyHash> index_;
  Stats stats_;
};

}  // namespace paddock::sandbox
