// paddock-init's mount check (init_parts.hpp): every mount the plan made must still be where
// the plan put it when a command starts and when it ends (init_main.cpp says why).
//
// The full check reads the namespace's mount table: ~120 µs for a sandbox's ~60 mounts, most
// of it the kernel formatting /proc/self/mountinfo, and a session paid it after every
// command, before its status. So after a full check that passes, each planned point's mount
// is noted by its unique ID (Linux 6.8+), and a later check asks the kernel, per noted mount,
// where it is mounted now (statmount's mount point, relative to our root, as the table
// says it): ~1.5 µs a point, no path walked. Mount IDs are never reused. A mount dropped from
// outside (an unlink or a rename over its name) is gone; one moved by a rename of its name or
// of a directory above it is elsewhere, whatever symlink now stands at the old name: either
// way the full check decides again. A mount is noted only when the point's path reaches it as
// a mount's root and the kernel puts it at that very point, so neither the mount below a
// dropped one nor another cover reached through a symlink swapped in meanwhile passes for it.
// A kernel without statmount, or a point that cannot be noted, leaves nothing noted: every
// check is the full one, as before.
#include <asm/unistd.h>
#include <linux/stat.h>

#include "process/init_parts.hpp"
#include "process/init_syscall.hpp"

namespace paddock::process::init {
namespace {

constexpr long kEintr = 4;
constexpr long kAtFdcwd = -100, kAtSymlinkNofollow = 0x100, kAtNoAutomount = 0x800;
// Cached attributes for the point itself (noting only: the later checks walk no path).
constexpr long kAtStatxDontSync = 0x4000;
// Linux 6.8's statx mask bit and statmount(2) (newer than some build hosts' headers; the
// syscall number is the same on x86_64 and aarch64); the mount root attribute is 5.8's.
constexpr unsigned kStatxMntIdUnique = 0x4000;
constexpr unsigned long long kStatxAttrMountRoot = 0x2000;
#ifdef __NR_statmount
constexpr long kNrStatmount = __NR_statmount;
#else
constexpr long kNrStatmount = 457;
#endif
constexpr unsigned long long kStatmountMntPoint = 0x10;  // STATMOUNT_MNT_POINT
// struct mnt_id_req as first published (MNT_ID_REQ_SIZE_VER0) and the fixed part of struct
// statmount up to mnt_point: the offsets of <linux/mount.h>, 6.8.
struct MntIdReq {
  unsigned size, spare;
  unsigned long long mnt_id, param;
};
constexpr unsigned long kStatmountMaskAt = 8, kStatmountMntPointAt = 108, kStatmountStrAt = 512;

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

// Whether the kernel says mount `id` is mounted at `point` (its `len` bytes) now. False when
// it is gone, elsewhere, or statmount is missing or fails.
alignas(8) char g_statmount[kStatmountStrAt + kPathMax + 64];
bool mounted_at(unsigned long long id, const char* point, unsigned long len) {
  MntIdReq req{24, 0, id, kStatmountMntPoint};
  const long r = raw_syscall(kNrStatmount, reinterpret_cast<long>(&req),
                             reinterpret_cast<long>(g_statmount), sizeof g_statmount, 0);
  if (r != 0) return false;
  unsigned long long mask = 0;
  unsigned offset = 0;
  __builtin_memcpy(&mask, g_statmount + kStatmountMaskAt, sizeof mask);
  __builtin_memcpy(&offset, g_statmount + kStatmountMntPointAt, sizeof offset);
  if ((mask & kStatmountMntPoint) == 0 || offset > kPathMax) return false;
  const char* at = g_statmount + kStatmountStrAt + offset;
  for (unsigned long i = 0; i < len; ++i) {
    if (at[i] != point[i]) return false;  // (a shorter string ends in its NUL first)
  }
  return at[len] == '\0';
}

// Whether every point's mount is noted (set by the last full check that passed).
bool g_noted = false;

void note_mounts() {
  g_noted = g_point_count > 0;
  for (unsigned long i = 0; i < g_point_count && g_noted; ++i) {
    const char* point = g_points + g_point[i].at;  // NUL-ended in g_points
    g_point[i].mount = mount_rooted_at(point);
    g_noted = g_point[i].mount != 0 && mounted_at(g_point[i].mount, point, g_point[i].len);
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
      same = mounted_at(g_point[i].mount, g_points + g_point[i].at, g_point[i].len);
    }
    if (same) return true;
  }
  return planned_mounts_present(table_fd);
}

}  // namespace paddock::process::init
