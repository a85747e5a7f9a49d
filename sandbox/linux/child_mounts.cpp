// Child side: the mount layout of the plan, step by step (see child_steps.hpp).
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "sandbox/linux/child_steps.hpp"
#include "sandbox/linux/path_identity.hpp"

namespace paddock::sandbox::child {
namespace {

bool exists_nofollow(const char* path) {
  struct stat st;
  return ::syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// mkdir -p of every parent of `path` (and of `path` itself when `include_self`). Only ever
// called for mount points inside a tmpfs of ours; the host tree is read-only by then.
bool make_parents(const char* path, bool include_self) {
  char buf[4096];
  std::size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof(buf)) {
    errno = ENAMETOOLONG;
    return false;
  }
  std::memcpy(buf, path, len + 1);
  for (std::size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    if (buf[i] == '\0' && !include_self) break;
    char saved = buf[i];
    buf[i] = '\0';
    if (::syscall(SYS_mkdirat, AT_FDCWD, buf, 0755) != 0 && errno != EEXIST) return false;
    buf[i] = saved;
  }
  return true;
}

// The mount point of an attach_clone with `create` (inside a tmpfs of ours), unless there.
bool make_mount_point(const MountOp& op) {
  if (exists_nofollow(op.path)) return true;
  bool ok = make_parents(op.path, op.is_dir);
  if (ok && !op.is_dir) {
    long file = sys_open(op.path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ok = file >= 0;
    if (ok) ::syscall(SYS_close, file);
  }
  return ok;
}

bool set_mount_attr(int dirfd, const char* path, unsigned flags, std::uint64_t set,
                    std::uint64_t clear) {
  struct mount_attr attr = {};
  attr.attr_set = set;
  attr.attr_clr = clear;
  return ::syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof(attr)) == 0;
}

// A detached copy of the mount tree at a verified descriptor.
long clone_of(int fd) {
  return ::syscall(SYS_open_tree, fd, "",
                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
}

// Attaches a detached tree onto the object a verified descriptor names.
long attach_onto(int tree, int target) {
  return ::syscall(SYS_move_mount, tree, "", target, "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

// The steps this child runs: the whole plan, or a template's per-command part.
struct Steps {
  const MountOp* ops;
  std::size_t count;
};

// Where an overlay's upper layer is made, unmounted again once the overlay holds its own
// private copy of it, so the command never sees it: a directory made in our /dev tmpfs (not
// sealed yet), or, in a sandbox made from a template (whose /dev is sealed), the /dev/shm
// directory itself, before the command's own /dev/shm is mounted there.
struct Scratch {
  const char* dir;
  const char* upper;
  const char* work;
  bool made;  // `dir` is made before and removed after
};
constexpr Scratch kDevScratch{"/dev/.paddock-upper", "/dev/.paddock-upper/upper",
                              "/dev/.paddock-upper/work", true};
constexpr Scratch kShmScratch{"/dev/shm", "/dev/shm/upper", "/dev/shm/work", false};

// `a` followed by `b` into `buf`; false when it does not fit.
bool join(char* buf, std::size_t size, const char* a, const char* b) {
  const std::size_t la = std::strlen(a), lb = std::strlen(b);
  if (la + lb + 1 > size) return false;
  std::memcpy(buf, a, la);
  std::memcpy(buf + la, b, lb + 1);
  return true;
}

// `path` strictly below `dir`.
bool strictly_below(const char* path, const char* dir) {
  const std::size_t n = std::strlen(dir);
  return std::strncmp(path, dir, n) == 0 && path[n] == '/';
}

// `later.path` below the overlay at `top`, spelled in the upper layer.
bool in_upper(char (&buf)[4096], const Scratch& scratch, const MountOp& later, const char* top) {
  if (join(buf, sizeof buf, scratch.upper, later.path + std::strlen(top))) return true;
  errno = ENAMETOOLONG;
  return false;
}

// The upper layer, with what the plan needs at names below `op.path` made in it first:
//   the mount points it creates there later (directories, or an empty file for a file's
//     mount point): in the merged tree a directory of the upper layer hides whatever
//     non-directory the host has at that name, so the plan's later mounts there reach these,
//     whatever the host renames meanwhile;
//   the denied paths (MountStep::hide): an empty directory marked opaque (the host's entries
//     below are not merged in) or an empty file, mode 000. The upper entry wins over the
//     host's at that name; a command that removes or renames it leaves a whiteout.
// Hides first (shallow to deep, as planned), so a mount point inside a denied directory is
// made inside our opaque one.
bool make_upper(const Steps& p, std::size_t at, const Scratch& scratch) {
  const MountOp& op = p.ops[at];
  if (::syscall(SYS_mkdirat, AT_FDCWD, scratch.upper, 0) != 0 ||
      ::syscall(SYS_fchmodat, AT_FDCWD, scratch.upper, 01777) != 0 ||  // as a /tmp is
      ::syscall(SYS_mkdirat, AT_FDCWD, scratch.work, 0700) != 0) {
    return false;
  }
  char path[4096];
  for (std::size_t j = at + 1; j < p.count; ++j) {
    const MountOp& later = p.ops[j];
    if (later.step != MountStep::hide || !strictly_below(later.path, op.path)) continue;
    if (!in_upper(path, scratch, later, op.path) || !make_parents(path, false)) return false;
    if (later.is_dir) {
      // Already there when a deeper hide came first (the change store inside a hidden home
      // under /tmp): the upper layer is all ours, so it is made opaque and closed the same.
      if ((::syscall(SYS_mkdirat, AT_FDCWD, path, 0) != 0 && errno != EEXIST) ||
          ::syscall(SYS_setxattr, path, "user.overlay.opaque", "y", 1, 0) != 0 ||
          ::syscall(SYS_fchmodat, AT_FDCWD, path, later.passable ? 0111 : 0) != 0) {
        return false;  // no user xattrs on tmpfs (before Linux 6.6): the plain tmpfs then
      }
    } else {
      long file = sys_open(path, O_WRONLY | O_CREAT | O_EXCL, 0);
      if (file < 0) return false;
      ::syscall(SYS_close, file);
    }
  }
  for (std::size_t j = at + 1; j < p.count; ++j) {
    const MountOp& later = p.ops[j];
    if (later.step != MountStep::attach_clone || !later.create ||
        !strictly_below(later.path, op.path)) {
      continue;
    }
    if (!in_upper(path, scratch, later, op.path) || !make_parents(path, later.is_dir)) return false;
    if (!later.is_dir) {
      long file = sys_open(path, O_WRONLY | O_CREAT, 0600);
      if (file < 0) return false;
      ::syscall(SYS_close, file);
    }
  }
  return true;
}

// MountStep::overlay (see child_plan.hpp). `*kept`: a descriptor of what holds the
// command's writes there (the upper layer, or the plain tmpfs), for paddock-init's count of
// what is discarded (process/init_tmp_tally.hpp); -1 if it cannot be opened.
int mount_overlay(const Steps& p, std::size_t at, const Scratch& scratch, const Failure& f,
                  int* kept) {
  const MountOp& op = p.ops[at];
  if (scratch.made && ::syscall(SYS_mkdirat, AT_FDCWD, scratch.dir, 0700) != 0) {
    return f.fail("mkdir", scratch.dir);
  }
  if (::syscall(SYS_mount, "tmpfs", scratch.dir, "tmpfs", MS_NOSUID | MS_NODEV, op.data) != 0) {
    return f.fail("mount tmpfs", scratch.dir);
  }
  char options[256];
  const char* parts[] = {"lowerdir=", op.path,      ",upperdir=", scratch.upper,
                         ",workdir=", scratch.work, ",userxattr"};
  options[0] = '\0';
  bool fits = true;
  for (const char* part : parts) {
    fits = fits &&
           join(options + std::strlen(options), sizeof options - std::strlen(options), "", part);
  }
  // Any step refused (no user xattrs for an opaque directory, no overlayfs, ...): the plain
  // tmpfs below.
  const bool shown =
      fits && make_upper(p, at, scratch) &&
      ::syscall(SYS_mount, "overlay", op.path, "overlay", MS_NOSUID | MS_NODEV, options) == 0;
  if (shown) *kept = static_cast<int>(sys_open(scratch.upper, O_RDONLY | O_DIRECTORY));
  // The overlay keeps a private copy of its upper layer's mount; ours goes.
  if (::syscall(SYS_umount2, scratch.dir, MNT_DETACH) != 0) return f.fail("unmount", scratch.dir);
  if (scratch.made && ::syscall(SYS_unlinkat, AT_FDCWD, scratch.dir, AT_REMOVEDIR) != 0) {
    return f.fail("rmdir", scratch.dir);
  }
  // Refused, for whatever reason: the private tmpfs shows less and reaches nothing more.
  if (!shown &&
      ::syscall(SYS_mount, "tmpfs", op.path, "tmpfs", MS_NOSUID | MS_NODEV, op.data) != 0) {
    return f.fail("mount tmpfs", op.path);
  }
  if (!shown) *kept = static_cast<int>(sys_open(op.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  return 0;
}

// MountStep::overlay_root: a detached overlay over the verified host directory, into *slot.
int overlay_root(const MountOp& op, int* slot, const Failure& f) {
  int lower = in_child_open_verified(op.path, op.host);
  if (lower < 0) return f.fail(kVerify, op.path);
  char via[32];
  in_child_fd_path(lower, via);
  long fs = ::syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  int result = 0;
  if (fs < 0) {
    result = f.fail_feature("fsopen overlay", op.path);
  } else if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir", via, 0) != 0 ||
             ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "upperdir", op.data, 0) != 0 ||
             ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "workdir", op.work, 0) != 0 ||
             // In a user namespace the layer's own marks (opaque directories) are user.*
             // xattrs; trusted.* needs CAP_SYS_ADMIN in the initial namespace.
             ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0 ||
             ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    result = f.fail("overlay over the writable root", op.path);
  } else {
    long mnt = ::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    struct statfs st {};
    if (mnt < 0) {
      result = f.fail("fsmount overlay", op.path);
    } else if (::syscall(SYS_fstatfs, mnt, &st) != 0 || (st.f_flags & ST_RDONLY) != 0) {
      // overlayfs that cannot clear its work directory mounts read-only with no more than a
      // kernel warning: the command would get a read-only workspace and fail oddly.
      if ((st.f_flags & ST_RDONLY) != 0) errno = EROFS;
      result =
          f.fail("overlay came up read-only (its work directory could not be cleared)", op.path);
      ::syscall(SYS_close, mnt);
    } else {
      *slot = static_cast<int>(mnt);
    }
  }
  if (fs >= 0) ::syscall(SYS_close, fs);
  ::syscall(SYS_close, lower);
  return result;
}

}  // namespace

int run_mounts(const ChildSandbox& p, const Failure& f, int tmp_uppers[2]) {
  int slots[kMaxCloneSlots];
  for (int i = 0; i < p.slot_count; ++i) slots[i] = -1;
  int result = 0;
  const MountTemplateUse* from = p.mount_template;
  const Steps steps =
      from != nullptr ? Steps{from->mounts, from->mount_count} : Steps{p.mounts, p.mount_count};
  const Scratch& scratch = from != nullptr ? kShmScratch : kDevScratch;
  // The overlays the joiner made (in_joiner_make_layers) are ours to attach and close.
  if (from != nullptr) {
    for (int i = 0; i < p.slot_count; ++i) slots[i] = from->preset_slots[i];
  }

  // No mount event propagates in either direction.
  // Private, not slave: a mount the host makes while the command runs must not appear in the
  // sandbox either (it would arrive writable).
  if (::syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return f.fail_feature("make / a private mount", "/");
  }
  for (std::size_t i = 0; i < steps.count && result == 0; ++i) {
    const MountOp& op = steps.ops[i];
    switch (op.step) {
      case MountStep::clone_tree: {
        int src = in_child_open_verified(op.path, op.host);
        if (src < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        long fd = clone_of(src);
        if (fd < 0) result = f.fail("open_tree", op.path);
        slots[op.slot] = static_cast<int>(fd);
        ::syscall(SYS_close, src);
        break;
      }
      case MountStep::overlay_root:
        result = overlay_root(op, &slots[op.slot], f);
        break;
      case MountStep::readonly_root:
        if (!set_mount_attr(AT_FDCWD, "/", AT_RECURSIVE,
                            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) {
          result = f.fail_feature("make the host read-only", "/");
        }
        break;
      case MountStep::tmpfs: {
        // A host directory (deny_read) is mounted on through its verified descriptor.
        int target = op.host.ino != 0 ? in_child_open_verified(op.path, op.host) : -1;
        if (op.host.ino != 0 && target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        char via[32];
        const char* where = target >= 0 ? in_child_fd_path(target, via) : op.path;
        if (::syscall(SYS_mount, "tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, op.data) != 0) {
          result = f.fail("mount tmpfs", op.path);
        }
        if (target >= 0) ::syscall(SYS_close, target);
        break;
      }
      case MountStep::overlay:
        result = mount_overlay(steps, i, scratch, f,
                               &tmp_uppers[std::strcmp(op.path, "/var/tmp") == 0 ? 1 : 0]);
        break;
      case MountStep::hide:
        break;  // made in the upper layer by the overlay step before it
      case MountStep::proc:
        if (::syscall(SYS_mount, "proc", op.path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      nullptr) != 0) {
          result = f.fail_feature("mount proc", op.path);
        }
        break;
      case MountStep::devpts:
        if (::syscall(SYS_mount, "devpts", op.path, "devpts", MS_NOSUID | MS_NOEXEC,
                      "newinstance,ptmxmode=0666,mode=0620") != 0) {
          result = f.fail_feature("mount devpts", op.path);
        }
        break;
      case MountStep::make_mount_point:
        if (!make_mount_point(op)) result = f.fail("create mount point", op.path);
        break;
      case MountStep::attach_clone: {
        int fd = slots[op.slot];
        if (op.create && !make_mount_point(op)) {
          result = f.fail("create mount point", op.path);
          break;
        }
        // Writable roots keep the host's flags (the clone was taken before / went read-only);
        // everything else is read-only. nosuid everywhere, nodev except on device nodes.
        std::uint64_t set = MOUNT_ATTR_NOSUID | (op.writable ? 0 : MOUNT_ATTR_RDONLY) |
                            (op.device ? 0 : MOUNT_ATTR_NODEV);
        if (!set_mount_attr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, set, 0)) {
          result = f.fail("set mount attributes", op.path);
          break;
        }
        // Onto the host path itself: the object the parent checked. A mount point we created
        // inside our own tmpfs has nothing to verify.
        int target = op.create ? -1 : in_child_open_verified(op.path, op.host);
        if (!op.create && target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        if ((target >= 0 ? attach_onto(fd, target)
                         : ::syscall(SYS_move_mount, fd, "", AT_FDCWD, op.path,
                                     MOVE_MOUNT_F_EMPTY_PATH)) != 0) {
          result = f.fail("attach mount", op.path);
        }
        if (target >= 0) ::syscall(SYS_close, target);
        ::syscall(SYS_close, fd);
        slots[op.slot] = -1;
        break;
      }
      case MountStep::bind_readonly:
      case MountStep::pin:
      case MountStep::cover_file: {
        // Onto the verified object; a protected name that is a symlink is the link itself
        // (opened O_NOFOLLOW), so it can be neither replaced nor retargeted.
        int target = in_child_open_verified(op.path, op.host);
        if (target < 0) {
          result = f.fail(kVerify, op.path);
          break;
        }
        long tree =
            op.step == MountStep::cover_file
                ? ::syscall(SYS_open_tree, AT_FDCWD, op.data, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
                : clone_of(target);
        const char* what = op.step == MountStep::pin          ? "pin"
                           : op.step == MountStep::cover_file ? "cover file"
                                                              : "bind read-only";
        if (tree < 0) {
          result = f.fail(what, op.path);
        } else {
          // A pin keeps the attributes it has (a pinned directory inside a writable root stays
          // writable); the others are read-only.
          std::uint64_t set = op.step == MountStep::pin
                                  ? 0
                                  : MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                        (op.step == MountStep::cover_file ? MOUNT_ATTR_NODEV : 0);
          if ((set != 0 &&
               !set_mount_attr(static_cast<int>(tree), "", AT_EMPTY_PATH | AT_RECURSIVE, set, 0)) ||
              attach_onto(static_cast<int>(tree), target) != 0) {
            result = f.fail(what, op.path);
          }
          ::syscall(SYS_close, tree);
        }
        ::syscall(SYS_close, target);
        break;
      }
      case MountStep::make_dir:
        if (::syscall(SYS_mkdirat, AT_FDCWD, op.path, 0755) != 0 && errno != EEXIST) {
          result = f.fail("mkdir", op.path);
        }
        break;
      case MountStep::make_symlink:
        if (::syscall(SYS_symlinkat, op.data, AT_FDCWD, op.path) != 0 && errno != EEXIST) {
          result = f.fail("symlink", op.path);
        }
        break;
      case MountStep::seal_readonly:
        if (!set_mount_attr(AT_FDCWD, op.path, 0, MOUNT_ATTR_RDONLY, 0)) {
          result = f.fail("make read-only", op.path);
        }
        break;
      case MountStep::write_file:
        if (!write_whole_file(op.path, op.data)) result = f.fail_feature("write", op.path);
        break;
      case MountStep::create_file: {
        long fd = -1;
        if (make_parents(op.path, false)) fd = sys_open(op.path, O_WRONLY | O_CREAT | O_EXCL, 0444);
        if (fd < 0) {
          result = f.fail("create", op.path);
          break;
        }
        const std::size_t size = op.data != nullptr ? std::strlen(op.data) : 0;
        std::size_t done = 0;
        while (done < size) {
          const long n = ::syscall(SYS_write, fd, op.data + done, size - done);
          if (n <= 0) break;
          done += static_cast<std::size_t>(n);
        }
        ::syscall(SYS_close, fd);
        if (done != size) result = f.fail("write", op.path);
        break;
      }
      case MountStep::make_file: {
        long fd = sys_open(op.path, O_WRONLY | O_CREAT | O_EXCL, 0);
        if (fd < 0) {
          result = f.fail("create", op.path);
        } else {
          ::syscall(SYS_close, fd);
        }
        break;
      }
      case MountStep::remove_file:
        if (::syscall(SYS_unlinkat, AT_FDCWD, op.path, 0) != 0) result = f.fail("unlink", op.path);
        break;
    }
  }
  for (int i = 0; i < p.slot_count; ++i) {
    if (slots[i] >= 0) ::syscall(SYS_close, slots[i]);
  }
  return result;
}

}  // namespace paddock::sandbox::child

namespace paddock::sandbox {

int in_joiner_make_layers(const ChildSandbox& p, StepFailure* failure) {
  const child::Failure f{failure};
  for (std::size_t i = 0; i < p.mount_count; ++i) {
    const MountOp& op = p.mounts[i];
    if (op.step != MountStep::overlay_root) continue;
    if (const int err = child::overlay_root(op, &p.mount_template->preset_slots[op.slot], f)) {
      return err;
    }
  }
  return 0;
}

}  // namespace paddock::sandbox
