// A short-lived child that shares our memory and descriptor table (CLONE_VM | CLONE_VFORK |
// CLONE_FILES) and runs `fn` on `stack_top` while we are suspended: how a threaded process
// has one thread's worth of itself do what only a single-threaded process may (join a user
// namespace; sandbox/linux/netns_pool.cpp, process/spawn.cpp's joiner). What `fn` produces
// lands in our memory or our table. The caller blocks its signals first (no handler of ours
// may run on the child) and gives a stack nothing else uses meanwhile. The one home of this.
#pragma once

#include <errno.h>
#include <sched.h>
#include <sys/wait.h>

namespace paddock::base {

// 0 once `fn` has run and the child is reaped; the errno of clone when none could start.
inline int run_in_memory_sharing_child(int (*fn)(void*), void* arg, unsigned char* stack_top) {
  const int pid = ::clone(fn, stack_top, CLONE_VM | CLONE_VFORK | CLONE_FILES, arg);
  if (pid < 0) return errno;
  while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
  }
  return 0;
}

}  // namespace paddock::base
