#include "process/init_tmp_tally.hpp"

#include <asm/unistd.h>
#include <linux/fcntl.h>

#include "process/init_syscall.hpp"

namespace paddock::process::init {
namespace {

// The kernel's getdents64 record.
struct Dirent64 {
  unsigned long long ino;
  long long off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};
constexpr unsigned char kDtDir = 4, kDtReg = 8;

bool dot_or_dotdot(const char* n) {
  return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

void walk(int dir, TmpTally& t, int depth) {
  alignas(8) char buf[2048];
  for (;;) {
    const long n = raw_syscall(__NR_getdents64, dir, reinterpret_cast<long>(buf), sizeof buf);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const Dirent64*>(buf + at);
      at += e->reclen;
      if (dot_or_dotdot(e->name)) continue;
      if (t.entries >= kTmpTallyMaxEntries) {
        t.bounded = true;
        return;
      }
      ++t.entries;
      if (e->type == kDtReg) {
        // Its size: where the end is (no statx here: it takes five arguments).
        const long file = raw_syscall(__NR_openat, dir, reinterpret_cast<long>(e->name),
                                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (file >= 0) {
          const long size = raw_syscall(__NR_lseek, file, 0, 2 /* SEEK_END */);
          if (size > 0) t.bytes += static_cast<unsigned long>(size);
          raw_syscall(__NR_close, file);
        }
      } else if (e->type == kDtDir) {
        if (depth >= kTmpTallyMaxDepth) {
          t.bounded = true;
          continue;
        }
        const long sub = raw_syscall(__NR_openat, dir, reinterpret_cast<long>(e->name),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        walk(static_cast<int>(sub), t, depth + 1);
        raw_syscall(__NR_close, sub);
      }
    }
  }
}

}  // namespace

void tally_tree(int dir, TmpTally& t) {
  // A description of its own: reading it moves no offset the next tally would start from.
  const long fresh = raw_syscall(__NR_openat, dir, reinterpret_cast<long>("."),
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fresh < 0) return;
  walk(static_cast<int>(fresh), t, 0);
  raw_syscall(__NR_close, fresh);
}

}  // namespace paddock::process::init
