#include "sandbox/change_rules.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "sandbox/default_paths.hpp"
#include "sandbox/git_config_syntax.hpp"
#include "sandbox/new_repository.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/small_file.hpp"

extern char** environ;

namespace paddock::sandbox {
namespace {

// What git's porcelain writes in a git directory (first component below it). Everything else —
// config, hooks, info, worktrees, modules, sequencer and rebase state (`git rebase --continue`
// runs an `exec` line), bisect state, alternates, commondir, gitfiles — is held back: an
// allow-list, because git keeps adding places it reads programs from.
constexpr std::string_view kGitWritten[] = {
    "objects",          "refs",        "logs",           "packed-refs", "index",       "HEAD",
    "ORIG_HEAD",        "FETCH_HEAD",  "MERGE_HEAD",     "MERGE_MSG",   "MERGE_MODE",  "AUTO_MERGE",
    "CHERRY_PICK_HEAD", "REVERT_HEAD", "COMMIT_EDITMSG", "TAG_EDITMSG", "description", "shallow"};
// Not `branches/`: a legacy remote there (`branches/origin`) is fetched from and pushed to by
// the host's `git pull` and `git push origin`.
// Not rerere's MERGE_RR and rr-cache/: git turns rerere on once rr-cache exists, and its next
// commit writes each recorded "resolution" to the path MERGE_RR names, which may be
// `.git/config` or any file (the second hostile review ran code that way).

// Keys whose value is (or starts) a program the host's git runs; compared on the last part
// of the key, lower case (`filter.lfs.process`, `diff.pdf.textconv`, `hook.lint.command`).
constexpr std::string_view kProgramKeys[] = {
    "fsmonitor", "editor",          "pager",    "sshcommand", "askpass",     "textconv",
    "command",   "clean",           "smudge",   "process",    "driver",      "program",
    "helper",    "packobjectshook", "gitproxy", "uploadpack", "receivepack", "cmd",
    "external",  "proxycommand",    "browser",  "path"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string kind_name(ChangeKind kind, mode_t mode) {
  switch (kind) {
    case ChangeKind::special:
      return S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : "a device node";
    case ChangeKind::symlink:
      return "a symlink";
    case ChangeKind::directory:
      return "a directory";
    case ChangeKind::whiteout:
      return "a deletion";
    case ChangeKind::file:
      break;
  }
  return "a file";
}

// `word` as a path: absolute, `~/...` in the home, or relative to `base`.
// Resolved as git resolves it (through the links that exist), so it compares with the real
// paths of a change set's entries (writes through a link land at its target).
// `word` as git spells a path, lexically: `~/` the home, `~user/` that user's, `%(prefix)/`
// git's install prefix (/usr on Debian), else absolute or relative to `base`.
std::string spelled_path(std::string_view word, const std::string& base, const std::string& home) {
  if (word.starts_with("~/") && !home.empty()) return home + std::string(word.substr(1));
  if (word.starts_with("~") && word.size() > 1) {
    const std::size_t slash = word.find('/');
    const std::string user(word.substr(1, slash == std::string_view::npos ? slash : slash - 1));
    std::vector<char> buf(16384);
    passwd pw;
    passwd* found = nullptr;
    if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
      return std::string(found->pw_dir) +
             (slash == std::string_view::npos ? "" : std::string(word.substr(slash)));
    }
  }
  if (word.starts_with("%(prefix)/")) return "/usr" + std::string(word.substr(9));
  if (word.starts_with("/")) return std::string(word);
  return base + "/" + std::string(word);
}

std::string as_path(std::string_view word, const std::string& base, const std::string& home) {
  const std::string path = spelled_path(word, base, home);
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) real = std::filesystem::path(path).lexically_normal().string();
  while (real.size() > 1 && real.back() == '/') real.pop_back();
  return real;
}

// Runs `git -C top config --list --show-origin -z` with HOME=`home` (the global config the
// host's git reads there) and returns its output ("" when git finds none). `failure`: why it
// could not be run or read (git's own exit status is no failure: no global config is one).
// `top` empty: the global config alone (`--global --includes`), for a set with no repository.
std::string git_config_listing(const std::string& top, const std::string& home,
                               std::string& failure) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "HOME=", 5) != 0 || home.empty()) env_text.emplace_back(*e);
  }
  if (!home.empty()) env_text.push_back("HOME=" + home);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    failure = std::string("pipe: ") + std::strerror(errno);
    return {};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // safe.directory from the command line: a workspace owned by another user (root
  // supervising a user's checkout) must still have its own config read, not skipped.
  const char* in_repo[] = {"git",    "-c",     "safe.directory=*", "-C", top.c_str(),
                           "config", "--list", "--show-origin",    "-z", nullptr};
  const char* global[] = {"git",    "config",        "--global", "--includes",
                          "--list", "--show-origin", "-z",       nullptr};
  const char** argv = top.empty() ? global : in_repo;
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, "git", &actions, nullptr, const_cast<char**>(argv), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string text;
  // No git on this host: no config of its names anything (the host cannot run git either).
  if (rc != 0 && rc != ENOENT) failure = std::string("cannot run git: ") + std::strerror(rc);
  if (rc == 0) {
    char buf[8192];
    while (text.size() < (8u << 20)) {
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) failure = std::string("read: ") + std::strerror(errno);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    if (text.size() >= (8u << 20)) failure = "over 8 MiB of git config";
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
      failure = "git was killed by signal " + std::to_string(WTERMSIG(status));
  }
  ::close(out[0]);
  return text;
}

void add_git_named_paths_as(ChangeRules& rules, const std::string& top, const std::string& home);

}  // namespace

// The targets of the hooks in `dir` that are links (`.git/hooks/pre-commit ->
// ../../scripts/pre-commit`): the host runs the file the link names.
void add_linked_hooks(ChangeRules& rules, const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (!e.is_symlink(ec2)) continue;
    const auto target = std::filesystem::weakly_canonical(e.path(), ec2);
    if (!ec2) rules.git_named.emplace_back(target.string(), "a hook linked to it");
  }
}

void add_git_named_paths(ChangeRules& rules, const std::string& top) {
  if (!top.empty()) {
    add_linked_hooks(rules, top + "/.git/hooks");
    add_linked_hooks(rules, top + "/hooks");  // a bare repository
  }
  // Each protected home's global config (they differ when $HOME is not the passwd home).
  std::vector<std::string> homes = rules.homes;
  if (homes.empty()) homes.emplace_back();
  for (const std::string& home : homes) add_git_named_paths_as(rules, top, home);
}

namespace {
// An included config file: protected by its real path and by its name (a link there would be
// followed by the host's git: replacing the link is as good as rewriting the file), and what
// it includes in turn, every condition taken as true. `git config --list` follows only the
// includes whose conditions hold for this repository, and a file behind an `includeIf` for
// another one is read by the host's git there (the third hostile review). Bounded.
void add_included(ChangeRules& rules, std::string_view value, const std::string& base,
                  const std::string& home, const std::string& key, std::set<std::string>& seen) {
  const std::string real = as_path(value, base, home);
  rules.git_named.emplace_back(real, key);
  const std::string named =
      std::filesystem::path(spelled_path(value, base, home)).lexically_normal().string();
  if (named != real) rules.git_named.emplace_back(named, key);
  if (seen.size() >= 64 || !seen.insert(real).second) return;
  std::string text;
  if (!read_small_file(real, 1u << 20, text, false)) return;
  // git resolves a relative include next to the file as it was named (a link's directory,
  // not its target's): both are followed.
  read_git_config(
      text, [](const std::string&, const std::string&) {},
      [&](const std::string& path, bool) {
        if (path.empty()) return;
        add_included(rules, path, std::string(paths::parent_of(named)), home, key, seen);
        add_included(rules, path, std::string(paths::parent_of(real)), home, key, seen);
      });
}

void add_git_named_paths_as(ChangeRules& rules, const std::string& top, const std::string& home) {
  std::string failure;
  const std::string listing = git_config_listing(top, home, failure);
  if (!failure.empty() && rules.failure.empty()) {
    rules.failure = "the host's git config (" + (top.empty() ? std::string("global") : top) +
                    ") could not be listed: " + failure;
  }
  std::set<std::string> included;  // files already followed (add_included)
  // Records: "file:<origin>\0<key>\n<value>\0" (a key without a value has no "\n").
  std::size_t at = 0;
  while (at < listing.size()) {
    const std::size_t origin_end = listing.find('\0', at);
    if (origin_end == std::string::npos) break;
    const std::size_t entry_end = listing.find('\0', origin_end + 1);
    if (entry_end == std::string::npos) break;
    std::string_view origin(listing.data() + at, origin_end - at);
    std::string_view entry(listing.data() + origin_end + 1, entry_end - origin_end - 1);
    at = entry_end + 1;
    const std::size_t nl = entry.find('\n');
    if (nl == std::string_view::npos) continue;
    const std::string key = lower(entry.substr(0, nl));
    const std::string_view value = entry.substr(nl + 1);
    if (value.empty()) continue;
    const std::string last = key.substr(key.rfind('.') + 1);
    if (key == "core.hookspath") {
      rules.git_named.emplace_back(as_path(value, top, home), key);
      add_linked_hooks(rules, as_path(value, top, home));
      continue;
    }
    if (key == "include.path" || (key.starts_with("includeif.") && last == "path")) {
      std::string base = top;
      if (origin.starts_with("file:")) {
        base = std::string(paths::parent_of(origin.substr(5)));
        if (!base.starts_with("/")) base = top + "/" + base;
      }
      add_included(rules, value, base, home, key, included);
      continue;
    }
    const bool program =
        key.starts_with("alias.") || key.starts_with("pager.") || value.starts_with("!") ||
        last.ends_with("cmd") || last.find("command") != std::string::npos ||
        std::find(std::begin(kProgramKeys), std::end(kProgramKeys), last) != std::end(kProgramKeys);
    if (!program || value == "true" || value == "false") continue;
    // Every word that could be a path: the program itself and its script arguments.
    std::size_t i = 0;
    while (i < value.size()) {
      while (i < value.size() && std::strchr(" \t\"'!;&|()<>=", value[i]) != nullptr) ++i;
      std::size_t j = i;
      while (j < value.size() && std::strchr(" \t\"'!;&|()<>=", value[j]) == nullptr) ++j;
      if (j > i) {
        // `sh run.sh` names run.sh as much as `./run.sh` does: every word but an option.
        const std::string_view word = value.substr(i, j - i);
        if (!word.starts_with("-")) {
          rules.git_named.emplace_back(as_path(word, top, home), key);
          // `$(git rev-parse --show-toplevel)/x.sh` splits into `/x.sh`: the work tree's too.
          if (word.starts_with("/")) {
            rules.git_named.emplace_back(as_path(word.substr(1), top, home), key);
          }
        }
      }
      i = j;
    }
  }
}

}  // namespace

std::string git_dir_hold_reason(const std::vector<std::string_view>& inside, ChangeKind kind,
                                bool host_has_it, const std::string* config_text,
                                bool deletes_dir) {
  const std::string_view first = inside.front();
  if (kind == ChangeKind::symlink) return "a symlink in a git directory";
  // History is never deleted wholesale: a directory of a git directory, or a pack (`git gc`
  // deleting what it repacked leaves redundant packs behind, which is safe).
  if (deletes_dir) return "deletes a directory of a git directory (its history)";
  // Objects are only ever added: rewriting or deleting one the host has loses history (git gc
  // deleting what it repacked leaves redundant objects behind, which is safe). The same for
  // the reflogs and packed-refs, which keep what a deleted branch pointed at.
  if (host_has_it && kind != ChangeKind::directory &&
      ((first == "objects" && inside.size() >= 2) ||
       (first == "logs" && kind == ChangeKind::whiteout))) {
    return "rewrites or deletes the git directory's history (" + std::string(first) + ")";
  }
  if (host_has_it && kind == ChangeKind::whiteout && first == "packed-refs") {
    return "deletes the git directory's packed refs";
  }
  // A replace ref swaps one object for another everywhere the host's git looks, a checkout
  // included, without changing any commit's name.
  if (first == "refs" && inside.size() >= 2 && inside[1] == "replace" &&
      kind != ChangeKind::directory) {
    return "a replace ref (the host's git would show and check out other objects)";
  }
  if (std::find(std::begin(kGitWritten), std::end(kGitWritten), first) != std::end(kGitWritten)) {
    // objects/info/alternates points object lookups at another directory.
    if (inside.size() == 3 && first == "objects" && inside[1] == "info" &&
        (inside[2] == "alternates" || inside[2] == "http-alternates")) {
      return "object store pointers in a git directory (objects/info/" + std::string(inside[2]) +
             ")";
    }
    return {};
  }
  // What `git init` and `git clone` write besides: a config of inert keys where there was
  // none, git's never-run hook samples, the default exclude file.
  if (first == "config" && inside.size() == 1 && kind == ChangeKind::file && !host_has_it &&
      config_text != nullptr) {
    const std::string bad = unsafe_git_config(*config_text);
    if (bad.empty()) return {};
    return "git config the host's git would obey (" + bad + ")";
  }
  // A split index's shared part: an index, read whole and checked as one (change_judge.cpp).
  if (first.starts_with("sharedindex.") && inside.size() == 1 &&
      (kind == ChangeKind::file || kind == ChangeKind::whiteout)) {
    return {};
  }
  if (first == "hooks" && kind == ChangeKind::directory && inside.size() == 1) return {};
  // `git init` makes an empty branches/ (the template's); a remote in it is held (above).
  if (first == "branches" && kind == ChangeKind::directory && inside.size() == 1) return {};
  if (first == "hooks" && inside.size() == 2 && kind == ChangeKind::file && !host_has_it &&
      inside[1].ends_with(".sample")) {
    return {};
  }
  if (first == "info" && (inside.size() == 1 ? kind == ChangeKind::directory
                                             : inside.size() == 2 && inside[1] == "exclude" &&
                                                   kind == ChangeKind::file && !host_has_it)) {
    return {};
  }
  if (first == "hooks") return "a git hook (the host's git runs it)";
  if (first == "config" || first == "config.worktree")
    return "git config (the host's git obeys it)";
  if (first.starts_with("rebase-") || first == "sequencer" || first.starts_with("BISECT_")) {
    return "git sequencer state (`git rebase --continue` and friends run what it says)";
  }
  if (first == "worktrees" || first == "modules" || first == "commondir" || first == "gitdir") {
    return "a pointer to or state of another git directory";
  }
  return "git directory state git's porcelain does not write (" + std::string(first) + ")";
}

std::string hold_reason(const ChangeRules& rules, const std::string& root, const std::string& path,
                        ChangeKind kind, mode_t mode, bool replaces_dir) {
  if (kind == ChangeKind::special) return kind_name(kind, mode) + " (only regular files pass)";
  if (kind == ChangeKind::file && (mode & (S_ISUID | S_ISGID)) != 0) {
    return "a setuid or setgid file";
  }
  const std::string_view rel =
      path == root ? std::string_view{} : std::string_view(path).substr(root.size() + 1);
  const auto parts = paths::components(rel);
  for (const std::string& name : mandatory_read_only_names()) {
    // A link, file or deletion on the way to a protected name moves where the host will look
    // it up.
    if (replaces_dir && paths::below(name, rel)) return "replaces the way to " + name;
    // Inside `.git` the git directory rule judges, with what `git init` writes allowed.
    if (name.starts_with(".git/")) continue;
    if (paths::within(rel, name)) {
      return name + " runs on the host later (read-only in the sandbox)";
    }
    // A one-component name anywhere below the root (`pkg/.envrc`, `app/.vscode/tasks.json`):
    // direnv, editors and agents read them where they are.
    if (name.find('/') == std::string::npos &&
        std::find(parts.begin(), parts.end(), name) != parts.end()) {
      return name + " runs on the host later (found at any depth)";
    }
  }
  // What git hook managers run on commit, wherever the repository's top is.
  static constexpr std::string_view kHookManagers[] = {".pre-commit-config.yaml", "lefthook.yml",
                                                       ".lefthook.yml", "lefthook-local.yml",
                                                       ".overcommit.yml"};
  if (!parts.empty() && std::find(std::begin(kHookManagers), std::end(kHookManagers),
                                  parts.back()) != std::end(kHookManagers)) {
    return parts.back() + ": a git hook manager runs what it says on commit";
  }
  for (const std::string& home : rules.homes) {
    if (!paths::below(path, home)) continue;
    const std::string_view in_home = std::string_view(path).substr(home.size() + 1);
    const std::string_view first = in_home.substr(0, in_home.find('/'));
    const std::string top = home + "/" + std::string(first);
    // Only where the home itself (or above) is writable: a root the user named inside the
    // home (`allowWrite: ~/.npm`) is theirs to have written.
    if (!paths::within(home, root)) break;
    // Dot paths, PATH directories (~/bin, Go's ~/go/bin) and ~/node_modules (every Node
    // program below the home resolves modules there).
    if (first.starts_with(".") || first == "bin" || first == "go" || first == "node_modules") {
      return "~/" + std::string(first) +
             " in a writable home: start-up, configuration and PATH files run on the host";
    }
  }
  for (const std::string& home : rules.homes) {
    for (const std::string& entry : home_startup_paths()) {
      if (!entry.starts_with("~/")) continue;
      if (paths::within(path, home + entry.substr(1))) {
        return entry + " runs on the host later (a home's start-up path)";
      }
    }
  }
  if (auto why = startup_link_reason(rules, path, replaces_dir); !why.empty()) return why;
  // Something protected below a link, file or deletion that replaces its directory: the
  // host would look it up through what the command put there.
  if (replaces_dir) {
    for (const std::string& denied : rules.deny_write) {
      if (paths::below(denied, path)) return "replaces the way to " + denied;
    }
    // A link or a directory put in a directory's place is a way a pattern's match may now
    // lead elsewhere (`ln -s real conf` under `conf/*.key`); a file or a deletion leads nowhere
    // below it (and a `**` pattern passes through every path).
    const bool leads_on = kind == ChangeKind::symlink || kind == ChangeKind::directory;
    for (const std::string& pattern : rules.deny_write_patterns) {
      if (leads_on && paths::glob_passes_through(pattern, path)) {
        return "replaces the way to " + pattern;
      }
    }
    for (const auto& [named, key] : rules.git_named) {
      if (paths::below(named, path)) {
        return "replaces the way to " + named + " (named by the host's git config: " + key + ")";
      }
    }
  }
  for (const std::string& denied : rules.deny_write) {
    if (paths::within(path, denied)) return "read-only in the sandbox (" + denied + ")";
  }
  for (const std::string& pattern : rules.deny_write_patterns) {
    if (paths::glob_covers(pattern, path)) return "read-only in the sandbox (" + pattern + ")";
  }
  for (const auto& [named, key] : rules.git_named) {
    if (paths::within(path, named)) return "named by the host's git config (" + key + ")";
  }
  return {};
}

}  // namespace paddock::sandbox
