// Moving an entry the host must not execute out of the way, without ever destroying it.
//
// After a command, something may sit at a path the host runs later (a `.git` it planted, a
// `.bashrc` that was not there, a FIFO at `.git/HEAD`). Deleting it is wrong twice over: the
// host may have written it itself during the run (a concurrent `git init`, an editor), and a
// recursive delete of a 300k-file tree is unbounded. A rename in place is O(1), keeps every
// byte, and a name git and shells never read (`<name>.paddock-quarantine-<tag>`) is as inert
// as a deletion. Used by post_run_audit.cpp (the post-run audit) and git_state.cpp.
#pragma once

#include <string>
#include <vector>

#include "sandbox/path_policy.hpp"

namespace paddock::sandbox {

// A tag unique to this process and call: "<pid>-<counter>-<random>".
std::string new_quarantine_tag();

struct QuarantineOutcome {
  enum Kind { nothing, moved, failed } kind = nothing;
  std::string path;      // what was (or should have been) moved: absolute
  std::string moved_to;  // its new absolute path when moved
  int error = 0;         // errno when failed
  // What lay there: "directory", "file", "symlink", "FIFO", "socket", "device".
  const char* type = "";
};

// Walks to `path` (absolute, canonical as it was when the command started) from `/` with
// O_PATH directory fds opened O_NOFOLLOW, so nothing the command planted on the way is ever
// followed. The first symlink on the way, or the last component, is what appeared: it is
// renamed in its own directory. Missing components mean nothing appeared (kind nothing).
//
// A directory the command made unsearchable or unwritable (chmod 555/000) belongs to the
// supervisor's uid (the sandbox maps it to itself), so the walk gives itself u+wx through the
// fd it holds and puts the mode back afterwards: an unprivileged supervisor cannot otherwise
// rename what is inside.
QuarantineOutcome quarantine_created(const std::string& path, const std::string& tag);

// Which of `paths` certainly have nothing at them: every directory above is a real directory
// (walked from `/` with O_NOFOLLOW, as quarantine_created walks) and the last name is absent.
// One walk per distinct parent and one fstatat per name, where quarantine_created walks every
// path from `/` (the post-run audit checks ~35 protected paths, nearly all absent and in the
// same few directories). False means "not certain": give that path to quarantine_created.
std::vector<bool> certainly_absent(const std::vector<std::string>& paths);

// The same walk; moves the last component only if it is a FIFO, socket or device node (or a
// symlink to one): such a file at a path git opens (HEAD, index, a ref) blocks the host's git
// in open(2) forever. Regular files and directories stay. The new name starts with a dot
// (`.<name>.paddock-quarantine-<tag>`): git skips dot names when it lists refs/ and logs/,
// where any other name is a ref it would open.
QuarantineOutcome quarantine_if_special(const std::string& path, const std::string& tag);

// The same walk; moves what lies at `path` if it is no longer the inode (`dev`, `ino`) that
// was there when the command started, or is that regular file with a second name now, or its
// change time is no longer `ctime` (read-only in the sandbox, so only something outside it can
// have done that: a concurrent sandbox's audit quarantining it moves this sandbox's read-only
// mount along with it; another mount namespace unlinking the name drops that mount, and
// linking the same inode back gives the command a writable name; the host edited it). A
// symlink on the way is moved like a created path; nothing there is fine.
// `compare_ctime`: also a regular file or symlink whose change time moved (only when the
// sandbox lost a mount during the run: a directory's ctime moves with every entry the host
// adds, and a file's with every in-place save, so it is no evidence on its own).
QuarantineOutcome quarantine_if_replaced(const ResolvedFilesystem::Identity& was,
                                         const std::string& tag, bool compare_ctime);

// chmod of what an fd (O_PATH included) holds, through /proc/self/fd: fchmod refuses O_PATH
// fds and fchmodat(AT_EMPTY_PATH) needs fchmodat2 (Linux 6.6). The magic link reaches the very
// inode held, never a path a command could swap meanwhile. Returns 0 or an errno.
int chmod_fd(int fd, unsigned mode);

// File type words for messages.
const char* describe_mode(unsigned mode) noexcept;

}  // namespace paddock::sandbox
