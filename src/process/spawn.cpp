#include "process/spawn.hpp"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cstddef>

#include "process/child_side.hpp"

namespace paddock::process {
namespace {

std::atomic<rlim_t> g_original_nofile{RLIM_INFINITY};

// The child runs only in_child_main on this stack and leaves it at execve; the parent thread
// is suspended meanwhile (CLONE_VFORK), so one stack per thread is reused for every spawn.
constexpr std::size_t kChildStackSize = 64 * 1024;
alignas(64) thread_local unsigned char t_child_stack[kChildStackSize];

std::vector<char*> pointers_into(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

void remember_original_nofile(rlim_t soft) noexcept {
  rlim_t expected = RLIM_INFINITY;
  g_original_nofile.compare_exchange_strong(expected, soft);
}

SpawnPlan::SpawnPlan(std::string program_path, std::vector<std::string> argv,
                     std::vector<std::string> env, std::string cwd)
    : program_(std::move(program_path)),
      argv_(std::move(argv)),
      env_(std::move(env)),
      cwd_(std::move(cwd)),
      argv_ptrs_(pointers_into(argv_)),
      env_ptrs_(pointers_into(env_)) {}

SpawnResult spawn(const SpawnPlan& plan, const ChildStdio& stdio) {
  ChildContext ctx{};
  ctx.program = plan.program();
  ctx.argv = plan.argv();
  ctx.envp = plan.envp();
  ctx.cwd = plan.cwd();
  ctx.stdin_fd = stdio.in;
  ctx.stdout_fd = stdio.out;
  ctx.stderr_fd = stdio.err;
  ctx.nofile_soft = g_original_nofile.load(std::memory_order_relaxed);

  // Block everything so no handler of ours runs in the child while it shares our memory.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);

  // Exit signal 0 instead of SIGCHLD: the embedding program's SIGCHLD handler (or SIG_IGN,
  // which would make the kernel auto-reap) never sees our children, and its waitpid(-1)
  // cannot steal them (without __WALL it only waits for SIGCHLD children). We track exit
  // through the pidfd alone.
  int pidfd = -1;
  const int flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD;
  pid_t pid = ::clone(in_child_main, t_child_stack + kChildStackSize, flags, &ctx, &pidfd);
  int clone_errno = errno;

  pthread_sigmask(SIG_SETMASK, &old, nullptr);

  SpawnResult result;
  if (pid < 0) {
    result.error = clone_errno;
    result.failed_step = "clone";
    return result;
  }
  result.pid = pid;
  result.pidfd = pidfd;
  result.error = ctx.error;
  result.failed_step = ctx.failed_step;
  return result;
}

}  // namespace paddock::process
