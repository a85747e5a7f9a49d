// The rule table's tests about tools: git, downloads, packages, containers, services,
// databases; and Args' helpers (flags, options, positionals, subcommands).
#include "classifier/rule_matchers.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace paddock::classifier {
namespace matchers {
// git's subcommand after its global options (-C dir, -c k=v, --git-dir=..., ...).
std::string git_sub(const Args& a) {
  return a.subcommand({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                       "--config-env", "--super-prefix"});
}

// rg --pre CMD, git grep -O CMD / --open-files-in-pager, git difftool -x, git bisect run,
// --upload-pack / --receive-pack: a command line hidden in an option.
bool runs_given_command(const Args& a) {
  for (const auto& w : a.words) {
    if (starts_with(w, "--pre") || starts_with(w, "-O") ||
        starts_with(w, "--open-files-in-pager") || starts_with(w, "--extcmd") ||
        starts_with(w, "--upload-pack") || starts_with(w, "--receive-pack") ||
        starts_with(w, "--exec=") || (w == "-x" && a.program == "git" && git_sub(a) == "difftool"))
      return a.program == "git" || starts_with(w, "--pre");
  }
  if (a.program == "git") {
    const std::string sub = git_sub(a);
    if (sub == "bisect") {
      const auto p = a.positionals();
      return std::find(p.begin(), p.end(), "run") != p.end();
    }
  }
  return false;
}

bool git_config_override(const Args& a) {
  // `-c core.pager=...`, `-c alias.x=!cmd`, `--config-env`: run any command through git.
  for (std::size_t i = 0; i + 1 < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (w == "--" || !w.starts_with("-")) break;
    if (w == "-c" || w == "--config-env") return true;
    if (w == "-C" || w == "--git-dir" || w == "--work-tree" || w == "--namespace") ++i;  // value
  }
  return std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
    return w.starts_with("--config-env=") || w.starts_with("--exec-path=");
  });
}

// The word after git's subcommand (`stash list`, `worktree add`), or "".
std::string git_action(const Args& a) {
  const std::string sub = git_sub(a);
  bool seen = false;
  for (const auto& w : a.words) {
    if (!seen) {
      seen = w == sub;
      continue;
    }
    if (!w.starts_with("-")) return w;
  }
  return "";
}

// Subcommands that only read, spelled with an action (`git stash list`, `git remote -v`).
bool git_reading_action(const Args& a) {
  const std::string sub = git_sub(a);
  const std::string act = git_action(a);
  if (sub == "stash") return act == "list" || act == "show";
  if (sub == "worktree") return act == "list";
  if (sub == "remote") return act.empty() || act == "show" || act == "get-url";
  if (sub == "config") {
    return a.option("--get") || a.option("--get-all") || a.option("--get-regexp") ||
           a.option("--list") || a.flag('l') ||
           (a.positionals().size() == 2 && !a.option("--unset") && !a.option("--add"));
  }
  return false;
}

bool git_topology(const Args& a) {
  static constexpr std::string_view kSubs[] = {
      "push",         "pull",    "fetch",     "rebase", "merge",         "reset",
      "checkout",     "switch",  "worktree",  "remote", "filter-branch", "filter-repo",
      "cherry-pick",  "revert",  "am",        "apply",  "clean",         "gc",
      "prune",        "replace", "submodule", "stash",  "restore",       "update-ref",
      "symbolic-ref", "clone",   "config"};
  const std::string sub = git_sub(a);
  if (std::find(std::begin(kSubs), std::end(kSubs), sub) != std::end(kSubs)) {
    return !git_reading_action(a);
  }
  if (sub == "branch") {
    return a.flag('d') || a.flag('D') || a.flag('m') || a.flag('M') || a.option("--delete") ||
           a.option("--move") || a.option("--force") || a.flag('f') ||
           a.option("--set-upstream-to");
  }
  if (sub == "tag") return a.flag('d') || a.option("--delete") || a.flag('f');
  if (sub == "reflog") {
    const auto p = a.positionals();
    return std::find(p.begin(), p.end(), "expire") != p.end() ||
           std::find(p.begin(), p.end(), "delete") != p.end();
  }
  return false;
}

bool git_read(const Args& a) {
  static constexpr std::string_view kSubs[] = {
      "status",       "log",      "diff",       "show",        "blame",    "ls-files", "ls-tree",
      "rev-parse",    "describe", "shortlog",   "grep",        "cat-file", "rev-list", "show-ref",
      "for-each-ref", "name-rev", "merge-base", "whatchanged", "version",  "help"};
  const std::string sub = git_sub(a);
  if (sub == "branch" || sub == "tag") return a.positionals().size() == 1 || a.flag('l');
  return std::find(std::begin(kSubs), std::end(kSubs), sub) != std::end(kSubs) ||
         git_reading_action(a);
}

bool git_local_write(const Args& a) {
  if (git_read(a)) return false;  // `git tag`, `git branch`: listing
  static constexpr std::string_view kSubs[] = {"add", "commit", "init", "mv",
                                               "rm",  "notes",  "tag",  "branch"};
  const std::string sub = git_sub(a);
  return std::find(std::begin(kSubs), std::end(kSubs), sub) != std::end(kSubs);
}

bool download_to_file(const Args& a) {
  if (a.program == "wget") {
    // wget saves to a file unless told to print: -O -, -O-, -qO-, --output-document=-.
    for (std::size_t i = 0; i < a.words.size(); ++i) {
      const std::string& w = a.words[i];
      const bool next_dash = i + 1 < a.words.size() && a.words[i + 1] == "-";
      if ((w == "--output-document" && next_dash) || w == "--output-document=-") return false;
      if (w.size() >= 2 && w[0] == '-' && w[1] != '-') {
        const auto o = w.find('O');
        if (o != std::string::npos && ((o + 1 == w.size() && next_dash) || w.substr(o + 1) == "-"))
          return false;
      }
    }
    return !a.option("--spider");
  }
  return a.flag('o') || a.flag('O') || a.option("--output") || a.option("--remote-name") ||
         a.option("--remote-name-all");
}

bool sed_in_place(const Args& a) {
  if (a.program == "awk" || a.program == "gawk") return a.flag('i') && a.contains("inplace");
  return a.flag('i') || long_option(a, "--in-place", 6);
}
bool perl_in_place(const Args& a) { return a.flag('i'); }

bool signals_processes(const Args& a) { return a.program != "fuser" || a.flag('k'); }

// Reading `ip addr`, `sysctl -a`, `nmcli dev` is fine; changing them is not.
bool system_tuning(const Args& a) {
  if (a.program == "renice") return true;
  if (a.program == "sysctl")
    return a.flag('w') || a.flag('p') || a.option("--write") ||
           std::any_of(a.words.begin(), a.words.end(),
                       [](const std::string& w) { return w.find('=') != std::string::npos; });
  const auto p = a.positionals();
  for (std::string_view verb : {"add", "del", "delete", "set", "change", "replace", "flush", "down",
                                "up", "off", "on", "modify", "connect", "disconnect"}) {
    if (std::find(p.begin(), p.end(), verb) != p.end()) return true;
  }
  return false;
}

bool package_install(const Args& a) {
  static constexpr std::string_view kSubs[] = {
      "install",      "add",        "i",         "remove", "uninstall",
      "upgrade",      "update",     "purge",     "erase",  "dist-upgrade",
      "full-upgrade", "autoremove", "reinstall", "ci",     "link"};
  std::string sub = a.subcommand({"-C", "--prefix"});
  if (sub == "pip" || sub == "get") {  // uv pip install, go get
    if (sub == "get") return true;
    for (const auto& w : a.positionals()) {
      if (w != "pip") {
        sub = w;
        break;
      }
    }
  }
  return std::find(std::begin(kSubs), std::end(kSubs), sub) != std::end(kSubs);
}

bool rsync_remote(const Args& a) {
  for (const auto& w : a.positionals()) {
    if (w.starts_with("rsync://") || w.find("::") != std::string::npos) return true;
    const auto colon = w.find(':');
    const auto slash = w.find('/');
    if (colon != std::string::npos && (slash == std::string::npos || colon < slash)) return true;
  }
  return false;
}

bool login_action(const Args& a) {
  const std::string sub = a.subcommand();
  if (sub == "login" || sub == "logout") return true;
  if (sub == "auth") return true;  // gh auth token/login/refresh, glab auth
  if (a.program == "npm") return sub == "token" || sub == "adduser";
  return false;
}

bool publish_action(const Args& a) {
  std::string sub = a.subcommand({"--registry", "--userconfig", "--prefix", "-w", "--workspace",
                                  "--tag", "--access", "--otp", "--cwd", "-C"});
  if (sub == "npm" && a.program == "yarn") {  // yarn npm publish
    const auto p = a.positionals();
    sub = p.size() > 1 ? p[1] : "";
  }
  if (sub == "unpublish" || sub == "deprecate" || sub == "dist-tag" || sub == "access" ||
      sub == "push")
    return true;
  if (a.program == "twine") return sub == "upload";
  if (a.program == "dotnet") return sub == "nuget";
  return sub == "publish" || sub == "release" || sub == "yank" || sub == "owner";
}

bool infrastructure_change(const Args& a) {
  const std::string sub = a.subcommand({"-chdir"});
  return sub == "apply" || sub == "destroy" || sub == "import" || sub == "up" || sub == "deploy" ||
         sub == "state" || sub == "taint" || sub == "force-unlock";
}

bool global_install(const Args& a) {
  return package_install(a) &&
         (a.flag('g') || a.option("--global") || a.option("--user") || a.option("--system") ||
          a.option("--break-system-packages") || a.option("--root"));
}

bool container_write(const Args& a) {
  static constexpr std::string_view kRead[] = {
      "ps",           "images", "inspect",  "logs",    "version",       "info",
      "top",          "stats",  "port",     "diff",    "history",       "search",
      "events",       "get",    "describe", "explain", "api-resources", "api-versions",
      "cluster-info", "config", "auth",     "top",     "help",          "ls"};
  const std::string sub =
      a.subcommand({"-H", "--host", "--context", "-n", "--namespace", "--kubeconfig", "-c",
                    "--config", "--log-level", "-l", "--cluster", "--user", "-s", "--server"});
  if (sub.empty()) return false;
  return std::find(std::begin(kRead), std::end(kRead), sub) == std::end(kRead);
}

bool destructive_sql(const Args& a) {
  return std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
    // Upper case, comments (/* */) and runs of white space read as one space.
    std::string up;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w.compare(i, 2, "/*") == 0) {
        const auto end = w.find("*/", i + 2);
        i = end == std::string::npos ? w.size() : end + 1;
        up += ' ';
        continue;
      }
      const char c = w[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        if (!up.empty() && up.back() != ' ') up += ' ';
        continue;
      }
      up += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    return up.find("FLUSHALL") != std::string::npos || up.find("FLUSHDB") != std::string::npos ||
           up.find("DROPDATABASE") != std::string::npos ||
           up.find("DROP TABLE") != std::string::npos ||
           up.find("DROP DATABASE") != std::string::npos ||
           up.find("DELETE FROM") != std::string::npos ||
           up.find("TRUNCATE") != std::string::npos || up.find("DROP SCHEMA") != std::string::npos;
  });
}

bool version_query(const Args& a) {
  return a.words.size() == 1 &&
         (a.words[0] == "--version" || a.words[0] == "-V" || a.words[0] == "-v" ||
          a.words[0] == "version" || a.words[0] == "--help" || a.words[0] == "-h");
}

bool find_read_only(const Args& a) {
  return !std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
    return w == "-delete" || w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir" ||
           w == "-fprint" || w == "-fprintf" || w == "-fls" || w == "-fprint0";
  });
}

bool build_or_test(const Args& a) {
  static constexpr std::string_view kSubs[] = {"build",  "test", "check", "run",  "fmt",    "vet",
                                               "clippy", "doc",  "bench", "lint", "compile"};
  const std::string sub = a.subcommand();
  return sub.empty() || std::find(std::begin(kSubs), std::end(kSubs), sub) != std::end(kSubs);
}

bool service_change(const Args& a) {
  static constexpr std::string_view kRead[] = {
      "status", "show", "list-units", "list-unit-files", "is-active", "is-enabled", "cat", "help"};
  const std::string sub = a.subcommand({"-H", "--host", "-M", "--machine", "-p", "--property"});
  return std::find(std::begin(kRead), std::end(kRead), sub) == std::end(kRead);
}

bool crontab_change(const Args& a) { return !a.flag('l'); }

bool database_drop(const Args& a) {
  if (a.program == "dropdb") return true;
  const auto p = a.positionals();
  return std::find(p.begin(), p.end(), "drop") != p.end();  // mysqladmin drop DB
}

bool git_remote_write(const Args& a) {
  const std::string sub = git_sub(a);
  const std::string act = git_action(a);
  return sub == "push" || sub == "send-email" || sub == "request-pull" || sub == "send-pack" ||
         sub == "http-push" || (sub == "svn" && act == "dcommit") ||
         (sub == "lfs" && act == "push");
}

// git -C DIR / --work-tree=DIR clean, reset --hard, checkout, restore, rm, stash on the root,
// a home or a system directory: rewrites or deletes the files there.
bool git_worktree_catastrophic(const Args& a) {
  static constexpr std::string_view kWriting[] = {
      "clean",     "reset",          "checkout",        "restore", "rm",       "stash",    "switch",
      "read-tree", "checkout-index", "sparse-checkout", "merge",   "pull",     "am",       "apply",
      "mv",        "cherry-pick",    "revert",          "rebase",  "worktree", "submodule"};
  const std::string sub = git_sub(a);
  if (std::find(std::begin(kWriting), std::end(kWriting), sub) == std::end(kWriting)) return false;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (w == sub) break;  // the global options end at the subcommand
    std::string dir;
    if ((w == "-C" || w == "--work-tree") && i + 1 < a.words.size()) dir = a.words[i + 1];
    if (w.starts_with("--work-tree=")) dir = w.substr(12);
    if (w == "-c" && i + 1 < a.words.size() && a.words[i + 1].starts_with("core.worktree="))
      dir = a.words[i + 1].substr(14);
    if (dir.empty()) continue;
    // The root, a home or a system directory; not an ancestor of the workspace (`git -C ..`
    // from a subdirectory is the project).
    PathContext where;
    if (a.where != nullptr) {
      where.cwds = a.where->cwds;
      where.home = a.where->home;
    } else {
      where.cwds.emplace_back();
    }
    where.workdir.assign(1, '/');
    if (catastrophic_target(dir, &where)) return true;
  }
  return false;
}

// git credential fill/approve, git credential-store / -cache: the stored secrets.
bool git_credentials(const Args& a) {
  return git_sub(a).starts_with("credential");  // credential, credential-store, -manager, ...
}

// kubectl config view --raw / --flatten: the cluster's keys and tokens.
bool kube_credentials(const Args& a) {
  const auto p = a.positionals();
  return p.size() >= 2 && p[0] == "config" && p[1] == "view" &&
         (a.option("--raw") || a.option("--flatten"));
}

// fly deploy, vercel --prod, netlify deploy, wrangler deploy/publish, gcloud app deploy,
// aws cloudformation deploy, git push heroku: any deploy-like word among the positionals.
bool deploy_action(const Args& a) {
  const auto p = a.positionals();
  if (a.program == "surge") return true;
  if (a.program == "heroku") {
    // Everything but reading (apps, logs, releases, config, ps, info, status, help).
    static constexpr std::string_view kRead[] = {"apps",    "logs",   "releases",  "config",
                                                 "ps",      "info",   "status",    "help",
                                                 "version", "whoami", "apps:info", "domains"};
    return !p.empty() && std::find(std::begin(kRead), std::end(kRead), p[0]) == std::end(kRead);
  }
  if (a.program == "vercel" && (p.empty() || p[0] == "deploy" || a.option("--prod"))) return true;
  for (const auto& w : p) {
    if (w == "deploy" || w == "publish" || w == "release" || w == "up" || w == "push" ||
        w == "scale" || w == "destroy" || w == "rollback" || w == "promote")
      return true;
  }
  return false;
}

// mvn deploy / release:perform, gradle publish*: publishes artifacts.
bool build_publish(const Args& a) {
  for (const auto& w : a.positionals()) {
    if (a.program == "mvn" || a.program == "mvnw") {
      if (w == "deploy" || w.starts_with("deploy:") || w == "release:perform") return true;
    } else if ((w.starts_with("publish") || w.find(":publish") != std::string::npos) &&
               !w.ends_with("ToMavenLocal")) {
      return true;
    }
  }
  return false;
}

bool loopback_host(std::string_view h) {
  return h == "localhost" || h == "127.0.0.1" || h == "::1" || h.starts_with("127.") ||
         h.starts_with("/");  // a unix socket directory
}

// -h HOST / --host=HOST / -H / a URI naming another host (postgres://db.example.com/x).
bool database_remote_host(const Args& a) {
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    std::string host;
    if ((w == "-h" || w == "--host" || w == "-H" || w == "-S") && i + 1 < a.words.size()) {
      host = a.words[i + 1];
    } else if (w.starts_with("--host=")) {
      host = w.substr(7);
    } else if (w.starts_with("-h") && w.size() > 2 && w[2] != '-') {
      host = w.substr(2);
    } else if (const auto scheme = w.find("://"); scheme != std::string::npos) {
      std::string rest = w.substr(scheme + 3);
      if (const auto at = rest.find('@'); at != std::string::npos) rest = rest.substr(at + 1);
      host = rest.substr(0, rest.find_first_of(":/?"));
    }
    if (!host.empty() && !loopback_host(host)) return true;
  }
  return false;
}

namespace {

// The host (and port) a URL-like argument of an HTTP client names: `scheme://[user@]host
// [:port]/...`, or `host.tld/path` (curl and wget default to http). Port 0: a scheme whose
// port is not known here.
std::optional<Endpoint> http_endpoint(const std::string& program, const std::string& w) {
  std::string rest;
  std::uint16_t port = 80;
  if (const auto scheme = w.find("://"); scheme != std::string::npos) {
    const std::string name = w.substr(0, scheme);
    port = name == "http" ? 80 : name == "https" ? 443 : name == "ftp" ? 21 : 0;
    rest = w.substr(scheme + 3);
    if (const auto at = rest.find('@'); at != std::string::npos && at < rest.find('/'))
      rest = rest.substr(at + 1);
  } else if (!w.starts_with("-") && w.find('.') != std::string::npos &&
             (w.find('/') != std::string::npos || program != "curl") &&
             w.find('=') == std::string::npos && w.find('@') == std::string::npos &&
             w.find(':') != 0 && (program != "curl" || w.find('/') != std::string::npos)) {
    rest = w;  // example.com/path
  } else {
    return std::nullopt;
  }
  Endpoint e;
  e.url = true;
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.starts_with("[")) {  // [v6]:port
    const auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    e.host = authority.substr(1, close - 1);
    if (authority.size() > close + 1 && authority[close + 1] == ':')
      port = static_cast<std::uint16_t>(std::atoi(authority.c_str() + close + 2));
  } else {
    e.host = authority.substr(0, authority.find(':'));
    if (const auto colon = authority.find(':'); colon != std::string::npos)
      port = static_cast<std::uint16_t>(std::atoi(authority.c_str() + colon + 1));
  }
  e.port = port;
  if (e.host.empty()) return std::nullopt;
  return e;
}

// An HTTP client's option whose next word is its value (data, a header, a file), not a URL.
// Per program: curl's -O takes none, wget's does.
bool takes_value(std::string_view program, std::string_view option) {
  static constexpr std::string_view kCurl[] = {"-d",
                                               "--data",
                                               "--data-raw",
                                               "--data-binary",
                                               "--data-urlencode",
                                               "--json",
                                               "-F",
                                               "--form",
                                               "-H",
                                               "--header",
                                               "-o",
                                               "--output",
                                               "-u",
                                               "--user",
                                               "-X",
                                               "--request",
                                               "-T",
                                               "--upload-file",
                                               "-A",
                                               "--user-agent",
                                               "-b",
                                               "--cookie",
                                               "-c",
                                               "--cookie-jar",
                                               "-e",
                                               "--referer",
                                               "-m",
                                               "--max-time",
                                               "-w",
                                               "--write-out"};
  static constexpr std::string_view kWget[] = {
      "-O",          "--output-document", "--post-data", "--post-file", "--body-data",
      "--body-file", "--header",          "-U",          "--user-agent"};
  const auto in = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), option) != std::end(list);
  };
  return program == "curl" ? in(kCurl) : program == "wget" ? in(kWget) : false;
}

}  // namespace

// curl -d/-F/-T/-X POST, wget --post-data, httpie with data, to a host other than the
// sandbox's own loopback: sends data that changes state elsewhere (an upload, an API call).
bool http_upload_remote(const Args& a) {
  bool sends = false, remote = false;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    const std::string next = i + 1 < a.words.size() ? a.words[i + 1] : "";
    if (a.program == "curl") {
      const std::string glued = w.starts_with("-X") && w.size() > 2 ? w.substr(2) : "";
      const bool method = ((w == "-X" || w == "--request") && next != "GET" && next != "HEAD" &&
                           next != "OPTIONS") ||
                          (!glued.empty() && glued != "GET" && glued != "HEAD");
      // A cluster of short options sends when its first letter that takes a value is d, F or
      // T (-d x, -sd x, -dx, -Fa=b, -d@file); X is the method above.
      bool cluster_sends = false;
      if (w.size() > 1 && w[0] == '-' && w[1] != '-') {
        for (std::size_t k = 1; k < w.size(); ++k) {
          if (std::string_view("dFT").find(w[k]) != std::string_view::npos) cluster_sends = true;
          if (std::string_view("AbcCdDeEFHKmoPQrtTuUwxXYyz").find(w[k]) != std::string_view::npos)
            break;
        }
      }
      sends |= method || cluster_sends || w.starts_with("--data") || w.starts_with("--form") ||
               w == "--upload-file" || w.starts_with("--upload-file=") || w == "--json" ||
               w.starts_with("--json=");
    } else if (a.program == "wget") {
      sends |= w.starts_with("--post-") || w.starts_with("--body-") ||
               (w.starts_with("--method") && w.find("GET") == std::string::npos);
    } else {  // http, https, xh: `http POST host a=b`, `http host a=b`
      std::string upper = w;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      sends |= upper == "POST" || upper == "PUT" || upper == "PATCH" || upper == "DELETE" ||
               (w.find('=') != std::string::npos && !w.starts_with("-") && i > 0);
    }
    const auto e = http_endpoint(a.program, w);
    if (e && !loopback_host(e->host) && e->host != "0.0.0.0") remote = true;
    // A URL known only at run time may name any host.
    const std::string before = i > 0 ? a.words[i - 1] : "";
    if (a.dynamic.size() > i && a.dynamic[i] && !w.starts_with("-") &&
        !takes_value(a.program, before))
      remote = true;
    // URLs from a file or settings (curl -K / --config, wget -i / --input-file / -e): any
    // host. Long options by any prefix getopt accepts.
    const std::string name = w.substr(0, w.find('='));
    const auto prefix_of = [&name](std::string_view full) {
      return name.size() >= 4 && full.starts_with(name);
    };
    if (prefix_of("--config") || prefix_of("--input-file") || prefix_of("--execute") ||
        prefix_of("--base"))
      remote = true;
    if (w.size() > 1 && w[0] == '-' && w[1] != '-' &&
        w.find_first_of(a.program == "wget"   ? "ieB"
                        : a.program == "curl" ? "K"
                                              : "") != std::string::npos)
      remote = true;
  }
  return sends && remote;
}

namespace {

// The host and port a URL argument reaches, read strictly (curl's rules: the authority ends
// at the first `/`, `?` or `#`; the user part ends at its last `@`): nullopt for anything not
// plainly a host (an empty authority, a backslash, globbing, an odd character, a scheme
// whose port is not known here). Without a scheme: http.
std::optional<Endpoint> strict_endpoint(std::string_view w) {
  std::uint16_t port = 80;
  bool url = false;
  if (const auto scheme = w.find("://"); scheme != std::string_view::npos) {
    std::string name(w.substr(0, scheme));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "http") {
      port = 80;
    } else if (name == "https") {
      port = 443;
    } else if (name == "ftp") {
      port = 21;
    } else {
      return std::nullopt;
    }
    w.remove_prefix(scheme + 3);
    url = true;
  }
  if (w.find_first_of("\\{}[]`\"' \t") != std::string_view::npos &&
      !(w.starts_with("[") && w.find(']') != std::string_view::npos &&
        w.find_first_of("\\{}`\"' \t") == std::string_view::npos &&
        w.find('[', 1) == std::string_view::npos))
    return std::nullopt;
  std::string_view authority = w.substr(0, w.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  if (authority.empty()) return std::nullopt;
  Endpoint e;
  e.url = url;
  std::string_view port_text;
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    e.host = std::string(authority.substr(1, close - 1));
    port_text = authority.substr(close + 1);
    if (!port_text.empty() && !port_text.starts_with(":")) return std::nullopt;
  } else {
    const auto colon = authority.find(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon);
    if (e.host.empty() || !std::all_of(e.host.begin(), e.host.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
        }))
      return std::nullopt;
  }
  if (!port_text.empty()) {
    port_text.remove_prefix(1);
    if (port_text.empty() || port_text.size() > 5 ||
        !std::all_of(port_text.begin(), port_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    const int p = std::atoi(std::string(port_text).c_str());
    if (p <= 0 || p > 65535) return std::nullopt;
    port = static_cast<std::uint16_t>(p);
  }
  e.port = port;
  return e;
}

}  // namespace

std::optional<std::vector<Endpoint>> remote_endpoints(const Args& a) {
  static constexpr std::string_view kHttp[] = {"curl", "wget", "http", "https", "xh", "xhs"};
  if (std::find(std::begin(kHttp), std::end(kHttp), a.program) == std::end(kHttp))
    return std::nullopt;
  const bool httpie = a.program != "curl" && a.program != "wget";
  // Options that take the connection elsewhere (another proxy, a socket, a name pinned to
  // an address) or read more URLs or settings from a file: the named hosts are no longer
  // the whole story.
  static constexpr std::string_view kElsewhere[] = {"--base",
                                                    "--variable",
                                                    "--expand-url",
                                                    "--url-query",
                                                    "--session",
                                                    "--session-read-only",
                                                    "--auth",
                                                    "--proxy",
                                                    "--preproxy",
                                                    "--socks",
                                                    "--connect-to",
                                                    "--resolve",
                                                    "--unix-socket",
                                                    "--abstract-unix-socket",
                                                    "--config",
                                                    "--input-file",
                                                    "--execute",
                                                    "--proxy-user",
                                                    "--noproxy",
                                                    "--no-proxy",
                                                    "--dns",
                                                    "--doh-url",
                                                    "--haproxy",
                                                    "--proxy1.0",
                                                    "--socks4",
                                                    "--socks5",
                                                    "--socks5-hostname",
                                                    "--socks4a",
                                                    "--interface",
                                                    "--ipfs-gateway",
                                                    "--alt-svc",
                                                    "--hsts"};
  // Short option letters that take a value, per program; `elsewhere` ones end the analysis.
  const std::string_view valued = a.program == "curl"   ? "AbcCdDeEFHKmoPQrtTuUwxXYyz"
                                  : a.program == "wget" ? "oaeiBtOTwQPUlARDXI"
                                                        : "aAo";
  const std::string_view elsewhere_letters = a.program == "curl"   ? "xKU"
                                             : a.program == "wget" ? "ie"
                                                                   : "";
  std::vector<Endpoint> out;
  bool options = true;
  std::size_t positionals = 0;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    if (a.dynamic.size() > i && a.dynamic[i]) return std::nullopt;
    std::string w = a.words[i];
    if (options && w == "--") {
      options = false;
      continue;
    }
    if (options && w.starts_with("--url=")) {
      w = w.substr(6);
    } else if (options && w.starts_with("--") && w.size() > 2) {
      // getopt takes any unambiguous prefix (`--conf`, `--input-f`): a prefix of one of
      // these is one of these.
      const std::string name = w.substr(0, w.find('='));
      for (std::string_view o : kElsewhere) {
        if (o.starts_with(name) && name.size() >= 4) return std::nullopt;
      }
      if (w == "--url") continue;  // its value is the next word: read as a URL below
      if (w.find('=') == std::string::npos && takes_value(a.program, w)) ++i;
      continue;  // an unknown long option is taken to have no value (its value, if any, is
                 // then read as one more URL: never a URL skipped)
    } else if (options && w.size() > 1 && w[0] == '-') {
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (elsewhere_letters.find(w[k]) != std::string_view::npos) return std::nullopt;
        if (valued.find(w[k]) == std::string_view::npos) continue;
        if (k + 1 == w.size()) ++i;  // -sd VALUE: the next word; -dVALUE: glued
        break;
      }
      continue;
    }
    ++positionals;
    // httpie: [METHOD] URL [ITEM...]; the items (a=1, H:v, f@file) are not URLs.
    if (httpie && !out.empty()) {
      // After the URL, request items: a data item (`name=value`, `name:=json`, `name==q`)
      // has a plain name. Anything else may be the URL itself (after an option this does not
      // read): not all hosts are known.
      const auto sep = w.find_first_of(":=");
      const bool data_item =
          sep != std::string::npos && sep > 0 &&
          (w.compare(sep, 1, "=") == 0 || w.compare(sep, 2, ":=") == 0) &&
          std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(sep), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ||
                   ch == '[' || ch == ']';
          });
      if (data_item) continue;
      return std::nullopt;
    }
    if (httpie) {
      std::string upper = w;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      const bool method =
          positionals == 1 &&
          (upper == "GET" || upper == "POST" || upper == "PUT" || upper == "PATCH" ||
           upper == "DELETE" || upper == "HEAD" || upper == "OPTIONS");
      if (method) continue;
      if (w.starts_with(":")) w = "localhost" + w;  // http :3000/x
    }
    const auto e = strict_endpoint(w);
    if (!e) return std::nullopt;
    out.push_back(*e);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool read_only_tool_writes(const Args& a) {
  const auto p = a.positionals();
  if ((a.program == "uniq" || a.program == "xxd") && p.size() >= 2) return true;
  if (a.program == "hostname" && !p.empty()) return true;
  if (a.program == "date" && (a.flag('s') || a.option("--set"))) return true;
  if (a.program == "git" && (a.option("--ext-diff") || a.option("--textconv"))) return true;
  if (a.program == "sort" || a.program == "tree" || a.program == "git" || a.program == "jq") {
    for (std::size_t i = 0; i < a.words.size(); ++i) {
      if (a.words[i] == "--") break;
      if (output_value(a, i)) return true;
    }
  }
  return false;
}

bool kernel_module_change(const Args& a) {
  if (a.program != "kmod") return true;
  const std::string sub = a.subcommand();
  return sub != "list" && sub != "static-nodes" && sub != "help" && !sub.empty();
}

// gh/glab: anything but reading (view, list, status, diff, checks, browse, search) writes to the
// host; `gh api` writes with a method other than GET or with fields.
bool forge_write(const Args& a) {
  const auto p = a.positionals();
  if (p.empty()) return false;
  if (p[0] == "api") {
    for (std::size_t i = 0; i < a.words.size(); ++i) {
      const std::string& w = a.words[i];
      const std::string next = i + 1 < a.words.size() ? a.words[i + 1] : "";
      if ((w == "-X" || w == "--method") && next != "GET" && next != "get") return true;
      if (w.starts_with("-X") && w.size() > 2 && w.substr(2) != "GET") return true;
      if (w == "-f" || w == "-F" || w == "--field" || w == "--raw-field" || w == "--input")
        return true;
    }
    return false;
  }
  if (p[0] == "auth" || p[0] == "help" || p[0] == "version" || p[0] == "completion" ||
      p[0] == "status" || p[0] == "browse" || p[0] == "search" || p[0] == "config" ||
      p[0] == "alias" || p[0] == "extension")
    return false;
  // hub's own commands: one word each.
  if (a.program == "hub" && (p[0] == "pull-request" || p[0] == "create" || p[0] == "fork" ||
                             p[0] == "delete" || p[0] == "merge" || p[0] == "push"))
    return true;
  const std::string act = p.size() > 1 ? p[1] : "";
  static constexpr std::string_view kRead[] = {"view",   "list",   "ls",     "status",   "diff",
                                               "checks", "show",   "watch",  "download", "checkout",
                                               "clone",  "browse", "search", ""};
  return std::find(std::begin(kRead), std::end(kRead), act) == std::end(kRead);
}

bool remote_tool_write(const Args& a) {
  if (a.program == "rclone" || a.program == "s3cmd" || a.program == "gsutil" ||
      a.program == "azcopy") {
    static constexpr std::string_view kRead[] = {
        "ls",      "lsd",  "lsl",  "lsf",         "cat",    "size",  "about",       "version",
        "info",    "du",   "help", "listremotes", "config", "check", "md5sum",      "sha1sum",
        "hashsum", "tree", "ncdu", "list",        "get",    "stat",  "copyto-local"};
    const std::string sub = a.subcommand();
    return std::find(std::begin(kRead), std::end(kRead), sub) == std::end(kRead);
  }
  return true;
}

bool system_package_change(const Args& a) {
  if (a.program == "dpkg")
    return a.flag('i') || a.flag('r') || a.flag('P') || a.option("--install") ||
           a.option("--remove") || a.option("--purge") || a.option("--unpack") ||
           a.option("--configure");
  if (a.program == "rpm") return a.flag('i') || a.flag('U') || a.flag('e') || a.flag('F');
  static constexpr std::string_view kChange[] = {
      "install", "remove", "purge", "upgrade",   "dist-upgrade", "full-upgrade", "autoremove",
      "update",  "add",    "del",   "reinstall", "erase",        "uninstall",    "refresh",
      "-S",      "-R",     "-U",    "-Syu",      "-Sy",          "-Rs",          "build-dep",
      "source",  "tap",    "link",  "unlink",    "switch",       "sync",         "clean"};
  for (const auto& w : a.words) {
    if (std::find(std::begin(kChange), std::end(kChange), w) != std::end(kChange)) return true;
    if (a.program == "pacman" && w.size() > 1 && w[0] == '-' &&
        (w[1] == 'S' || w[1] == 'R' || w[1] == 'U'))
      return true;
  }
  return false;
}

// The table. Order matters only between rules of one decision for the same program (the first
// match names the rule); across decisions the classifier takes the strictest anyway.
}  // namespace matchers

using matchers::starts_with;

bool Args::flag(char letter) const {
  for (const auto& w : words) {
    if (w == "--") break;
    if (w.size() >= 2 && w[0] == '-' && w[1] != '-' && w.find(letter, 1) != std::string::npos)
      return true;
  }
  return false;
}

bool Args::option(std::string_view long_name) const {
  for (const auto& w : words) {
    if (w == "--") break;
    if (w == long_name ||
        (starts_with(w, long_name) && w.size() > long_name.size() && w[long_name.size()] == '='))
      return true;
  }
  return false;
}

std::vector<std::string> Args::positionals() const {
  std::vector<std::string> out;
  bool options = true;
  for (const auto& w : words) {
    if (options && w == "--") {
      options = false;
      continue;
    }
    if (options && w.size() > 1 && w[0] == '-') continue;
    out.push_back(w);
  }
  return out;
}

std::string Args::subcommand(std::initializer_list<std::string_view> options_with_value) const {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") return i + 1 < words.size() ? words[i + 1] : "";
    if (w.size() > 1 && w[0] == '-') {
      if (std::find(options_with_value.begin(), options_with_value.end(), w) !=
          options_with_value.end())
        ++i;  // its value
      continue;
    }
    return w;
  }
  return "";
}

bool Args::contains(std::string_view word) const {
  return std::find(words.begin(), words.end(), word) != words.end();
}

}  // namespace paddock::classifier
