#include "sandbox/protected_paths.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace paddock::sandbox {
namespace {

int remove_entry(const char* path, const struct stat*, int type, struct FTW*) {
  // Depth-first (FTW_DEPTH) and physical (FTW_PHYS): directories after their contents, and a
  // symlink is removed as a link, never followed out of the tree.
  return (type == FTW_DP ? ::rmdir(path) : ::unlink(path)) == 0 ? 0 : errno;
}

}  // namespace

std::vector<Violation> revert_created_protected_paths(const std::vector<std::string>& paths,
                                                      const std::string& program) {
  std::vector<Violation> out;
  for (const auto& path : paths) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    Violation v;
    v.operation = "file-write";
    v.path = path;
    v.process = program;
    int rc = S_ISDIR(st.st_mode) ? ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS)
                                 : ::unlink(path.c_str());
    if (rc == 0) {
      v.detail = "created a protected path (read-only in the sandbox); removed after the command";
    } else {
      v.detail = std::string(
                     "created a protected path (read-only in the sandbox); removing it "
                     "failed: ") +
                 std::strerror(rc > 0 ? rc : errno);
    }
    v.raw = "protected path created: " + path;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace paddock::sandbox
