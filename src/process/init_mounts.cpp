// paddock-init's mount check (init_parts.hpp): every mount the plan made must still be where
// the plan put it when a command starts and when it ends (init_main.cpp says why).
//
// The full check reads the namespace's mount table: ~120 µs for a sandbox's ~60 mounts, most
// of it the kernel formatting /proc/self/mountinfo, and a session paid it after every
// command, before its status. So after a full check that passes, each planned point's mount
// is noted by the unique ID statx gives (Linux 6.8+), and a later check only asks, per point,
// which mount its path reaches now (~1 µs each). Mount IDs are never reused, and a mount keeps
// its ID only while it stays attached: a drop from outside (an unlink or a rename over the
// name), a rename of the name or of a directory above it (the mount moves with the dentry),
// or another mount put over it all make the path reach another mount, and the full check
// decides again. A point must also be a mount's root (STATX_ATTR_MOUNT_ROOT), so the mount
// below a dropped one never passes for it. A kernel without unique IDs, or a point statx
// cannot reach, leaves nothing noted: every check is the full one, as before.
#include <asm/unistd.h>
#include <linux/stat.h>

#include "process/init_parts.hpp"
#include "process/init_syscall.hpp"

namespace paddock::process::init {
namespace {

constexpr long kEintr = 4;
constexpr long kAtFdcwd = -100, kAtSymlinkNofollow = 0x100, kAtNoAutomount = 0x800;
// Cached attributes only: a path on a FUSE or network file system must not wait on its server.
constexpr long kAtStatxDontSync = 0x4000;
// Linux 6.8's statx mask bit (newer than some build hosts' <linux/stat.h>); the mount root
// attribute is 5.8's.
constexpr unsigned kStatxMntIdUnique = 0x4000;
constexpr unsigned long long kStatxAttrMountRoot = 0x2000;

// The plan's mount points (kInitMountPointsFd: paths, each ended by a NUL, sorted) and the
// mount table, read into memory of our own (.bss: touched only as far as they are used).
constexpr unsigned long kPointsMax = 256 * 1024, kTableMax = 4 * 1024 * 1024;
char g_points[kPointsMax];
unsigned long g_points_size = 0;
char g_table[kTableMax];

// Reads `fd` from its start into buf; the size, or -1 when unreadable or larger than `max`.
long read_all(long fd, char* buf, unsigned long max) {
  if (fd < 0 || raw_syscall(__NR_lseek, fd, 0, 0 /* SEEK_SET */) != 0) return -1;
  unsigned long size = 0;
  for (;;) {
    if (size == max) return -1;  // too large to judge: not taken as intact
    const long n = raw_syscall(__NR_read, fd, reinterpret_cast<long>(buf + size),
                               static_cast<long>(max - size));
    if (n == -kEintr) continue;
    if (n < 0) return -1;
    if (n == 0) return static_cast<long>(size);
    size += static_cast<unsigned long>(n);
  }
}

// The planned points, each distinct path once, in g_points' order (sorted, as std::string
// sorts: by unsigned bytes), with how often each is planned and how often the table has it.
// A point takes at least 2 bytes of g_points ("/" and its NUL): the arrays cannot overflow.
struct Point {
  unsigned at, len;
  int wanted, found;
  unsigned long long mount;  // the mount its path reached at the last full check
};
constexpr unsigned long kPointCountMax = kPointsMax / 2;
Point g_point[kPointCountMax];
unsigned long g_point_count = 0;
constexpr unsigned long kPathMax = 4096;  // mount(2) takes no longer path
char g_decoded[kPathMax + 1];

// -1, 0, 1 as the `len` bytes at `a` sort against the `blen` bytes at `b` (unsigned bytes,
// a prefix first: std::string's order).
int compare(const char* a, unsigned long len, const char* b, unsigned long blen) {
  for (unsigned long i = 0; i < len && i < blen; ++i) {
    const unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return len == blen ? 0 : (len < blen ? -1 : 1);
}

void index_points() {
  g_point_count = 0;
  for (unsigned long at = 0; at < g_points_size;) {
    unsigned long len = 0;
    while (at + len < g_points_size && g_points[at + len] != '\0') ++len;
    Point* last = g_point_count > 0 ? &g_point[g_point_count - 1] : nullptr;
    if (last != nullptr && compare(g_points + last->at, last->len, g_points + at, len) == 0) {
      ++last->wanted;  // equal paths are adjacent (sorted): a path mounted twice
    } else {
      g_point[g_point_count++] = {static_cast<unsigned>(at), static_cast<unsigned>(len), 1, 0, 0};
    }
    at += len + 1;
  }
}

// The planned point whose path is the `len` bytes at `path`, or null (binary search).
Point* find_point(const char* path, unsigned long len) {
  unsigned long lo = 0, hi = g_point_count;
  while (lo < hi) {
    const unsigned long mid = lo + (hi - lo) / 2;
    const int c = compare(g_points + g_point[mid].at, g_point[mid].len, path, len);
    if (c == 0) return &g_point[mid];
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return nullptr;
}

// Whether every planned mount point is in the table as often as planned (a path mounted
// twice is listed twice). False when either cannot be read. One pass over the table, each
// line's mount point looked up among the sorted points: O(m log n), where comparing every
// point with every line scanned the whole table once per point.
bool table_has_points(long table_fd) {
  const long size = read_all(table_fd, g_table, kTableMax);
  if (size < 0) return false;
  for (unsigned long i = 0; i < g_point_count; ++i) g_point[i].found = 0;
  for (long at = 0; at < size;) {
    long eol = at;
    while (eol < size && g_table[eol] != '\n') ++eol;
    long field = at;
    for (int skip = 0; skip < 4 && field < eol; ++skip) {  // "ID PARENT MAJ:MIN ROOT POINT"
      while (field < eol && g_table[field] != ' ') ++field;
      ++field;
    }
    // The mount point, its octal escapes (\040 for a space) decoded.
    unsigned long len = 0;
    bool fits = true;
    for (long k = field; k < eol && g_table[k] != ' '; ++k) {
      char c = g_table[k];
      if (c == '\\' && eol - k > 3) {
        c = static_cast<char>(((g_table[k + 1] - '0') << 6) | ((g_table[k + 2] - '0') << 3) |
                              (g_table[k + 3] - '0'));
        k += 3;
      }
      if (len == kPathMax) {
        fits = false;
        break;
      }
      g_decoded[len++] = c;
    }
    if (field < eol && fits) {
      if (Point* p = find_point(g_decoded, len)) ++p->found;
    }
    at = eol + 1;
  }
  for (unsigned long i = 0; i < g_point_count; ++i) {
    if (g_point[i].found < g_point[i].wanted) return false;
  }
  return true;
}

// The unique ID of the mount whose root `path` is, or 0: no such ID from this kernel, the
// path not reachable, or not a mount's root.
unsigned long long mount_rooted_at(const char* path) {
  struct statx sx;
  const long r = raw_syscall(__NR_statx, kAtFdcwd, reinterpret_cast<long>(path),
                             kAtSymlinkNofollow | kAtNoAutomount | kAtStatxDontSync,
                             kStatxMntIdUnique, reinterpret_cast<long>(&sx));
  if (r != 0 || (sx.stx_mask & kStatxMntIdUnique) == 0) return 0;
  if ((sx.stx_attributes_mask & kStatxAttrMountRoot) == 0 ||
      (sx.stx_attributes & kStatxAttrMountRoot) == 0) {
    return 0;
  }
  return sx.stx_mnt_id;
}

// Whether every point's mount is noted (set by the last full check that passed).
bool g_noted = false;

void note_mounts() {
  g_noted = g_point_count > 0;
  for (unsigned long i = 0; i < g_point_count; ++i) {
    g_point[i].mount = mount_rooted_at(g_points + g_point[i].at);  // NUL-ended in g_points
    if (g_point[i].mount == 0) g_noted = false;
  }
}

}  // namespace

bool load_planned_points(long points_fd) {
  const long points = read_all(points_fd, g_points, kPointsMax);
  g_points_size = points > 0 ? static_cast<unsigned long>(points) : 0;
  index_points();
  return points >= 0;  // unreadable: nothing says the mounts held
}

bool planned_mounts_present(long table_fd) {
  g_noted = false;
  if (!table_has_points(table_fd)) return false;
  // After the table: a point dropped in between reaches no mount root of its own (noted
  // nothing), so what is noted was there when the table showed every point.
  note_mounts();
  return true;
}

bool planned_mounts_still_present(long table_fd) {
  if (g_noted) {
    bool same = true;
    for (unsigned long i = 0; i < g_point_count && same; ++i) {
      same = mount_rooted_at(g_points + g_point[i].at) == g_point[i].mount;
    }
    if (same) return true;
  }
  return planned_mounts_present(table_fd);
}

}  // namespace paddock::process::init
