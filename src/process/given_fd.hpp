// What a descriptor a caller gives a command as its stdin/stdout/stderr (ExecOptions::stdin_fd,
// ...) is, and whether a sandboxed command may have it as it is. One home for the rule, used
// by the Manager (which refuses what it must not pass) and by the CLI (which relays instead).
#pragma once

#include <string>

namespace paddock::process {

enum class GivenFdKind {
  pipe_or_socket,  // anonymous pipe (pipefs) or connected unix stream socket: nothing on the
                   // host behind it to change, nowhere else to point it
  dev_null,        // the character device /dev/null: the sandbox's own is given instead
  terminal,        // a tty
  other,           // a file, directory, named FIFO or other device on the host
  invalid,         // not an open descriptor
};

GivenFdKind classify_given_fd(int fd) noexcept;

// A sandboxed command may have a descriptor of this kind as it is (/dev/null: as the
// sandbox's own node).
constexpr bool sandbox_may_have(GivenFdKind kind) noexcept {
  return kind == GivenFdKind::pipe_or_socket || kind == GivenFdKind::dev_null;
}

// Why a sandboxed command may not have a descriptor of this kind as it is, or "" if it may.
// Through a host file's or device's descriptor a command changes that inode (fchmod: the
// host's /dev/null, the user's terminal made world-writable, a log file) whatever the mounts
// and Landlock say, and through a directory's it reads past every deny rule
// (/proc/self/fd/0/.ssh/...).
std::string refusal_for_sandbox(GivenFdKind kind);

}  // namespace paddock::process
