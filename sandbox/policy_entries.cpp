#include "sandbox/policy_entries.hpp"

#include <fnmatch.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sandbox/default_paths.hpp"

namespace paddock::sandbox::resolving {

using namespace paths;  // path_resolution.hpp: resolve_from, GlobWalk, helpers

namespace {

// The patterns that continue `pattern` (from component `i`, below the real directory `dir`)
// past each symlink to a directory that a non-final component could match: the link's target,
// escaped, then the rest. Bounded like a glob walk; links in targets followed 8 deep.
void through_links(const std::string& dir, const std::vector<std::string>& pattern, std::size_t i,
                   const Where& w, std::size_t& visited, int depth, std::vector<std::string>& out) {
  if (i + 1 >= pattern.size() || depth > 8) return;  // a final component is no way through
  const std::string& comp = pattern[i];
  auto rest_from = [&](std::size_t k) {
    std::string r;
    for (std::size_t j = k; j < pattern.size(); ++j) r += "/" + pattern[j];
    return r;
  };
  auto via_link = [&](const std::string& link, std::size_t next) {
    // A link whose target does not exist yet counts too: the command may make it.
    std::error_code ec;
    const std::filesystem::path to = std::filesystem::read_symlink(link, ec);
    if (ec) return;
    const auto target = std::filesystem::weakly_canonical(
        to.is_absolute() ? to : std::filesystem::path(link).parent_path() / to, ec);
    if (ec) return;
    std::error_code ec2;
    const bool is_dir = std::filesystem::is_directory(target, ec2);
    if (!is_dir && std::filesystem::exists(std::filesystem::symlink_status(target, ec2))) return;
    out.push_back(escape_glob(target.string()) + rest_from(next));
    if (is_dir) through_links(target.string(), pattern, next, w, visited, depth + 1, out);
  };
  const bool any = comp == "**" || is_glob(comp);
  if (!any) {
    const std::string child = join(dir, unescape_glob(comp));
    struct stat st;
    if (::lstat(child.c_str(), &st) != 0) return;
    if (S_ISLNK(st.st_mode)) via_link(child, i + 1);
    if (S_ISDIR(st.st_mode)) through_links(child, pattern, i + 1, w, visited, depth, out);
    return;
  }
  if (comp == "**") through_links(dir, pattern, i + 1, w, visited, depth, out);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (++visited > kGlobVisitLimit) {
      invalid(w, "the pattern visits more than " + std::to_string(kGlobVisitLimit) +
                     " directory entries; make its fixed prefix more specific");
    }
    const std::string name = e.path().filename().string();
    if (comp != "**" && ::fnmatch(fnmatch_pattern(comp).c_str(), name.c_str(), 0) != 0) continue;
    std::error_code ec2;
    const std::size_t next = comp == "**" ? i : i + 1;
    if (e.is_symlink(ec2)) {
      via_link(e.path().string(), next);
    } else if (e.is_directory(ec2) && !pseudo_fs(e.path().string())) {
      through_links(e.path().string(), pattern, next, w, visited, depth, out);
    }
  }
}

}  // namespace

std::vector<Resolved> expand(const std::string& entry, const Context& ctx, const Where& w,
                             bool follow_matched_links, std::vector<std::string>* patterns_out) {
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
  if (patterns_out != nullptr) {  // absolute: the canonical prefix, escaped, then the pattern
    std::string whole = escape_glob(start.path);
    for (const auto& c : pattern) whole += "/" + c;
    patterns_out->push_back(std::move(whole));
    // And once more from wherever a directory link on the way leads (`tree/lk -> ../keys`
    // under `tree/**/*.key`): a write through the link lands at the target's real path.
    if (start.exists && start.is_dir) {
      std::size_t visited = 0;
      through_links(start.path, pattern, 0, w, visited, 0, *patterns_out);
    }
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

void refuse_special(const std::string& path, const Where& w) {
  for (const char* p : {"/", "/proc", "/dev", "/sys"}) {
    if (path == p) {
      invalid(w, std::string("resolves to ") + p +
                     ", which cannot carry a rule (the sandbox sets up / /proc /dev /sys "
                     "itself); name something more specific");
    }
  }
}

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

}  // namespace paddock::sandbox::resolving
