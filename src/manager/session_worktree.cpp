#include "manager/session_worktree.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "paddock/errors.hpp"

extern char** environ;

namespace paddock::manager {
namespace {

struct GitRun {
  int status = -1;  // the exit status; -1: it did not run or was killed
  std::string out;
  std::string err;
};

// The host's git, outside any sandbox, on a repository the agent has written to: no hooks,
// no fsmonitor (both run programs), and nothing of our environment that points git at
// another repository. git's own safe.directory check stays: a repository of another user
// (its config's filters run at the checkout) is refused, not worked on as ours. Its stdout
// and stderr, both bounded.
GitRun host_git(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool redirects = false;
    for (const char* name : {"GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_COMMON_DIR=",
                             "GIT_OBJECT_DIRECTORY=", "GIT_ALTERNATE_OBJECT_DIRECTORIES=",
                             "GIT_NAMESPACE=", "GIT_CONFIG_PARAMETERS=", "GIT_CONFIG_COUNT=",
                             // git as root trusts a repository of SUDO_UID's as its own.
                             "SUDO_UID="}) {
      redirects = redirects || entry.starts_with(name);
    }
    if (!redirects) env_text.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_text = {
      "git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-C", dir};
  for (auto& a : args) argv_text.push_back(std::move(a));
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  GitRun run;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return run;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    run.err = std::string("cannot run git: ") + std::strerror(rc);
  } else {
    // Both at once: git may fill one pipe while we wait on the other.
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* into[2] = {&run.out, &run.err};
    int open = 2;
    while (open > 0) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[4096];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          fds[i].fd = -1;
          --open;
        } else if (into[i]->size() < (1u << 20)) {
          into[i]->append(buf, static_cast<std::size_t>(n));
        }
      }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) run.status = WEXITSTATUS(status);
  }
  ::close(out[0]);
  ::close(err[0]);
  return run;
}

std::string first_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

// What git said went wrong: its fatal: or error: line (warnings come first), else its last.
std::string git_message(const std::string& err) {
  std::string last;
  std::size_t at = 0;
  while (at < err.size()) {
    std::size_t nl = err.find('\n', at);
    if (nl == std::string::npos) nl = err.size();
    const std::string line = err.substr(at, nl - at);
    if (line.starts_with("fatal: ") || line.starts_with("error: ")) return line;
    if (!line.empty()) last = line;
    at = nl + 1;
  }
  return last;
}

[[noreturn]] void refuse(const std::string& why) {
  throw Error(errc::config_invalid, "worktree: " + why);
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  if (ec) refuse(path + ": " + ec.message());
  return real.string();
}

}  // namespace

MadeWorktree make_worktree(const WorktreeOptions& o) {
  if (o.repository.empty()) refuse("no repository given");
  const std::string repo = canonical(o.repository);
  GitRun common = host_git(repo, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
  if (common.status != 0) refuse(repo + ": not a git repository (" + git_message(common.err) + ")");
  MadeWorktree made;
  made.common_dir = canonical(first_line(common.out));
  GitRun top = host_git(repo, {"rev-parse", "--path-format=absolute", "--show-toplevel"});
  made.top = top.status == 0 && !first_line(top.out).empty() ? canonical(first_line(top.out))
                                                             : made.common_dir;  // bare
  // The repository itself, not a directory that merely lies in one (a project's scratch
  // directory inside another repository must not branch that one).
  if (repo != made.top && repo != made.common_dir) {
    refuse(repo + " is not the top of a git repository (it lies in " + made.top + ")");
  }
  // The branch: a name git accepts for a new branch as it is (`@{-1}` would be expanded to
  // the branch checked out before, which the end's `branch -D` would then delete), and a new
  // one.
  GitRun format = host_git(made.top, {"check-ref-format", "--branch", o.branch});
  if (o.branch.empty() || o.branch.front() == '-' || o.branch.find("@{") != std::string::npos ||
      o.branch == "@" || format.status != 0 || first_line(format.out) != o.branch) {
    refuse("'" + o.branch + "' is not a valid branch name");
  }
  if (host_git(made.top, {"rev-parse", "--verify", "--quiet", "refs/heads/" + o.branch}).status ==
      0) {
    refuse("branch " + o.branch + " exists already (a session's branch is a new one)");
  }
  made.branch = o.branch;
  if (o.base.empty() || o.base.front() == '-') refuse("'" + o.base + "' is not a commit");
  GitRun base = host_git(made.top, {"rev-parse", "--verify", "--quiet", o.base + "^{commit}"});
  if (base.status != 0) refuse("'" + o.base + "' is not a commit of " + made.top);
  // Where it goes: a new directory whose parent exists (the default's parent is made).
  std::string path = o.path;
  if (path.empty()) {
    std::string name = o.branch;
    for (char& c : name) c = c == '/' ? '-' : c;
    const std::string parent = made.top + ".worktrees";
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      refuse(parent + ": " + std::strerror(errno));
    }
    path = parent + "/" + name;
  }
  const std::filesystem::path wanted = std::filesystem::absolute(path).lexically_normal();
  if (wanted.filename().empty()) refuse(path + ": names no directory");
  made.path = canonical(wanted.parent_path().string()) + "/" + wanted.filename().string();
  struct stat st;
  if (::lstat(made.path.c_str(), &st) == 0) refuse(made.path + " exists already");
  GitRun add = host_git(
      made.top, {"worktree", "add", "--quiet", "-b", made.branch, made.path, first_line(base.out)});
  if (add.status != 0) {
    // git makes the branch before the directory: a failed add may leave it, at the base.
    host_git(made.top, {"update-ref", "-d", "refs/heads/" + made.branch, first_line(base.out)});
    refuse("git worktree add: " + git_message(add.err));
  }
  made.on_close = o.on_close;
  GitRun admin = host_git(made.path, {"rev-parse", "--path-format=absolute", "--git-dir"});
  std::error_code ec;
  const auto admin_dir = std::filesystem::canonical(first_line(admin.out), ec);
  if (admin.status != 0 || ec ||
      admin_dir.parent_path().string() != made.common_dir + "/worktrees") {
    SessionSummary ignored;
    MadeWorktree undo = made;
    undo.on_close = WorktreeOptions::OnClose::discard;
    finish_worktree(undo, ignored);
    refuse("git worktree add made no git directory under " + made.common_dir + "/worktrees");
  }
  made.admin_dir = admin_dir.string();
  // A daemon's --root: the git directory the session will write must lie in one too (a
  // repository under a root may keep it elsewhere: --separate-git-dir, a linked worktree).
  if (!o.within.empty()) {
    const bool inside = std::any_of(o.within.begin(), o.within.end(), [&](const std::string& r) {
      return made.common_dir == r || made.common_dir.starts_with(r == "/" ? r : r + "/");
    });
    if (!inside) {
      SessionSummary ignored;
      MadeWorktree undo = made;
      undo.on_close = WorktreeOptions::OnClose::discard;
      finish_worktree(undo, ignored);
      refuse("the repository's git directory " + made.common_dir + " lies outside " +
             "the daemon's --root directories");
    }
  }
  return made;
}

void finish_worktree(const MadeWorktree& made, SessionSummary& summary) {
  summary.branch = made.branch;
  GitRun head =
      host_git(made.top, {"rev-parse", "--verify", "--quiet", "refs/heads/" + made.branch});
  summary.branch_head = head.status == 0 ? first_line(head.out) : std::string();
  switch (made.on_close) {
    case WorktreeOptions::OnClose::keep:
      summary.worktree = "kept";
      return;
    case WorktreeOptions::OnClose::remove: {
      // Not forced: uncommitted work is never lost for a hand-back.
      GitRun rm = host_git(made.top, {"worktree", "remove", made.path});
      summary.worktree =
          rm.status == 0 ? "removed" : "kept: git worktree remove: " + git_message(rm.err);
      return;
    }
    case WorktreeOptions::OnClose::discard: {
      GitRun rm = host_git(made.top, {"worktree", "remove", "--force", "--force", made.path});
      GitRun del = host_git(made.top, {"branch", "--quiet", "-D", made.branch});
      if (rm.status != 0) {
        summary.worktree = "not discarded: git worktree remove: " + git_message(rm.err);
      } else if (del.status != 0) {
        summary.worktree = "worktree removed, branch kept: git branch -D: " + git_message(del.err);
      } else {
        summary.worktree = "discarded";
      }
      return;
    }
  }
}

}  // namespace paddock::manager
