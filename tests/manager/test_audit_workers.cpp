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

using namespace std::chrono_literals;
using paddock::manager::audit_workers_started;
using paddock::manager::kMaxAuditWorkers;
using paddock::manager::post_audit;

TEST_CASE("audit workers: every job runs, on at most two threads however many wait",
          "[manager][audit]") {
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
  const auto deadline = std::chrono::steady_clock::now() + 10s;
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
  while (ran.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  CHECK(ran.load() == kJobs);
  CHECK(most.load() == static_cast<int>(kMaxAuditWorkers));
  CHECK(audit_workers_started() == kMaxAuditWorkers);
}

TEST_CASE("audit workers (child): no thread to be had", "[.audit-no-thread]") {
  // Run by the case below in a fresh process of this binary, whose user may start no thread.
  const auto self = std::this_thread::get_id();
  bool here = false;
  post_audit([&] { here = std::this_thread::get_id() == self; });
  CHECK(here);
  CHECK(audit_workers_started() == 0);
}

TEST_CASE("audit workers: with no thread to be had, the audit runs on the caller's thread",
          "[manager][audit]") {
  // A fresh process (this binary again: no worker yet; a fork would inherit this one's count
  // without its threads) whose user may not start another thread: the job must still run (its
  // loop waits for it), on the posting thread. RLIMIT_NPROC binds only a user without
  // CAP_SYS_RESOURCE, so root cannot see it (the unprivileged suite runs this).
  if (::geteuid() == 0) {
    SUCCEED("root: RLIMIT_NPROC does not bind; checked by the nobody suite");
    return;
  }
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit none{0, 0};
    if (::setrlimit(RLIMIT_NPROC, &none) != 0) ::_exit(3);
    ::execl("/proc/self/exe", "paddock_tests", "[.audit-no-thread]", nullptr);
    ::_exit(127);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
