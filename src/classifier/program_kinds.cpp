#include "classifier/program_kinds.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "paddock/classifier.hpp"
#include "sandbox/default_paths.hpp"
#include "sandbox/path_glob.hpp"

namespace paddock::classifier {

// `./cat` or `/tmp/x/ls` may be anything: only a bare name (found on PATH) or a standard
// system directory earns an allow rule.
bool trusted_spelling(std::string_view p) {
  if (p.find('/') == std::string_view::npos) return true;
  for (std::string_view dir : {"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}) {
    if (p.substr(0, dir.size()) == dir && p.find('/', dir.size()) == std::string_view::npos)
      return true;
  }
  return false;
}

bool is_shell(std::string_view name) {
  for (std::string_view s :
       {"sh",   "bash",  "dash", "zsh",   "ksh",    "mksh",  "ash",   "busybox-sh",
        "fish", "tcsh",  "csh",  "yash",  "posh",   "rbash", "ksh93", "pdksh",
        "oksh", "loksh", "lksh", "bash5", "elvish", "nu",    "xonsh"}) {
    if (name == s) return true;
  }
  return false;
}

bool is_interpreter(std::string_view name) {
  for (std::string_view s :
       {"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh",
        "Rscript", "osascript", "pwsh", "deno", "bun"}) {
    if (name == s) return true;
  }
  return name.starts_with("python3.");
}

bool is_downloader(std::string_view name) {
  for (std::string_view s : {"curl", "wget", "fetch", "nc", "ncat", "netcat", "socat", "aria2c",
                             "http", "https", "lynx", "links"}) {
    if (name == s) return true;
  }
  return false;
}

bool is_decoder(std::string_view name) {
  for (std::string_view s : {"base64", "base32", "basenc", "xxd",     "uudecode", "openssl", "gzip",
                             "gunzip", "zcat",   "bzip2",  "bunzip2", "xz",       "unxz",    "zstd",
                             "rev",    "tr",     "perl",   "python",  "python3",  "od"}) {
    if (name == s) return true;
  }
  return false;
}

namespace {

// `word` with a home spelled as `~/`: `$HOME/x`, `${HOME}/x` and `<home>/x` become `~/x`;
// an option's value (`--file=...`) and curl's `@file` are the word.
std::string home_spelled(const std::string& word, const std::string& home) {
  std::string w = word;
  if (const auto eq = w.find('='); eq != std::string::npos && w.starts_with("-"))
    w.erase(0, eq + 1);
  if (w.starts_with("@")) w.erase(0, 1);
  for (std::string_view spelled : {"$HOME/", "${HOME}/"}) {
    if (w.starts_with(spelled)) w = "~/" + w.substr(spelled.size());
  }
  if (w == "~" || w == "$HOME" || w == "${HOME}") return "~/";
  if (const char* h = home.empty() ? std::getenv("HOME") : home.c_str();
      h != nullptr && h[0] == '/' && h[1] != '\0') {
    const std::string prefix = std::string(h) + "/";
    if (w.starts_with(prefix)) w = "~/" + w.substr(prefix.size());
    if (w + "/" == prefix) w = "~/";
  }
  return w;
}

}  // namespace

// A word that names a credential the sandbox denies by default (sandbox/default_paths.hpp, the
// one list): `~/.ssh/id_rsa`, `$HOME/.aws/credentials`, `--file=~/.netrc`, `@~/.npmrc`.
bool names_credential(const std::string& word, const std::string& home) {
  std::string w = home_spelled(word, home);
  if (w.find("/.") != std::string::npos) {  // `..` and `.` components resolved
    w = std::filesystem::path(w).lexically_normal().string();
  }
  if (!w.starts_with("~/") && !w.starts_with("/etc/") && !w.starts_with("/run/")) return false;
  // A word the shell expands (`~/.ss?/id_rsa`, `~/.s*`): it names a credential when it can
  // match one or something inside one.
  const bool pattern = sandbox::paths::is_glob(w);
  for (const auto& p : sandbox::default_credential_paths()) {
    if (::fnmatch(p.c_str(), w.c_str(), FNM_PATHNAME) == 0) return true;
    if (w.size() > p.size() && w.starts_with(p) && w[p.size()] == '/') return true;
    if (pattern && !sandbox::paths::is_glob(p) &&
        (sandbox::paths::glob_covers(w, p) || sandbox::paths::glob_passes_through(w, p))) {
      return true;
    }
  }
  return false;
}

bool allow_read_reaches(const std::string& word, const std::vector<std::string>& allow_read,
                        const std::string& cwd, const std::string& home) {
  const std::string w = home_spelled(std::filesystem::path(word).lexically_normal().string(), home);
  auto trimmed = [](std::string a) {
    while (a.size() > 1 && a.back() == '/') a.pop_back();
    return a;
  };
  auto within = [](const std::string& in, const std::string& out) {
    return in == out || (in.starts_with(out) && (out.back() == '/' || in[out.size()] == '/'));
  };
  for (const std::string& entry : allow_read) {
    std::string e = entry;
    if (!e.starts_with("/") && !e.starts_with("~") && !e.starts_with("$")) {
      if (cwd.empty()) return true;  // relative to a directory not known: it may be anywhere
      e = cwd + "/" + e;
    }
    e = home_spelled(std::filesystem::path(e).lexically_normal().string(), home);
    const std::string a = trimmed(w);
    // A glob shows what it matches, and all below a match (`~/.s*` names ~/.ssh itself).
    const std::size_t glob = e.find_first_of("*?[");
    if (glob != std::string::npos) {
      const std::string literal = trimmed(e.substr(0, e.rfind('/', glob) + 1));
      if (sandbox::paths::glob_covers(e, a) || within(literal, a)) return true;
      continue;
    }
    // The credential list wins over an allowRead above it (`allowRead: ~` leaves ~/.ssh
    // hidden): only an entry inside a credential shows one again (`~/.ssh`, `~/.ssh/id_rsa`).
    e = trimmed(e);
    if (!names_credential(e, home)) continue;
    if (within(e, a) || within(a, e)) return true;
    // A word the shell expands reaches the entry when it can match it or something in it.
    if (sandbox::paths::is_glob(a) &&
        (sandbox::paths::glob_covers(a, e) || sandbox::paths::glob_passes_through(a, e))) {
      return true;
    }
  }
  return false;
}

// The option that gives an interpreter its program text on the command line.
bool inline_code_option(std::string_view interpreter, std::string_view option) {
  if (interpreter.starts_with("python")) return option == "-c";
  if (interpreter == "node" || interpreter == "nodejs" || interpreter == "deno" ||
      interpreter == "bun") {
    return option == "-e" || option == "--eval" || option == "-p" || option == "--print";
  }
  if (interpreter == "php") return option == "-r";
  if (interpreter == "pwsh") return option == "-c" || option == "-Command";
  return option == "-e" || option == "-E";  // perl, ruby, lua, Rscript, osascript, tclsh
}

bool holds_command_line(std::string_view name) {
  static constexpr std::string_view kNames[] = {"PAGER",
                                                "GIT_PAGER",
                                                "MANPAGER",
                                                "EDITOR",
                                                "VISUAL",
                                                "GIT_EDITOR",
                                                "GIT_SEQUENCE_EDITOR",
                                                "GIT_SSH_COMMAND",
                                                "PROMPT_COMMAND",
                                                "GIT_EXTERNAL_DIFF",
                                                "GIT_PROXY_COMMAND",
                                                "BROWSER",
                                                "LESSOPEN",
                                                "LESSCLOSE",
                                                "SYSTEMD_PAGER",
                                                "PSQL_PAGER",
                                                "FCEDIT",
                                                "SUDO_EDITOR"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace paddock::classifier

namespace paddock {

bool injects_code(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PATH", "PROMPT_COMMAND",
      "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER",
      "GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
      "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONSTARTUP",
      "PYTHONPATH", "GIT_PROXY_COMMAND", "LESSOPEN", "MANPAGER", "BROWSER", "GIT_SEQUENCE_EDITOR",
      "SHELLOPTS", "BASHOPTS", "IFS",
      // where tools read configuration that runs
      // commands (core.pager, npm scripts' shell)
      "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_DIR", "GIT_WORK_TREE",
      "XDG_CONFIG_HOME", "HOME", "PYTHONHOME", "PERL5LIB", "RUBYLIB", "NODE_PATH", "GCONV_PATH",
      "PIP_CONFIG_FILE", "CARGO_HOME"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames) ||
         name.starts_with("GIT_CONFIG_KEY_") || name.starts_with("GIT_CONFIG_VALUE_") ||
         name.starts_with("LD_") || name.starts_with("BASH_FUNC_") ||
         name.starts_with("npm_config_") || name.starts_with("NPM_CONFIG_");
}

}  // namespace paddock
