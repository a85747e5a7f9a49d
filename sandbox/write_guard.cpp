#include "sandbox/write_guard.hpp"

#include <algorithm>

#include "sandbox/path_policy.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

namespace {

// Names git reads as repository state or pointers: a file tool has no business creating them
// anywhere (a sandboxed command's new repository is judged by the post-run audit; a host-side
// write has no audit after it). `.git` as any component, and the files that make a directory
// a repository or point at one.
const char* git_state_name(const std::string& resolved) {
  std::size_t start = 0;
  while (start < resolved.size()) {
    std::size_t end = resolved.find('/', start);
    if (end == std::string::npos) end = resolved.size();
    const std::string_view part(resolved.data() + start, end - start);
    if (part == ".git") return "a .git directory or file (git reads it as a repository)";
    start = end + 1;
  }
  const std::string_view name = std::string_view(resolved).substr(
      resolved.rfind('/') == std::string::npos ? 0 : resolved.rfind('/') + 1);
  if (name == "HEAD" || name == "commondir" || name == "gitdir" || name == "config.worktree") {
    return "a file that makes its directory a git repository or points git at one";
  }
  return nullptr;
}

}  // namespace

WriteCheck check_write(const FilesystemPolicy& policy, const std::string& cwd,
                       const std::string& home, const std::string& path) {
  WriteCheck out;
  if (path.empty() || path.find('\0') != std::string::npos) {
    out.reason = "the path is empty or contains a NUL byte";  // open() would stop at the NUL
    return out;
  }
  paths::Resolved target;
  try {
    target = paths::resolve_from(cwd, path);
  } catch (const std::exception& e) {
    out.reason = std::string("the path does not resolve: ") + e.what();
    return out;
  }
  out.path = target.path;
  if (const char* why = git_state_name(target.path)) {
    out.reason = std::string("refused: ") + why;
    return out;
  }
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

std::optional<std::string> call_root_conflict(const FilesystemPolicy& base,
                                              const std::vector<std::string>& call_roots,
                                              const std::string& cwd, const std::string& home) {
  if (call_roots.empty()) return std::nullopt;
  // Both sides as the plan expands them (globs, escaped literal entries, `~`, links): what
  // the Manager hides is every deny_read rule of its resolved policy, the default credential
  // denials included; the call's roots are what its allow_write entries name.
  // A hidden home is the exception: a call's root inside it is shown as a working directory
  // there is (only a root around it would undo it). What the policy or the credential list
  // denies inside a hidden home has no rule of its own (the home hides it anyway), so those
  // come from `denied`.
  std::vector<PathRule> hidden;
  std::vector<std::string> roots;
  try {
    ResolvedFilesystem fs = resolve_filesystem(base, cwd, home);
    for (auto& rule : fs.rules) {
      if (rule.access == PathAccess::deny_read) hidden.push_back(std::move(rule));
    }
    for (auto& path : fs.denied) {
      const bool ruled = std::any_of(hidden.begin(), hidden.end(),
                                     [&](const PathRule& r) { return r.path == path; });
      if (!ruled)
        hidden.push_back({std::move(path), PathAccess::deny_read, true, true,
                          "filesystem.denyRead or default credential"});
    }
    FilesystemPolicy call;
    call.allow_write = call_roots;
    call.allow_write_cwd = false;
    call.default_denies = false;
    call.private_tmp = base.private_tmp;
    call.home = base.home;
    roots = resolve_filesystem(call, cwd, home).writable_roots;
  } catch (const std::exception&) {
    return std::nullopt;  // the plan refuses it, naming the entry
  }
  for (const auto& r : roots) {
    for (const auto& d : hidden) {
      const bool a_home = std::string_view(d.origin) == kHiddenHomeOrigin;
      if ((!a_home && paths::within(r, d.path)) || paths::within(d.path, r)) {
        return "policy.allow_write: " + r + " reaches " + d.path + ", which the Manager's " +
               (std::string_view(d.origin) == "policy" ? "filesystem.denyRead" : d.origin) +
               " hides; a call may not undo it";
      }
    }
  }
  return std::nullopt;
}

}  // namespace paddock::sandbox
