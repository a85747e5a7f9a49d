#include "manager/warm_sandboxes.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "paddock/errors.hpp"
#include "process/init_handshake.hpp"
#include "process/init_image.hpp"
#include "process/spawn.hpp"
#include "sandbox/linux/mount_table.hpp"
#include "sandbox/linux/plan_builder.hpp"

namespace paddock::manager {
namespace {

// More than one per plan absorbs back-to-back commands while the next is being made.
constexpr std::size_t kPerPlan = 2;
constexpr std::size_t kPlansRemembered = 64;

// One thread for the whole process makes the sandboxes and runs the age sweeps: making one
// blocks a thread for a millisecond or more (a plan, a clone that returns once paddock-init
// runs), which must neither stall an event loop nor queue the post-run audits behind it. The
// thread never exits, so the parent-death signal of the sandboxes it clones fires only when
// the process dies. Hand-written (a queue of jobs by due time) rather than an Asio
// thread_pool with a timer: the timer would give that pool a reactor of its own, with the
// io_uring backend a ring, charged to an unprivileged user's RLIMIT_MEMLOCK; and no
// embedder's io_context is kept busy by a sweep.
class WarmThread {
 public:
  using clock = std::chrono::steady_clock;
  static WarmThread& get() {
    static auto* thread = new WarmThread;  // never destroyed: its thread runs to process exit
    return *thread;
  }
  void post(std::function<void()> job, clock::time_point when = clock::time_point::min()) {
    std::lock_guard lock(mutex_);
    jobs_.emplace(when, std::move(job));  // equal times keep their order
    wake_.notify_one();
  }

 private:
  WarmThread() {
    std::thread([this] { run(); }).detach();
  }
  [[noreturn]] void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (jobs_.empty()) {
        wake_.wait(lock);
      } else if (jobs_.begin()->first > clock::now()) {
        wake_.wait_until(lock, jobs_.begin()->first);
      } else {
        auto job = std::move(jobs_.begin()->second);
        jobs_.erase(jobs_.begin());
        lock.unlock();
        job();
        job = nullptr;  // what it captured goes before the lock is taken again
        lock.lock();
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<clock::time_point, std::function<void()>> jobs_;
};

// Whether the sandbox still has every mount its plan made: its table read in full. Not only
// when the kernel marked the open table changed (poll, POLLPRI): older kernels mark a
// namespace for a drop from outside only when another mount anywhere moved the global event
// counter since the namespace's own last mount, so on a quiet machine a drop went unmarked.
bool mounts_still_intact(const WarmSandbox& w) {
  return sandbox::mounts_intact(w.mount_table.get(), w.mount_points);
}

bool exited(int pidfd) {
  struct pollfd p {
    pidfd, POLLIN, 0
  };
  return ::poll(&p, 1, 0) != 0;  // readable (exited), or an error: not usable either way
}

}  // namespace

void run_on_warm_thread(std::function<void()> job, std::chrono::steady_clock::time_point when) {
  WarmThread::get().post(std::move(job), when);
}

WarmSandbox make_waiting_sandbox(const sandbox::SandboxContext& context, const WarmRequest& request,
                                 int dev_null, sandbox::AuditPlan* audit) {
  auto failed = [](const std::string& what) {
    return Error(errc::spawn_failed, what + ": " + std::strerror(errno));
  };
  WarmSandbox w;
  sandbox::SandboxPlan plan(context, request.cwd, request.cwd_identity, request.program,
                            &request.policy, sandbox::ChangeSetMaking::made_ahead);
  process::InitHandshake init;
  int control[2] = {-1, -1}, handoff[2] = {-1, -1};
  if (!init.open()) throw failed("pipe");
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
    throw failed("socketpair");
  }
  w.control.reset(control[0]);
  UniqueFd control_child(control[1]), handoff_child;
  if (request.filtered) {
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, handoff) != 0) {
      throw failed("socketpair for the proxy listener");
    }
    w.handoff.reset(handoff[0]);
    handoff_child.reset(handoff[1]);
    plan.set_proxy_handoff(handoff_child.get());
  }
  process::SpawnPlan spawn_plan({}, {}, {}, request.cwd);
  spawn_plan.set_sandbox(plan.clone_flags(), &plan.child(), plan.join_netns(), plan.join_userns());
  w.fingerprint = plan.fingerprint();
  // Made "waiting" (no command yet): `paddock changes` neither lists it nor offers to apply
  // it, and once its paddock is gone it is removed (nothing but the init ever ran over it).
  w.change_set = plan.change_set();
  w.mount_points = sandbox::planned_mount_points(plan.child());
  UniqueFd points = sandbox::mount_points_memfd(w.mount_points);
  if (points.get() < 0) throw failed("memfd for the planned mount points");
  if (process::init_image_fd() < 0) {
    throw Error(errc::unsupported_platform,
                "paddock-init cannot be executed here (no executable memfd): a sandbox made "
                "ahead needs it");
  }
  spawn_plan.set_init(process::init_image_fd(), init.child_end(), points.get(),
                      control_child.get());
  auto spawned =
      process::spawn(spawn_plan, process::ChildStdio{dev_null, dev_null, dev_null, dev_null});
  if (spawned.pid < 0) {
    errno = spawned.error;
    throw failed(std::string("setting up the sandbox (") + spawned.failed_step + ")");
  }
  w.pid = spawned.pid;
  w.pidfd.reset(spawned.pidfd);
  if (spawned.error != 0) {  // ~WarmSandbox kills and reaps it
    errno = spawned.error;
    throw failed(std::string("setting up the sandbox (") + spawned.failed_step + ")");
  }
  init.close_child_end();
  w.report = init.release_read_end();
  w.netns = plan.take_netns_lease();
  w.made = std::chrono::steady_clock::now();
  // Its mount table must be readable here, or it could not be checked when used.
  const std::string table = "/proc/" + std::to_string(w.pid) + "/mountinfo";
  w.mount_table.reset(::open(table.c_str(), O_RDONLY | O_CLOEXEC));
  if (!sandbox::mounts_intact(w.mount_table.get(), w.mount_points)) {
    throw Error(errc::spawn_failed,
                "the sandbox lost a mount while it was set up (a protected name on the host was "
                "renamed or removed meanwhile)");
  }
  if (audit != nullptr) *audit = plan.take_audit_plan();
  return w;
}

WarmSandbox::~WarmSandbox() { kill_and_reap(); }

void WarmSandbox::kill_and_reap() noexcept {
  if (pidfd.get() >= 0) {
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &info,
                    WEXITED | __WALL) != 0 &&
           errno == EINTR) {
    }
    pidfd.reset();
  }
  // Never used: no command wrote its layers (the init alone ran there, and it writes nothing).
  if (change_set) {
    try {
      sandbox::remove_change_set(*change_set);
    } catch (const std::exception&) {
    }
    change_set.reset();
  }
}

WarmSandboxes::WarmSandboxes(std::shared_ptr<const sandbox::SandboxContext> context,
                             std::size_t capacity, std::chrono::milliseconds max_age)
    : context_(std::move(context)),
      capacity_(capacity),
      max_age_(max_age),
      dev_null_(::open("/dev/null", O_RDWR | O_CLOEXEC)) {}

WarmSandboxes::~WarmSandboxes() { close(); }

std::optional<WarmSandbox> WarmSandboxes::take(const std::string& fingerprint) {
  std::vector<WarmSandbox> dead;
  std::optional<WarmSandbox> found;
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = ready_.begin(); it != ready_.end();) {
      const bool stale = now - it->made > max_age_;
      // Alive, and no mount of it dropped since it was made (see warm_sandboxes.hpp).
      if (stale || (!found && it->fingerprint == fingerprint &&
                    (exited(it->pidfd.get()) || !mounts_still_intact(*it)))) {
        dead.push_back(std::move(*it));
        it = ready_.erase(it);
      } else if (!found && it->fingerprint == fingerprint) {
        found = std::move(*it);
        it = ready_.erase(it);
      } else {
        ++it;
      }
    }
    ++(found ? hits_ : misses_);
  }
  for (auto& w : dead) discard(std::move(w));
  return found;
}

bool WarmSandboxes::claim(const std::string& fingerprint) {
  sweep();
  {
    std::lock_guard lock(mutex_);
    if (closed_ || dev_null_.get() < 0) return false;
    const auto now = std::chrono::steady_clock::now();
    while (!seen_.empty() && now - seen_.front().second > max_age_) seen_.pop_front();
    bool repeat = false;
    for (auto& [plan, when] : seen_) {
      if (plan == fingerprint) {
        repeat = true;
        when = now;
      }
    }
    if (!repeat) {
      if (seen_.size() >= kPlansRemembered) seen_.pop_front();
      seen_.emplace_back(fingerprint, now);
      return false;
    }
    if (making_ || waiting_for(fingerprint) >= kPerPlan) return false;
    making_ = true;  // claimed: make_ahead() follows
  }
  return true;
}

void WarmSandboxes::make_ahead(WarmRequest request) {
  WarmThread::get().post(
      [self = shared_from_this(), request = std::make_shared<WarmRequest>(std::move(request))] {
        self->make(std::move(*request));
      });
}

// On the warm thread: the same steps as a command's launch (exec_launch.cpp), with paddock-init
// started without a command. A sandbox that cannot be made is simply not there: the next
// command makes its own and meets the failure itself, with the full error.
void WarmSandboxes::make(WarmRequest request) {
  struct Done {  // making_ goes false however this ends
    WarmSandboxes* self;
    ~Done() {
      std::lock_guard lock(self->mutex_);
      self->making_ = false;
      self->made_.notify_all();
    }
  } done{this};
  for (std::size_t round = 0; round < kPerPlan; ++round) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) break;  // close() waits for this: no plan made in vain
    }
    WarmSandbox w;
    try {
      w = make_waiting_sandbox(*context_, request, dev_null_.get(), nullptr);
    } catch (const std::exception&) {
      break;  // the plan did not resolve (a path changed): the next command says why
    }
    const std::string fingerprint = w.fingerprint;
    store(std::move(w));
    std::lock_guard lock(mutex_);
    if (closed_ || waiting_for(fingerprint) >= kPerPlan) break;
  }
}

void WarmSandboxes::store(WarmSandbox sandbox) {
  std::vector<WarmSandbox> out;
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      out.push_back(std::move(sandbox));
    } else {
      ready_.push_back(std::move(sandbox));
      while (ready_.size() > capacity_) {
        out.push_back(std::move(ready_.front()));
        ready_.pop_front();
      }
    }
  }
  out.clear();  // killed and reaped (on the warm thread already)
  arm_sweep();
}

// Sandboxes past their age are discarded even when no command comes to look, by a job due
// then on the warm thread that holds the pool weakly.
void WarmSandboxes::arm_sweep() {
  std::chrono::steady_clock::time_point oldest;
  {
    std::lock_guard lock(mutex_);
    if (sweep_armed_ || closed_ || ready_.empty()) return;
    sweep_armed_ = true;
    oldest = ready_.front().made;
  }
  WarmThread::get().post(
      [weak = weak_from_this()] {
        auto self = weak.lock();
        if (!self) return;
        {
          std::lock_guard lock(self->mutex_);
          self->sweep_armed_ = false;
        }
        self->sweep();
        self->arm_sweep();
      },
      oldest + max_age_ + std::chrono::milliseconds(1));
}

std::size_t WarmSandboxes::waiting_for(const std::string& fingerprint) const {
  std::size_t n = 0;
  for (const auto& w : ready_) n += w.fingerprint == fingerprint ? 1 : 0;
  return n;
}

void WarmSandboxes::sweep() {
  std::vector<WarmSandbox> stale;
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    while (!ready_.empty() && (closed_ || now - ready_.front().made > max_age_)) {
      stale.push_back(std::move(ready_.front()));
      ready_.pop_front();
    }
  }
  for (auto& w : stale) discard(std::move(w));
}

void WarmSandboxes::discard(WarmSandbox sandbox) {
  if (sandbox.pidfd.get() < 0 && !sandbox.change_set) return;
  WarmThread::get().post(
      [w = std::make_shared<WarmSandbox>(std::move(sandbox))] { w->kill_and_reap(); });
}

void WarmSandboxes::close() {
  std::deque<WarmSandbox> all;
  {
    std::unique_lock lock(mutex_);
    closed_ = true;
    made_.wait(lock, [this] { return !making_; });  // bounded: one plan and one spawn
    all.swap(ready_);
  }
  // SIGKILL to all first, so their namespaces are torn down together; then reap each.
  for (auto& w : all) ::syscall(SYS_pidfd_send_signal, w.pidfd.get(), SIGKILL, nullptr, 0);
  for (auto& w : all) w.kill_and_reap();
}

std::uint64_t WarmSandboxes::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

std::size_t WarmSandboxes::waiting() const {
  std::lock_guard lock(mutex_);
  return ready_.size();
}

std::uint64_t WarmSandboxes::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace paddock::manager
