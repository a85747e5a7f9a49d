// Resolve once, use the same object: every host path the sandbox mounts on, clones, pins,
// hands to Landlock or enters as the working directory is identified in the parent by
// (st_dev, st_ino), reached without following any symlink; the child reaches it again the
// same way and refuses if it is another object. Between the parent's check and the child's
// use another sandbox (or the host) can rename directories in a shared workspace:
// `renameat2(RENAME_EXCHANGE)` of a directory and a symlink to $HOME used to give a command a
// writable view of $HOME. A path re-resolved in the child is only trusted once it is proven
// to be the object the parent checked; after that, the child works on the descriptor.
//
// Both halves of the handshake live here: capture_identity() runs in the parent (may throw),
// in_child_open_verified() in the child between clone and execve (raw syscalls only).
#pragma once

#include <cstdint>
#include <string>

namespace paddock::sandbox {

struct PathIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;  // 0: nothing to verify (a path inside a tmpfs of our own)
};

// Parent side: the identity of the canonical `path` as it is now, reached with no symlink at
// all (RESOLVE_NO_SYMLINKS; a trailing symlink is identified as the link itself). Throws
// Error(spawn_failed) when the path no longer resolves that way (it was just replaced by a
// symlink or removed): the policy was decided on a path that changed under us.
PathIdentity capture_identity(const std::string& path);

// Child side: an O_PATH descriptor for `path`, reached with no symlink followed, that is the
// object `expected` names (when expected.ino != 0). Returns the fd, or -1 with errno set
// (ESTALE: another object is there now). Async-signal-safe.
int in_child_open_verified(const char* path, const PathIdentity& expected);

// Child side: "/proc/self/fd/<fd>" into `buf` (at least 32 bytes), for the old mount(2)
// calls that take a target path: the magic link resolves to exactly the descriptor's object.
const char* in_child_fd_path(int fd, char* buf);

}  // namespace paddock::sandbox
