#include "sandbox/path_policy.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "paddock/errors.hpp"
#include "sandbox/git_dir.hpp"
#include "sandbox/git_state.hpp"
#include "sandbox/home_view.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/root_guard.hpp"

namespace paddock::sandbox {
namespace {

using namespace paths;  // path_resolution.hpp: resolve_from, GlobWalk, helpers

constexpr const char* kPolicy = "policy";
constexpr const char* kCredential = "default credential";
constexpr const char* kMandatory = "mandatory read-only";
constexpr const char* kWorkingDirectory = "working directory";
constexpr const char* kStartup = "home start-up";
constexpr const char* kHomeReadable = "readable in a hidden home";

// The command's context: canonical cwd and home, the bases relative entries resolve from.
struct Context {
  Resolved cwd;
  std::string home_spelled;  // as given (or from passwd); empty when unknown
  Resolved home;
};

// One entry expanded to the paths it names now. A literal entry names one path (which may not
// exist); a glob names what it matches (maybe nothing). `follow_matched_links`: a glob match
// that is itself a symlink counts as its target (deny rules: the command reads through it) or
// is skipped (allow rules: the command may have planted it).
std::vector<Resolved> expand(const std::string& entry, const Context& ctx, const Where& w,
                             bool follow_matched_links, std::string* pattern_out = nullptr) {
  if (entry.empty()) invalid(w, "empty path");
  if (entry.find('\0') != std::string::npos) invalid(w, "path contains a NUL byte");
  // `base` is a canonical directory relative entries start from; empty for absolute ones.
  std::string_view base;
  std::string_view rest = entry;
  std::string spelled;
  if (entry[0] == '~') {
    if (entry.size() > 1 && entry[1] != '/') {
      invalid(w, "only ~ and ~/ are expanded (not ~user); write the path out");
    }
    if (ctx.home_spelled.empty()) invalid(w, "cannot expand ~: $HOME is unknown");
    rest.remove_prefix(1);
    if (ctx.home.exists && ctx.home.is_dir) {
      base = ctx.home.path;
      while (rest.starts_with('/')) rest.remove_prefix(1);
    } else {
      spelled = ctx.home_spelled + std::string(rest);
      rest = spelled;
    }
  } else if (entry[0] != '/') {
    base = ctx.cwd.path;
  }
  if (!is_glob(rest)) {  // the usual case: no glob (escaped glob characters are plain)
    try {
      return {resolve_from(base.empty() ? "/" : base, unescape_glob(rest))};
    } catch (const Unresolvable& e) {
      invalid(w, e.what());
    }
  }

  auto comps = components(rest);
  std::size_t first_glob = comps.size();
  for (std::size_t i = 0; i < comps.size(); ++i) {
    const std::string& c = comps[i];
    if (c.find("**") != std::string::npos && c != "**") {
      invalid(w, "'**' must be a whole path component (as in a/**/b), not part of '" + c + "'");
    }
    if (first_glob == comps.size() && is_glob(c)) first_glob = i;
    if (i > first_glob && c == "..") invalid(w, "'..' after a wildcard is not supported");
  }
  // A trailing `**` means the directory and everything below it: the directory itself covers
  // that (srt strips it too). Repeated `**` collapse.
  while (!comps.empty() && (comps.back() == "**" || comps.back() == ".") &&
         first_glob < comps.size()) {
    comps.pop_back();
  }
  comps.erase(std::unique(comps.begin(), comps.end(),
                          [](const std::string& a, const std::string& b) {
                            return a == "**" && b == "**";
                          }),
              comps.end());
  first_glob = std::min(first_glob, comps.size());
  std::string prefix;  // relative to base (or to `/`)
  for (std::size_t i = 0; i < first_glob; ++i) {
    if (!prefix.empty()) prefix += '/';
    prefix += unescape_glob(comps[i]);
  }

  Resolved start;
  try {
    start = resolve_from(base.empty() ? "/" : base, prefix);
  } catch (const Unresolvable& e) {
    invalid(w, e.what());
  }
  if (first_glob == comps.size()) return {std::move(start)};

  if (pseudo_fs(start.path)) {
    invalid(w, "wildcards are not expanded under /proc or /sys");
  }
  std::vector<Resolved> out;
  std::vector<std::string> pattern(comps.begin() + static_cast<std::ptrdiff_t>(first_glob),
                                   comps.end());
  std::erase(pattern, ".");
  if (pattern_out != nullptr) {  // absolute: the canonical prefix, escaped, then the pattern
    *pattern_out = escape_glob(start.path);
    for (const auto& c : pattern) *pattern_out += "/" + c;
  }
  if (!start.exists || !start.is_dir) return out;
  GlobWalk walk(pattern, w);
  walk.run(start.path, 0);
  std::set<std::string> seen;
  for (auto& m : walk.matches) {
    if (!seen.insert(m.path).second) continue;
    Resolved r;
    if (m.is_link) {
      if (!follow_matched_links) continue;
      try {
        r = resolve_from("/", m.path);
      } catch (const Unresolvable& e) {
        invalid(w, e.what());
      }
    } else {
      r.path = std::move(m.path);
      r.exists = true;
      r.is_dir = m.is_dir;
    }
    r.links.insert(r.links.begin(), start.links.begin(), start.links.end());
    out.push_back(std::move(r));
  }
  // A name that merely looks like a pattern (Next.js's `app/[id]`) still means itself.
  try {
    Resolved literal = resolve_from(base.empty() ? "/" : base, unescape_glob(rest));
    if (literal.exists && seen.insert(literal.path).second) out.push_back(std::move(literal));
  } catch (const Unresolvable&) {
    // Only a pattern, then.
  }
  return out;
}

// The mount layer owns these; a rule on exactly one of them would replace the whole tree.
void refuse_special(const std::string& path, const Where& w) {
  for (const char* p : {"/", "/proc", "/dev", "/sys"}) {
    if (path == p) {
      invalid(w, std::string("resolves to ") + p +
                     ", which cannot carry a rule (the sandbox sets up / /proc /dev /sys "
                     "itself); name something more specific");
    }
  }
}

// A writable root below the trees the sandbox builds itself would attach the host's version
// writable over ours: `--cwd /dev/pts` the host's devpts over the private one, `/sys/fs/cgroup`
// the host's cgroup tmpfs, `/dev/shm` the host's shared memory.
void refuse_pseudo_root(const std::string& path, const Where& w) {
  for (const char* p : {"/proc", "/dev", "/sys"}) {
    if (within(path, p)) {
      invalid(w, std::string("lies in ") + p +
                     ", which the sandbox builds itself; it cannot be a writable root");
    }
  }
  // What the host executes or loads from on every start-up (profile.d, bash.bashrc, cron.d,
  // ld.so.preload, the binaries and libraries themselves): a root supervisor's command would
  // write them for real. The home's start-up files get the same care (default_paths.cpp).
  for (const char* p : {"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                        "/boot", "/var/spool/cron"}) {
    if (within(path, p)) {
      invalid(w, std::string("lies in ") + p +
                     ", which the host executes or loads from at start-up; it cannot be a "
                     "writable root");
    }
  }
}

// State of a path as the rules leave it; the host's default is readable, not writable.
struct State {
  bool readable = true;
  bool writable = false;
  bool operator==(const State&) const = default;
};

// Everything asked for at one path, before precedence is applied.
struct Wanted {
  bool deny_read = false;
  bool allow_read = false;
  bool read_only = false;
  bool writable = false;
  bool is_dir = false;
  // Every allowRead here reached the path through a symlink (`/tmp/x -> ~/.ssh`, `~/notes ->
  // .ssh`): whoever could write where the link sits chose the target, so such an allow may
  // show what is readable anyway (attach it under a private /tmp) but never re-open a denied
  // path. Holds the error for when it would.
  bool allow_read_direct = false;
  std::string allow_through_link;
  const char* origin_deny = nullptr;
  const char* origin_allow = nullptr;
  const char* origin_ro = nullptr;
  const char* origin_write = nullptr;
};

class RuleSet {
 public:
  // A directory the sandbox replaces with a private one of its own (/tmp, /var/tmp): the
  // host's tree below it is not there unless a rule attaches it back, so an allowRead below it
  // is a real rule, not a no-op (the mount plan attaches it into the private directory,
  // read-only). Denials and read-only rules are still judged against the host's tree: a
  // working directory or program the plan shows there later must keep them (a denyRead inside
  // a read-only cwd under /tmp, the default credential denies of a HOME under /tmp).
  void start_hidden(const std::string& path) { hidden_roots_.insert(path); }

  // An allowRead reached through a symlink (see Wanted).
  void add_allow_through_link(const Resolved& r, const char* origin, std::string error) {
    add(r, PathAccess::allow_read, origin, false);
    Wanted& wt = wanted_[r.path];
    if (wt.allow_through_link.empty()) wt.allow_through_link = std::move(error);
  }

  void add(const Resolved& r, PathAccess access, const char* origin, bool direct = true) {
    Wanted& wt = wanted_[r.path];
    wt.is_dir = r.is_dir;
    auto set = [&](bool& flag, const char*& o) {
      flag = true;
      if (o == nullptr) o = origin;
    };
    switch (access) {
      case PathAccess::deny_read:
        set(wt.deny_read, wt.origin_deny);
        break;
      case PathAccess::allow_read:
        set(wt.allow_read, wt.origin_allow);
        if (direct) wt.allow_read_direct = true;
        break;
      case PathAccess::read_only:
        set(wt.read_only, wt.origin_ro);
        break;
      case PathAccess::writable:
        set(wt.writable, wt.origin_write);
        break;
    }
  }

  // A protected path that does not exist yet.
  void protect_missing(const Resolved& r) {
    if (r.creatable) missing_.push_back(r.path);
  }
  // A path the policy names in denyWrite that does not exist yet: made unwritable inside the
  // sandbox too where a copy-on-write layer can hold a stand-in for it (mount_plan.cpp).
  void deny_write_missing(const Resolved& r) {
    if (r.creatable) named_missing_.push_back(r.path);
  }

  // A read_only, existing or not, for a protected path.
  void protect(const Resolved& r, const char* origin) {
    // Inside a writable root, a directory we cannot search was made so by someone who owns it
    // (a previous command's chmod 000 .git): what is behind it cannot be checked, so refuse
    // rather than treat it as absent.
    if (r.unsearchable) {
      throw Unresolvable(r.path +
                         ": a parent directory cannot be searched (permission denied); "
                         "restore its permissions");
    }
    if (r.exists) {
      add(r, PathAccess::read_only, origin);
    } else {
      protect_missing(r);
    }
    // The host will reach the protected path through the same links (`.bashrc ->
    // dotfiles/bashrc`, `.git -> ../store/repo.git`): replacing one would point the host at
    // a file the command wrote, so each link is pinned as it is.
    links_.insert(links_.end(), r.links.begin(), r.links.end());
  }

  ResolvedFilesystem build() {
    std::vector<std::string> order;
    order.reserve(wanted_.size());
    for (const auto& [path, wt] : wanted_) order.push_back(path);
    std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
      return depth(a) < depth(b);
    });  // the map already sorted them by path

    ResolvedFilesystem out;
    for (const std::string& path : order) {
      const Wanted& wt = wanted_[path];
      const State before = inherited(path);
      // deny_write wins over allow_write, at the same path and from above; a writable entry
      // that loses still makes its path readable (allow_write implies read).
      const bool write = wt.writable && !read_only_at_or_above(path);
      const bool allow = wt.allow_read || (wt.writable && !write);
      State after = before;
      if (wt.allow_read && !wt.allow_read_direct && !wt.writable &&
          (wt.deny_read || !before.readable)) {
        throw Error(errc::config_invalid, wt.allow_through_link);
      }
      if (wt.deny_read && !allow && !write) after = {false, false};
      if (allow && !after.readable) after = {true, false};
      if (write) after = {true, true};
      if (wt.read_only) after.writable = false;
      // Readable on the host but hidden by a private /tmp: the allowRead attaches it.
      const bool expose = allow && !write && after.readable && hidden_before(path);
      if (after == before && !expose) continue;  // a no-op costs a mount and says nothing

      PathAccess access;
      const char* origin;
      if (!after.readable) {
        access = PathAccess::deny_read;
        origin = wt.origin_deny;
      } else if (after.writable) {
        access = PathAccess::writable;
        origin = wt.origin_write;
        out.writable_roots.push_back(path);
      } else if (before.readable && !expose) {
        access = PathAccess::read_only;
        origin = wt.origin_ro != nullptr ? wt.origin_ro : wt.origin_write;
      } else {
        access = PathAccess::allow_read;
        origin = wt.origin_allow != nullptr   ? wt.origin_allow
                 : wt.origin_write != nullptr ? wt.origin_write
                                              : wt.origin_ro;
      }
      kept_[path] = after;
      if (after.readable) attached_.insert(path);  // below it, the host's tree is shown
      out.rules.push_back({path, access, true, wt.is_dir, origin});
    }

    for (const std::string& path : missing_) {
      if (inherited(path) == State{true, true}) out.protected_missing.push_back(path);
    }
    for (const std::string& path : named_missing_) {
      if (inherited(path) == State{true, true}) out.deny_write_missing.push_back(path);
    }
    std::sort(out.deny_write_missing.begin(), out.deny_write_missing.end());
    out.deny_write_missing.erase(
        std::unique(out.deny_write_missing.begin(), out.deny_write_missing.end()),
        out.deny_write_missing.end());
    for (const std::string& link : links_) {
      if (inherited(link).writable) out.protected_links.push_back(link);
    }
    std::sort(out.protected_links.begin(), out.protected_links.end());
    out.protected_links.erase(std::unique(out.protected_links.begin(), out.protected_links.end()),
                              out.protected_links.end());
    std::sort(out.protected_missing.begin(), out.protected_missing.end());
    out.protected_missing.erase(
        std::unique(out.protected_missing.begin(), out.protected_missing.end()),
        out.protected_missing.end());
    return out;
  }

 private:
  // The state the nearest kept ancestor rule leaves.
  State inherited(std::string_view path) const {
    while (path != "/") {
      path = parent_of(path);
      auto it = kept_.find(path);
      if (it != kept_.end()) return it->second;
    }
    return {};
  }

  // Below a private directory and not attached back by a rule above it (the private
  // directory itself is ours, never the host's, whatever a rule on it says).
  bool hidden_before(std::string_view path) const {
    while (path != "/") {
      path = parent_of(path);
      if (attached_.find(path) != attached_.end() && hidden_roots_.count(std::string(path)) == 0) {
        return false;
      }
      if (hidden_roots_.count(std::string(path)) != 0) return true;
    }
    return false;
  }

  bool read_only_at_or_above(std::string_view path) const {
    while (true) {
      auto it = wanted_.find(path);
      if (it != wanted_.end() && it->second.read_only) return true;
      if (path == "/") return false;
      path = parent_of(path);
    }
  }

  std::map<std::string, Wanted, std::less<>> wanted_;
  std::map<std::string, State, std::less<>> kept_;
  std::set<std::string, std::less<>> hidden_roots_, attached_;
  std::vector<std::string> missing_;
  std::vector<std::string> named_missing_;  // of missing_, those the policy's denyWrite names
  std::vector<std::string> links_;
};

// The effective user's home from the passwd entry, looked up once per thread and uid (an NSS
// lookup reads files, and this runs for every command).
const std::string& passwd_home() {
  thread_local uid_t cached_uid = static_cast<uid_t>(-1);
  thread_local std::string cached;
  if (cached_uid == ::geteuid()) return cached;
  cached_uid = ::geteuid();
  cached.clear();
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (::getpwuid_r(cached_uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr && found->pw_dir[0] == '/') {
    cached = found->pw_dir;
  }
  return cached;
}

// A writable root candidate and how it was reached.
struct WriteRoot {
  Resolved target;
  Where where;
  const char* origin;
};

// An allow rule must not reach outside a writable root through a symlink inside it: the
// command could have planted that link on an earlier run (`ln -s /etc build`, then
// allowWrite ./build). Links outside every writable root are the host's own and fine, and so
// are links that stay inside a root that was itself reached without such a link.
void check_links(const Resolved& t, const Where& w, const std::vector<WriteRoot>& roots,
                 const std::vector<std::string>& trusted) {
  for (const std::string& link : t.links) {
    const std::string* inside = nullptr;
    for (const auto& r : roots) {
      if (link != r.target.path && within(link, r.target.path)) inside = &r.target.path;
    }
    if (inside == nullptr) continue;
    bool contained = std::any_of(trusted.begin(), trusted.end(), [&](const std::string& root) {
      return within(link, root) && within(t.path, root);
    });
    if (!contained) {
      invalid(w, "resolves through the symlink " + link + " inside the writable root " + *inside +
                     " to " + t.path +
                     ", outside it; a sandboxed command could have planted that link, so name "
                     "the target directly");
    }
  }
}

// A built-in entry resolved for one command.
struct DefaultPath {
  Resolved target;
  PathAccess access;
  const char* origin;
  const char* why;  // for a refused writable root inside it
};

// The built-in lists for one command: credentials (hidden) and the homes' start-up files
// (read-only), `~/` entries once per protected home. Only what can matter is kept: a hidden
// credential, or a path related to one of the writable `roots` (inside one: a rule or a
// watched missing path; containing one: the root is refused). Most entries are neither, and
// this runs for every command.
std::vector<DefaultPath> expand_defaults(const Context& ctx, const std::vector<Context>& homes,
                                         const std::vector<std::string>& roots) {
  std::vector<DefaultPath> out;
  Listings listings;
  auto keep = [&](Resolved&& t, PathAccess access, const char* origin, const char* why) {
    bool matters = (t.exists && access == PathAccess::deny_read) ||
                   std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
                     return within(t.path, r) || (t.exists && within(r, t.path));
                   });
    if (matters) out.push_back({std::move(t), access, origin, why});
  };
  auto add = [&](const std::vector<std::string>& list, PathAccess access, const char* origin,
                 const char* field, const char* why) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      Where w = {field, i, list[i]};
      if (!list[i].starts_with("~/")) {
        for (auto& t : expand(list[i], ctx, w, true)) keep(std::move(t), access, origin, why);
        continue;
      }
      const std::string_view rest = std::string_view(list[i]).substr(2);
      for (std::size_t h = 0; h < homes.size(); ++h) {
        const Resolved& home = homes[h].home;
        if (home.exists && !is_glob(rest) && listings.certainly_missing(home.path, rest)) {
          // What resolve_from would say after one failed lstat: missing, creatable.
          Resolved r;
          r.path = join(home.path, rest);
          r.creatable = true;
          keep(std::move(r), access, origin, why);
          continue;
        }
        for (auto& t : expand(list[i], homes[h], w, true)) keep(std::move(t), access, origin, why);
      }
    }
  };
  add(default_credential_paths(), PathAccess::deny_read, kCredential, "defaultDenies (credentials)",
      "a default credential (unreadable in every sandbox)");
  add(home_startup_paths(), PathAccess::read_only, kStartup, "defaultDenies (home start-up files)",
      "a home's start-up file or program directory (read-only wherever it is writable)");
  return out;
}

}  // namespace

const char* to_string(PathAccess a) noexcept {
  switch (a) {
    case PathAccess::deny_read:
      return "deny_read";
    case PathAccess::allow_read:
      return "allow_read";
    case PathAccess::read_only:
      return "read_only";
    case PathAccess::writable:
      return "writable";
  }
  return "?";
}

CanonicalPath canonicalize(std::string_view path) {
  if (!path.starts_with('/')) {
    throw Error(errc::config_invalid, std::string(path) + ": not an absolute path");
  }
  try {
    Resolved r = resolve_from("/", path);
    return {std::move(r.path), r.exists, r.is_dir};
  } catch (const Unresolvable& e) {
    throw Error(errc::config_invalid, std::string(path) + ": " + e.what());
  }
}

ResolvedFilesystem resolve_filesystem(const FilesystemPolicy& policy, const std::string& cwd,
                                      const std::string& home) {
  if (cwd.empty() || cwd.front() != '/' || cwd.find('\0') != std::string::npos) {
    throw Error(errc::config_invalid, "cwd: '" + cwd + "': must be an absolute path");
  }
  const std::string& spelled = !policy.home.empty() ? policy.home
                               : !home.empty()      ? home
                                                    : passwd_home();
  if (!spelled.empty() && (spelled.front() != '/' || spelled.find('\0') != std::string::npos)) {
    throw Error(errc::config_invalid, "home: '" + spelled + "': must be an absolute path");
  }
  Context ctx;
  std::vector<Context> homes;  // one per protected home; `~` of each means that home
  try {
    ctx.cwd = resolve_from("/", cwd);
    // `/` is no home (it is what HOME becomes when unset): `~/bin` would name /bin. The
    // passwd entry stands in.
    for (const std::string* h : {&spelled, &passwd_home()}) {
      if (h->empty()) continue;
      Context c = ctx;
      c.home_spelled = *h;
      c.home = resolve_from("/", *h);
      if (c.home.path == "/") continue;
      if (homes.empty() || c.home.path != homes.front().home.path) homes.push_back(std::move(c));
    }
  } catch (const Unresolvable& e) {
    throw Error(errc::config_invalid, std::string("cwd or home: ") + e.what());
  }

  if (!homes.empty()) ctx = homes.front();  // what `~` means in the policy's own entries

  // Writable roots first: the symlink check of every allow rule needs all of them.
  std::vector<WriteRoot> roots;
  if (policy.allow_write_cwd && ctx.cwd.exists && ctx.cwd.is_dir) {
    Where w{"cwd (the working directory is writable: allowWriteCwd)", std::string::npos, cwd};
    refuse_special(ctx.cwd.path, w);
    refuse_pseudo_root(ctx.cwd.path, w);
    roots.push_back({ctx.cwd, w, kWorkingDirectory});
    roots.back().target.links.clear();  // the caller chose the cwd
  }
  for (std::size_t i = 0; i < policy.allow_write.size(); ++i) {
    Where w = {"filesystem.allowWrite", i, policy.allow_write[i]};
    for (auto& t : expand(policy.allow_write[i], ctx, w, false)) {
      if (!t.exists) continue;  // nothing to bind; the command cannot create it either
      refuse_special(t.path, w);
      refuse_pseudo_root(t.path, w);
      roots.push_back({std::move(t), w, kPolicy});
    }
  }
  // Another user's home around the working directory or a writable root (root's run in
  // /home/bob/proj) is protected as the user's own is: its credentials hidden, its start-up
  // files read-only, a repository at its top never shown whole. `~` keeps meaning ours.
  const std::size_t own_homes = homes.size();
  std::vector<std::string> around = {ctx.cwd.path};
  for (const auto& r : roots) around.push_back(r.target.path);
  for (const auto& p : around) {
    const std::string other = user_home_around(p);
    if (other.empty() || std::any_of(homes.begin(), homes.end(),
                                     [&](const Context& h) { return h.home.path == other; })) {
      continue;
    }
    try {
      Context c = ctx;
      c.home_spelled = other;
      c.home = resolve_from("/", other);
      homes.push_back(std::move(c));
    } catch (const Unresolvable&) {
    }
  }
  // Each writable directory opened once; from here on, everything below one is looked at
  // through its descriptor (root_views.hpp), not through the names above it.
  auto views = std::make_shared<RootViews>();
  std::vector<std::string> root_dirs;
  for (const auto& r : roots) {
    if (r.target.is_dir) root_dirs.push_back(r.target.path);
  }
  views->add_all(std::move(root_dirs));  // outer roots first
  const RootViews::Active through_roots(views.get());
  std::vector<std::string> root_paths;
  for (const auto& r : roots) root_paths.push_back(r.target.path);
  std::vector<DefaultPath> defaults;
  if (policy.default_denies) defaults = expand_defaults(ctx, homes, root_paths);
  std::vector<std::string> home_paths;
  for (const auto& h : homes) home_paths.push_back(h.home.path);
  std::vector<std::string> out_homes = home_paths;
  RootGuard guard(std::move(home_paths), policy.allow_write_home, policy.default_denies);
  for (const auto& d : defaults) {
    if (d.target.exists) guard.add(d.target.path, d.why);
  }
  for (const auto& r : roots) guard.check(r.target.path, r.where);
  std::vector<std::string> trusted;
  for (const auto& r : roots) {
    bool clean = std::none_of(r.target.links.begin(), r.target.links.end(), [&](const auto& l) {
      return std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& o) {
        return l != o.target.path && within(l, o.target.path);
      });
    });
    if (clean) trusted.push_back(r.target.path);
  }

  RuleSet rules;
  // The host's directories the policy attaches at /tmp or /var/tmp itself (a working directory
  // of /tmp, `allowWrite: /var/tmp`, `allowRead: /tmp`): those are not private (below).
  std::set<std::string> attached_tmp;
  for (const auto& r : roots) attached_tmp.insert(r.target.path);
  GitState git;
  for (const auto& r : roots) {
    check_links(r.target, r.where, roots, trusted);
    // As for the working directory: a link on the way that leads out of the directory it
    // sits in may have been planted by another sandbox writing there (`cache -> ~`), even
    // where this run's own roots do not reach. Judged on this resolution's own result.
    for (const std::string& link : r.target.links) {
      if (!within(r.target.path, parent_of(link))) {
        invalid(r.where, "resolves through the symlink " + link + " to " + r.target.path +
                             ", outside the directory the link sits in; a sandboxed command "
                             "could have planted that link, so name the target directly");
      }
    }
    rules.add(r.target, PathAccess::writable, r.origin);
  }
  // The directories a command sees nothing of unless a rule attaches a path back: the private
  // /tmp and /var/tmp, and (hide_home) the homes.
  std::vector<std::string> covered;
  if (policy.private_tmp) {
    for (const char* tmp : {"/tmp", "/var/tmp"}) covered.emplace_back(tmp);
  }
  std::vector<Resolved> hidden_homes;
  if (policy.hide_home) hidden_homes = hidden_home_dirs(out_homes);
  for (const auto& h : hidden_homes) covered.push_back(h.path);
  // A writable root below one of them inside a repository whose top is above it (a checkout
  // at /tmp/x/ws or ~/ws, run from ws/src): the directories around the root would be a
  // private or hidden tree, where git finds no repository and a write above the root
  // (`../Makefile`) vanishes with the sandbox. The repository's top is attached read-only
  // instead (git finds its .git there, as on the host): such a write fails (EROFS), as it does
  // elsewhere. A read-only working directory under a hidden home is shown the same way.
  std::vector<std::string> starts;
  for (const auto& r : roots) starts.push_back(r.target.path);
  const bool cwd_is_root = std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& r) {
    return r.target.path == ctx.cwd.path;
  });
  // Every path the policy or the credential list denies, whether or not a rule is needed for
  // it (one inside a hidden home is hidden anyway): nothing is shown again inside one.
  std::vector<std::string> denied;
  for (const auto& d : defaults) {
    if (d.target.exists && d.access == PathAccess::deny_read) denied.push_back(d.target.path);
  }
  auto is_denied = [&](const std::string& path) {
    return std::any_of(denied.begin(), denied.end(),
                       [&](const std::string& d) { return within(path, d); });
  };
  // Below a hidden home, never a home itself (another user's neither: root's run from
  // /home/bob would show bob's whole home).
  const bool show_cwd =
      !cwd_is_root && ctx.cwd.exists && ctx.cwd.is_dir &&
      std::any_of(hidden_homes.begin(), hidden_homes.end(),
                  [&](const auto& h) { return paths::below(ctx.cwd.path, h.path); }) &&
      std::none_of(hidden_homes.begin(), hidden_homes.end(),
                   [&](const auto& h) { return h.path == ctx.cwd.path; });
  // Never from a home's dot directory (`~/.config`, `~/.local/share`): tools keep their
  // tokens there under names no list has (the new-user trial read ~/.config/git/credentials
  // from a read-only run in ~/.config). Refused below, as a run from the home itself is.
  const bool in_dot_dir = std::any_of(out_homes.begin(), out_homes.end(), [&](const auto& h) {
    return paths::below(ctx.cwd.path, h) && ctx.cwd.path.compare(h.size() + 1, 1, ".") == 0;
  });
  const bool show_read_only_cwd = show_cwd && !in_dot_dir;
  if (show_read_only_cwd) starts.push_back(ctx.cwd.path);
  std::vector<std::string> deny_write_patterns;
  for (std::size_t i = 0; i < policy.deny_write.size(); ++i) {
    Where w = {"filesystem.denyWrite", i, policy.deny_write[i]};
    std::string pattern;
    for (const auto& t : expand(policy.deny_write[i], ctx, w, true, &pattern)) {
      if (t.exists) refuse_special(t.path, w);
      rules.protect(t, kPolicy);
      // A stand-in for a path it names, not for one a pattern might: the pattern itself is
      // judged when the set is applied (below).
      if (!t.exists && pattern.empty() && !is_glob(policy.deny_write[i])) {
        rules.deny_write_missing(t);
      }
    }
    if (!pattern.empty()) deny_write_patterns.push_back(std::move(pattern));
  }
  for (std::size_t i = 0; i < policy.deny_read.size(); ++i) {
    Where w = {"filesystem.denyRead", i, policy.deny_read[i]};
    for (const auto& t : expand(policy.deny_read[i], ctx, w, true)) {
      // A path that does not exist has nothing to hide; what the command creates is its own.
      if (!t.exists) continue;
      refuse_special(t.path, w);
      rules.add(t, PathAccess::deny_read, kPolicy);
      denied.push_back(t.path);
    }
  }
  for (std::size_t i = 0; i < policy.allow_read.size(); ++i) {
    Where w = {"filesystem.allowRead", i, policy.allow_read[i]};
    for (const auto& t : expand(policy.allow_read[i], ctx, w, false)) {
      if (!t.exists) continue;
      refuse_special(t.path, w);
      check_links(t, w, roots, trusted);
      attached_tmp.insert(t.path);
      if (t.links.empty()) {
        rules.add(t, PathAccess::allow_read, kPolicy);
        continue;
      }
      rules.add_allow_through_link(
          t, kPolicy,
          where_message(w, "resolves through the symlink " + t.links.front() + " to " + t.path +
                               ", a path the sandbox denies; whoever can write where the link "
                               "sits (another user, a sandbox that could write there) chose "
                               "its target, so name the target directly to allow it"));
    }
  }

  // The repositories around the starts (above), once every denial is known.
  for (const std::string& start : starts) {
    for (const std::string& hidden : covered) {
      if (!paths::below(start, hidden)) continue;
      const std::string top = repository_top_between(start, hidden, out_homes);
      const bool a_root = std::any_of(roots.begin(), roots.end(), [&](const WriteRoot& o) {
        return !top.empty() && within(top, o.target.path);
      });
      // Never a top the policy or the credential list denies (`pass git init` makes
      // ~/.password-store a repository): it would show what is denied around the start.
      if (top.empty() || a_root || is_denied(top)) continue;
      try {
        const Resolved t = resolve_from("/", top);
        if (t.exists && t.is_dir && t.links.empty()) {
          rules.add(t, PathAccess::allow_read, "the repository around a writable root");
        }
      } catch (const Unresolvable&) {
      }
    }
  }
  // The hidden homes (after the policy's own denials, whose origin then names the policy):
  // what tools need from them stays readable, unless the policy or the credential list denies
  // it, and a read-only working directory there is shown (the repository around it, above).
  for (const auto& h : hidden_homes) rules.add(h, PathAccess::deny_read, kHiddenHomeOrigin);
  if (!hidden_homes.empty()) {
    for (const auto& r : readable_home_paths(out_homes)) {
      if (!is_denied(r.path)) rules.add(r, PathAccess::allow_read, kHomeReadable);
    }
    if (show_read_only_cwd && !is_denied(ctx.cwd.path)) {
      rules.add(ctx.cwd, PathAccess::allow_read, kWorkingDirectory);
    }
  }

  if (policy.default_denies) {
    // Missing ones inside a writable root (a writable home) are watched: ~/.ssh/ created there
    // is removed after the command. A start-up path under a hidden credential stays hidden.
    for (const auto& d : defaults) {
      if (!d.target.exists) {
        rules.protect_missing(d.target);
      } else {
        rules.add(d.target, d.access, d.origin);
      }
    }
    std::vector<std::string> dirs;
    for (const auto& r : roots) {
      if (!r.target.is_dir) continue;
      dirs.push_back(r.target.path);
      try {
        // Not a repository (yet): a `.git` the command creates is judged as a whole after it
        // (kept if git would run nothing from it, else quarantined: git_state.hpp), not file by
        // file, which would leave a half repository behind.
        struct stat st;
        const bool repository = ::lstat(stable_path(join(r.target.path, ".git")).c_str(), &st) == 0;
        for (const auto& name : mandatory_read_only_names()) {
          if (!repository && name.starts_with(".git/")) continue;
          rules.protect(resolve_from(r.target.path, name), kMandatory);
        }
      } catch (const Unresolvable& e) {
        invalid(r.where, std::string("a protected path inside it: ") + e.what());
      }
    }
    // With change sets every writable directory is a copy-on-write layer whose changes are
    // judged after the command (change_apply.hpp): no walk of the workspace is needed.
    if (!policy.change_sets) try {
        git = scan_git_state(dirs);
        for (const auto& path : git.protect) rules.protect(resolve_from("/", path), kMandatory);
      } catch (const GitScanRefused& e) {
        throw Error(errc::config_invalid, std::string("git state: ") + e.what());
      } catch (const Unresolvable& e) {
        throw Error(errc::config_invalid, std::string("git state: ") + e.what());
      }
  }
  // The sandbox's own /tmp and /var/tmp, unless the policy attaches the host's directory right
  // there: that one is the host's, every rule below it applied as anywhere else. Counted as
  // private, its rules below were skipped as "under a cover" while the host's tree was
  // attached writable over it: a command run from /tmp wrote .git/config of a repository
  // there (hostile review).
  std::vector<std::string> private_tmp;
  if (policy.private_tmp) {
    for (const char* tmp : {"/tmp", "/var/tmp"}) {
      if (paths::is_real_directory(tmp) && attached_tmp.count(tmp) == 0) {
        rules.start_hidden(tmp);
        private_tmp.emplace_back(tmp);
      }
    }
  }
  ResolvedFilesystem out = rules.build();
  out.private_tmp = std::move(private_tmp);
  out.deny_write_patterns = std::move(deny_write_patterns);
  // A read-only working directory a hidden home leaves unreadable (the home itself, a
  // credential inside one): refused here, by name. Shown again later, it would show
  // everything below it whose denial needed no rule of its own. (Inside a directory the policy
  // denies, the mount plan refuses it: mount_rules.cpp.)
  if (!cwd_is_root && ctx.cwd.exists) {
    const PathRule* nearest = nullptr;
    for (const auto& rule : out.rules) {
      if (within(ctx.cwd.path, rule.path) &&
          (nearest == nullptr || depth(rule.path) > depth(nearest->path))) {
        nearest = &rule;
      }
    }
    if (nearest != nullptr && nearest->access == PathAccess::deny_read &&
        std::strcmp(nearest->origin, kHiddenHomeOrigin) == 0) {
      // The home it is in by name (bob's, not all of /home, which needs no rule of its own).
      std::string in_home = nearest->path;
      for (const auto& h : hidden_homes) {
        if (within(ctx.cwd.path, h.path) && h.path.size() > in_home.size()) in_home = h.path;
      }
      throw Error(errc::config_invalid,
                  "working directory " + cwd + ": in a hidden home (" + in_home +
                      "), where nothing is shown (sandbox.hideHome); run it from a project "
                      "directory, or show it with --allow-read " +
                      cwd +
                      " (filesystem.allowRead; it then shows all of that directory the "
                      "credential list does not name)");
    }
  }
  std::vector<std::string> unchecked;  // protected paths refuse_other_names has not seen yet
  // A protected name that is a symlink is pinned as a link (a mount on the link itself): the
  // audit checks the link as it checks a read-only file (replaced, or changed once a mount
  // was dropped), so a link put back from outside and re-pointed is caught.
  for (const auto& link : out.protected_links) {
    struct stat st;
    if (::lstat(stable_path(link).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      out.protected_existing.push_back(
          {link, st.st_dev, st.st_ino, st.st_ctim.tv_sec, st.st_ctim.tv_nsec});
    }
  }
  for (const auto& rule : out.rules) {
    struct stat st;
    if (rule.access == PathAccess::read_only && ::lstat(stable_path(rule.path).c_str(), &st) == 0) {
      out.protected_existing.push_back(
          {rule.path, st.st_dev, st.st_ino, st.st_ctim.tv_sec, st.st_ctim.tv_nsec});
      if (std::find(git.protect.begin(), git.protect.end(), rule.path) == git.protect.end()) {
        unchecked.push_back(rule.path);
      }
    }
  }
  try {
    refuse_other_names(unchecked);
  } catch (const GitScanRefused& e) {
    throw Error(errc::config_invalid, e.what());
  }
  out.git = std::move(git);
  out.roots = std::move(views);
  out.homes = std::move(out_homes);
  out.own_homes = own_homes;
  for (const auto& h : hidden_homes) out.hidden_homes.push_back(h.path);
  out.denied = std::move(denied);
  return out;
}

}  // namespace paddock::sandbox
