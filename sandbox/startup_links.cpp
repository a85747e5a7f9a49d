// Start-up files reached through links: a dotfiles checkout that the home's start-up
// directories link into (GNU stow, rcm, a hand-made `ln -s`). The host reads the checkout's
// files as its own start-up files, so a change set that writes there is held, whatever the
// checkout is called.
//
// Found without walking the home (a ~/.config of browser profiles holds 100,000 entries): the
// start-up directories' own entries are listed once per apply, and each changed path is then
// looked up from its side. A link directly inside a start-up directory (`~/.config/fish ->
// ~/dotfiles/fish`) is known from the listing; a deeper one is found where the path's own tail
// names it (`~/.config/fish/conf.d/x.fish -> ~/dotfiles/fish/.config/fish/conf.d/x.fish`: stow
// keeps names, and so does every layout that mirrors the home). Not found: a link deeper than
// one level whose name differs from every tail of the path it leads to (sandbox/README.md).
#include <sys/stat.h>

#include <filesystem>

#include "sandbox/change_rules.hpp"
#include "sandbox/default_paths.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

// How many components of a tail are looked up below a start-up directory.
constexpr std::size_t kMaxTail = 16;

std::string canonical_target(const std::string& link) {
  std::error_code ec;
  auto target = std::filesystem::weakly_canonical(link, ec);
  return ec ? std::string() : target.string();
}

}  // namespace

void add_startup_links(ChangeRules& rules) {
  for (const std::string& home : rules.homes) {
    for (const std::string& entry : home_startup_paths()) {
      const std::string dir = home + entry.substr(1);
      if (!entry.starts_with("~/") || !paths::is_real_directory(dir)) continue;
      std::error_code ec;
      std::filesystem::directory_iterator it(dir, ec);
      if (ec && rules.failure.empty()) {
        rules.failure = dir + ": " + ec.message() + " (start-up links not known)";
      }
      for (const auto& e : it) {
        rules.startup_children.emplace(e.path().filename().string(), dir);
        std::error_code ec2;
        if (!e.is_symlink(ec2)) continue;
        if (auto target = canonical_target(e.path().string()); !target.empty()) {
          rules.startup_links.emplace_back(target, e.path().string());
        }
      }
    }
  }
}

std::string startup_link_reason(const ChangeRules& rules, const std::string& path,
                                bool replaces_dir) {
  for (const auto& [target, link] : rules.startup_links) {
    if (paths::within(path, target) || (replaces_dir && paths::below(target, path))) {
      return "a home's start-up path through the link " + link + " (runs on the host later)";
    }
  }
  const auto parts = paths::components(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto [from, to] = rules.startup_children.equal_range(parts[i]);
    for (auto it = from; it != to; ++it) {
      // Down the start-up directory along the tail parts[i..]: the first link met decides.
      std::string at = it->second;
      for (std::size_t j = i; j < parts.size() && j < i + kMaxTail; ++j) {
        at += "/" + parts[j];
        struct stat st {};
        if (::lstat(at.c_str(), &st) != 0) break;
        if (S_ISLNK(st.st_mode)) {
          const std::string target = canonical_target(at);
          if (!target.empty() && paths::within(path, target)) {
            return "a home's start-up path through the link " + at + " (runs on the host later)";
          }
          break;
        }
        if (!S_ISDIR(st.st_mode)) break;
        // The whole tail is a real directory of the home's start-up tree: a link directly in
        // it that leads below `path` would lead into what the command put in its place.
        if (j + 1 == parts.size() && replaces_dir) {
          std::error_code ec;
          for (const auto& e : std::filesystem::directory_iterator(at, ec)) {
            std::error_code ec2;
            if (!e.is_symlink(ec2)) continue;
            if (paths::below(canonical_target(e.path().string()), path)) {
              return "replaces the way to " + e.path().string() + "'s target (a start-up link)";
            }
          }
        }
      }
    }
  }
  return {};
}

}  // namespace paddock::sandbox
