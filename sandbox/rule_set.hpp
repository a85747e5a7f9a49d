// How the rules asked for at each path combine (FilesystemPolicy's precedence): what a path
// inherits from above, deny_write over allow_write, allowRead inside denyRead, no-op rules
// dropped, protected paths that do not exist yet. Internal to sandbox/ (path_policy.cpp).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/path_policy.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox::resolving {

using namespace paths;  // within, depth, parent_of, Resolved

// State of a path as the rules leave it; the host's default is readable, not writable.
struct State {
  bool readable = true;
  bool writable = false;
  bool operator==(const State&) const = default;
};

// Everything asked for at one path, before precedence is applied.
struct Wanted {
  bool deny_read = false;
  bool allow_read = false;
  bool read_only = false;
  bool writable = false;
  bool is_dir = false;
  // Every allowRead here reached the path through a symlink (`/tmp/x -> ~/.ssh`, `~/notes ->
  // .ssh`): whoever could write where the link sits chose the target, so such an allow may
  // show what is readable anyway (attach it under a private /tmp) but never re-open a denied
  // path. Holds the error for when it would.
  bool allow_read_direct = false;
  std::string allow_through_link;
  const char* origin_deny = nullptr;
  const char* origin_allow = nullptr;
  const char* origin_ro = nullptr;
  const char* origin_write = nullptr;
};

class RuleSet {
 public:
  // A directory the sandbox replaces with a private one of its own (/tmp, /var/tmp): the
  // host's tree below it is not there unless a rule attaches it back, so an allowRead below it
  // is a real rule, not a no-op (the mount plan attaches it into the private directory,
  // read-only). Denials and read-only rules are still judged against the host's tree: a
  // working directory or program the plan shows there later must keep them (a denyRead inside
  // a read-only cwd under /tmp, the default credential denies of a HOME under /tmp).
  void start_hidden(const std::string& path) { hidden_roots_.insert(path); }

  // An allowRead reached through a symlink (see Wanted).
  void add_allow_through_link(const Resolved& r, const char* origin, std::string error) {
    add(r, PathAccess::allow_read, origin, false);
    Wanted& wt = wanted_[r.path];
    if (wt.allow_through_link.empty()) wt.allow_through_link = std::move(error);
  }

  void add(const Resolved& r, PathAccess access, const char* origin, bool direct = true) {
    Wanted& wt = wanted_[r.path];
    wt.is_dir = r.is_dir;
    auto set = [&](bool& flag, const char*& o) {
      flag = true;
      if (o == nullptr) o = origin;
    };
    switch (access) {
      case PathAccess::deny_read:
        set(wt.deny_read, wt.origin_deny);
        break;
      case PathAccess::allow_read:
        set(wt.allow_read, wt.origin_allow);
        if (direct) wt.allow_read_direct = true;
        break;
      case PathAccess::read_only:
        set(wt.read_only, wt.origin_ro);
        break;
      case PathAccess::writable:
        set(wt.writable, wt.origin_write);
        break;
    }
  }

  // A protected path that does not exist yet.
  void protect_missing(const Resolved& r) {
    if (r.creatable) missing_.push_back(r.path);
  }
  // A path the policy names in denyWrite that does not exist yet: made unwritable inside the
  // sandbox too where a copy-on-write layer can hold a stand-in for it (mount_plan.cpp).
  void deny_write_missing(const Resolved& r) {
    if (r.creatable) named_missing_.push_back(r.path);
  }

  // A read_only, existing or not, for a protected path.
  void protect(const Resolved& r, const char* origin) {
    // Inside a writable root, a directory we cannot search was made so by someone who owns it
    // (a previous command's chmod 000 .git): what is behind it cannot be checked, so refuse
    // rather than treat it as absent.
    if (r.unsearchable) {
      throw Unresolvable(r.path +
                         ": a parent directory cannot be searched (permission denied); "
                         "restore its permissions");
    }
    if (r.exists) {
      add(r, PathAccess::read_only, origin);
    } else {
      protect_missing(r);
    }
    // The host will reach the protected path through the same links (`.bashrc ->
    // dotfiles/bashrc`, `.git -> ../store/repo.git`): replacing one would point the host at
    // a file the command wrote, so each link is pinned as it is.
    links_.insert(links_.end(), r.links.begin(), r.links.end());
  }

  ResolvedFilesystem build() {
    std::vector<std::string> order;
    order.reserve(wanted_.size());
    for (const auto& [path, wt] : wanted_) order.push_back(path);
    std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
      return depth(a) < depth(b);
    });  // the map already sorted them by path

    ResolvedFilesystem out;
    for (const std::string& path : order) {
      const Wanted& wt = wanted_[path];
      const State before = inherited(path);
      // deny_write wins over allow_write, at the same path and from above; a writable entry
      // that loses still makes its path readable (allow_write implies read).
      const bool write = wt.writable && !read_only_at_or_above(path);
      const bool allow = wt.allow_read || (wt.writable && !write);
      State after = before;
      if (wt.allow_read && !wt.allow_read_direct && !wt.writable &&
          (wt.deny_read || !before.readable)) {
        throw Error(errc::config_invalid, wt.allow_through_link);
      }
      if (wt.deny_read && !allow && !write) after = {false, false};
      if (allow && !after.readable) after = {true, false};
      if (write) after = {true, true};
      if (wt.read_only) after.writable = false;
      // Readable on the host but hidden by a private /tmp: the allowRead attaches it.
      const bool expose = allow && !write && after.readable && hidden_before(path);
      if (after == before && !expose) continue;  // a no-op costs a mount and says nothing

      PathAccess access;
      const char* origin;
      if (!after.readable) {
        access = PathAccess::deny_read;
        origin = wt.origin_deny;
      } else if (after.writable) {
        access = PathAccess::writable;
        origin = wt.origin_write;
        out.writable_roots.push_back(path);
      } else if (before.readable && !expose) {
        access = PathAccess::read_only;
        origin = wt.origin_ro != nullptr ? wt.origin_ro : wt.origin_write;
      } else {
        access = PathAccess::allow_read;
        origin = wt.origin_allow != nullptr   ? wt.origin_allow
                 : wt.origin_write != nullptr ? wt.origin_write
                                              : wt.origin_ro;
      }
      kept_[path] = after;
      if (after.readable) attached_.insert(path);  // below it, the host's tree is shown
      out.rules.push_back({path, access, true, wt.is_dir, origin});
    }

    for (const std::string& path : missing_) {
      if (inherited(path) == State{true, true}) out.protected_missing.push_back(path);
    }
    for (const std::string& path : named_missing_) {
      if (inherited(path) == State{true, true}) out.deny_write_missing.push_back(path);
    }
    std::sort(out.deny_write_missing.begin(), out.deny_write_missing.end());
    out.deny_write_missing.erase(
        std::unique(out.deny_write_missing.begin(), out.deny_write_missing.end()),
        out.deny_write_missing.end());
    for (const std::string& link : links_) {
      if (inherited(link).writable) out.protected_links.push_back(link);
    }
    std::sort(out.protected_links.begin(), out.protected_links.end());
    out.protected_links.erase(std::unique(out.protected_links.begin(), out.protected_links.end()),
                              out.protected_links.end());
    std::sort(out.protected_missing.begin(), out.protected_missing.end());
    out.protected_missing.erase(
        std::unique(out.protected_missing.begin(), out.protected_missing.end()),
        out.protected_missing.end());
    return out;
  }

 private:
  // The state the nearest kept ancestor rule leaves.
  State inherited(std::string_view path) const {
    while (path != "/") {
      path = parent_of(path);
      auto it = kept_.find(path);
      if (it != kept_.end()) return it->second;
    }
    return {};
  }

  // Below a private directory and not attached back by a rule above it (the private
  // directory itself is ours, never the host's, whatever a rule on it says).
  bool hidden_before(std::string_view path) const {
    while (path != "/") {
      path = parent_of(path);
      if (attached_.find(path) != attached_.end() && hidden_roots_.count(std::string(path)) == 0) {
        return false;
      }
      if (hidden_roots_.count(std::string(path)) != 0) return true;
    }
    return false;
  }

  bool read_only_at_or_above(std::string_view path) const {
    while (true) {
      auto it = wanted_.find(path);
      if (it != wanted_.end() && it->second.read_only) return true;
      if (path == "/") return false;
      path = parent_of(path);
    }
  }

  std::map<std::string, Wanted, std::less<>> wanted_;
  std::map<std::string, State, std::less<>> kept_;
  std::set<std::string, std::less<>> hidden_roots_, attached_;
  std::vector<std::string> missing_;
  std::vector<std::string> named_missing_;  // of missing_, those the policy's denyWrite names
  std::vector<std::string> links_;
};

}  // namespace paddock::sandbox::resolving
