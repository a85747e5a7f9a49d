#include "sandbox/change_set_standins.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <vector>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

// The root of `set` whose layer holds `path`: the deepest one (its overlay is what the command
// sees there); roots.size() when none does.
std::size_t root_holding(const ChangeSetInfo& set, const std::string& path) {
  std::size_t root = set.roots.size();
  for (std::size_t i = 0; i < set.roots.size(); ++i) {
    if (paths::below(path, set.roots[i]) &&
        (root == set.roots.size() || set.roots[i].size() > set.roots[root].size())) {
      root = i;
    }
  }
  return root;
}

// A directory made for a stand-in that was then left out is gone again.
void keep_dirs_used(ChangeSetInfo& set, std::vector<std::string> kept) {
  std::erase_if(set.placeholder_dirs, [&](const std::string& dir) {
    return std::none_of(kept.begin(), kept.end(),
                        [&](const std::string& p) { return paths::below(p, dir); });
  });
  set.placeholders = std::move(kept);
}

// Whether mirror_directory could give a directory the host's owner: as root, any; otherwise
// only our own, in our group or one we are in.
bool could_mirror(const struct stat& host) {
  if (!paths::sandbox_can_search(host)) return false;
  return ::geteuid() == 0 || (host.st_uid == ::geteuid() && paths::in_own_groups(host.st_gid));
}

}  // namespace

bool mirror_directory(const std::string& at, const struct stat& host) {
  // One the command cannot enter: nothing to stand in below it (and no pin could be put there).
  if (!paths::sandbox_can_search(host)) return false;
  const mode_t mode = host.st_mode & 07777;
  if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat st;
  if (::lstat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if ((st.st_uid != host.st_uid || st.st_gid != host.st_gid) &&
      ::lchown(at.c_str(), host.st_uid, host.st_gid) != 0) {
    return false;
  }
  if (::chmod(at.c_str(), mode) != 0 || ::lstat(at.c_str(), &st) != 0) return false;
  return st.st_uid == host.st_uid && st.st_gid == host.st_gid && (st.st_mode & 07777) == mode;
}

namespace {

// The walk make_placeholders and plan_placeholders share: for each stand-in, the directories
// on its way in its root's layer (the host's mirrored, the missing ones made), then its file.
// `Layer` makes them (RealLayer) or models making them (ModelLayer); the walk is the same, so
// a plan of the stand-ins is what making them gives, as long as the model says what the
// kernel would.
template <typename Layer>
void walk_placeholders(ChangeSetInfo& set, Layer& layer) {
  std::vector<std::string> kept;
  set.placeholder_dirs.clear();
  for (const std::string& path : set.placeholders) {
    const std::size_t root = root_holding(set, path);
    if (root == set.roots.size()) continue;
    std::string at = set.upper(root);
    const std::string rel = path.substr(set.roots[root].size() + 1);
    std::vector<std::string> made;  // directories made for this one (undone if it fails)
    bool ok = true;
    for (std::size_t start = 0; ok;) {
      const std::size_t slash = rel.find('/', start);
      at += "/" + rel.substr(start, slash == std::string::npos ? slash : slash - start);
      const std::string host = set.roots[root] + "/" + rel.substr(0, slash);
      if (slash == std::string::npos) {
        ok = layer.make_file(at);
        break;
      }
      struct stat st;
      if (::lstat(host.c_str(), &st) == 0) {
        ok = S_ISDIR(st.st_mode) && layer.mirror_dir(at, st);
      } else if (errno == ENOENT) {
        bool fresh = false;
        ok = layer.make_dir(at, fresh);
        if (fresh) made.push_back(at);
        if (ok && std::find(set.placeholder_dirs.begin(), set.placeholder_dirs.end(), host) ==
                      set.placeholder_dirs.end()) {
          set.placeholder_dirs.push_back(host);
        }
      } else {
        ok = false;
      }
      start = slash + 1;
    }
    if (ok) {
      kept.push_back(path);
    } else {
      for (auto it = made.rbegin(); it != made.rend(); ++it) layer.remove_dir(*it);
    }
  }
  keep_dirs_used(set, std::move(kept));
}

struct RealLayer {
  bool make_file(const std::string& at) {
    const int fd = ::open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }
  bool mirror_dir(const std::string& at, const struct stat& host) {
    return mirror_directory(at, host);
  }
  bool make_dir(const std::string& at, bool& fresh) {
    fresh = ::mkdir(at.c_str(), 0755) == 0;
    return (fresh || errno == EEXIST) && ::chmod(at.c_str(), 0755) == 0;
  }
  void remove_dir(const std::string& at) { ::rmdir(at.c_str()); }
};

// What the calls above would do in a new layer, by layer path: a directory or a file made.
struct ModelLayer {
  std::map<std::string, bool> made;  // true: a directory
  bool file_at(std::string_view path) const {
    auto it = made.find(std::string(path));
    return it != made.end() && !it->second;
  }
  bool make_file(const std::string& at) {  // O_EXCL; ENOTDIR below a file
    if (made.count(at) != 0 || file_at(paths::parent_of(at))) return false;
    made.emplace(at, false);
    return true;
  }
  bool mirror_dir(const std::string& at, const struct stat& host) {
    if (file_at(at) || file_at(paths::parent_of(at)) || !could_mirror(host)) return false;
    made.emplace(at, true);
    return true;
  }
  bool make_dir(const std::string& at, bool& fresh) {  // EEXIST is fine, even for a file
    if (file_at(paths::parent_of(at))) return false;
    fresh = made.emplace(at, true).second;
    return true;
  }
  void remove_dir(const std::string& at) { made.erase(at); }
};

}  // namespace

void make_placeholders(ChangeSetInfo& set) {
  RealLayer layer;
  walk_placeholders(set, layer);
}

void plan_placeholders(ChangeSetInfo& set) {
  ModelLayer layer;
  walk_placeholders(set, layer);
}

}  // namespace paddock::sandbox
