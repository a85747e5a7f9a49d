#include "sandbox/home_view.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>

#include "sandbox/default_paths.hpp"

namespace paddock::sandbox {

using namespace paths;

namespace {

bool is_protected_or_holds_one(const std::string& dir, const std::vector<std::string>& homes) {
  for (const auto& h : homes) {
    if (within(h, dir)) return true;
  }
  return false;
}

// A home in /etc/passwd that is one of the system's own directories (`bin`'s /bin, `sys`'s
// /dev, `daemon`'s /usr/sbin, the `/` of systemd's accounts): never a home to protect or hide.
// Only those directories themselves: a person's home below one (/usr/local/bob) is a home.
bool system_tree(const std::string& home) {
  static constexpr std::string_view kSystem[] = {"/",
                                                 "/bin",
                                                 "/sbin",
                                                 "/usr",
                                                 "/usr/bin",
                                                 "/usr/sbin",
                                                 "/usr/lib",
                                                 "/usr/libexec",
                                                 "/usr/local",
                                                 "/usr/local/bin",
                                                 "/usr/local/sbin",
                                                 "/usr/share",
                                                 "/lib",
                                                 "/lib32",
                                                 "/lib64",
                                                 "/libx32",
                                                 "/etc",
                                                 "/boot",
                                                 "/var",
                                                 "/var/lib",
                                                 "/var/cache",
                                                 "/var/spool",
                                                 "/srv",
                                                 "/opt",
                                                 "/mnt",
                                                 "/media",
                                                 "/run",
                                                 "/tmp",
                                                 "/var/tmp",
                                                 "/nonexistent"};
  if (home.empty()) return true;
  for (auto s : kSystem) {
    if (home == s) return true;
  }
  // Kernel file systems: nothing there is anyone's.
  for (std::string_view s : {"/dev", "/proc", "/sys"}) {
    if (within(home, s)) return true;
  }
  return false;
}

}  // namespace

namespace {

std::vector<PasswdHome> read_passwd_homes(std::FILE* f) {
  std::vector<PasswdHome> out;
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(4096);
  while (true) {
    const int rc = ::fgetpwent_r(f, &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);  // a line longer than the buffer: read again, larger
      continue;
    }
    if (rc != 0 || found == nullptr) break;
    if (pw.pw_dir == nullptr || pw.pw_dir[0] != '/' || system_tree(pw.pw_dir)) continue;
    try {
      Resolved r = resolve_from("/", pw.pw_dir);
      if (r.exists && r.is_dir && !system_tree(r.path)) out.push_back({pw.pw_uid, r.path});
    } catch (const Unresolvable&) {
    }
  }
  return out;
}

}  // namespace

std::vector<PasswdHome> passwd_homes(const char* passwd_file) {
  std::FILE* f = std::fopen(passwd_file, "re");
  if (f == nullptr) return {};
  // Read again only when the file changed (every run asks, several times).
  struct stat st {};
  const bool known = ::fstat(::fileno(f), &st) == 0;
  struct Cached {
    std::string file;
    dev_t dev;
    ino_t ino;
    off_t size;
    timespec mtime;
    std::vector<PasswdHome> homes;
  };
  static std::mutex lock;
  static std::optional<Cached> cache;
  {
    const std::lock_guard<std::mutex> hold(lock);
    if (known && cache && cache->file == passwd_file && cache->dev == st.st_dev &&
        cache->ino == st.st_ino && cache->size == st.st_size &&
        cache->mtime.tv_sec == st.st_mtim.tv_sec && cache->mtime.tv_nsec == st.st_mtim.tv_nsec) {
      std::fclose(f);
      return cache->homes;
    }
  }
  auto homes = read_passwd_homes(f);
  std::fclose(f);
  if (known) {
    const std::lock_guard<std::mutex> hold(lock);
    cache = Cached{passwd_file, st.st_dev, st.st_ino, st.st_size, st.st_mtim, homes};
  }
  return homes;
}

std::vector<Resolved> hidden_home_dirs(const std::vector<std::string>& homes,
                                       const char* passwd_file) {
  std::vector<std::string> spelled = homes;
  spelled.emplace_back("/root");
  spelled.emplace_back("/home");
  // People's homes elsewhere (/srv/alice, /data/home/bob): hidden as /home is. Service
  // accounts' homes (/var/www, /var/lib/postgresql) are their data, read by the tools run
  // there; they are protected when a run is inside one (user_home_around).
  for (const auto& h : passwd_homes(passwd_file)) {
    if (h.uid >= kFirstPersonUid && h.uid < kNobodyUid) spelled.push_back(h.path);
  }
  std::vector<Resolved> out;
  for (const auto& s : spelled) {
    try {
      Resolved r = resolve_from("/", s);
      if (!r.exists || !r.is_dir || r.path == "/") continue;
      out.push_back(std::move(r));
    } catch (const Unresolvable&) {
      // A home we cannot resolve (a symlink loop) has nothing readable through it either.
    }
  }
  return out;
}

std::string user_home_around(const std::string& path, const char* passwd_file) {
  try {
    const Resolved r = resolve_from("/", "/home");
    if (r.exists && r.is_dir && r.path != "/" && below(path, r.path)) {
      const std::size_t end = path.find('/', r.path.size() + 1);
      std::string home = path.substr(0, end);
      if (is_real_directory(home)) return home;
    }
  } catch (const Unresolvable&) {
  }
  // Any account's home outside /home (a service's /var/lib/postgresql, /srv/alice): the
  // innermost one around `path`.
  std::string best;
  for (auto& h : passwd_homes(passwd_file)) {
    if (within(path, h.path) && h.path.size() > best.size()) best = std::move(h.path);
  }
  return best;
}

std::vector<Resolved> readable_home_paths(const std::vector<std::string>& homes) {
  std::vector<Resolved> out;
  for (const std::string& entry : home_readable_paths()) {
    std::vector<std::string> spelled;
    if (entry.starts_with("~/")) {
      for (const auto& h : homes) spelled.push_back(join(h, entry.substr(2)));
    } else {
      spelled.push_back(entry);
    }
    for (const auto& s : spelled) {
      try {
        Resolved r = resolve_from("/", s);
        if (r.exists && r.links.empty()) out.push_back(std::move(r));
      } catch (const Unresolvable&) {
      }
    }
  }
  return out;
}

std::string repository_top_between(const std::string& root, const std::string& hidden,
                                   const std::vector<std::string>& homes) {
  for (std::string dir(parent_of(root)); below(dir, hidden); dir = std::string(parent_of(dir))) {
    struct stat st;
    if (::lstat((dir + "/.git").c_str(), &st) != 0) continue;
    if (is_protected_or_holds_one(dir, homes)) return {};
    return dir;
  }
  return {};
}

}  // namespace paddock::sandbox
