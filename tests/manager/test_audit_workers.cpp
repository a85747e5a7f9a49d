// The post-run audits' worker threads (src/manager/audit_workers.hpp): started on demand, at
// most kMaxAuditWorkers, and an audit that cannot get a thread still runs.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "manager/audit_workers.hpp"
#include "paddock/errors.hpp"

namespace {

// Runs this test binary again on `tag` in a fresh process (no audit worker yet; a fork would
// inherit the counts without the threads), with RLIMIT_NPROC 0 when `no_threads`; its status.
int run_fresh(const char* tag, bool no_threads) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    rlimit none{0, 0};
    if (no_threads && ::setrlimit(RLIMIT_NPROC, &none) != 0) ::_exit(3);
    ::execl("/proc/self/exe", "paddock_tests", tag, nullptr);
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

using namespace std::chrono_literals;
using paddock::manager::audit_workers_started;
using paddock::manager::kMaxAuditWorkers;
using paddock::manager::post_audit;

TEST_CASE("audit workers (child): the bound", "[.audit-bound]") {
  // One worker made and idle first: a notified worker still counts as idle until it wakes,
  // and must not stop a second from starting for the jobs past it.
  post_audit([] {});
  const auto idle_by = std::chrono::steady_clock::now() + 10s;
  while (paddock::manager::audit_workers_idle() != 1 &&
         std::chrono::steady_clock::now() < idle_by) {
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(paddock::manager::audit_workers_idle() == 1);
  REQUIRE(audit_workers_started() == 1);
  // Jobs that block until released: with more jobs than workers, the bound shows, and each
  // worker takes the next job once free.
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> ran{0}, running{0}, most{0};
  constexpr int kJobs = 8;
  for (int i = 0; i < kJobs; ++i) {
    post_audit([&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return release; });
      --running;
      ++ran;
    });
  }
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (running.load() < static_cast<int>(kMaxAuditWorkers) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  CHECK(running.load() == static_cast<int>(kMaxAuditWorkers));
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  deadline = std::chrono::steady_clock::now() + 10s;
  while (ran.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  CHECK(ran.load() == kJobs);
  CHECK(most.load() == static_cast<int>(kMaxAuditWorkers));
  CHECK(audit_workers_started() == kMaxAuditWorkers);
}

TEST_CASE("audit workers (child): no thread to be had", "[.audit-no-thread]") {
  // Run by the case below in a fresh process of this binary, whose user may start no thread.
  // A Manager could not be made (it starts the first worker, so that a limit reached later,
  // a command's fork bomb, cannot put an audit on its loop)...
  CHECK_THROWS_AS(paddock::manager::start_audit_worker(), paddock::Error);
  // ...and an audit posted with no worker at all runs on the caller's thread, not never.
  const auto self = std::this_thread::get_id();
  bool here = false;
  post_audit([&] { here = std::this_thread::get_id() == self; });
  CHECK(here);
  CHECK(audit_workers_started() == 0);
}

TEST_CASE("audit workers: every job runs, on at most two threads however many wait",
          "[manager][audit]") {
  // Eight jobs posted back to back that block until released: two workers take two (a second
  // is started although the first, notified, has not woken yet), the rest wait their turn.
  CHECK(run_fresh("[.audit-bound]", false) == 0);
}

TEST_CASE("audit workers: with no thread to be had, no Manager, and the audit runs anyway",
          "[manager][audit]") {
  // RLIMIT_NPROC binds only a user without CAP_SYS_RESOURCE, so root cannot see it (the
  // unprivileged suite runs this).
  if (::geteuid() == 0) {
    SUCCEED("root: RLIMIT_NPROC does not bind; checked by the nobody suite");
    return;
  }
  CHECK(run_fresh("[.audit-no-thread]", true) == 0);
}
