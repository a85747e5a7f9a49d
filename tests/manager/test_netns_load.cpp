// Sandboxes with their own network under load: thousands of filtered and blocked commands in
// flight through Managers that share one process (and, for a root supervisor, one pool of
// network namespaces). Every command must complete, sandboxed and successful: a namespace
// handed out while the previous command's proxy listener was still bound in it made the next
// child's bind fail (EADDRINUSE), which was then taken for an unsupported platform.
#include <unistd.h>

#include <asio/error.hpp>
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "process/pidfd_watch.hpp"
#include "support/harness.hpp"

using namespace std::chrono_literals;

namespace {

paddock::Config network_config(paddock::NetworkMode mode) {
  paddock::Config c = test::unclassified();
  c.sandbox.network.mode = mode;
  c.sandbox.network.allowed_domains = {"example.com"};
  // warn: a set-up failure taken for a missing feature would run the command on the host;
  // the result then says sandboxed == false, which fails the checks below.
  c.sandbox.fallback = paddock::FallbackMode::warn;
  return c;
}

int from_env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

// Runs `total` commands with `width` in flight, alternating between `a` and `b`: the first
// `width` from this thread, each later one from the completion of an earlier one (so on the
// runtime's threads too, as a daemon does). Returns the failures as text (empty: every one
// completed sandboxed with status 0 and no error).
std::string run_wave(paddock::Manager& a, paddock::Manager& b, int total, int width) {
  struct Wave {
    std::mutex m;
    std::condition_variable cv;
    int next = 0, finished = 0, failure_count = 0;
    std::string failures;
  };
  auto wave = std::make_shared<Wave>();
  std::function<void()> launch_next;  // lives until every command has completed (waited below)
  launch_next = [&, wave] {
    int i;
    {
      std::lock_guard lock(wave->m);
      if (wave->next == total) return;
      i = wave->next++;
    }
    paddock::ExecOptions o;
    o.timeout = 60s;
    // Half with output pipes, half status-only: both ways of supervising a command.
    o.discard_output = (i / 2) % 2 == 1;
    paddock::Manager& which = i % 2 == 0 ? a : b;
    which.async_exec(test::argv({"/bin/true"}), o,
                     [&launch_next, wave, i](std::error_code ec, paddock::ExecResult r) {
                       {
                         std::lock_guard lock(wave->m);
                         if ((ec || r.exit_code != 0 || !r.sandboxed || !r.error.empty()) &&
                             ++wave->failure_count <= 5) {
                           wave->failures += "command " + std::to_string(i) + ": " + ec.message() +
                                             " [" + std::string(paddock::code_string(ec)) +
                                             "] exit " + std::to_string(r.exit_code) +
                                             " sandboxed " + std::to_string(r.sandboxed) +
                                             " error: " + r.error + "\n";
                         }
                       }
                       launch_next();
                       std::lock_guard lock(wave->m);
                       ++wave->finished;
                       wave->cv.notify_all();
                     });
  };
  for (int i = 0; i < width; ++i) launch_next();
  std::unique_lock lock(wave->m);
  // A command that never completes fails the test instead of hanging it. The bound is on
  // progress, not on the whole wave: a loaded machine is slow, a stuck command makes none.
  const auto stall = std::chrono::seconds(from_env("PADDOCK_NETNS_LOAD_STALL_S", 120));
  int seen = -1;
  auto last_progress = std::chrono::steady_clock::now();
  while (wave->finished != total) {
    wave->cv.wait_for(lock, 1s);
    if (wave->finished != seen) {
      seen = wave->finished;
      last_progress = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_progress > stall) {
      // launch_next is still referenced by commands in flight: do not unwind past it.
      std::fprintf(stderr, "stuck: %d of %d commands made no progress for %llds (pid %d)\n%s",
                   total - wave->finished, total, static_cast<long long>(stall.count()),
                   static_cast<int>(::getpid()), wave->failures.c_str());
      if (std::getenv("PADDOCK_NETNS_LOAD_WAIT_ON_STALL") != nullptr) ::pause();  // for gdb -p
      std::abort();
    }
  }
  if (wave->failure_count > 5) {
    wave->failures += std::to_string(wave->failure_count - 5) + " more failures\n";
  }
  return wave->failures;
}

// The descriptors once no socket is open: an idle supervisor has none (a command's proxy
// session, and the pool's sock_diag check of its namespace, end on the runtime's threads just
// after the command completed).
std::map<int, std::string> settled_fds() {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto has_socket = [](const std::map<int, std::string>& fds) {
    for (const auto& [fd, link] : fds) {
      if (link.starts_with("socket:")) return true;
    }
    return false;
  };
  auto fds = test::open_fds();
  while (has_socket(fds) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    fds = test::open_fds();
  }
  return fds;
}

std::string threads_outside_home_netns() {
  std::error_code ec;
  const auto home = std::filesystem::read_symlink("/proc/self/ns/net", ec);
  std::string out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const auto ns = std::filesystem::read_symlink(task.path() / "ns/net", ec);
    if (!ec && ns != home) out += task.path().filename().string() + " in " + ns.string() + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("thousands of filtered and blocked commands at width 32: none fails, nothing leaks",
          "[netns][netns-load]") {
  // PADDOCK_NETNS_LOAD_TOTAL / _WIDTH: a longer or wider soak by hand (e.g. under a sanitizer).
  const int total = from_env("PADDOCK_NETNS_LOAD_TOTAL", 2000);
  const int width = from_env("PADDOCK_NETNS_LOAD_WIDTH", 32);
  test::Harness filtered(network_config(paddock::NetworkMode::filtered));
  paddock::Manager blocked(filtered.runtime.executor(),
                           network_config(paddock::NetworkMode::blocked));
  // Warm-up: the loop's own descriptors, the resolver and the pool exist from here on.
  const std::string warm_up = run_wave(filtered.manager, blocked, 64, 32);
  INFO(warm_up);
  REQUIRE(warm_up.empty());
  const auto fds_before = settled_fds();

  const auto missed_before = paddock::process::PidfdWatch::missed_wakeups();
  const std::string failures = run_wave(filtered.manager, blocked, total, width);
  INFO(failures);
  CHECK(failures.empty());
  // Every exit's pidfd wake-up came: the loop lost no completion (Asio 1.22's io_uring
  // backend did, while paddock cancelled operations). Under heavy load the safety-net timer
  // may find an exit first; its wake-up still comes, just later: polled with a deadline.
  const auto wake_deadline = std::chrono::steady_clock::now() + 10s;
  while (paddock::process::PidfdWatch::missed_wakeups() > missed_before &&
         std::chrono::steady_clock::now() < wake_deadline) {
    std::this_thread::sleep_for(10ms);
  }
  INFO("exits found by the timer only reaping, wake-up still to come: "
       << paddock::process::PidfdWatch::late_reaps());
  CHECK(paddock::process::PidfdWatch::missed_wakeups() <= missed_before);
  CHECK(test::zombie_children().empty());
  // Sandboxes made ahead hold descriptors while they wait, and the thread that makes them
  // is in a sandbox's network namespace for each clone: closing kills and reaps them, and
  // waits for the one being made.
  filtered.manager.close();
  blocked.close();
  // Every thread of ours is back in its own network namespace: a spawning thread that stayed
  // in a sandbox's would make its later sockets (the proxy's upstream ones) there.
  CHECK(threads_outside_home_netns().empty());
  CHECK(test::fds_left_open_since(fds_before, 10s) == "");
}
