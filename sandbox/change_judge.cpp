#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_applier.hpp"
#include "sandbox/change_rules.hpp"
#include "sandbox/git_config_syntax.hpp"
#include "sandbox/git_index_paths.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/small_file.hpp"

namespace paddock::sandbox::applying {
namespace {

constexpr std::size_t kMaxIndexBytes = std::size_t{512} << 20;

}  // namespace

bool Applier::git_dir(std::size_t root, const std::string& rel) {
  const auto key = std::make_pair(root, rel);
  if (auto it = git_dirs_.find(key); it != git_dirs_.end()) return it->second;
  bool yes = !rel.empty() && base_name(rel) == ".git";
  // HEAD on one side and objects on the other count too: the host will see them merged.
  // As git's own test: HEAD, and objects with refs, or a commondir (logs/ has HEAD and
  // refs/ too, and is no git directory). objects with refs and no HEAD count as well: git
  // accepts that as the common directory of a linked worktree (its HEAD is the worktree's),
  // whose config and hooks the host's git obeys however far away the worktree is.
  // The layer's side is what the walk saw, never the live layer: a session's background
  // process may remove objects/ between the walk and this question, and the apply would
  // still make what the walk saw (with a config judged as a plain file).
  const int host = host_dirs_[root].get(rel);
  // A host directory that cannot be opened (EACCES, EMFILE) may be one: judged as one.
  if (host < 0 && errno != ENOENT && errno != ENOTDIR) yes = true;
  auto has = [&](const char* name) {
    struct stat st;
    return walked_.count({root, rel.empty() ? std::string(name) : rel + "/" + name}) != 0 ||
           (host >= 0 && ::fstatat(host, name, &st, AT_SYMLINK_NOFOLLOW) == 0);
  };
  // A linked worktree's git dir: objects, refs, config and hooks come from its commondir.
  yes = yes || (has("objects") && has("refs")) || (has("HEAD") && has("commondir"));
  git_dirs_[key] = yes;
  return yes;
}

std::string Applier::unjudged_git_files(std::size_t root, const std::string& rel) {
  const int host = host_dirs_[root].get(rel);
  if (host < 0) {
    return errno == ENOENT || errno == ENOTDIR
               ? std::string()
               : std::string("(unreadable: ") + std::strerror(errno) + ")";
  }
  struct stat st;
  auto has = [&](const char* name) {
    if (::fstatat(host, name, &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
    return errno != ENOENT && errno != ENOTDIR;  // cannot tell: taken as there
  };
  // A git directory on the host already: its files were judged as git's all along.
  if ((has("HEAD") && has("commondir")) || (has("objects") && has("refs"))) return {};
  for (const char* name : {"config", "config.worktree", "hooks", "commondir", "info", "gitdir"}) {
    if (has(name)) return name;
  }
  return {};
}

std::set<std::size_t> Applier::object_name_lengths(std::size_t root, const std::string& dir) {
  const auto in_dir = [&](const char* name) { return dir.empty() ? name : dir + "/" + name; };
  // A file of the git directory as the set leaves it and as the host has it.
  const auto both = [&](const char* name) {
    std::vector<std::string> texts;
    if (auto t = read_small(root, in_dir(name))) texts.push_back(std::move(*t));
    std::string host;
    if (read_small_file(set_.roots[root] + "/" + in_dir(name), 65536, host, false)) {
      texts.push_back(std::move(host));
    }
    return texts;
  };
  std::vector<std::string> configs = both("config");
  // A linked worktree's git directory: the format is the common directory's.
  for (std::string common : both("commondir")) {
    while (!common.empty() && (common.back() == '\n' || common.back() == '\r')) common.pop_back();
    if (common.empty()) continue;
    if (common[0] != '/') common = set_.roots[root] + "/" + in_dir(common.c_str());
    std::string text;
    if (read_small_file(common + "/config", 65536, text, false)) configs.push_back(text);
  }
  std::set<std::size_t> out;
  for (const std::string& text : configs) {
    bool sha256 = false;
    read_git_config(
        text,
        [&](const std::string& key, const std::string& value) {
          if (key == "extensions.objectformat") {
            std::string v = value;
            for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            sha256 = v == "sha256";
          }
        },
        [](const std::string&, bool) {});
    out.insert(sha256 ? 32 : 20);
  }
  if (out.empty()) out.insert(20);  // git's default, where no config says otherwise
  return out;
}

std::optional<std::string> Applier::read_small(std::size_t root, const std::string& rel) {
  std::string text;
  if (!layer_bytes(root, rel).read_all(65536, text)) return std::nullopt;
  return text;
}

bool Applier::same_bytes(const Entry& e) {
  if (!S_ISREG(e.host.st_mode) || e.host.st_size != e.st.st_size) return false;
  const int hp = host_dirs_[e.root].get(parent_rel(e.rel));
  if (hp < 0) return false;
  const std::string name = base_name(e.rel);
  UniqueFd a(::openat(hp, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  const LayerBytes b = layer_bytes(e.root, e.rel);
  if (a.get() < 0 || b.fd < 0) return false;
  char x[65536], y[65536];
  for (off_t pos = 0;;) {
    const ssize_t n = ::read(a.get(), x, sizeof x);
    if (n < 0) return false;
    if (n == 0) return pos == b.size;
    if (pos + n > b.size) return false;
    for (ssize_t got = 0; got < n;) {
      const ssize_t m = ::pread(b.fd, y + got, static_cast<std::size_t>(n - got), b.at + pos + got);
      if (m <= 0) return false;
      got += m;
    }
    if (std::memcmp(x, y, static_cast<std::size_t>(n)) != 0) return false;
    pos += n;
  }
}

bool Applier::plausible_head(const std::string& text) {
  if (text.starts_with("ref: refs/")) return text.find('\0') == std::string::npos;
  std::size_t n = 0;
  while (n < text.size() && std::isxdigit(static_cast<unsigned char>(text[n])) != 0) ++n;
  return (n == 40 || n == 64) && (n == text.size() || text.substr(n) == "\n");
}

std::string Applier::deletion_hold_reason(std::size_t root, const std::string& rel) {
  const int parent = host_dirs_[root].get(parent_rel(rel));
  if (parent < 0 && errno != ENOENT) return "a deletion of a directory that cannot be read whole";
  if (parent < 0) return {};
  UniqueFd dir(
      ::openat(parent, base_name(rel).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0 && errno != ENOENT && errno != ENOTDIR) {
    return "a deletion of a directory that cannot be read whole";
  }
  if (dir.get() < 0) return {};
  std::size_t budget = 100000;
  return scan_deleted(dir.get(), root, rel, budget, 0);
}

bool Applier::changed_since(const struct stat& st) const {
  return st.st_ctim.tv_sec > set_.start_sec ||
         (st.st_ctim.tv_sec == set_.start_sec && st.st_ctim.tv_nsec >= set_.start_nsec);
}

namespace {
bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}
// The host's entry is the one an earlier apply wrote (a directory: the same inode).
bool host_is(const ChangeSetInfo::Applied& a, const struct stat& st) {
  return a.host_present && st.st_dev == a.host_dev && st.st_ino == a.host_ino &&
         (a.directory ? S_ISDIR(st.st_mode) : same_time(st.st_ctim, a.host_ctime));
}
}  // namespace

std::string Applier::scan_deleted(int dir, std::size_t root, const std::string& rel,
                                  std::size_t& budget, int depth) {
  std::vector<std::pair<std::string, unsigned char>> names;
  if (base::for_each_directory_entry(dir,
                                     [&](const char* n, unsigned char t) {
                                       names.emplace_back(n, t);
                                       return true;
                                     }) != 0 ||
      depth > 64) {
    return "a deletion of a directory that cannot be read whole";
  }
  struct stat st;
  const bool head = ::fstatat(dir, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
  for (const auto& [name, type] : names) {
    if (budget-- == 0) return "a deletion too large to check (over 100,000 entries)";
    if (name == ".git" || (head && (name == "objects" || name == "refs" || name == "commondir"))) {
      return "deletes a git repository (its history)";
    }
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const std::string below = rel.empty() ? name : rel + "/" + name;
    if (changed_since(st)) {
      // What an earlier apply of this session's set wrote is the command's own.
      auto it = set_.applied.find({root, below});
      if (it == set_.applied.end() || !host_is(it->second, st)) {
        return "conflict: deletes what the host changed while the command ran (after its "
               "sandbox was made: " +
               name + ")";
      }
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) return "a deletion of a directory that cannot be read whole";
      if (std::string why = scan_deleted(sub.get(), root, below, budget, depth + 1); !why.empty()) {
        return why;
      }
    }
  }
  return {};
}

void Applier::reconcile_applied() {
  std::set<std::pair<std::size_t, std::string>> seen;
  for (Entry& e : entries_) {
    auto it = set_.applied.find({e.root, e.rel});
    if (it == set_.applied.end()) continue;
    seen.insert(it->first);
    const ChangeSetInfo::Applied& a = it->second;
    bool host_ours = e.host_exists ? host_is(a, e.host) : !a.host_present;
    // An index the host only refreshed (`git status` between two commands rewrites its stat
    // data, nothing it says): still the apply's. Otherwise a commit's index would be held
    // back as a conflict while its refs and objects went through.
    if (!host_ours && e.host_exists && !a.index_key.empty() && S_ISREG(e.host.st_mode)) {
      std::string host;
      if (read_small_file(host_path(e), kMaxIndexBytes, host, true)) {
        const auto key =
            index_content_key(host, *object_name_lengths(e.root, parent_rel(e.rel)).begin());
        host_ours = key && *key == a.index_key;
      }
    }
    e.ours = host_ours;
    e.unchanged = e.st.st_ino == a.layer_ino && e.st.st_size == a.layer_size &&
                  same_time(e.st.st_ctim, a.layer_ctime);
    // The last apply (the session's end, nothing runs any more) compares the bytes too: a
    // write through a shared mapping need not have moved the change time. (Against the
    // host's copy, so only while that copy is the one the apply wrote.)
    if (e.unchanged && host_ours && !options_.keep_layer && e.kind == ChangeKind::file) {
      e.unchanged = same_bytes(e);
    }
    // Unchanged in the layer: nothing new of the command's. What the host did to the copy
    // since (an edit, a deletion) stands; the layer's old copy never comes back over it.
    if (e.unchanged) continue;
    // Changed on both sides since the last apply (a deletion on the host too): a conflict.
    if (!host_ours) {
      e.held = e.host_exists ? "conflict: changed on the host since paddock applied the "
                               "session's earlier copy, and changed again in the session"
                             : "conflict: deleted on the host after paddock applied it, and "
                               "changed again in the session";
    }
    // Its replacement of the host's directory is done: what it holds merges from now on.
    if (e.kind == ChangeKind::directory) e.opaque = false;
  }
  std::erase_if(entries_, [](const Entry& e) { return e.unchanged; });
  // What an earlier apply wrote and the layer no longer has: the command removed it (the
  // overlay may have kept no whiteout, the host's copy being the one it saw below). Its
  // deletion, unless the host changed it since.
  for (const auto& [key, a] : set_.applied) {
    if (!a.host_present || seen.count(key) != 0) continue;
    const int parent = host_dirs_[key.first].get(parent_rel(key.second));
    Entry e;
    e.root = key.first;
    e.rel = key.second;
    e.kind = ChangeKind::whiteout;
    if (parent < 0 ||
        ::fstatat(parent, base_name(e.rel).c_str(), &e.host, AT_SYMLINK_NOFOLLOW) != 0 ||
        !host_is(a, e.host)) {
      continue;
    }
    e.host_exists = true;
    e.ours = true;
    entries_.push_back(std::move(e));
  }
}

std::string Applier::judge() {
  for (std::size_t i = 0; i < set_.roots.size(); ++i) {
    host_dirs_.emplace_back(host_fds_[i].get());
    upper_dirs_.emplace_back(upper_fds_[i].get());
  }
  // Host state of every entry, and the git directories and work trees the set touches.
  std::set<std::string> tops;
  for (std::size_t i = 0; i < set_.roots.size(); ++i) {
    // The repository around the root (its config names paths inside the root, too).
    for (std::string dir = set_.roots[i]; dir.size() > 1;
         dir = std::string(paths::parent_of(dir))) {
      struct stat st;
      if (::lstat((dir + "/.git").c_str(), &st) == 0) {
        tops.insert(dir);
        break;
      }
    }
  }
  for (Entry& e : entries_) {
    errno = 0;
    const int parent = host_dirs_[e.root].get(parent_rel(e.rel));
    // The host has a mount point or a link where the layer has a directory: applying would
    // cross it (refused below, so the entry is held, not half applied). Any other failure but
    // absence (EACCES, EMFILE): the host's side cannot be judged, so nothing is applied there.
    if (parent < 0 && (errno == EXDEV || errno == ELOOP || errno == ENOTDIR)) {
      e.held = "a mount point or a link on the host's path to it";
    } else if (parent < 0 && errno != ENOENT) {
      e.held = std::string("its directory on the host cannot be opened (") + std::strerror(errno) +
               "): not judged, so not applied";
    }
    e.host_exists = parent >= 0 &&
                    ::fstatat(parent, base_name(e.rel).c_str(), &e.host, AT_SYMLINK_NOFOLLOW) == 0;
    if (e.kind == ChangeKind::directory && git_dir(e.root, e.rel)) {
      const std::string path = host_path(e);
      tops.insert(base_name(e.rel) == ".git" ? std::string(paths::parent_of(path)) : path);
    }
  }
  if (!set_.applied.empty()) reconcile_applied();
  if (set_.session && !set_.applied_known) {
    for (Entry& e : entries_) {
      if (!e.host_exists && e.kind != ChangeKind::whiteout && e.held.empty()) {
        e.held =
            "a dead session's change: the host may have deleted it after the session "
            "applied it (what it applied is not known)";
      }
    }
  }
  // Staged after the reconcile: only what changed since the last apply is copied again.
  if (options_.keep_layer) {
    if (std::string failure = stage_files(); !failure.empty()) return failure;
  }
  if (!entries_.empty()) {
    for (const auto& top : tops) add_git_named_paths(rules_, top);
    // What the global config names, repository or not: an include of ~/.gitconfig that lies
    // in a workspace with no .git is read by the host's git everywhere.
    add_git_named_paths(rules_, "");
    add_startup_links(rules_);
    // What protects the host's git and start-up files could not be read whole: nothing is
    // judged without it.
    if (!rules_.failure.empty()) return rules_.failure;
  }
  std::vector<std::pair<std::string, std::string>> held_dirs;  // "<root>:<rel>", reason
  for (Entry& e : entries_) {
    const std::string key = std::to_string(e.root) + ":" + e.rel;
    for (const auto& [dir, reason] : held_dirs) {
      if (paths::below(key, dir)) {
        e.held = reason;
        break;
      }
    }
    if (e.held.empty()) e.held = reason_for(e);
    if (!e.held.empty() && e.kind == ChangeKind::directory) held_dirs.emplace_back(key, e.held);
    if (options_.include_held) e.held.clear();
  }
  return {};
}

std::string Applier::worktree_hold_reason(const Entry& e, const std::string& path) {
  const ChangeSetInfo::Worktree& w = *set_.worktree;
  const bool container = e.kind == ChangeKind::directory && !e.opaque;
  if (paths::within(path, w.admin_dir)) {
    // Its HEAD: the session's branch, or a commit (detached); never another branch, which
    // the host's next commit in the worktree would move.
    if (path == w.admin_dir + "/HEAD" && e.kind == ChangeKind::file) {
      const auto head = read_small(e.root, e.rel);
      if (!head || (*head != "ref: refs/heads/" + w.branch + "\n" &&
                    (head->starts_with("ref:") || !plausible_head(*head)))) {
        return "points the session's worktree at another branch than " + w.branch;
      }
    }
    // Judged below as the git directory it is; never replaced or deleted whole.
    return path != w.admin_dir || container ? std::string()
                                            : "replaces the session worktree's git directory";
  }
  const auto parts = paths::components(std::string_view(path).substr(w.common_dir.size()));
  if (parts.empty()) return container ? std::string() : "replaces the repository's git directory";
  if (parts[0] == "objects") return {};
  // The branch's ref and its reflog, and the directories on their way.
  for (const char* prefix : {"refs/heads/", "logs/refs/heads/"}) {
    const auto full = paths::components(prefix + w.branch);
    if (parts.size() <= full.size() && std::equal(parts.begin(), parts.end(), full.begin())) {
      if (parts.size() < full.size()) {
        return container ? std::string() : "replaces a directory of the repository's refs";
      }
      if (e.kind != ChangeKind::file) return "the session branch's ref as other than a file";
      // The ref itself: an object name, never a symbolic ref (`ref: refs/heads/main` would
      // have the host's next commit in the worktree move main).
      if (parts[0] == "refs") {
        const auto text = read_small(e.root, e.rel);
        if (!text || text->starts_with("ref:") || !plausible_head(*text)) {
          return "the session branch's ref is no object name";
        }
      }
      return {};
    }
  }
  if (parts.size() == 1 && parts[0] == "worktrees" && container) return {};
  return "in the repository's git directory outside the session's branch and worktree (another "
         "branch, the main work tree's index or HEAD, ...): a session on a worktree only "
         "commits on its own branch";
}

std::string Applier::reason_for(Entry& e) {
  const std::string path = host_path(e);
  // A conflict: the host changed this entry while the command ran (or since).
  const bool replaces = e.kind != ChangeKind::directory || e.opaque || !S_ISDIR(e.host.st_mode);
  if (e.host_exists && replaces && !e.ours && changed_since(e.host)) {
    return "conflict: changed on the host while the command ran (after its sandbox was made)";
  }
  // A deletion of a host directory: never a repository, never what the host just wrote.
  const bool deletes_dir =
      e.host_exists && S_ISDIR(e.host.st_mode) && (e.kind != ChangeKind::directory || e.opaque);
  if (deletes_dir) {
    if (std::string why = deletion_hold_reason(e.root, e.rel); !why.empty()) return why;
  }
  // The session worktree's common git directory: only what a commit on its branch writes.
  const bool in_common = set_.worktree && paths::within(path, set_.worktree->common_dir);
  if (in_common) {
    if (std::string why = worktree_hold_reason(e, path); !why.empty()) return why;
  }
  // Inside a git directory: what git's porcelain writes only. Every git directory on the
  // way is asked (one can sit inside another's objects/).
  // The root itself counts: git falls back to a directory as a bare repository.
  const auto parts = paths::components(e.rel);
  std::string dir;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) dir = dir.empty() ? parts[k - 1] : dir + "/" + parts[k - 1];
    if (!git_dir(e.root, dir)) continue;
    std::vector<std::string_view> inside(parts.begin() + static_cast<long>(k), parts.end());
    e.in_git_dir = true;
    // The common directory's worktrees/ holding the session worktree's git directory
    // (passed above): that one is judged at its own depth, as the git directory it is.
    if (in_common && inside.front() == "worktrees" &&
        (dir.empty() ? set_.roots[e.root] : set_.roots[e.root] + "/" + dir) ==
            set_.worktree->common_dir) {
      continue;
    }
    // This set makes `dir` a git directory: what the host has there already (applied by an
    // earlier set while it was no git directory, so never judged as git's) would be read by
    // the host's git from now on. Not judged after the fact: the making is held back.
    if (inside.size() == 1 && (inside[0] == "HEAD" || inside[0] == "objects" ||
                               inside[0] == "refs" || inside[0] == "commondir")) {
      if (std::string found = unjudged_git_files(e.root, dir); !found.empty()) {
        return "makes a git directory of a directory whose " + found +
               " the host has already, never judged as git's";
      }
    }
    std::optional<std::string> config;
    const bool is_config = inside.size() == 1 && inside[0] == "config";
    // HEAD is read too: one that is not a ref or an object name makes git give up on this
    // directory and look further (the root as a bare repository).
    const bool is_head = inside.size() == 1 && inside[0] == "HEAD";
    if ((is_config || is_head) && e.kind == ChangeKind::file) {
      config = read_small(e.root, e.rel);
    }
    if (is_head && (e.kind == ChangeKind::whiteout ||
                    (e.kind == ChangeKind::file && (!config || !plausible_head(*config))))) {
      return "a missing or malformed HEAD (git would look for another repository)";
    }
    // A new pack, pack index or commit graph in a repository the host has: git reads objects
    // and history through them without checking them against their names, so one naming the
    // host's own objects with other bytes would stand in for them (the host's checkout, log
    // and clone). Loose objects lose to a packed copy, and rewriting one is held (below).
    if (inside.size() >= 3 && inside[0] == "objects" &&
        (inside[1] == "pack" ||
         (inside[1] == "info" && inside[2] != "alternates" && inside[2] != "http-alternates")) &&
        e.kind != ChangeKind::directory && !e.host_exists) {
      const int host_dir = host_dirs_[e.root].get(dir);
      struct stat objects_st;
      if (host_dir < 0 ? errno != ENOENT
                       : ::fstatat(host_dir, "objects", &objects_st, AT_SYMLINK_NOFOLLOW) == 0) {
        return "a new pack, pack index or commit graph in an existing repository (git reads "
               "objects through it unchecked: it could stand in for the host's own); loose "
               "objects pass, so commit without `git gc` or `git repack`";
      }
    }
    // git freshens an object it would write again (utime): the copy is the same bytes.
    if (inside.size() >= 2 && inside[0] == "objects" && e.kind == ChangeKind::file &&
        e.host_exists && same_bytes(e)) {
      continue;
    }
    // Packed refs: a replace ref there does what one under refs/replace/ does.
    if (inside.size() == 1 && inside[0] == "packed-refs" && e.kind == ChangeKind::file) {
      std::string refs;
      if (!layer_bytes(e.root, e.rel).read_all(kMaxIndexBytes, refs)) {
        return "packed refs that cannot be read whole";
      }
      if (refs.find("refs/replace/") != std::string::npos) {
        return "a replace ref in packed-refs (the host's git would show and check out other "
               "objects)";
      }
    }
    // A new or changed index is read whole: the host's `git checkout -- .` writes every path
    // it names, and git does not check them (git_index_paths.hpp).
    // A split index's shared part (`sharedindex.<hash>`) is one as well.
    if (inside.size() == 1 && (inside[0] == "index" || inside[0].starts_with("sharedindex.")) &&
        e.kind == ChangeKind::file) {
      std::string index;
      if (!layer_bytes(e.root, e.rel).read_all(kMaxIndexBytes, index)) {
        return "a git index that cannot be read whole (over 512 MiB, or unreadable)";
      }
      for (std::size_t oid : object_name_lengths(e.root, dir)) {
        if (std::string bad = index_path_problem(index, oid); !bad.empty()) {
          return "a git index with " + bad;
        }
      }
    }
    std::string why = git_dir_hold_reason(inside, e.kind, e.host_exists,
                                          config ? &*config : nullptr, deletes_dir);
    if (!why.empty()) return why;
  }
  if (base_name(e.rel) == ".git") {
    if (e.kind == ChangeKind::whiteout || e.opaque) return "deletes a git directory";
    if (e.kind != ChangeKind::directory) {
      return "a gitfile or link named .git (it points the host's git at another directory)";
    }
  }
  // Replacing a directory (a link, a file, a deletion, an opaque directory) moves whatever
  // a protected path below it names.
  const bool replaces_dir = e.kind != ChangeKind::directory || e.opaque;
  return hold_reason(rules_, set_.roots[e.root], path, e.kind, e.st.st_mode, replaces_dir);
}

}  // namespace paddock::sandbox::applying
