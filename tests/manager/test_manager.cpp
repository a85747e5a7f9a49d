// The Manager under load and over time: many commands in flight on two threads, no fd leak,
// no zombie.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/error.hpp>
#include <asio/io_context.hpp>
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <thread>

#include "base/off_loop_work.hpp"
#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

using namespace std::chrono_literals;

TEST_CASE("1,000 commands in flight at once on 2 threads", "[manager][load]") {
  test::Harness h(test::unclassified());
  constexpr int kCount = 1000;
  // Each command blocks opening a FIFO for reading until the test opens it for writing, which
  // it does only once all 1,000 have started: "all running at once" holds by construction,
  // however slowly a loaded machine starts them (a fixed `sleep 10` did not).
  test::Tree t;
  const std::string fifo = t.outside + "/gate";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::atomic<int> running{0}, peak{0}, ok{0}, finished{0};
  std::promise<void> all_done;
  for (int i = 0; i < kCount; ++i) {
    paddock::ExecOptions o;
    o.timeout = 300s;  // only if the gate never opens (a failure below)
    o.on_started = [&](int) {
      int now = ++running;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
    };
    h.manager.async_exec(test::argv({"/bin/cat", fifo}), o,
                         [&](std::error_code ec, paddock::ExecResult r) {
                           --running;
                           if (!ec && r.exit_code == 0) ++ok;
                           if (++finished == kCount) all_done.set_value();
                         });
  }
  const auto deadline = std::chrono::steady_clock::now() + 240s;
  while (peak.load() < kCount && finished.load() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(peak == kCount);  // every one was running at the same time
  // Open the gate: every reader's open returns, and closing gives each one EOF. A command is
  // "started" once its leader (paddock-init) runs, which may be before its `cat` reached the
  // FIFO: such a late reader blocks in open again, so the gate opens until every one ended.
  auto done = all_done.get_future();
  const auto gate_deadline = std::chrono::steady_clock::now() + 240s;
  while (done.wait_for(20ms) != std::future_status::ready &&
         std::chrono::steady_clock::now() < gate_deadline) {
    const int gate = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO: no reader
    if (gate >= 0) ::close(gate);
  }
  REQUIRE(done.wait_for(0s) == std::future_status::ready);
  CHECK(ok == kCount);
  CHECK(test::zombie_children().empty());
}

TEST_CASE("no fd leak and no zombie across every kind of outcome", "[manager][leak]") {
  paddock::Config cfg = test::unclassified();
  cfg.kill_grace = 200ms;
  cfg.exit_drain = 200ms;
  // Sandboxes made ahead hold descriptors between commands by design (their own leak check:
  // test_warm_sandboxes.cpp, at close).
  cfg.warm_sandboxes = 0;
  test::Harness h(cfg);
  h.exec(test::argv({"/bin/true"}));  // warm-up: the loop's own fds exist from here on
  const auto before = test::open_fds();

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
  CHECK(test::fds_left_open_since(before) == "");
  CHECK(test::zombie_children().empty());
}

TEST_CASE("destroying the runtime kills and reaps what still runs on it", "[manager][lifetime]") {
  const int fds_before = test::count_open_fds();
  std::promise<int> started;
  {
    // Its own runtime, destroyed while the command runs; the Manager is left alive on
    // purpose (an embedder that tears its loop down first).
    auto runtime = std::make_unique<paddock::Runtime>();
    auto manager = std::make_unique<paddock::Manager>(runtime->executor(), test::unclassified());
    paddock::ExecOptions o;
    o.on_started = [&](int pid) { started.set_value(pid); };
    manager->async_exec(test::argv({"/bin/sleep", "30"}), o,
                        [](std::error_code, paddock::ExecResult) {});
    int pid = started.get_future().get();
    REQUIRE(test::process_alive(pid));
    runtime.reset();
    CHECK_FALSE(test::process_alive(pid));
    manager.reset();
  }
  CHECK(test::zombie_children().empty());
  CHECK(test::count_open_fds() == fds_before);
}

TEST_CASE("when the loop runs dry a finished command holds nothing, and the loop can go at once",
          "[manager][lifetime]") {
  // The post-run audit runs on a worker off the loop and holds the operation (its strand, its
  // timer, the caller's callbacks) until just after it posts its result back. The caller hears
  // of the result as soon as that post runs, so run() returned, and an embedder destroyed the
  // io_context, while the worker still held the operation: its destruction then touched a
  // destroyed context (heap corruption at exit, seen once in 40 loaded runs). Each round: a
  // fresh context, one sandboxed command (it is audited), the context destroyed the moment
  // run() returns; what the command's callbacks captured must already be released.
  for (int i = 0; i < 60; ++i) {
    auto sentinel = std::make_shared<int>(0);
    std::error_code ec = asio::error::would_block;
    {
      asio::io_context io(1);
      paddock::Manager manager(io.get_executor(), test::unclassified());
      paddock::ExecOptions o;
      o.on_started = [sentinel](int) {};
      manager.async_exec(test::argv({"/bin/true"}), std::move(o),
                         [&](std::error_code e, paddock::ExecResult) { ec = e; });
      io.run();
      REQUIRE_FALSE(ec);
      INFO("round " << i);
      REQUIRE(sentinel.use_count() == 1);
    }
  }
  CHECK(test::zombie_children().empty());
}

TEST_CASE("a context's shutdown waits for work off its loop, and refuses it afterwards",
          "[manager][lifetime]") {
  // base/off_loop_work.hpp: a ticket taken while the context lives holds its destruction
  // until released; once the context is shutting down no ticket is given.
  std::shared_ptr<paddock::base::OffLoopGate> gate;
  std::atomic<bool> released{false};
  std::thread holder;
  {
    asio::io_context io(1);
    gate = paddock::base::OffLoopWork::gate_of(io.get_executor());
    paddock::base::OffLoopTicket ticket(gate);
    REQUIRE(ticket);
    holder = std::thread([t = std::move(ticket), &released]() mutable {
      std::this_thread::sleep_for(200ms);  // the context's destructor runs meanwhile
      released = true;
      t.release();
    });
  }  // ~io_context: returns only after the ticket is released
  CHECK(released);
  holder.join();
  CHECK_FALSE(paddock::base::OffLoopTicket(gate));
}

TEST_CASE("an approval answer kept past its context touches nothing of it", "[manager][lifetime]") {
  // The caller keeps the responder and answers after the io_context is gone (the command was
  // abandoned with it): the answer must neither post to the dead context nor destroy the
  // operation after its services. (Sequential: the race of an answer *during* the context's
  // destruction is what the gate above closes; this checks the answer after it.)
  std::function<void(paddock::Approval)> kept;
  std::promise<void> asked;
  {
    asio::io_context io(1);
    auto cfg = test::unclassified();
    cfg.commands = paddock::DefaultConfig().commands;  // classify: `chmod o+w` is escalated
    paddock::Manager manager(io.get_executor(), cfg);
    paddock::ExecOptions o;
    o.approve = [&](const paddock::CommandApprovalRequest&, auto respond) {
      kept = std::move(respond);
      asked.set_value();
    };
    auto question = asked.get_future();
    manager.async_exec(test::sh("chmod o+w x"), std::move(o),
                       [](std::error_code, paddock::ExecResult) {});
    while (question.wait_for(0s) != std::future_status::ready) io.run_one();
  }
  REQUIRE(kept);
  kept(paddock::Approval::approve);  // nothing happens, nothing crashes
  kept = nullptr;
  CHECK(test::zombie_children().empty());
}

TEST_CASE("close() racing async_exec never lets a command run on", "[manager][close]") {
  for (int i = 0; i < 30; ++i) {
    test::Harness h;
    std::promise<std::error_code> done;
    h.manager.async_exec(test::argv({"/bin/sleep", "5"}), {},
                         [&](std::error_code ec, paddock::ExecResult) { done.set_value(ec); });
    h.manager.close();
    auto f = done.get_future();
    REQUIRE(f.wait_for(3s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
  }
}

TEST_CASE("status-only commands (discard_output) leave nothing behind", "[manager][leak]") {
  test::Harness h;
  paddock::ExecOptions o;
  o.discard_output = true;
  h.exec(test::argv({"/bin/true"}), o);
  const auto before = test::open_fds();
  const auto rss_before = test::rss_kib();
  for (int i = 0; i < 2000; ++i) h.exec(test::argv({"/bin/true"}), o);
  // Sandboxes made ahead hold descriptors while they wait; close() kills and reaps them.
  h.manager.close();
  CHECK(test::fds_left_open_since(before) == "");
  CHECK(test::zombie_children().empty());
  // A leaked operation costs ~6 KiB; 2,000 of them would be 12 MiB.
  CHECK(test::rss_kib() < rss_before + 4 * 1024);
}

TEST_CASE("ExecControl signals the running command and says false before and after", "[manager]") {
  test::Harness h(test::unclassified());
  auto control = std::make_shared<paddock::ExecControl>();
  CHECK_FALSE(control->signal(SIGTERM));  // not started
  paddock::ExecOptions o;
  o.control = control;
  bool signalled = false;
  o.on_started = [&](int) { signalled = control->signal(SIGKILL); };
  auto r = h.exec(test::sh("sleep 30"), o);
  CHECK(signalled);
  CHECK(r.result.signal == SIGKILL);
  CHECK_FALSE(control->signal(SIGTERM));  // ended
}

// The kernel drops a signal that reaches PID 1 of a namespace unblocked and without a handler.
// paddock-init once unblocked everything across its own execve, so a SIGTERM sent right as a
// command started (a client's `signal` after `started`, a timeout) could vanish and the
// command ran on (a rare CI failure of the serve client's signal test). Signals sent the
// moment each command starts, in fresh sandboxes and in sandboxes made ahead, must all land.
TEST_CASE("a signal sent the moment a command starts is never lost", "[manager][signal]") {
  auto run_all = [](paddock::Config config, const char* what) {
    INFO(what);
    test::Harness h(std::move(config));
    for (int i = 0; i < 40; ++i) {
      auto control = std::make_shared<paddock::ExecControl>();
      paddock::ExecOptions o;
      o.control = control;
      o.timeout = std::chrono::seconds(5);  // a lost signal shows as a timeout
      o.on_started = [control](int) { control->signal(SIGTERM); };
      auto r = h.exec(test::argv({"/bin/sleep", "30"}), o);
      INFO("run " << i);
      REQUIRE_FALSE(r.result.timed_out);
      REQUIRE(r.result.signal == SIGTERM);
    }
  };
  auto fresh = test::unclassified();
  fresh.warm_sandboxes = 0;
  run_all(fresh, "a fresh sandbox per command");
  run_all(test::unclassified(), "sandboxes made ahead");
}
