#include "sandbox/git_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox {

using paths::join;

namespace {

const TreeEntry* find(const std::vector<TreeEntry>& entries, std::string_view name) {
  for (const auto& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// git's validate_headref: a symlink whose target starts with "refs/", or a file holding
// "ref: refs/..." or an object id. Anything git would block on or that we cannot read (a
// FIFO, a file made unreadable to us but maybe not to a root host) counts as valid: the
// answer must be a superset of git's, never a subset.
bool valid_head(const std::string& dir, unsigned char type) {
  const std::string path = join(dir, "HEAD");
  if (type == DT_DIR) return false;
  if (type == DT_LNK) {
    char target[256];
    ssize_t n = ::readlink(stable_path(path).c_str(), target, sizeof target);
    return n < 0 || (n >= 5 && std::memcmp(target, "refs/", 5) == 0);
  }
  if (type != DT_REG) return true;
  int fd = ::open(stable_path(path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return errno != ENOENT && errno != ELOOP;
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return true;
  std::string_view text(buf, static_cast<std::size_t>(n));
  if (text.starts_with("ref:")) {
    text.remove_prefix(4);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
      text.remove_prefix(1);
    }
    return text.starts_with("refs/");
  }
  return text.size() >= 40 && std::all_of(text.begin(), text.begin() + 40, is_hex);
}

// git's own test for a git dir (setup.c is_git_directory): a valid HEAD, and objects and refs
// reachable (access(X_OK), which follows symlinks) in the dir or in the dir a `commondir` file
// names. Widened to a superset: any `objects` and `refs` entries count (a dangling link can be
// completed later by a concurrent sandbox; an executable file passes access(X_OK)), and so
// does any `commondir`. Counting only real directories let `objects -> od` make the
// workspace root itself a git dir the audit never saw.
}  // namespace

bool looks_like_git_dir(const std::string& dir, const std::vector<TreeEntry>& entries) {
  const TreeEntry* head = find(entries, "HEAD");
  if (head == nullptr) return false;
  if (find(entries, "commondir") == nullptr &&
      (find(entries, "objects") == nullptr || find(entries, "refs") == nullptr)) {
    return false;
  }
  return valid_head(dir, head->type);
}

// A protected regular file with a second name (a hard link made in an earlier run, when the
// file was not protected yet, or by a sandbox that created both names): the read-only mount
// covers this name only. The command rewrites the file through the other name, or links it
// back after a concurrent sandbox's audit moved this name away (the mount moves with it, and
// the inode this run recorded is the one it links back). Protected directories (hooks/,
// info/, .vscode/) are checked one level down: git runs a hook by its name in there.
void refuse_other_names(const std::vector<std::string>& protect) {
  auto check = [](const std::string& path, const struct stat& st) {
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      throw GitScanRefused(path + " has " + std::to_string(st.st_nlink) +
                           " hard links: it is protected (git or a shell runs it later), and "
                           "only this name could be made read-only (a command would rewrite "
                           "it through another, or link it back after it was quarantined); "
                           "the command is not run (find the other names with `find "
                           "-samefile`, and remove them or copy the file)");
    }
  };
  for (const auto& path : protect) {
    struct stat st;
    const std::string seen = stable_path(path);
    if (::lstat(seen.c_str(), &st) != 0) continue;
    check(path, st);
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd fd(::open(seen.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) continue;
    std::size_t n = 0;
    const int err =
        base::for_each_directory_entry(fd.get(), [&](const char* name, unsigned char type) {
          if (++n > 4096) return false;
          if (type != DT_REG && type != DT_UNKNOWN) return true;
          struct stat cst;
          if (::fstatat(fd.get(), name, &cst, AT_SYMLINK_NOFOLLOW) == 0)
            check(join(path, name), cst);
          return true;
        });
    if (err != 0) {
      throw GitScanRefused(path + ": its entries could not be listed (" + std::strerror(err) +
                           "), so a second name of a protected file cannot be ruled out");
    }
  }
}

EntryId entry_id(const std::string& path) {
  struct stat st;
  if (::lstat(stable_path(path).c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino,
          static_cast<long long>(st.st_ctim.tv_sec) * 1'000'000'000LL + st.st_ctim.tv_nsec};
}

}  // namespace paddock::sandbox
