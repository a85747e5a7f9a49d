#include "sandbox/path_policy.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "paddock/errors.hpp"
#include "sandbox/git_dir.hpp"
#include "sandbox/git_state.hpp"
#include "sandbox/home_view.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/policy_entries.hpp"
#include "sandbox/root_guard.hpp"
#include "sandbox/rule_set.hpp"

namespace paddock::sandbox {

using namespace paths;      // path_resolution.hpp: resolve_from, GlobWalk, helpers
using namespace resolving;  // policy_entries.hpp, rule_set.hpp

const char* to_string(PathAccess a) noexcept {
  switch (a) {
    case PathAccess::deny_read:
      return "deny_read";
    case PathAccess::allow_read:
      return "allow_read";
    case PathAccess::read_only:
      return "read_only";
    case PathAccess::writable:
      return "writable";
  }
  return "?";
}

CanonicalPath canonicalize(std::string_view path) {
  if (!path.starts_with('/')) {
    throw Error(errc::config_invalid, std::string(path) + ": not an absolute path");
  }
  try {
    Resolved r = resolve_from("/", path);
    return {std::move(r.path), r.exists, r.is_dir};
  } catch (const Unresolvable& e) {
    throw Error(errc::config_invalid, std::string(path) + ": " + e.what());
  }
}

ResolvedFilesystem resolve_filesystem(const FilesystemPolicy& policy, const std::string& cwd,
                                      const std::string& home) {
  if (cwd.empty() || cwd.front() != '/' || cwd.find('\0') != std::string::npos) {
    throw Error(errc::config_invalid, "cwd: '" + cwd + "': must be an absolute path");
  }
  const std::string& spelled = !policy.home.empty() ? policy.home
                               : !home.empty()      ? home
                                                    : passwd_home();
  if (!spelled.empty() && (spelled.front() != '/' || spelled.find('\0') != std::string::npos)) {
    throw Error(errc::config_invalid, "home: '" + spelled + "': must be an absolute path");
  }
  Context ctx;
  std::vector<Context> homes;  // one per protected home; `~` of each means that home
  try {
    ctx.cwd = resolve_from("/", cwd);
    // `/` is no home (it is what HOME becomes when unset): `~/bin` would name /bin. The
    // passwd entry stands in.
    for (const std::string* h : {&spelled, &passwd_home()}) {
      if (h->empty()) continue;
      Context c = ctx;
      c.home_spelled = *h;
      c.home = resolve_from("/", *h);
      if (c.home.path == "/") continue;
      if (homes.empty() || c.home.path != homes.front().home.path) homes.push_back(std::move(c));
    }
  } catch (const Unresolvable& e) {
    throw Error(errc::config_invalid, std::string("cwd or home: ") + e.what());
  }

  if (!homes.empty()) ctx = homes.front();  // what `~` means in the policy's own entries

  // Writable roots first: the symlink check of every allow rule needs all of them.
  std::vector<WriteRoot> roots;
  if (policy.allow_write_cwd && ctx.cwd.exists && ctx.cwd.is_dir) {
    Where w{"cwd (the working directory is writable: allowWriteCwd)", std::string::npos, cwd};
    refuse_special(ctx.cwd.path, w);
    refuse_pseudo_root(ctx.cwd.path, w);
    roots.push_back({ctx.cwd, w, kWorkingDirectory});
    roots.back().target.links.clear();  // the caller chose the cwd
  }
  for (std::size_t i = 0; i < policy.allow_write.size(); ++i) {
    Where w = {"filesystem.allowWrite", i, policy.allow_write[i]};
    for (auto& t : expand(policy.allow_write[i], ctx, w, false)) {
      if (!t.exists) continue;  // nothing to bind; the command cannot create it either
      refuse_special(t.path, w);
      refuse_pseudo_root(t.path, w);
      roots.push_back({std::move(t), w, kPolicy});
    }
  }
  std::set<std::string> own_git_dirs;  // git_dir_roots: writable though git directories
  for (std::size_t i = 0; i < policy.git_dir_roots.size(); ++i) {
    Where w = {"the session worktree's git directory", i, policy.git_dir_roots[i]};
    for (auto& t : expand(policy.git_dir_roots[i], ctx, w, false)) {
      if (!t.exists || !t.is_dir) invalid(w, "is no directory");
      refuse_special(t.path, w);
      refuse_pseudo_root(t.path, w);
      own_git_dirs.insert(t.path);
      roots.push_back({std::move(t), w, kPolicy});
    }
  }
  // Another user's home around the working directory or a writable root (root's run in
  // /home/bob/proj) is protected as the user's own is: its credentials hidden, its start-up
  // files read-only, a repository at its top never shown whole. `~` keeps meaning ours.
  const std::size_t own_homes = homes.size();
  std::vector<std::string> around = {ctx.cwd.path};
  for (const auto& r : roots) around.push_back(r.target.path);
  for (const auto& p : around) {
    const std::string other = user_home_around(p);
    if (other.empty() || std::any_of(homes.begin(), homes.end(),
                                     [&](const Context& h) { return h.home.path == other; })) {
      continue;
    }
    try {
      Context c = ctx;
      c.home_spelled = other;
      c.home = resolve_from("/", other);
      homes.push_back(std::move(c));
    } catch (const Unresolvable&) {
    }
  }
  // Each writable directory opened once; from here on, everything below one is looked at
  // through its descriptor (root_views.hpp), not through the names above it.
  auto views = std::make_shared<RootViews>();
  std::vector<std::string> root_dirs;
  for (const auto& r : roots) {
    if (r.target.is_dir) root_dirs.push_back(r.target.path);
  }
  views->add_all(std::move(root_dirs));  // outer roots first
  const RootViews::Active through_roots(views.get());
  std::vector<std::string> root_paths;
  for (const auto& r : roots) root_paths.push_back(r.target.path);
  std::vector<DefaultPath> defaults;
  if (policy.default_denies) defaults = expand_defaults(ctx, homes, root_paths);
  std::vector<std::string> home_paths;
  for (const auto& h : homes) home_paths.push_back(h.home.path);
  std::vector<std::string> out_homes = home_paths;
  RootGuard guard(std::move(home_paths), policy.allow_write_home, policy.default_denies);
  for (const auto& d : defaults) {
    if (d.target.exists) guard.add(d.target.path, d.why);
  }
  for (const auto& r : roots) {
    guard.check(r.target.path, r.where, own_git_dirs.count(r.target.path) != 0);
  }
  std::vector<std::string> trusted;
  for (const auto& r : roots) {
    bool clean = std::none_of(r.target.links.begin(), r.target.links.end(), [&](const auto& l) {
      return std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& o) {
        return l != o.target.path && within(l, o.target.path);
      });
    });
    if (clean) trusted.push_back(r.target.path);
  }

  RuleSet rules;
  // The host's directories the policy attaches at /tmp or /var/tmp itself (a working directory
  // of /tmp, `allowWrite: /var/tmp`, `allowRead: /tmp`): those are not private (below).
  std::set<std::string> attached_tmp;
  for (const auto& r : roots) attached_tmp.insert(r.target.path);
  GitState git;
  for (const auto& r : roots) {
    check_links(r.target, r.where, roots, trusted);
    // As for the working directory: a link on the way that leads out of the directory it
    // sits in may have been planted by another sandbox writing there (`cache -> ~`), even
    // where this run's own roots do not reach. Judged on this resolution's own result.
    for (const std::string& link : r.target.links) {
      if (!within(r.target.path, parent_of(link))) {
        invalid(r.where, "resolves through the symlink " + link + " to " + r.target.path +
                             ", outside the directory the link sits in; a sandboxed command "
                             "could have planted that link, so name the target directly");
      }
    }
    rules.add(r.target, PathAccess::writable, r.origin);
  }
  // The directories a command sees nothing of unless a rule attaches a path back: the private
  // /tmp and /var/tmp, and (hide_home) the homes.
  std::vector<std::string> covered;
  if (policy.private_tmp) {
    for (const char* tmp : {"/tmp", "/var/tmp"}) covered.emplace_back(tmp);
  }
  std::vector<Resolved> hidden_homes;
  if (policy.hide_home) hidden_homes = hidden_home_dirs(out_homes);
  for (const auto& h : hidden_homes) covered.push_back(h.path);
  // A writable root below one of them inside a repository whose top is above it (a checkout
  // at /tmp/x/ws or ~/ws, run from ws/src): the directories around the root would be a
  // private or hidden tree, where git finds no repository and a write above the root
  // (`../Makefile`) vanishes with the sandbox. The repository's top is attached read-only
  // instead (git finds its .git there, as on the host): such a write fails (EROFS), as it does
  // elsewhere. A read-only working directory under a hidden home is shown the same way.
  std::vector<std::string> starts;
  for (const auto& r : roots) starts.push_back(r.target.path);
  const bool cwd_is_root = std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& r) {
    return r.target.path == ctx.cwd.path;
  });
  // Every path the policy or the credential list denies, whether or not a rule is needed for
  // it (one inside a hidden home is hidden anyway): nothing is shown again inside one.
  std::vector<std::string> denied;
  for (const auto& d : defaults) {
    if (d.target.exists && d.access == PathAccess::deny_read) denied.push_back(d.target.path);
  }
  auto is_denied = [&](const std::string& path) {
    return std::any_of(denied.begin(), denied.end(),
                       [&](const std::string& d) { return within(path, d); });
  };
  // Below a hidden home, never a home itself (another user's neither: root's run from
  // /home/bob would show bob's whole home).
  const bool show_cwd =
      !cwd_is_root && ctx.cwd.exists && ctx.cwd.is_dir &&
      std::any_of(hidden_homes.begin(), hidden_homes.end(),
                  [&](const auto& h) { return paths::below(ctx.cwd.path, h.path); }) &&
      std::none_of(hidden_homes.begin(), hidden_homes.end(),
                   [&](const auto& h) { return h.path == ctx.cwd.path; });
  // Never from a home's dot directory (`~/.config`, `~/.local/share`): tools keep their
  // tokens there under names no list has (the new-user trial read ~/.config/git/credentials
  // from a read-only run in ~/.config). Refused below, as a run from the home itself is.
  const bool in_dot_dir = std::any_of(out_homes.begin(), out_homes.end(), [&](const auto& h) {
    return paths::below(ctx.cwd.path, h) && ctx.cwd.path.compare(h.size() + 1, 1, ".") == 0;
  });
  const bool show_read_only_cwd = show_cwd && !in_dot_dir;
  if (show_read_only_cwd) starts.push_back(ctx.cwd.path);
  std::vector<std::string> deny_write_patterns;
  for (std::size_t i = 0; i < policy.deny_write.size(); ++i) {
    Where w = {"filesystem.denyWrite", i, policy.deny_write[i]};
    std::vector<std::string> patterns;
    for (const auto& t : expand(policy.deny_write[i], ctx, w, true, &patterns)) {
      if (t.exists) refuse_special(t.path, w);
      rules.protect(t, kPolicy);
      // A stand-in for a path it names, not for one a pattern might: the pattern itself is
      // judged when the set is applied (below).
      if (!t.exists && patterns.empty() && !is_glob(policy.deny_write[i])) {
        rules.deny_write_missing(t);
      }
    }
    deny_write_patterns.insert(deny_write_patterns.end(), patterns.begin(), patterns.end());
  }
  for (std::size_t i = 0; i < policy.deny_read.size(); ++i) {
    Where w = {"filesystem.denyRead", i, policy.deny_read[i]};
    for (const auto& t : expand(policy.deny_read[i], ctx, w, true)) {
      // A path that does not exist has nothing to hide; what the command creates is its own.
      if (!t.exists) continue;
      refuse_special(t.path, w);
      rules.add(t, PathAccess::deny_read, kPolicy);
      denied.push_back(t.path);
    }
  }
  for (std::size_t i = 0; i < policy.allow_read.size(); ++i) {
    Where w = {"filesystem.allowRead", i, policy.allow_read[i]};
    for (const auto& t : expand(policy.allow_read[i], ctx, w, false)) {
      if (!t.exists) continue;
      refuse_special(t.path, w);
      check_links(t, w, roots, trusted);
      attached_tmp.insert(t.path);
      if (t.links.empty()) {
        rules.add(t, PathAccess::allow_read, kPolicy);
        continue;
      }
      rules.add_allow_through_link(
          t, kPolicy,
          where_message(w, "resolves through the symlink " + t.links.front() + " to " + t.path +
                               ", a path the sandbox denies; whoever can write where the link "
                               "sits (another user, a sandbox that could write there) chose "
                               "its target, so name the target directly to allow it"));
    }
  }

  // The repositories around the starts (above), once every denial is known.
  for (const std::string& start : starts) {
    for (const std::string& hidden : covered) {
      if (!paths::below(start, hidden)) continue;
      const std::string top = repository_top_between(start, hidden, out_homes);
      const bool a_root = std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& o) {
        return !top.empty() && within(top, o.target.path);
      });
      // Never a top the policy or the credential list denies (`pass git init` makes
      // ~/.password-store a repository): it would show what is denied around the start.
      if (top.empty() || a_root || is_denied(top)) continue;
      try {
        const Resolved t = resolve_from("/", top);
        if (t.exists && t.is_dir && t.links.empty()) {
          rules.add(t, PathAccess::allow_read, "the repository around a writable root");
        }
      } catch (const Unresolvable&) {
      }
    }
  }
  // The hidden homes (after the policy's own denials, whose origin then names the policy):
  // what tools need from them stays readable, unless the policy or the credential list denies
  // it, and a read-only working directory there is shown (the repository around it, above).
  for (const auto& h : hidden_homes) rules.add(h, PathAccess::deny_read, kHiddenHomeOrigin);
  if (!hidden_homes.empty()) {
    for (const auto& r : readable_home_paths(out_homes)) {
      if (!is_denied(r.path)) rules.add(r, PathAccess::allow_read, kHomeReadable);
    }
    if (show_read_only_cwd && !is_denied(ctx.cwd.path)) {
      rules.add(ctx.cwd, PathAccess::allow_read, kWorkingDirectory);
    }
  }

  if (policy.default_denies) {
    // Missing ones inside a writable root (a writable home) are watched: ~/.ssh/ created there
    // is removed after the command. A start-up path under a hidden credential stays hidden.
    for (const auto& d : defaults) {
      if (!d.target.exists) {
        rules.protect_missing(d.target);
      } else {
        rules.add(d.target, d.access, d.origin);
      }
    }
    std::vector<std::string> dirs;
    for (const auto& r : roots) {
      if (!r.target.is_dir) continue;
      dirs.push_back(r.target.path);
      try {
        // Not a repository (yet): a `.git` the command creates is judged as a whole after it
        // (kept if git would run nothing from it, else quarantined: git_state.hpp), not file by
        // file, which would leave a half repository behind.
        struct stat st;
        const bool repository = ::lstat(stable_path(join(r.target.path, ".git")).c_str(), &st) == 0;
        for (const auto& name : mandatory_read_only_names()) {
          if (!repository && name.starts_with(".git/")) continue;
          rules.protect(resolve_from(r.target.path, name), kMandatory);
        }
      } catch (const Unresolvable& e) {
        invalid(r.where, std::string("a protected path inside it: ") + e.what());
      }
    }
    // With change sets every writable directory is a copy-on-write layer whose changes are
    // judged after the command (change_apply.hpp): no walk of the workspace is needed.
    if (!policy.change_sets) try {
        git = scan_git_state(dirs);
        for (const auto& path : git.protect) rules.protect(resolve_from("/", path), kMandatory);
      } catch (const GitScanRefused& e) {
        throw Error(errc::config_invalid, std::string("git state: ") + e.what());
      } catch (const Unresolvable& e) {
        throw Error(errc::config_invalid, std::string("git state: ") + e.what());
      }
  }
  // The sandbox's own /tmp and /var/tmp, unless the policy attaches the host's directory right
  // there: that one is the host's, every rule below it applied as anywhere else. Counted as
  // private, its rules below were skipped as "under a cover" while the host's tree was
  // attached writable over it: a command run from /tmp wrote .git/config of a repository
  // there (hostile review).
  std::vector<std::string> private_tmp;
  if (policy.private_tmp) {
    for (const char* tmp : {"/tmp", "/var/tmp"}) {
      if (paths::is_real_directory(tmp) && attached_tmp.count(tmp) == 0) {
        rules.start_hidden(tmp);
        private_tmp.emplace_back(tmp);
      }
    }
  }
  ResolvedFilesystem out = rules.build();
  out.private_tmp = std::move(private_tmp);
  out.deny_write_patterns = std::move(deny_write_patterns);
  // A read-only working directory a hidden home leaves unreadable (the home itself, a
  // credential inside one): refused here, by name. Shown again later, it would show
  // everything below it whose denial needed no rule of its own. (Inside a directory the policy
  // denies, the mount plan refuses it: mount_rules.cpp.)
  if (!cwd_is_root && ctx.cwd.exists) {
    const PathRule* nearest = nullptr;
    for (const auto& rule : out.rules) {
      if (within(ctx.cwd.path, rule.path) &&
          (nearest == nullptr || depth(rule.path) > depth(nearest->path))) {
        nearest = &rule;
      }
    }
    if (nearest != nullptr && nearest->access == PathAccess::deny_read &&
        std::strcmp(nearest->origin, kHiddenHomeOrigin) == 0) {
      // The home it is in by name (bob's, not all of /home, which needs no rule of its own).
      std::string in_home = nearest->path;
      for (const auto& h : hidden_homes) {
        if (within(ctx.cwd.path, h.path) && h.path.size() > in_home.size()) in_home = h.path;
      }
      throw Error(errc::config_invalid,
                  "working directory " + cwd + ": in a hidden home (" + in_home +
                      "), where nothing is shown (sandbox.hideHome); run it from a project "
                      "directory, or show it with --allow-read " +
                      cwd +
                      " (filesystem.allowRead; it then shows all of that directory the "
                      "credential list does not name)");
    }
  }
  std::vector<std::string> unchecked;  // protected paths refuse_other_names has not seen yet
  // A protected name that is a symlink is pinned as a link (a mount on the link itself): the
  // audit checks the link as it checks a read-only file (replaced, or changed once a mount
  // was dropped), so a link put back from outside and re-pointed is caught.
  for (const auto& link : out.protected_links) {
    struct stat st;
    if (::lstat(stable_path(link).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      out.protected_existing.push_back({link, st.st_dev, st.st_ino, st.st_ctim.tv_sec,
                                        st.st_ctim.tv_nsec, st.st_size, st.st_mtim.tv_sec,
                                        st.st_mtim.tv_nsec});
    }
  }
  for (const auto& rule : out.rules) {
    struct stat st;
    if (rule.access == PathAccess::read_only && ::lstat(stable_path(rule.path).c_str(), &st) == 0) {
      out.protected_existing.push_back({rule.path, st.st_dev, st.st_ino, st.st_ctim.tv_sec,
                                        st.st_ctim.tv_nsec, st.st_size, st.st_mtim.tv_sec,
                                        st.st_mtim.tv_nsec});
      if (std::find(git.protect.begin(), git.protect.end(), rule.path) == git.protect.end()) {
        unchecked.push_back(rule.path);
      }
    }
  }
  try {
    refuse_other_names(unchecked);
  } catch (const GitScanRefused& e) {
    throw Error(errc::config_invalid, e.what());
  }
  out.git = std::move(git);
  out.roots = std::move(views);
  out.homes = std::move(out_homes);
  out.own_homes = own_homes;
  for (const auto& h : hidden_homes) out.hidden_homes.push_back(h.path);
  out.denied = std::move(denied);
  return out;
}

}  // namespace paddock::sandbox
