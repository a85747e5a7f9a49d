#include "sandbox/git_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>

#include "sandbox/git_dir.hpp"
#include "sandbox/new_repository.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/quarantine.hpp"
#include "sandbox/root_views.hpp"
#include "sandbox/tree_walk.hpp"

namespace paddock::sandbox {
namespace {

using paths::join;
using paths::resolve_from;
using paths::Resolved;

// What git reads in a git dir as configuration, hooks or a pointer to another git dir. info/
// holds attributes (which name filter drivers) and exclude; modules/ holds submodules' git
// dirs with config and hooks of their own; worktrees/<name>/ is handled one by one below (its
// HEAD and index must stay writable for a commit in a linked worktree).
constexpr const char* kGitDirProtected[] = {
    "config", "config.worktree", "hooks", "commondir", "gitdir", "info", "modules"};
// In worktrees/<name>/: the pointers to the common dir and to the worktree, and its config.
constexpr const char* kWorktreeProtected[] = {"commondir", "gitdir", "config.worktree"};
// Names git opens anywhere in a worktree: a FIFO there blocks `git status` in open(2).
constexpr const char* kWorktreeGitFiles[] = {".gitignore", ".gitattributes", ".gitmodules",
                                             ".mailmap"};
// commondir chains longer than this are not followed (git itself follows one).
constexpr int kMaxGitDirHops = 4;

bool special_type(unsigned char t) {
  return t == DT_FIFO || t == DT_SOCK || t == DT_CHR || t == DT_BLK || t == DT_LNK;
}

// A pointer file (`gitdir: <path>` in a gitfile, a bare path in commondir): its first line.
std::string read_pointer(const std::string& file) {
  // O_NONBLOCK: a FIFO planted here must not block the walk as it would block git.
  int fd = ::open(stable_path(file).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {};
  }
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return {};
  std::string_view text(buf, static_cast<std::size_t>(n));
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  return std::string(text);
}

class Scanner {
 public:
  explicit Scanner(GitState& s) : s_(s) {}

  bool visit(const std::string& dir, const std::vector<TreeEntry>& entries) {
    for (const auto& e : entries) {
      if (e.name != ".git") continue;
      const std::string dot_git = join(dir, ".git");
      EntryId id = entry_id(dot_git);
      if (id.ino == 0) continue;  // gone meanwhile
      s_.dot_git[dot_git] = id;
      // A nested repository's own .gitmodules names its submodules' URLs and paths.
      s_.protect.push_back(join(dir, ".gitmodules"));
      if (e.type == DT_DIR) {
        add_git_dir(dot_git, 0);
      } else if (e.type == DT_REG) {
        // A gitfile (submodule, linked worktree, `git init --separate-git-dir`): rewritten,
        // it would send the host's git to a config the command wrote.
        s_.protect.push_back(dot_git);
        follow_gitfile(dir, dot_git);
      } else if (e.type == DT_LNK) {
        // git follows a `.git` symlink; the target is the git dir to protect.
        try {
          Resolved t = resolve_from(dir, ".git");
          if (t.exists && t.is_dir) add_git_dir(t.path, 0);
        } catch (const paths::Unresolvable&) {
        }
      }
    }
    if (looks_like_git_dir(dir, entries)) {
      // A bare repository (or a git dir moved out of its `.git`): git's discovery accepts it
      // as a git dir when run inside it (safe.bareRepository defaults to all). Walked into
      // like any directory: a command can plant a repository below it as well.
      s_.bare.push_back(dir);
      add_git_dir(dir, 0);
    }
    return true;
  }

 private:
  void follow_gitfile(const std::string& dir, const std::string& file) {
    std::string pointer = read_pointer(file);
    if (!pointer.starts_with("gitdir:")) return;
    std::string_view target(pointer);
    target.remove_prefix(7);
    while (target.starts_with(' ')) target.remove_prefix(1);
    if (target.empty()) return;
    try {
      Resolved g = resolve_from(dir, target);
      if (g.exists && g.is_dir) add_git_dir(g.path, 0);
    } catch (const paths::Unresolvable&) {
      // A loop: git cannot follow it either.
    }
  }

  void add_git_dir(const std::string& g, int hops) {
    if (hops > kMaxGitDirHops || !seen_.insert(g).second) return;
    s_.git_dirs.push_back(g);
    s_.heads[g] = entry_id(join(g, "HEAD"));
    for (const char* name : kGitDirProtected) s_.protect.push_back(join(g, name));
    std::string common = read_pointer(join(g, "commondir"));
    if (!common.empty()) {
      try {
        Resolved c = resolve_from(g, common);
        if (c.exists && c.is_dir) add_git_dir(c.path, hops + 1);
      } catch (const paths::Unresolvable&) {
      }
    }
    // Linked worktrees' private git dirs: their pointers and config are protected one by
    // one; a new worktrees/<name>/ is harmless until a gitfile points at it, and every new
    // gitfile is quarantined after the command.
    DIR* d = ::opendir(stable_path(join(g, "worktrees")).c_str());
    if (d == nullptr) return;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.' && names.size() < 4096) names.emplace_back(e->d_name);
    }
    ::closedir(d);
    for (const auto& n : names) {
      const std::string w = join(join(g, "worktrees"), n);
      struct stat st;
      if (::lstat(stable_path(w).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      s_.git_dirs.push_back(w);
      for (const char* name : kWorktreeProtected) s_.protect.push_back(join(w, name));
    }
  }

  GitState& s_;
  std::set<std::string> seen_;
};

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool contains(const std::vector<std::string>& sorted, const std::string& s) {
  return std::binary_search(sorted.begin(), sorted.end(), s);
}

// Something is at `path`, and it is another inode than before. (Not ctime: a directory's
// changes whenever git writes in it.)
bool replaced(const std::string& path, const EntryId& before) {
  EntryId now = entry_id(path);
  return now.ino != 0 && (now.dev != before.dev || now.ino != before.ino);
}

Violation violation(const QuarantineOutcome& q, const std::string& program,
                    const std::string& why) {
  Violation v;
  v.operation = "file-write";
  v.path = q.path;
  v.process = program;
  if (q.kind == QuarantineOutcome::moved) {
    // How to undo it, for a quarantine that caught something the user wanted (a clone whose
    // hooks came from the user's own init.templateDir): look first, then move it back.
    v.detail = why + " (" + q.type + "); quarantined: moved to " + q.moved_to +
               ", where git and shells never read it (to keep it after checking what it "
               "runs: mv '" +
               q.moved_to + "' '" + q.path + "')";
  } else {
    v.detail = why + "; quarantining it FAILED (" + std::strerror(q.error) +
               "): do not run git in this workspace until it is removed";
  }
  v.raw = "git state: " + q.path;
  return v;
}

}  // namespace

GitState scan_git_state(const std::vector<std::string>& roots, GitScanLimits limits,
                        ScanCache* cache) {
  GitState s;
  s.roots = roots;
  s.limits = limits;
  s.cache = cache;
  Scanner scanner(s);
  TreeWalk walk(limits.entries, limits.depth, std::nullopt, cache);
  for (const auto& root : roots) {
    if (!walk.run(root, [&](const std::string& dir, const std::vector<TreeEntry>& entries) {
          return scanner.visit(dir, entries);
        })) {
      throw GitScanTooLarge(
          root + ": the scan for git repositories stopped: " + walk.error() +
          "; git state at every depth cannot be protected, so the command is not run. Make the "
          "writable roots smaller: run in (--cwd) or allow writes to (allowWrite) the project "
          "directory rather than a home or a parent of many projects, and keep large generated "
          "trees (node_modules of many projects, build output, caches) outside them");
    }
  }
  sort_unique(s.bare);
  sort_unique(s.git_dirs);
  sort_unique(s.protect);
  refuse_other_names(s.protect);
  return s;
}

std::vector<Violation> audit_git_state(const GitState& before, const std::string& tag,
                                       const std::string& program, std::string* incomplete) {
  std::vector<Violation> out;
  auto record = [&](const QuarantineOutcome& q, const std::string& why) {
    if (q.kind == QuarantineOutcome::nothing) return;
    out.push_back(violation(q, program, why));
    if (q.kind == QuarantineOutcome::failed && incomplete->empty()) {
      *incomplete = q.path + ": could not be quarantined";
    }
  };
  TreeWalk walk(before.limits.entries, before.limits.depth,
                std::chrono::steady_clock::now() + before.limits.audit_time, before.cache);
  std::vector<std::string> fresh_git_dirs;  // new repositories judged safe: still type-checked
  auto visit = [&](const std::string& dir, const std::vector<TreeEntry>& entries) {
    for (const auto& e : entries) {
      const std::string path = join(dir, e.name);
      if (e.name == ".git") {
        auto known = before.dot_git.find(path);
        if (known != before.dot_git.end() && !replaced(path, known->second)) {
          continue;
        }
        // New (or replaced under this sandbox's read-only mounts): kept only if git would run
        // nothing from it (a plain clone or init), else quarantined.
        std::string why = e.type == DT_DIR ? unsafe_new_git_dir(path) : "it is not a directory";
        if (why.empty()) {
          fresh_git_dirs.push_back(path);
          continue;
        }
        QuarantineOutcome q = quarantine_created(path, tag);
        record(q, "a new .git appeared in a writable root and " + why +
                      " (the host's git would read it)");
        // A quarantined git dir is still a git dir to a git run inside it: without HEAD it
        // is not. Its config goes too: a concurrent sandbox that saw this `.git` has the
        // config mounted read-only and cannot rename it back (a mountpoint: EBUSY), so
        // renaming the `.git` and its HEAD back leaves a config its own audit catches.
        if (q.kind == QuarantineOutcome::moved && e.type == DT_DIR) {
          record(quarantine_created(q.moved_to + "/HEAD", tag),
                 "the HEAD of a quarantined git dir");
          record(quarantine_created(q.moved_to + "/config", tag),
                 "the config of a quarantined git dir");
        }
      }
      if (special_type(e.type) &&
          std::any_of(std::begin(kWorktreeGitFiles), std::end(kWorktreeGitFiles),
                      [&](const char* n) { return e.name == n; })) {
        record(quarantine_if_special(path, tag),
               "a special file where git opens a file (the host's git would block on it)");
      }
    }
    if (looks_like_git_dir(dir, entries)) {
      bool known = contains(before.bare, dir) || contains(before.git_dirs, dir);
      if (auto h = before.heads.find(dir); known && h != before.heads.end()) {
        // Missing before, another inode now, or renamed back (ctime): put back after a
        // concurrent audit moved it?
        known = entry_id(join(dir, "HEAD")) == h->second;
      }
      if (!known) {
        std::string why = unsafe_new_git_dir(dir);
        if (why.empty()) {
          fresh_git_dirs.push_back(dir);
        } else {
          // Without its HEAD it is no git dir to git's discovery; everything else stays.
          record(quarantine_created(join(dir, "HEAD"), tag),
                 ("a git dir appeared in a writable root (or its HEAD was replaced, as after "
                  "a concurrent sandbox's audit moved it) and " +
                  why + " (its HEAD is moved)"));
        }
      }
    }
    // Every directory is tested, the writable roots included: a command that makes a
    // known `.git/HEAD` garbage sends git's discovery to the parent, tested here as well.
    return true;
  };
  // Deeper than the bound (or a path too long to open): not checked, so moved out of the
  // way like anything else the audit cannot vouch for, and the walk goes on; a tree made
  // deep to exhaust the bound no longer ends the audit with shallow repositories unchecked.
  auto too_deep = [&](const std::string& dir) {
    QuarantineOutcome q = quarantine_created(dir, tag);
    record(q, "a directory deeper than " + std::to_string(before.limits.depth) +
                  " levels (or with a path too long) appeared in a writable root: it was not "
                  "checked for git state");
    return q.kind == QuarantineOutcome::moved;
  };
  for (const auto& root : before.roots) {
    if (!walk.run(root, visit, too_deep) && walk.bound_hit()) break;
  }
  // Git dirs, existing and new, all the way down: git opens files at every depth of its dir
  // (rebase-merge/head-name, sequencer/todo, a loose object of HEAD's tree, logs/HEAD), and
  // open(2) of a FIFO, a socket's ENXIO aside, blocks the host's git forever.
  std::vector<std::string> git_dirs = before.git_dirs;
  git_dirs.insert(git_dirs.end(), fresh_git_dirs.begin(), fresh_git_dirs.end());
  sort_unique(git_dirs);
  std::string last;  // worktrees/<name>/ and modules/ lie inside a git dir already walked
  for (const auto& g : git_dirs) {
    if (walk.bound_hit()) break;
    if (!last.empty() && g.starts_with(last) && g.size() > last.size() && g[last.size()] == '/') {
      continue;
    }
    last = g;
    walk.run(
        g,
        [&](const std::string& dir, const std::vector<TreeEntry>& entries) {
          for (const auto& e : entries) {
            if (special_type(e.type)) {
              record(quarantine_if_special(join(dir, e.name), tag),
                     "a special file in a git dir (the host's git would block opening it)");
            }
          }
          return true;
        },
        too_deep);
  }
  if (!walk.error().empty() && incomplete->empty()) {
    *incomplete = "the audit of git state stopped: " + walk.error();
  }
  return out;
}

}  // namespace paddock::sandbox
