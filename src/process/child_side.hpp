// The code that runs in the child between clone() and execve(). It shares the parent's
// memory (CLONE_VM) while the parent thread is suspended (CLONE_VFORK), so it must be
// async-signal-safe: no allocation, no locks, no stdio, raw syscalls only. Everything it
// reads was prepared by the parent; the one thing it writes is ChildContext::error.
#pragma once

#include <sys/resource.h>

namespace paddock::sandbox {
struct ChildSandbox;
}

namespace paddock::process {

struct ChildContext {
  // Prepared by the parent:
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // nullptr: inherit
  int stdin_fd, stdout_fd, stderr_fd;
  int dev_null_fd;       // the parent's /dev/null (-1: none), reopened inside a sandbox
  int supervisor_pidfd;  // our own process's pidfd (-1: none), for the parent-death check
  rlim_t nofile_soft;    // RLIM_INFINITY: leave as is
  const sandbox::ChildSandbox* sandbox;  // null: unsandboxed
  int init_image;          // -1: exec the command itself; else exec paddock-init from this fd
  int init_report;         // the init's report pipe, put on kInitReportFd
  int init_control;        // -1, or a waiting init's command socket, put on kInitControlFd
  int init_mounts;         // the plan's mount points, put on kInitMountPointsFd
  char* const* init_argv;  // the init's argv: "paddock-init", program, the command's argv
  // Written by the child when a step fails (the parent reads it after clone returns):
  int error;
  const char* failed_step;
  const char* failed_path;  // the path the failed step was about, if any
  bool sandbox_failed;      // the failed step belongs to the sandbox set-up
  bool feature_step;        // ... and needs a kernel feature (sandbox::StepFailure)
};

// Entry point passed to clone(); never returns on success (execve).
int in_child_main(void* context);

}  // namespace paddock::process
