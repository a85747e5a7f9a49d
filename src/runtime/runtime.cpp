#include "paddock/runtime.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "paddock/errors.hpp"
#include "process/spawn.hpp"

namespace paddock {
namespace {

std::string read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value)) return "";
  return value;
}

// Asio 1.22's ring size (asio/detail/io_uring_service.hpp: ring_size), so a probe asks for what
// the event loop will.
constexpr unsigned kAsioRingEntries = 16384;

}  // namespace

std::string explain_io_uring_failure(int err) {
  std::string cause;
  std::string disabled = read_sysctl("/proc/sys/kernel/io_uring_disabled");
  if (disabled == "2") {
    cause = "kernel.io_uring_disabled=2 forbids it for everyone";
  } else if (disabled == "1") {
    cause = "kernel.io_uring_disabled=1 allows it only to the io_uring_group";
  } else if (err == EPERM || err == ENOSYS) {
    cause = "a seccomp profile denies io_uring_setup (Docker's default profile does)";
  } else if (err == ENOMEM) {
    // Without CAP_IPC_LOCK the ring is charged to RLIMIT_MEMLOCK, and rings of closed
    // io_contexts are released asynchronously.
    struct rlimit lim {};
    ::getrlimit(RLIMIT_MEMLOCK, &lim);
    cause = "the ring does not fit in this user's locked-memory limit (RLIMIT_MEMLOCK " +
            std::to_string(lim.rlim_cur / 1024) + " KiB; raise it with ulimit -l)";
  } else {
    cause = "io_uring_setup failed";
  }
  return "io_uring is unavailable: " + cause + " (" + std::strerror(err) +
         "); allow it (sysctl kernel.io_uring_disabled=0, or a seccomp profile that permits "
         "io_uring_*) or build paddock with -DPADDOCK_IO_BACKEND=epoll";
}

IoBackendStatus probe_io_uring() {
  IoBackendStatus status;
  status.backend = "io_uring";
  io_uring ring;
  int rc = io_uring_queue_init(kAsioRingEntries, &ring, 0);
  if (rc == 0) {
    io_uring_queue_exit(&ring);
    return status;
  }
  status.usable = false;
  status.problem = explain_io_uring_failure(-rc);
  return status;
}

IoBackendStatus probe_io_backend() {
#if PADDOCK_IO_URING
  return probe_io_uring();
#else
  IoBackendStatus status;
  status.backend = "epoll";
  return status;
#endif
}

void init_process_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // fds 0-2 open: otherwise a pipe we create could become a child's "stdout" by accident
    // (and dup2 of an fd onto itself keeps O_CLOEXEC).
    for (int fd = 0; fd <= 2; ++fd) {
      if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
        int null_fd = ::open("/dev/null", O_RDWR);
        if (null_fd >= 0 && null_fd != fd) ::close(null_fd);
      }
    }
    // 10,000 supervised children need 30,000 fds (pidfd + two pipes each).
    struct rlimit lim;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
      process::remember_original_nofile(lim.rlim_cur);
      if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
      }
    }
    // A command that closes its stdin early must not kill the supervisor with SIGPIPE on our
    // write; a disposition the embedder chose (a handler, SIG_IGN) is left alone.
    ignore_sigpipe_unless_handled();
  });
}

void ignore_sigpipe_unless_handled() {
  struct sigaction current;
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

void start_event_backend(const asio::any_io_executor& executor) {
#if PADDOCK_IO_URING
  // The kernel releases a closed ring's locked memory asynchronously, so a ring that would fit
  // may fail with ENOMEM just after another process of this user (or an earlier io_context of
  // ours) exited. Asio registers its service only when construction succeeds, so asking again
  // is safe: poll for up to 2 s before saying the limit is too small.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    try {
      asio::steady_timer first_io_object(executor);
      return;
    } catch (const std::system_error& e) {
      if (e.code().value() != ENOMEM || std::chrono::steady_clock::now() + pause > deadline) {
        throw Error(errc::dependency_missing, explain_io_uring_failure(e.code().value()));
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
#else
  try {
    asio::steady_timer first_io_object(executor);
  } catch (const std::system_error& e) {
    throw Error(errc::dependency_missing,
                std::string("the event loop could not start: ") + e.what());
  }
#endif
}

namespace {
int checked_concurrency_hint(const RuntimeOptions& options) {
  if (options.threads == 0) throw Error(errc::config_invalid, "threads: must be at least 1");
  init_process_once();
  return static_cast<int>(options.threads);
}
}  // namespace

Runtime::Runtime(RuntimeOptions options)
    : io_(checked_concurrency_hint(options)), work_(io_.get_executor()) {
  start_event_backend(io_.get_executor());  // before any thread: a clear error, not a crash
  threads_.reserve(options.threads);
  for (unsigned i = 0; i < options.threads; ++i) threads_.emplace_back([this] { io_.run(); });
}

// Destroying the runtime ends what runs on it: pending operations are destroyed, which kills
// and reaps their children. join() is the graceful way.
Runtime::~Runtime() {
  work_.reset();
  io_.stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void Runtime::join() {
  work_.reset();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace paddock
