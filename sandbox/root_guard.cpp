#include "sandbox/root_guard.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "sandbox/default_paths.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox::paths {
namespace {

// The mandatory names split into components once: check() matches them against every
// position of a root's path.
const std::vector<std::vector<std::string>>& split_mandatory_names() {
  static const std::vector<std::vector<std::string>> split = [] {
    std::vector<std::vector<std::string>> out;
    for (const auto& name : mandatory_read_only_names()) out.push_back(components(name));
    return out;
  }();
  return split;
}

std::string joined(const std::vector<std::string>& comps, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += "/" + comps[i];
  return out.empty() ? "/" : out;
}

bool has(const std::string& dir, const char* name, mode_t type) {
  struct stat st;
  return ::stat(stable_path(join(dir, name)).c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

}  // namespace

// git's own test (setup.c): HEAD, and objects plus refs, or a commondir that supplies them.
bool is_git_directory(const std::string& dir) {
  struct stat st;
  if (::lstat(stable_path(join(dir, "HEAD")).c_str(), &st) != 0) return false;
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) return false;
  if (has(dir, "commondir", S_IFREG)) return true;
  return has(dir, "objects", S_IFDIR) && has(dir, "refs", S_IFDIR);
}

void RootGuard::add(std::string path, const char* why) {
  protected_.push_back({std::move(path), why});
}

void RootGuard::check(const std::string& root, const Where& w, bool own_git_dir) const {
  auto refuse = [&](const std::string& why) {
    invalid(w, (root == w.entry ? "" : "resolves to " + root + ", which ") + why);
  };
  auto refuse_protected = [&](const std::string& why) {
    refuse(why + "; a protected path, or anything inside one, is never a writable root");
  };
  for (const std::string& home : homes_) {
    if (root == home && !allow_write_home_) {
      refuse(
          "is the home directory: writable, it would let the command plant start-up files "
          "the host runs later (~/.bash_aliases, ~/.config/git/config, ~/bin on PATH). Run "
          "in a project directory instead (--cwd DIR), or set sandbox.allowWriteHome "
          "(--allow-write-home) to allow it: the home's start-up and credential files stay "
          "protected");
    }
    if (root != home && within(home, root)) {
      refuse("contains the home directory " + home +
             " (and every start-up file and credential in it, and other users' homes); a "
             "writable root may be a home (sandbox.allowWriteHome) or lie in one, never above it");
    }
  }
  if (!protect_) return;

  const std::vector<std::string> comps = components(root);
  for (std::size_t i = 0; i < comps.size() && !own_git_dir; ++i) {
    if (comps[i] == ".git") {
      refuse_protected(
          "is or lies in the git directory " + joined(comps, i + 1) +
          ": the host's git runs hooks and reads config from there (run in the repository "
          "itself)");
    }
  }
  for (const auto& name : split_mandatory_names()) {
    for (std::size_t i = 0; i + name.size() <= comps.size(); ++i) {
      if (std::equal(name.begin(), name.end(), comps.begin() + static_cast<std::ptrdiff_t>(i))) {
        refuse_protected(
            "is or lies in " + joined(comps, i + name.size()) +
            ", which stays read-only in every writable root (the host runs what is there "
            "later)");
      }
    }
  }
  for (std::string dir = root; !own_git_dir; dir = std::string(parent_of(dir))) {
    if (is_git_directory(dir)) {
      refuse_protected(
          "is or lies in the git directory " + dir +
          " (HEAD, objects and refs): the host's git runs hooks and reads config from there");
    }
    if (dir == "/") break;
  }
  for (const auto& p : protected_) {
    if (within(root, p.path)) refuse_protected("is or lies in " + p.path + ", " + p.why);
  }
}

}  // namespace paddock::sandbox::paths
