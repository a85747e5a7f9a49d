// The directory a sandbox is built around, resolved once. It becomes a writable root, so two
// things must hold for the very object the child will enter:
//  - it is not reached through a symlink that points out of the directory the link sits in
//    (a previous command could have planted `build -> ~` for a later run with --cwd build;
//    system links such as /bin -> usr/bin point within their directory), and
//  - the canonical path the policy is decided on names that same object.
// Checking the path and then calling realpath(3) resolved it twice: a concurrent
// `renameat2(RENAME_EXCHANGE)` of a directory and a symlink in between gave the checks one
// object and the sandbox another. Here every component is opened (O_PATH, O_NOFOLLOW) from the
// previous component's descriptor, each symlink is read from the descriptor of the link
// itself and checked, and the result is the final descriptor's identity and its kernel path.
#pragma once

#include <string>

#include "sandbox/linux/path_identity.hpp"

namespace paddock::sandbox {

struct WorkingDirectory {
  std::string path;       // canonical (the kernel's name for the object)
  PathIdentity identity;  // the object (see path_identity.hpp: the child verifies it again)
};

// `cwd` empty: the process's own working directory. Throws Error(config_invalid) for a
// symlink that points out of its directory, Error(spawn_failed) for a directory that does not
// exist or is not a directory, or when the path changed while it was being resolved.
WorkingDirectory resolve_working_directory(const std::string& cwd);

}  // namespace paddock::sandbox
