#include "sandbox/home_view.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
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

}  // namespace

std::vector<Resolved> hidden_home_dirs(const std::vector<std::string>& homes) {
  std::vector<std::string> spelled = homes;
  spelled.emplace_back("/root");
  spelled.emplace_back("/home");
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

std::string user_home_around(const std::string& path) {
  std::string container;
  try {
    const Resolved r = resolve_from("/", "/home");
    if (!r.exists || !r.is_dir || r.path == "/") return {};
    container = r.path;
  } catch (const Unresolvable&) {
    return {};
  }
  if (!below(path, container)) return {};
  const std::size_t end = path.find('/', container.size() + 1);
  std::string home = path.substr(0, end);
  return is_real_directory(home) ? home : std::string();
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
