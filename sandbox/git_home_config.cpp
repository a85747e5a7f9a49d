#include "sandbox/git_home_config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "sandbox/git_config_syntax.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/small_file.hpp"

namespace paddock::sandbox {
namespace {

// What the sandbox's git gets of the home's global config: settings that hold no secret and
// that change how git behaves for the person (identity, default branch, pull and push habits,
// diff and merge style, line endings, aliases). Not carried: credential helpers, `url.*`
// (tokens in URLs), `http.*` (extra headers, cookies, client keys), includes, signing keys,
// and every key that names a program or a file (core.editor, core.pager, core.sshCommand,
// core.fsmonitor, core.hooksPath, core.excludesFile, diff/merge drivers): the files they name
// are in the hidden home, and the programs would run with a config the person never saw.
constexpr std::string_view kCarried[] = {"user.name",
                                         "user.email",
                                         "init.defaultbranch",
                                         "pull.rebase",
                                         "pull.ff",
                                         "push.default",
                                         "push.autosetupremote",
                                         "push.followtags",
                                         "fetch.prune",
                                         "fetch.prunetags",
                                         "merge.conflictstyle",
                                         "merge.ff",
                                         "rebase.autosquash",
                                         "rebase.autostash",
                                         "rebase.updaterefs",
                                         "diff.algorithm",
                                         "diff.colormoved",
                                         "diff.renames",
                                         "diff.mnemonicprefix",
                                         "core.autocrlf",
                                         "core.eol",
                                         "core.safecrlf",
                                         "core.quotepath",
                                         "core.whitespace",
                                         "color.ui",
                                         "column.ui",
                                         "log.date",
                                         "commit.verbose",
                                         "rerere.enabled",
                                         "status.showuntrackedfiles",
                                         "branch.sort",
                                         "tag.sort",
                                         "help.autocorrect",
                                         "advice.detachedhead"};

bool carried(const std::string& key, const std::string& value) {
  // An alias runs in the sandbox, where it can do no more than the command could; but
  // one that holds a URL or an address may hold its token, and a shell alias (`!...`) or one
  // that sets config (`-c`) is where environment tokens and headers go.
  if (key.starts_with("alias.")) {
    if (value.find("://") != std::string::npos || value.find('@') != std::string::npos) {
      return false;
    }
    // Word by word, as git splits it: a shell alias starts with `!` after any blank, and an
    // option that sets config may stand anywhere.
    // git unquotes words (`"-c"`, `'-c'`, `-\c` are all -c): judged without the quotes.
    std::string bare;
    for (char ch : value) {
      if (ch != '"' && ch != '\'' && ch != '\\') bare += ch;
    }
    bool first = true;
    for (std::size_t i = 0; i < bare.size();) {
      while (i < bare.size() && std::isspace(static_cast<unsigned char>(bare[i])) != 0) ++i;
      std::size_t end = i;
      while (end < bare.size() && std::isspace(static_cast<unsigned char>(bare[end])) == 0) ++end;
      const std::string_view word(bare.data() + i, end - i);
      if (first && word.starts_with("!")) return false;
      if (word.starts_with("-c") || word.starts_with("--config-env")) return false;
      if (!word.empty()) first = false;
      i = end;
    }
    return true;
  }
  return std::find(std::begin(kCarried), std::end(kCarried), key) != std::end(kCarried);
}

// A value as a git config value: quoted, with git's escapes; control characters dropped.
std::string quoted(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    }
  }
  return out + "\"";
}

struct Signature {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  long mtime_sec = 0, mtime_nsec = 0, ctime_sec = 0, ctime_nsec = 0;
  bool operator==(const Signature&) const = default;
};

Signature signature_of(const std::string& path) {
  struct stat st;
  Signature s;
  if (::stat(path.c_str(), &st) == 0) {
    s = {st.st_dev,          st.st_ino,         st.st_size,        st.st_mtim.tv_sec,
         st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  }
  return s;
}

}  // namespace

std::string git_home_config(const std::string& home) {
  // git reads the XDG file first, then ~/.gitconfig: a later value wins.
  const std::vector<std::string> top = {home + "/.config/git/config", home + "/.gitconfig"};
  // Read once per home while every file read (includes too) stays the same: this runs for
  // every command.
  struct Cached {
    std::vector<std::pair<std::string, Signature>> files;
    std::string text;
  };
  static std::mutex mutex;
  static std::map<std::string, Cached> cache;
  {
    const std::lock_guard lock(mutex);
    auto it = cache.find(home);
    if (it != cache.end() &&
        std::all_of(it->second.files.begin(), it->second.files.end(),
                    [](const auto& f) { return signature_of(f.first) == f.second; })) {
      return it->second.text;
    }
  }
  Cached made;
  std::map<std::string, std::string> settings;
  // `include.path` is followed as git follows it (relative to the including file, `~/` in
  // the home), so the identity is the one the host's git uses; `includeIf` is not (its
  // conditions depend on the repository). Only the carried keys are taken from any file, an
  // included file only when it is this user's (or root's) and nobody else may write it (a
  // root supervisor must not carry another user's private config into a sandbox), each file
  // once and at most 32 in all (a file that includes itself thirty times is not read 30^10
  // times).
  std::set<std::string> seen;
  std::function<void(const std::string&, int)> read = [&](const std::string& file, int depth) {
    if (depth > 10 || seen.size() >= 32 || !seen.insert(file).second) return;
    made.files.emplace_back(file, signature_of(file));
    struct stat st;
    if (depth > 0 && (::stat(file.c_str(), &st) != 0 ||
                      (st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & 022) != 0)) {
      return;
    }
    std::string text;
    if (!read_small_file(file, 1u << 20, text, false)) return;
    read_git_config(
        text, [&](const std::string& key, const std::string& value) { settings[key] = value; },
        [&](const std::string& named, bool conditional) {
          // includeIf is not followed: its conditions depend on the repository.
          if (named.empty() || conditional) return;
          const std::string path = named.starts_with("~/") ? home + named.substr(1)
                                   : named.front() == '/'
                                       ? named
                                       : std::string(paths::parent_of(file)) + "/" + named;
          read(path, depth + 1);
        });
  };
  for (const auto& f : top) read(f, 0);
  std::string section;
  for (const auto& [key, value] : settings) {  // sorted: one header per section
    if (!carried(key, value)) continue;
    const std::size_t dot = key.find('.');
    if (made.text.empty()) {
      made.text =
          "# paddock: what the home's git config holds that is no secret; the rest is hidden\n";
    }
    if (key.substr(0, dot) != section) {
      section = key.substr(0, dot);
      made.text += "[" + section + "]\n";
    }
    made.text += "\t" + key.substr(dot + 1) + " = " + quoted(value) + "\n";
  }
  const std::lock_guard lock(mutex);
  if (cache.size() >= 64) cache.clear();  // many homes (a test suite's): keep it bounded
  cache[home] = made;
  return made.text;
}

}  // namespace paddock::sandbox
