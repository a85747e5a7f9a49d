// A forked child for the seccomp tests: it drops its capabilities, sets NO_NEW_PRIVS, installs
// a program the way the sandboxed child does, runs the test's calls and reports "name rc errno"
// lines through a pipe, which the parent reads back as a ChildRun.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>

#include "sandbox/linux/seccomp_filter.hpp"

namespace test {

// Child side: async-signal-safe enough for a forked child (no allocation, no stdio streams).
struct Reporter {
  int fd;
  // rc < 0 means the call failed and errno says why; read errno before anything else runs.
  void operator()(const char* name, long rc) const;
  // For calls that return an fd: report success as 0 (fd numbers vary) and close it.
  void fd_result(const char* name, long rc) const;
};

struct ChildRun {
  std::map<std::string, std::pair<long, int>> outcomes;
  int status = -1;

  // "name rc ERRNAME" ("name 0 0" when it worked): Catch prints both sides, so a failure reads
  // "mount -1 ENOENT == mount -1 EPERM".
  std::string operator[](const std::string& name) const;
  // Calls whose result varies (a pid, a persona): success is all we check.
  std::string succeeded(const std::string& name) const;
};

using ChildBody = void (*)(const Reporter& out, void* context);

// Forks a child that confines itself with `program` (none: unfiltered control run), runs
// `body`, and reports back. An alarm bounds a child that a broken filter left stuck.
ChildRun run_child(const paddock::sandbox::SeccompProgram* program, ChildBody body, void* context);

template <typename Body>
ChildRun run_child(const paddock::sandbox::SeccompProgram* program, Body body) {
  return run_child(
      program, [](const Reporter& out, void* b) { (*static_cast<Body*>(b))(out); }, &body);
}

// Exit code of a grandchild, as the child reports it: status, 128+signal, or -1 with errno.
long wait_status(pid_t pid);
bool killed_by(int status, int sig);
std::string describe(int status);  // "exited 3", "killed by SYS"

}  // namespace test
