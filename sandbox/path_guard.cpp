#include "sandbox/path_guard.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

std::optional<std::string> path_guard_refusal(const std::vector<PathToken>& tokens,
                                              const std::string& cwd,
                                              const std::vector<std::string>& roots,
                                              const std::string& home) {
  for (const auto& t : tokens) {
    if (t.unknown) {
      return "argument '" + t.token +
             "' is computed or matched by the shell at run time, so where it lands cannot be "
             "checked before running";
    }
    std::string rest = t.path;
    if (t.bare) {
      struct stat st;
      const std::string here = paths::join(cwd, rest);
      if (::lstat(here.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    }
    if (rest == "~" || rest.starts_with("~/")) {
      if (home.empty()) return "argument '" + t.token + "': ~ is unknown here ($HOME unset)";
      rest = home + rest.substr(1);
    } else if (rest.starts_with("~")) {
      return "argument '" + t.token + "': ~user is not resolved; write the path out";
    }
    // The streams a command may always name.
    if (rest == "/dev/null" || rest == "/dev/stdin" || rest == "/dev/stdout" ||
        rest == "/dev/stderr" ||
        (rest.starts_with("/dev/fd/") && rest.find("..") == std::string::npos)) {
      continue;
    }
    paths::Resolved r;
    try {
      r = paths::resolve_from(cwd, rest);
    } catch (const std::exception& e) {
      return "argument '" + t.token + "' does not resolve: " + e.what();
    }
    const bool inside = std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
      return r.path == root || paths::within(r.path, root);
    });
    if (!inside) {
      std::string list;
      for (const auto& root : roots) list += (list.empty() ? "" : ", ") + root;
      return "argument '" + t.token + "' resolves to " + r.path + ", outside the workspace (" +
             list + ")";
    }
  }
  return std::nullopt;
}

}  // namespace paddock::sandbox
