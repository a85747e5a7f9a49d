#include "process/spawn.hpp"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <string_view>

#include "base/memory_sharing_child.hpp"
#include "process/child_side.hpp"
#include "sandbox/linux/mount_template.hpp"
#include "sandbox/linux/netns_pool.hpp"

namespace paddock::process {
namespace {

std::atomic<rlim_t> g_original_nofile{RLIM_INFINITY};

// The child runs only in_child_main on this stack and leaves it at execve; the parent thread
// is suspended meanwhile (CLONE_VFORK), so one stack per thread is reused for every spawn.
// mmap'd on first use with a guard page below it (an overflow faults instead of scribbling
// over our heap), and not as a thread_local array, which would cost every thread of an
// embedding program 64 KiB of static TLS.
constexpr std::size_t kChildStackSize = 64 * 1024;

class ChildStack {
 public:
  ChildStack() {
    const std::size_t guard = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* p = ::mmap(nullptr, kChildStackSize + guard, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return;
    ::mprotect(p, guard, PROT_NONE);
    base_ = static_cast<unsigned char*>(p);
    size_ = kChildStackSize + guard;
  }
  ~ChildStack() {
    if (base_ != nullptr) ::munmap(base_, size_);
  }
  unsigned char* top() const noexcept { return base_ == nullptr ? nullptr : base_ + size_; }

 private:
  unsigned char* base_ = nullptr;
  std::size_t size_ = 0;
};

unsigned char* child_stack_top() {
  thread_local ChildStack stack;
  return stack.top();
}

// The stack of the sandbox cloned by a joiner (below), which is suspended on the first.
unsigned char* second_stack_top() {
  thread_local ChildStack stack;
  return stack.top();
}

// Both halves of starting a sandbox in namespaces a threaded process cannot enter itself: a
// network namespace of an unprivileged pool, whose user namespace is not ours
// (sandbox/linux/netns_pool.hpp), and a mount template (sandbox/linux/mount_template.hpp;
// setns of a mount namespace needs a process that shares no file system state). A child of
// ours (the joiner: our memory and descriptor table, CLONE_VM | CLONE_VFORK | CLONE_FILES)
// joins the pool's user namespace, where it holds CAP_SYS_ADMIN; makes the writable roots'
// overlays where the host's paths resolve (their mounts land in our table); enters the
// template, then the network namespace; then clones the sandbox as our child (CLONE_PARENT),
// on our memory as any sandbox is, with its pidfd put in our table. It exits once the sandbox
// has exec'd or failed; we are suspended until then, as with one clone.
struct Joiner {
  ChildContext* ctx;
  int userns;  // -1: ours
  int netns;   // -1: the one the sandbox's clone flags give it
  int flags;   // the sandbox's clone flags
  unsigned char* stack_top;
  pid_t pid;
  int pidfd;
  int error;
  const char* failed_step;
  const char* failed_path;
  bool template_failed;  // the mount template could not be entered
  bool layers_failed;    // an overlay of a writable root could not be made
  bool template_stale;   // a mount of the template dropped or moved by the host
};

int in_joiner_main(void* arg) {
  auto* j = static_cast<Joiner*>(arg);
  const sandbox::MountTemplateUse* from =
      j->ctx->sandbox != nullptr ? j->ctx->sandbox->mount_template : nullptr;
  sandbox::StepFailure layers{};
  int err = 0;
  if (j->userns >= 0 && ::syscall(SYS_setns, j->userns, CLONE_NEWUSER) != 0) {
    j->error = errno;
    j->failed_step = "setns (the network pool's user namespace)";
  } else if (from != nullptr && from->source_mntns >= 0 &&
             ::syscall(SYS_setns, from->source_mntns, CLONE_NEWNS) != 0) {
    j->error = errno;
    j->failed_step = "enter the mount template's source";
    j->template_failed = true;
  } else if (from != nullptr && (err = sandbox::in_joiner_make_layers(*j->ctx->sandbox, &layers))) {
    // As the same step in a sandbox of its own would (a root renamed meanwhile): this command's.
    j->error = err;
    j->failed_step = layers.step;
    j->failed_path = layers.path;
    j->layers_failed = true;
  } else if (from != nullptr && ::syscall(SYS_setns, from->mntns, CLONE_NEWNS) != 0) {
    j->error = errno;
    j->failed_step = "enter the mount template";
    j->template_failed = true;
  } else if (from != nullptr && !sandbox::in_joiner_template_intact(*from)) {
    // Replaced on the host since the plan looked (a save by rename over a covered name): as
    // a path replaced during a sandbox's own set-up, this command's; the next one gets a new
    // template.
    j->error = ESTALE;
    j->failed_step = "reach the checked path (renamed or replaced during set-up)";
    j->layers_failed = true;
    j->template_stale = true;
  } else if (j->netns >= 0 && ::syscall(SYS_setns, j->netns, CLONE_NEWNET) != 0) {
    j->error = errno;
    j->failed_step = "setns (network namespace)";
  } else {
    j->pid = ::clone(in_child_main, j->stack_top, j->flags, j->ctx, &j->pidfd);
    if (j->pid < 0) {
      j->error = errno;
      j->failed_step = "clone";
    }
  }
  ::syscall(SYS_exit, 0);
  return 0;
}

// The sandbox's pid and pidfd, or -1 with `j` saying what failed; our signals are blocked.
pid_t clone_through_joiner(Joiner& j, int& clone_errno) {
  j.pid = -1;
  j.pidfd = -1;
  j.error = 0;
  j.failed_step = nullptr;
  j.failed_path = nullptr;
  j.template_failed = false;
  j.layers_failed = false;
  j.template_stale = false;
  j.stack_top = second_stack_top();
  if (j.stack_top == nullptr) {
    clone_errno = j.error = ENOMEM;  // a result with no error would read as no failure
    j.failed_step = "mmap (child stack)";
    return -1;
  }
  if (const int err = base::run_in_memory_sharing_child(in_joiner_main, &j, child_stack_top())) {
    clone_errno = err;
    j.failed_step = "clone";
    return -1;
  }
  if (j.pid < 0) {
    clone_errno = j.error;
    return -1;
  }
  return j.pid;
}

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

void SpawnPlan::set_init(int image_fd, int report_fd, int mounts_fd, int control_fd) {
  static char init_name[] = "paddock-init";
  init_argv_ptrs_.clear();
  init_argv_ptrs_.push_back(init_name);
  if (control_fd < 0) {
    init_argv_ptrs_.push_back(program_.data());
    init_argv_ptrs_.insert(init_argv_ptrs_.end(), argv_ptrs_.begin(), argv_ptrs_.end());
  } else {
    init_argv_ptrs_.push_back(nullptr);  // no command: it comes on control_fd
  }
  init_image_ = image_fd;
  init_report_ = report_fd;
  init_control_ = control_fd;
  init_mounts_ = mounts_fd;
}

SpawnResult spawn(const SpawnPlan& plan, const ChildStdio& stdio) {
  ChildContext ctx{};
  ctx.program = plan.program();
  ctx.argv = plan.argv();
  ctx.envp = plan.envp();
  ctx.cwd = plan.cwd();
  ctx.stdin_fd = stdio.in;
  ctx.stdout_fd = stdio.out;
  ctx.stderr_fd = stdio.err;
  ctx.dev_null_fd = stdio.dev_null;
  ctx.nofile_soft = g_original_nofile.load(std::memory_order_relaxed);
  ctx.sandbox = plan.sandbox();
  ctx.init_image = plan.init_image();
  ctx.init_report = plan.init_report();
  ctx.init_control = plan.init_control();
  ctx.init_mounts = plan.init_mounts();
  ctx.init_argv = plan.init_argv();

  unsigned char* stack_top = child_stack_top();
  if (stack_top == nullptr) {
    SpawnResult failed;
    failed.error = ENOMEM;
    failed.failed_step = "mmap (child stack)";
    return failed;
  }

  // The child inherits the network namespace of the thread that clones it: enter the reused
  // one for the clone only (a joiner does it when the pool's user namespace is not ours, and
  // for a sandbox made from a mount template).
  const sandbox::MountTemplateUse* from =
      plan.sandbox() != nullptr ? plan.sandbox()->mount_template : nullptr;
  const bool joiner = from != nullptr || (plan.join_netns() >= 0 && plan.join_userns() >= 0);
  if (plan.join_netns() >= 0 && !joiner && !sandbox::enter_network_namespace(plan.join_netns())) {
    SpawnResult failed;
    failed.error = errno;
    failed.failed_step = "setns (network namespace)";
    return failed;
  }

  // A pidfd for this process, for the sandboxed child's parent-death check; opened per spawn
  // (a few µs) rather than held for the process's life. -1 (check skipped) if it fails.
  ctx.supervisor_pidfd =
      plan.sandbox() != nullptr ? static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)) : -1;

  // Block everything so no handler of ours runs in the child while it shares our memory.
  // The raw syscall, not pthread_sigmask: glibc's wrapper silently leaves its internal
  // SIGCANCEL/SIGSETXID unblocked, and their handlers must not run in the child either.
  unsigned long all = ~0UL, old = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));

  // Exit signal 0: until execve, no SIGCHLD reaches the embedder's handler for a child that
  // fails early. (execve resets it to SIGCHLD; PidfdWatch copes with an embedder that reaps
  // everything.) We track exit through the pidfd alone.
  int pidfd = -1;
  const int flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | plan.namespace_flags();
  pid_t pid = -1;
  int clone_errno = 0;
  const char* joiner_step = nullptr;
  const char* joiner_path = nullptr;
  bool template_failed = false, layers_failed = false;
  if (joiner) {
    Joiner j{&ctx,
             plan.join_userns(),
             plan.join_netns(),
             flags | CLONE_PARENT,
             nullptr,
             -1,
             -1,
             0,
             nullptr,
             nullptr,
             false,
             false,
             false};
    pid = clone_through_joiner(j, clone_errno);
    pidfd = j.pidfd;
    joiner_step = j.failed_step;
    joiner_path = j.failed_path;
    template_failed = j.template_failed;
    layers_failed = j.layers_failed;
    if (j.template_stale) sandbox::retire_mount_templates();
    // The overlays the joiner made are in our table; the sandbox has its own copies.
    if (from != nullptr) {
      for (int slot = 0; slot < plan.sandbox()->slot_count; ++slot) {
        if (from->preset_slots[slot] >= 0) ::close(from->preset_slots[slot]);
        from->preset_slots[slot] = -1;
      }
    }
  } else {
    pid = ::clone(in_child_main, stack_top, flags, &ctx, &pidfd);
    clone_errno = errno;
  }

  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof(old));
  if (plan.join_netns() >= 0 && !joiner) sandbox::leave_network_namespace();

  if (ctx.supervisor_pidfd >= 0) ::close(ctx.supervisor_pidfd);

  SpawnResult result;
  if (pid < 0) {
    result.error = clone_errno;
    result.failed_step = joiner_step != nullptr ? joiner_step : "clone";
    result.failed_path = joiner_path;
    // A template this process made and could not enter (an outer filter that refuses setns):
    // the next commands run every step themselves. A layer that could not be made, or a
    // template the host changed since the plan looked, fails this command only. Never a
    // missing feature either way.
    if (template_failed || layers_failed) {
      result.sandbox_failed = true;
      result.feature_step = false;
      if (template_failed) sandbox::stop_mount_templates(result.failed_step);
      return result;
    }
    // A joiner that could not enter the pool's namespaces, which this process made and
    // entered before, met no missing feature: never a reason to run on the host (fallback
    // warn), whatever the errno.
    const bool joining_failed =
        joiner_step != nullptr && std::string_view(joiner_step).starts_with("setns");
    result.feature_step = plan.namespace_flags() != 0 && !joining_failed;
    // This command fails (set-up failed, never on the host); the next ones each make a
    // namespace of their own rather than fail the same way for the life of the process.
    if (joining_failed) sandbox::stop_pooling_network_namespaces();
    return result;
  }
  result.pid = pid;
  result.pidfd = pidfd;
  result.error = ctx.error;
  result.failed_step = ctx.failed_step;
  result.failed_path = ctx.failed_path;
  result.sandbox_failed = ctx.sandbox_failed;
  result.feature_step = ctx.feature_step;
  // A sandbox made from a template that failed its set-up: the next one gets a new template.
  if (from != nullptr && ctx.sandbox_failed) sandbox::retire_mount_templates();
  return result;
}

}  // namespace paddock::process
