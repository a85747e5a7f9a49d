// The Manager under load and over time: many commands in flight on two threads, no fd leak,
// no zombie.
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>

#include "support/harness.hpp"

using namespace std::chrono_literals;

TEST_CASE("1,000 commands in flight at once on 2 threads", "[manager][load]") {
  test::Harness h(paddock::DefaultConfig(), 2);
  constexpr int kCount = 1000;
  std::atomic<int> running{0}, peak{0}, ok{0}, finished{0};
  std::promise<void> all_done;
  for (int i = 0; i < kCount; ++i) {
    paddock::ExecOptions o;
    o.on_started = [&](int) {
      int now = ++running;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
    };
    h.manager.async_exec(test::argv({"/bin/sleep", "3"}), o,
                         [&](std::error_code ec, paddock::ExecResult r) {
                           --running;
                           if (!ec && r.exit_code == 0) ++ok;
                           if (++finished == kCount) all_done.set_value();
                         });
  }
  REQUIRE(all_done.get_future().wait_for(120s) == std::future_status::ready);
  CHECK(ok == kCount);
  CHECK(peak == kCount);  // every one was running at the same time
  CHECK(test::zombie_children().empty());
}

TEST_CASE("no fd leak and no zombie across every kind of outcome", "[manager][leak]") {
  paddock::Config cfg = paddock::DefaultConfig();
  cfg.kill_grace = 200ms;
  cfg.exit_drain = 200ms;
  test::Harness h(cfg);
  h.exec(test::argv({"/bin/true"}));  // warm-up: the loop's own fds exist from here on
  const int before = test::count_open_fds();

  for (int round = 0; round < 5; ++round) {
    h.exec(test::argv({"/bin/true"}));
    h.exec(test::sh("exit 7"));
    h.exec(test::sh("kill -KILL $$"));
    h.exec(test::argv({"no-such-program-anywhere"}));
    paddock::ExecOptions bad_cwd;
    bad_cwd.cwd = "/no/such/dir";
    h.exec(test::argv({"/bin/true"}), bad_cwd);
    paddock::ExecOptions timeout;
    timeout.timeout = 100ms;
    h.exec(test::argv({"/bin/sleep", "10"}), timeout);
    paddock::ExecOptions input;
    input.stdin_data = "hello";
    h.exec(test::argv({"/bin/cat"}), input);
    paddock::ExecOptions capped;
    capped.max_output_bytes = 10;
    h.exec(test::argv({"/usr/bin/head", "-c", "100000", "/dev/zero"}), capped);
  }
  CHECK(test::count_open_fds() == before);
  CHECK(test::zombie_children().empty());
}
