#include "sandbox/new_repository.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "sandbox/root_views.hpp"
#include "sandbox/small_file.hpp"

namespace paddock::sandbox {
namespace {

// Keys `git init` and `git clone` write, and a few more that only describe data. Compared in
// lower case as `section.key` (a subsection, e.g. a remote's name, is left out). Everything
// absent (include.path, includeIf, core.fsmonitor, core.hooksPath, core.pager, core.editor,
// core.sshCommand, alias.*, filter.*, diff.*, credential.*, submodule.*.update, ...) makes the
// repository unsafe: an allow-list, because git keeps adding keys that run programs.
constexpr std::string_view kInertKeys[] = {"core.repositoryformatversion",
                                           "core.filemode",
                                           "core.bare",
                                           "core.logallrefupdates",
                                           "core.ignorecase",
                                           "core.symlinks",
                                           "core.precomposeunicode",
                                           "remote.url",
                                           "remote.fetch",
                                           "remote.pushurl",
                                           "remote.tagopt",
                                           "remote.promisor",
                                           "remote.partialclonefilter",
                                           "branch.remote",
                                           "branch.merge",
                                           "extensions.objectformat",
                                           "extensions.partialclone",
                                           "user.name",
                                           "user.email",
                                           "init.defaultbranch",
                                           "gc.auto"};

// Hooks are run by exact name; git's own samples end in `.sample` and never run.
constexpr std::string_view kForbiddenEntries[] = {"commondir", "config.worktree", "modules",
                                                  "worktrees", "gitdir"};

constexpr std::size_t kMaxConfigBytes = 64 * 1024;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Every key in `text` is in kInertKeys; the syntax is the plain subset git itself writes (no
// continuation lines, no includes). Returns the first offending line, or empty.
std::string check_config(std::string_view text) {
  std::string section;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.back() == '\\') return "a continuation line: " + std::string(line);
    if (line.front() == '[') {
      std::size_t close = line.find(']');
      if (close == std::string_view::npos) return "a malformed section: " + std::string(line);
      std::string_view head = line.substr(1, close - 1);
      // `[remote "origin"]` and the old `[remote.origin]` both name the section `remote`.
      std::size_t cut = head.find_first_of(" \t\".");
      section = lower(trim(head.substr(0, cut)));
      line = trim(line.substr(close + 1));  // `[core] fsmonitor = x` is one line to git
      if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    }
    std::size_t eq = line.find('=');
    std::string key = section + "." + lower(trim(line.substr(0, eq)));
    if (std::find(std::begin(kInertKeys), std::end(kInertKeys), key) == std::end(kInertKeys)) {
      return "the config key " + key;
    }
  }
  return {};
}

}  // namespace

std::string unsafe_git_config(std::string_view text) { return check_config(text); }

std::string unsafe_new_git_dir(const std::string& git_dir) {
  for (auto name : kForbiddenEntries) {
    struct stat st;
    const std::string path = git_dir + "/" + std::string(name);
    if (::lstat(stable_path(path).c_str(), &st) == 0 || errno != ENOENT) {
      return "it has " + std::string(name);
    }
  }
  std::string config;
  if (!read_small_file(git_dir + "/config", kMaxConfigBytes, config, true)) {
    struct stat st;
    if (::lstat(stable_path(git_dir + "/config").c_str(), &st) != 0 && errno == ENOENT) return {};
    return "its config is not a small regular file with one name";
  }
  if (std::string bad = check_config(config); !bad.empty()) return "its config has " + bad;
  // O_NOFOLLOW: opendir follows a `hooks` symlink into a directory the command keeps writing.
  int hooks_fd = ::open(stable_path(git_dir + "/hooks").c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR* hooks = hooks_fd < 0 ? nullptr : ::fdopendir(hooks_fd);
  if (hooks == nullptr) {
    if (hooks_fd >= 0) ::close(hooks_fd);
    struct stat st;
    return ::lstat(stable_path(git_dir + "/hooks").c_str(), &st) != 0 && errno == ENOENT
               ? std::string()
               : "its hooks cannot be listed";
  }
  std::string why;
  while (dirent* e = ::readdir(hooks)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (!name.ends_with(".sample") ||
        ::fstatat(::dirfd(hooks), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || st.st_nlink > 1) {
      why = "a hook " + std::string(name);
      break;
    }
  }
  ::closedir(hooks);
  return why;
}

}  // namespace paddock::sandbox
