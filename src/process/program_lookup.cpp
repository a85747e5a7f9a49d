#include "process/program_lookup.hpp"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

namespace paddock::process {
namespace {

// 0 when `path` is an executable regular file, else ENOENT / EACCES.
int check_executable(const std::string& path) {
  struct stat st;
  // A directory we may not search (a PATH entry under /root for another user) hides nothing
  // we could run: not found there, like a shell says, not "permission denied".
  if (::stat(path.c_str(), &st) != 0) return ENOENT;
  if (!S_ISREG(st.st_mode)) return EACCES;
  return ::access(path.c_str(), X_OK) == 0 ? 0 : EACCES;
}

}  // namespace

ProgramLookup find_program(std::string_view name, std::string_view path_var, std::string_view cwd) {
  ProgramLookup out;
  if (name.empty()) {
    out.error = ENOENT;
    out.message = "command not found: empty program name";
    return out;
  }
  if (name.find('/') != std::string_view::npos) {
    std::string on_host(name);
    if (name.front() != '/' && !cwd.empty()) on_host = std::string(cwd) + "/" + on_host;
    out.error = check_executable(on_host);
    out.path = std::string(name);
    if (out.error == ENOENT) out.message = "command not found: " + std::string(name);
    if (out.error == EACCES)
      out.message = "permission denied: " + std::string(name) + " is not an executable file";
    return out;
  }
  bool saw_non_executable = false;
  std::size_t start = 0;
  while (start <= path_var.size()) {
    std::size_t end = path_var.find(':', start);
    if (end == std::string_view::npos) end = path_var.size();
    std::string dir(path_var.substr(start, end - start));
    if (dir.empty()) dir = ".";  // POSIX: an empty PATH entry is the cwd
    std::string candidate = dir + "/" + std::string(name);
    std::string on_host = candidate;
    if (candidate.front() != '/' && !cwd.empty()) on_host = std::string(cwd) + "/" + candidate;
    int err = check_executable(on_host);
    if (err == 0) {
      out.path = candidate;
      return out;
    }
    if (err == EACCES) saw_non_executable = true;
    start = end + 1;
  }
  out.error = saw_non_executable ? EACCES : ENOENT;
  out.message =
      saw_non_executable
          ? "permission denied: " + std::string(name) + " found in PATH but not executable"
          : "command not found: " + std::string(name) + " (PATH=" + std::string(path_var) + ")";
  return out;
}

}  // namespace paddock::process
