#include "sandbox/write_guard.hpp"

#include <algorithm>

#include "sandbox/path_policy.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

WriteCheck check_write(const FilesystemPolicy& policy, const std::string& cwd,
                       const std::string& home, const std::string& path) {
  WriteCheck out;
  const paths::Resolved target = paths::resolve_from(cwd, path);
  out.path = target.path;
  const ResolvedFilesystem fs = resolve_filesystem(policy, cwd, home);

  // A protected path that does not exist yet, or anything below one: the sandbox would take
  // it away after a command created it.
  for (const auto& p : fs.protected_missing) {
    if (target.path == p || paths::within(target.path, p)) {
      out.reason = p + " is protected (git or a shell runs it later): read-only in the sandbox";
      return out;
    }
  }
  // The deepest rule at or above the path decides; none: the host, read-only.
  const PathRule* deepest = nullptr;
  for (const auto& r : fs.rules) {
    if (target.path == r.path || paths::within(target.path, r.path)) {
      if (deepest == nullptr || r.path.size() >= deepest->path.size()) deepest = &r;
    }
  }
  if (deepest == nullptr) {
    out.reason = "outside every writable root (the rest of the host is read-only)";
    return out;
  }
  switch (deepest->access) {
    case PathAccess::writable:
      out.allowed = true;
      out.reason = "inside the writable root " + deepest->path + " (" + deepest->origin + ")";
      return out;
    case PathAccess::read_only:
      out.reason = deepest->path + " is read-only (" + deepest->origin + ")";
      return out;
    case PathAccess::deny_read:
      out.reason = deepest->path + " is denied (" + deepest->origin + ")";
      return out;
    case PathAccess::allow_read:
      out.reason = deepest->path + " is readable only (" + deepest->origin + ")";
      return out;
  }
  return out;
}

}  // namespace paddock::sandbox
