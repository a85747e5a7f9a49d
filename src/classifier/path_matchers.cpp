// The rule table's tests about paths: where a delete, a move, a chmod or a write lands
// (normalised as the kernel reads it), and the devices and system files never to write.
#include <algorithm>
#include <cstring>
#include <optional>

#include "classifier/rule_matchers.hpp"

namespace paddock::classifier {
namespace matchers {

using D = Decision;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// ---- argument tests used by the table ------------------------------------------------------

// GNU getopt takes any unambiguous prefix of a long option (`--rec`, `--recur`).
bool long_option(const Args& a, std::string_view full, std::size_t shortest) {
  for (const auto& w : a.words) {
    if (w == "--") break;
    std::string_view v = w;
    if (const auto eq = v.find('='); eq != std::string_view::npos) v = v.substr(0, eq);
    if (v.size() >= shortest && v.size() <= full.size() && full.substr(0, v.size()) == v)
      return true;
  }
  return false;
}

bool recursive(const Args& a) {
  return a.flag('r') || a.flag('R') || long_option(a, "--recursive", 5);
}

// `{/,}` and `/{etc,usr}`: bash expands braces before rm sees its arguments.
std::vector<std::string> brace_alternatives(const std::string& w) {
  const auto open = w.find('{');
  const auto close = open == std::string::npos ? open : w.find('}', open);
  if (close == std::string::npos || w.find(',', open) > close) return {w};
  std::vector<std::string> out;
  std::size_t from = open + 1;
  while (from <= close) {
    std::size_t comma = w.find(',', from);
    if (comma == std::string::npos || comma > close) comma = close;
    for (auto& tail : brace_alternatives(w.substr(close + 1)))
      out.push_back(w.substr(0, open) + w.substr(from, comma - from) + tail);
    from = comma + 1;
    if (out.size() > 64) break;
  }
  return out;
}

}  // namespace matchers

// What a recursive delete must never reach: the root, a home, the system's own directories,
// an ancestor of the working directory, everything through a glob at their top, or a glob in
// the root itself; each path resolved from every directory the command may run in.
bool catastrophic_target(std::string_view raw, const PathContext* where) {
  using matchers::starts_with;
  static const PathContext unknown{{""}, "", ""};
  const PathContext& at = where != nullptr ? *where : unknown;
  for (const std::string& alt : matchers::brace_alternatives(std::string(raw))) {
    for (std::string t : resolve_path(alt, at)) {
      while (t.size() > 1 && (t.ends_with("/*") || t.ends_with("/.*") || t.ends_with("/."))) {
        t.resize(t.size() - (t.ends_with("/.*") ? 3 : 2));  // everything inside
        if (t.empty()) t = "/";
      }
      if (t.empty()) continue;
      static constexpr std::string_view kExact[] = {
          "/",     "/home",  "/root",  "/etc",    "/usr",     "/var",     "/boot",  "/bin",
          "/sbin", "/lib",   "/lib64", "/opt",    "/dev",     "/proc",    "/sys",   "/srv",
          "/mnt",  "/media", "/Users", "/System", "/Library", "/private", "/lib32", "/libx32",
          "/run",  "/snap",  "~",      "$HOME",   "${HOME}"};
      if (std::find(std::begin(kExact), std::end(kExact), t) != std::end(kExact)) return true;
      if (t[0] == '~' && t.find('/') == std::string::npos) return true;  // ~user, ~+, ~-
      // A relative path from an unknown directory that only climbs: an ancestor of it.
      if (t[0] != '/' && t[0] != '~') {
        bool climbs = starts_with(t, "..");
        for (const auto& part : matchers::brace_alternatives(t))
          climbs &= part.find_first_not_of("./") == std::string::npos;
        if (climbs) return true;
        continue;
      }
      // /home/USER, /Users/USER: a home.
      for (std::string_view homes : {"/home/", "/Users/"}) {
        if (starts_with(t, homes) && t.find('/', homes.size()) == std::string::npos) return true;
      }
      // The home itself and its ancestors; an ancestor of the workspace (the directory the
      // command line starts in; when it is not known, of any directory it may be in). A `cd`
      // further down does not make its parents the workspace's (`cd build && rm -rf *`).
      const auto ancestor_of = [&t](const std::string& p) {
        return !p.empty() &&
               (p == t || (p.size() > t.size() && starts_with(p, t) && p[t.size()] == '/'));
      };
      if (ancestor_of(at.home)) return true;
      if (!at.workdir.empty()) {
        if (at.workdir != t && ancestor_of(at.workdir)) return true;
      } else {
        for (const auto& cwd : at.cwds) {
          if (cwd != t && ancestor_of(cwd)) return true;
        }
      }
      // Directly below a system directory (/usr/lib, /etc/ssh, /var/lib, /boot/efi).
      for (std::string_view root : {"/etc/", "/usr/", "/var/", "/boot/", "/opt/", "/srv/", "/lib/",
                                    "/lib64/", "/bin/", "/sbin/", "/snap/", "/root/"}) {
        if (starts_with(t, root) && t.find('/', root.size()) == std::string::npos) return true;
      }
      // A glob in the first component of an absolute path (`/[a-z]*`, `/e??`, `/**`).
      if (t[0] == '/' && t.find_first_of("*?[", 1) < t.find('/', 1)) return true;
    }
  }
  return false;
}

bool matchers_recursive(const Args& a) { return matchers::recursive(a); }

namespace matchers {

// The file an output option at words[i] names, in every spelling getopt takes: `-o F`,
// `-oF`, a cluster ending in o (`-uo F`), `--output F`, `--output=F` and its prefixes
// (`--out F`, `--outp=F`), and -O/-w for the downloaders.
std::optional<std::string> output_value(const Args& a, std::size_t i) {
  const std::string& w = a.words[i];
  const std::string next = i + 1 < a.words.size() ? a.words[i + 1] : "";
  if (w.size() >= 3 && w.starts_with("--")) {
    const auto eq = w.find('=');
    const std::string name = w.substr(0, eq);
    const bool output = name.size() >= 5 && std::string_view("--output").starts_with(name);
    const bool document =
        name.size() >= 5 && std::string_view("--output-document").starts_with(name);
    if (!output && !document) return std::nullopt;
    return eq == std::string::npos ? next : w.substr(eq + 1);
  }
  if (w.size() < 2 || w[0] != '-') return std::nullopt;
  for (const char letter : {'o', 'O', 'w'}) {
    if ((letter == 'O' || letter == 'w') && a.program != "curl" && a.program != "wget") continue;
    const auto at = w.find(letter, 1);
    if (at == std::string::npos) continue;
    return at + 1 == w.size() ? next : w.substr(at + 1);
  }
  return std::nullopt;
}

// The value of `-t DIR`, `--target-directory=DIR`, `--target-directory DIR` (cp, mv, ln,
// install): the destination, with every positional a source.
std::string target_directory(const Args& a) {
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (w == "--") break;
    if ((w == "-t" || w == "--target-directory") && i + 1 < a.words.size()) return a.words[i + 1];
    if (w.starts_with("--target-directory=")) return w.substr(19);
    if (w.size() > 2 && w[0] == '-' && w[1] != '-' && w.back() == 't' && i + 1 < a.words.size())
      return a.words[i + 1];                                             // -vt DIR
    if (w.size() > 2 && w[0] == '-' && w[1] == 't') return w.substr(2);  // -tDIR
  }
  return "";
}

// Positionals, without the value of an option that takes one (-t DIR, -m MODE, -o OWNER).
std::vector<std::string> operands(const Args& a, std::initializer_list<std::string_view> valued) {
  std::vector<std::string> out;
  bool options = true;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (options && w == "--") {
      options = false;
      continue;
    }
    if (options && std::find(valued.begin(), valued.end(), w) != valued.end()) {
      ++i;
      continue;
    }
    if (options && w.size() > 1 && w[0] == '-') continue;
    out.push_back(w);
  }
  return out;
}

bool rm_catastrophic(const Args& a) {
  if (!recursive(a)) return false;
  const auto targets = a.positionals();
  return std::any_of(targets.begin(), targets.end(),
                     [&a](const std::string& t) { return catastrophic_target(t, a.where); }) ||
         long_option(a, "--no-preserve-root", 6);
}

// mv of the root, a home or a system directory elsewhere: the same as deleting it.
bool mv_catastrophic(const Args& a) {
  const auto p = operands(a, {"-t", "--target-directory", "-S", "--suffix"});
  const bool all_sources = !target_directory(a).empty();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!all_sources && i + 1 == p.size()) break;  // the last is the target
    if (catastrophic_target(p[i], a.where)) return true;
  }
  return false;
}

// tar --remove-files of the root or a home; rsync --delete onto one.
bool archive_or_sync_delete_catastrophic(const Args& a) {
  const auto p = operands(a, {"-f", "--file", "-C", "--directory", "-e", "--rsh", "--exclude"});
  if (a.program == "rsync") {
    const bool deletes = std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
      return w.starts_with("--del") || w == "--remove-source-files";
    });
    if (!deletes || p.empty()) return false;
    if (a.option("--remove-source-files")) {
      for (std::size_t i = 0; i + 1 < p.size(); ++i) {
        if (catastrophic_target(p[i], a.where)) return true;
      }
    }
    return catastrophic_target(p.back(), a.where);
  }
  if (!a.option("--remove-files")) return false;
  return std::any_of(p.begin(), p.end(),
                     [&a](const std::string& t) { return catastrophic_target(t, a.where); });
}

// Disk tools: the ones that only read (fdisk -l, zpool status, nvme list) are not forbidden.
bool disk_change(const Args& a) {
  const std::string sub = a.subcommand();
  if (a.program == "fdisk" || a.program == "sfdisk" || a.program == "parted") {
    return !(a.flag('l') || a.option("--list") || a.option("--dump") || a.option("--json"));
  }
  if (a.program == "zpool" || a.program == "zfs") return sub == "destroy" || sub == "labelclear";
  if (a.program == "mdadm") return a.option("--zero-superblock") || a.option("--create");
  if (a.program == "dmsetup") return sub == "remove_all" || sub == "wipe_table" || sub == "remove";
  if (a.program == "cryptsetup") {
    return sub == "luksFormat" || sub == "erase" || sub == "luksErase" || sub == "reencrypt" ||
           sub == "luksKillSlot";
  }
  if (a.program == "nvme") return sub == "format" || sub == "sanitize" || sub == "write-zeroes";
  if (a.program == "hdparm") {
    return std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
      return starts_with(w, "--security-erase") || starts_with(w, "--trim-sector") ||
             starts_with(w, "--write-sector") || starts_with(w, "--fwdownload");
    });
  }
  if (a.program == "badblocks") return a.flag('w');
  return true;
}

bool power_action(const Args& a) {
  const std::string sub = a.subcommand();
  if (a.program == "init" || a.program == "telinit") return sub == "0" || sub == "6";
  if (a.program == "loginctl" || a.program == "systemctl") {
    return sub == "poweroff" || sub == "reboot" || sub == "halt" || sub == "kexec" ||
           sub == "suspend" || sub == "hibernate" || sub == "soft-reboot";
  }
  return true;
}

// An argument (`of=`, `--output=`, `-o FILE`, or a positional) naming a block device or a
// system file, for the programs that write where they are pointed.
// The index of the last operand of cp, mv, ln, install or rsync: options skipped with the
// values of those that take one.
std::optional<std::size_t> last_operand(const Args& a) {
  static constexpr std::string_view kValued[] = {
      "-S",      "--suffix", "-m",    "--mode", "-o",       "--owner",   "-g",
      "--group", "-e",       "--rsh", "-f",     "--filter", "--exclude", "--include"};
  std::optional<std::size_t> last;
  bool options = true;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (options && w == "--") {
      options = false;
    } else if (options && w.size() > 1 && w[0] == '-') {
      // rsync -f is --filter; cp/mv/ln -f is --force (no value).
      const bool valued =
          std::find(std::begin(kValued), std::end(kValued), w) != std::end(kValued) &&
          !(w == "-f" && a.program != "rsync") && !(w == "-g" && a.program == "rsync") &&
          !(w == "-o" && a.program == "rsync") && !(w == "-e" && a.program != "rsync");
      if (valued) ++i;
    } else {
      last = i;
    }
  }
  return last;
}

// Installed software a container's agent patches in place (/usr/local, site-packages): the
// sandbox keeps it read-only, and changing it is not plainly hostile the way /etc is.
bool installed_software(std::string_view t) {
  return starts_with(t, "/usr/local/") || t.find("/site-packages/") != std::string_view::npos ||
         t.find("/dist-packages/") != std::string_view::npos ||
         t.find("/node_modules/") != std::string_view::npos;
}

namespace {

const char* installed_target(std::string_view raw, const PathContext* where) {
  static const PathContext unknown{{""}, "", ""};
  for (const std::string& norm : resolve_path(raw, where != nullptr ? *where : unknown)) {
    if (installed_software(norm)) return "changes installed software";
  }
  return nullptr;
}

// Whether the command writes a path `target` names (its destination operands, output
// options, extraction directories, in-place edits), as the table's system-write tests.
bool writes_matching(const Args& a, const char* (*target)(std::string_view, const PathContext*));

}  // namespace

bool writes_system_path(const Args& a) { return writes_matching(a, forbidden_redirect_target); }
bool writes_installed_path(const Args& a) { return writes_matching(a, installed_target); }

namespace {

bool writes_matching(const Args& a, const char* (*target)(std::string_view, const PathContext*)) {
  const auto hits = [&a, target](std::string_view w) {
    if (const auto eq = w.find('='); eq != std::string_view::npos) w = w.substr(eq + 1);
    return !w.empty() && target(w, a.where) != nullptr;
  };
  if (const std::string t = target_directory(a); !t.empty() && hits(t + "/x")) return true;
  // Where extracting, unzipping or downloading puts its files.
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    const std::string next = i + 1 < a.words.size() ? a.words[i + 1] : "";
    const bool extracts = a.program != "tar" || a.flag('x') || a.option("--extract") ||
                          (!a.words.empty() && a.words[0].find('x') != std::string::npos &&
                           !a.words[0].starts_with("-"));
    std::string dir;
    if (a.program == "tar" && extracts && (w == "-C" || w == "--directory")) dir = next;
    if (a.program == "tar" && extracts && w.starts_with("--directory=")) dir = w.substr(12);
    if (a.program == "unzip" && w == "-d") dir = next;
    if (a.program == "wget" && (w == "-P" || w == "--directory-prefix")) dir = next;
    if (a.program == "wget" && w.starts_with("--directory-prefix=")) dir = w.substr(19);
    if (a.program == "curl" && w == "--output-dir") dir = next;
    if (!dir.empty() && (hits(dir) || hits(dir + "/x"))) return true;
  }
  if (a.program == "tar" && (a.flag('x') || a.option("--extract")) && !a.contains("-C") &&
      !a.option("--directory") && hits("./x"))
    return true;  // extracted into a system directory the script cd'd to
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    // Reading programs name such paths as sources: only their output counts.
    const bool reader = a.program == "sort" || a.program == "uniq" || a.program == "tree" ||
                        a.program == "git" || a.program == "gcc" || a.program == "g++" ||
                        a.program == "cc" || a.program == "clang" || a.program == "tar" ||
                        a.program == "curl" || a.program == "wget" || a.program == "sed" ||
                        a.program == "perl";
    // sed -i and perl -i rewrite the files they are given.
    const bool in_place =
        (a.program == "sed" || a.program == "perl") && (a.flag('i') || a.option("--in-place"));
    if (in_place && !starts_with(w, "-") && hits(w)) return true;
    if (reader) {
      if (const auto out = output_value(a, i); out && hits(*out)) return true;
      if (a.program == "uniq" && i + 1 == a.words.size() && a.positionals().size() == 2 && hits(w))
        return true;
      continue;
    }
    if (a.program == "cp" || a.program == "mv" || a.program == "ln" || a.program == "install" ||
        a.program == "rsync") {
      // The destination: the last operand, wherever options stand (`cp x /etc/y -f`).
      if (i + 1 == a.words.size() && hits(w)) return true;
      if (const auto d = last_operand(a); d && i == *d && hits(w)) return true;
      continue;
    }
    if (a.program == "dd") {
      if (starts_with(w, "of=") && hits(w)) return true;
      continue;
    }
    if (a.program == "xxd") {  // xxd [-r] INFILE OUTFILE writes OUTFILE
      if (i + 1 == a.words.size() && a.positionals().size() == 2 && hits(w)) return true;
      continue;
    }
    if (!starts_with(w, "-") && hits(w)) return true;  // tee, truncate, touch, shred
  }
  return false;
}

}  // namespace

// chmod -R 000 /, chown -R nobody ~: the whole tree made unusable.
bool permissions_catastrophic(const Args& a) {
  if (!recursive(a)) return false;
  const auto p = a.positionals();
  const bool reference = long_option(a, "--reference", 5);
  for (std::size_t i = reference ? 0 : 1; i < p.size(); ++i) {
    if (catastrophic_target(p[i], a.where)) return true;
  }
  return false;
}

// Everything in the working directory (`rm -rf *`, `rm -rf .`): the workspace itself.
bool rm_workdir(const Args& a) {
  if (!recursive(a)) return false;
  for (const auto& t : a.positionals()) {
    if (t == "." || t == "./" || t == "*" || t == ".*" || t == "./*") return true;
  }
  return false;
}

// `find / -delete`, `find -L ~ -delete`; `find ~ -exec rm ...` is caught through -exec.
bool find_delete_catastrophic(const Args& a) {
  if (!a.contains("-delete")) return false;
  bool any = false;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (w == "-H" || w == "-L" || w == "-P" || w == "--" || w.starts_with("-O"))
      continue;  // before the paths
    if (w == "-D" && i + 1 < a.words.size()) {
      ++i;
      continue;
    }
    if (w.starts_with("-") || w == "(" || w == "!") break;  // the expression
    any = true;
    if (catastrophic_target(w, a.where)) return true;
  }
  return !any && catastrophic_target(".", a.where);  // no path: the working directory
}

bool rm_git_dir(const Args& a) {
  if (!recursive(a)) return false;
  for (const auto& t : a.positionals()) {
    std::string_view v = t;
    while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
    if (v == ".git" || v.ends_with("/.git")) return true;
  }
  return false;
}

bool rm_dynamic_recursive(const Args& a) {
  if (!recursive(a)) return false;
  for (std::size_t i = 0; i < a.words.size(); ++i) {
    if (a.dynamic[i]) return true;
  }
  return false;
}

bool dd_to_device(const Args& a) {
  return std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
    return starts_with(w, "of=/dev/") && w != "of=/dev/null" && w != "of=/dev/zero" &&
           w != "of=/dev/stdout" && w != "of=/dev/stderr";
  });
}

// A mode that lets everyone write: octal with the others' write bit (777, 1777, 00666, 757),
// or symbolic o/a given w (a=rwx, o+rwx, u=rwx,g=rwx,o=rwx, +w).
bool mode_world_writable(const std::string& m);

bool chmod_world_writable(const Args& a) {
  for (const auto& w : a.words) {
    if (!w.starts_with("--reference")) continue;
    const auto eq = w.find('=');
    const std::string ref = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (ref == "/tmp" || ref == "/var/tmp" || ref == "/dev/shm" || ref == "/tmp/" ||
        ref == "/dev/null" || ref == "/run/lock")
      return true;  // modes everyone may write
  }
  if (a.program == "install" || a.program == "mkdir" || a.program == "mkfifo") {
    for (std::size_t i = 0; i < a.words.size(); ++i) {
      const std::string& w = a.words[i];
      if ((w == "-m" || w == "--mode") && i + 1 < a.words.size() &&
          mode_world_writable(a.words[i + 1]))
        return true;
      if (w.starts_with("--mode=") && mode_world_writable(w.substr(7))) return true;
      if (w.starts_with("-m") && w.size() > 2 && mode_world_writable(w.substr(2))) return true;
    }
    return false;
  }
  const auto p = a.positionals();
  if (p.empty()) return false;
  return mode_world_writable(p[0]);
}

bool mode_world_writable(const std::string& m) {
  if (!m.empty() && m.find_first_not_of("01234567") == std::string::npos) {
    const int others = m.back() - '0';
    return (others & 2) != 0;
  }
  std::size_t start = 0;
  while (start <= m.size()) {
    std::size_t end = m.find(',', start);
    if (end == std::string::npos) end = m.size();
    const std::string clause = m.substr(start, end - start);
    const auto op = clause.find_first_of("+=");
    if (op != std::string::npos && clause.find('w', op) != std::string::npos) {
      const std::string who = clause.substr(0, op);
      if (who.empty() || who.find_first_of("oa") != std::string::npos) return true;
    }
    start = end + 1;
  }
  return false;
}

// Octal with 04000/02000 set (4755, 04755, 06755, 2755), or symbolic s (u+s, g+s, u=rwxs);
// for install, the -m/--mode value.
bool mode_sets_id(const std::string& m) {
  if (!m.empty() && m.find_first_not_of("01234567") == std::string::npos) {
    return (std::stoul(m.size() > 8 ? m.substr(m.size() - 8) : m, nullptr, 8) & 06000) != 0;
  }
  const auto op = m.find_first_of("+=");
  return op != std::string::npos && m.find('s', op) != std::string::npos;
}

bool chmod_setuid(const Args& a) {
  if (a.program == "install") {
    for (std::size_t i = 0; i < a.words.size(); ++i) {
      const std::string& w = a.words[i];
      if ((w == "-m" || w == "--mode") && i + 1 < a.words.size() && mode_sets_id(a.words[i + 1]))
        return true;
      if (w.starts_with("--mode=") && mode_sets_id(w.substr(7))) return true;
      if (w.starts_with("-m") && w.size() > 2 && mode_sets_id(w.substr(2))) return true;
    }
    return false;
  }
  const auto p = a.positionals();
  return !p.empty() && mode_sets_id(p[0]);
}

// nc/ncat/socat handing a shell to a connection.
bool network_shell(const Args& a) {
  if (a.program == "socat") {
    return std::any_of(a.words.begin(), a.words.end(), [](const std::string& w) {
      std::string low;  // socat's address keywords are case-insensitive
      for (char c : w) low += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      return low.find("exec:") != std::string::npos || low.find("system:") != std::string::npos;
    });
  }
  return a.flag('e') || a.flag('c') || a.option("--exec") || a.option("--sh-exec") ||
         a.option("--lua-exec");
}

}  // namespace matchers

using matchers::starts_with;

const char* forbidden_system_target(std::string_view t);

const char* forbidden_redirect_target(std::string_view raw, const PathContext* where) {
  static const PathContext unknown{{""}, "", ""};
  for (const std::string& norm : resolve_path(raw, where != nullptr ? *where : unknown)) {
    if (const char* why = forbidden_system_target(norm)) return why;
  }
  return nullptr;
}

const char* forbidden_system_target(std::string_view t) {
  if (t == "/proc/sysrq-trigger") return "writes the kernel's SysRq trigger (reboot, crash)";
  // A system directory itself, as a destination (`cp x /etc/`, `tar -C /usr`, `unzip -d /`).
  for (std::string_view dir : {"/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot",
                               "/usr/bin", "/usr/sbin", "/usr/lib"}) {
    if (t == dir) return "writes into a system directory";
  }
  static constexpr std::string_view kDevices[] = {
      "/dev/sd",      "/dev/hd",   "/dev/vd",   "/dev/xvd",   "/dev/nvme",   "/dev/mmcblk",
      "/dev/mem",     "/dev/kmem", "/dev/port", "/dev/disk/", "/dev/dm-",    "/dev/md",
      "/dev/mapper/", "/dev/root", "/dev/loop", "/dev/nbd",   "/dev/block/", "/dev/sr",
      "/dev/vg",      "/dev/rbd",  "/dev/zd",   "/dev/ubd",   "/dev/bcache"};
  for (auto p : kDevices) {
    if (starts_with(t, p)) return "writes a block device or kernel memory";
  }
  if (matchers::installed_software(t)) return nullptr;  // installed-files (contained)
  static constexpr std::string_view kSystem[] = {"/etc/",      "/boot/",         "/usr/",   "/bin/",
                                                 "/sbin/",     "/lib/",          "/lib64/", "/sys/",
                                                 "/proc/sys/", "/var/spool/cron"};
  for (auto p : kSystem) {
    if (starts_with(t, p)) return "writes a system file";
  }
  return nullptr;
}

}  // namespace paddock::classifier
