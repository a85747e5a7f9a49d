// Finds the program to execute in the parent, before anything is started, so "not found"
// and "not executable" are reported precisely (127 / 126) instead of as a child's exit.
#pragma once

#include <string>
#include <string_view>

namespace paddock::process {

struct ProgramLookup {
  std::string path;     // what execve gets (relative names stay relative to the child's cwd)
  int error = 0;        // ENOENT: not found; EACCES: found but not executable
  std::string message;  // one line when error != 0
};

// `name` with a '/' is used as given (relative to `cwd` when relative); otherwise each
// directory of `path_var` is searched like execvp does.
ProgramLookup find_program(std::string_view name, std::string_view path_var, std::string_view cwd);

}  // namespace paddock::process
