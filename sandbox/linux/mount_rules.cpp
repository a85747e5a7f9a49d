#include "sandbox/linux/mount_rules.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "paddock/errors.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

using paths::below;
using paths::depth;

// Before the first rule deeper than `path`: the rules stay shallow to deep.
void insert_in_order(std::vector<PathRule>& rules, PathRule rule) {
  auto at = std::find_if(rules.begin(), rules.end(),
                         [&](const PathRule& r) { return depth(r.path) > depth(rule.path); });
  rules.insert(at, std::move(rule));
}

}  // namespace

std::vector<std::string> directories_to_pin(const ResolvedFilesystem& fs) {
  std::vector<std::string> roots, mounted;
  for (const auto& r : fs.rules) {
    mounted.push_back(r.path);
    if (r.access == PathAccess::writable) roots.push_back(r.path);
  }
  auto deepest_root = [&roots](const std::string& path) -> const std::string* {
    const std::string* best = nullptr;
    for (const auto& root : roots) {
      if (below(path, root) && (best == nullptr || root.size() > best->size())) best = &root;
    }
    return best;
  };
  std::vector<std::string> pins;
  auto pin_above = [&](const std::string& path) {
    const std::string* root = deepest_root(path);
    if (root == nullptr) return;
    for (std::string dir(paths::parent_of(path)); below(dir, *root);
         dir = std::string(paths::parent_of(dir))) {
      if (std::find(pins.begin(), pins.end(), dir) != pins.end()) continue;
      if (std::find(mounted.begin(), mounted.end(), dir) != mounted.end()) continue;
      // One the command cannot enter needs no pin (nothing below it is reached through it,
      // and what a rename of it makes possible is judged when the set is applied); the child
      // could not open it to pin it either.
      struct stat st;
      if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && paths::sandbox_can_search(st)) {
        pins.push_back(dir);
      }
    }
  };
  for (const auto& r : fs.rules) {
    // Renaming a parent away would make the rule miss on the next run (and for runs in the
    // same root at the same time): read-only and hidden paths alike.
    if (r.access == PathAccess::read_only || r.access == PathAccess::deny_read) pin_above(r.path);
  }
  for (const auto& path : fs.protected_missing) pin_above(path);
  for (const auto& link : fs.protected_links) {
    pin_above(link);
    if (std::find(pins.begin(), pins.end(), link) == pins.end() &&
        std::find(mounted.begin(), mounted.end(), link) == mounted.end()) {
      pins.push_back(link);  // the link itself (pinned without being followed)
    }
  }
  return pins;
}

void show_start_points(ResolvedFilesystem& fs, const OwnMounts& own, const std::string& cwd,
                       const std::string& program) {
  // A working directory hidden by a cover of ours (a read-only run from a checkout under
  // /tmp): shown again, read-only, so the command starts where it was asked to start. Inside
  // a denied directory it stays hidden: the run is refused.
  if (own.under_cover(cwd) && !own.attached_at(cwd) && !own.under_exposure(cwd)) {
    for (const auto& r : fs.rules) {
      if (r.exists && r.is_dir && r.access == PathAccess::deny_read && paths::within(cwd, r.path)) {
        throw Error(errc::config_invalid, "working directory " + cwd + ": inside the denied path " +
                                              r.path + "; run it from elsewhere (--cwd)");
      }
    }
    insert_in_order(fs.rules, {cwd, PathAccess::allow_read, true, true, "working directory"});
  }

  // The program itself, when it lies under the private /tmp or /var/tmp or in a hidden home
  // and nothing shows it (a tool or test binary built in a checkout under /tmp or ~): the
  // file alone, read-only, so execve finds what the caller named. Inside a directory the
  // policy or the credential list denies it stays hidden.
  if (program.empty() || (own.private_tmp().empty() && fs.hidden_homes.empty())) return;
  // A relative program is the command's, found from its working directory (not ours).
  const std::string spelled = program.front() == '/' ? program : cwd + "/" + program;
  char* real = ::realpath(spelled.c_str(), nullptr);
  const std::string file = real != nullptr ? real : "";
  std::free(real);
  auto below_any = [&](const std::vector<std::string>& dirs) {
    return std::any_of(dirs.begin(), dirs.end(),
                       [&](const std::string& dir) { return below(file, dir); });
  };
  const bool hidden = below_any(own.private_tmp()) || below_any(fs.hidden_homes);
  const bool denied = std::any_of(fs.rules.begin(), fs.rules.end(),
                                  [&](const PathRule& r) {
                                    return r.exists && r.access == PathAccess::deny_read &&
                                           std::strcmp(r.origin, kHiddenHomeOrigin) != 0 &&
                                           paths::within(file, r.path);
                                  }) ||
                      std::any_of(fs.denied.begin(), fs.denied.end(),
                                  [&](const std::string& d) { return paths::within(file, d); });
  if (!file.empty() && hidden && !own.attached_at(file) && !own.under_exposure(file) && !denied &&
      !paths::is_real_directory(file)) {
    insert_in_order(fs.rules, {file, PathAccess::allow_read, true, false, "program"});
  }
}

}  // namespace paddock::sandbox
