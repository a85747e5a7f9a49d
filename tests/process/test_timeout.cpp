// Timeouts and lifetime: the whole process group dies, a grandchild holding the pipe cannot
// hold the call, cancellation works like a timeout.
#include <signal.h>
#include <unistd.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/error.hpp>
#include <asio/post.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <thread>

#include "support/harness.hpp"

using namespace std::chrono_literals;
using paddock::errc;

namespace {

// Supervision on the host: these cases exercise process-group handling, pid files in the
// host's /tmp and SIGTERM semantics that a PID namespace changes (the command is PID 1 there);
// the sandboxed lifetime cases are in sandbox/test_attacks.cpp.
paddock::Config fast_config() {
  paddock::Config c = test::unclassified();
  c.sandbox.enabled = false;
  c.kill_grace = 300ms;
  c.exit_drain = 300ms;
  return c;
}

pid_t read_pid(const std::string& path) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

std::string temp_path(const char* name) {
  return "/tmp/paddock-test-" + std::to_string(::getpid()) + "-" + name;
}

}  // namespace

TEST_CASE(
    "a timeout kills the tree, including a setsid grandchild holding the pipe, within "
    "timeout + grace",
    "[timeout]") {
  const auto cfg = fast_config();
  test::Harness h(cfg);
  const std::string member = temp_path("member"), escaped = temp_path("escaped");
  // A group member that ignores SIGTERM (needs the SIGKILL after the grace), and a grandchild
  // that left the group with setsid and keeps stdout open.
  const std::string script = "trap '' TERM; sleep 30 & echo $! > " + member +
                             "; setsid sh -c 'echo $$ > " + escaped + "; exec sleep 30' & wait";
  paddock::ExecOptions o;
  o.timeout = 1s;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = h.exec(test::sh(script), o);
  const double took = test::seconds_since(t0);

  CHECK(r.ec == errc::timeout);
  CHECK(r.result.timed_out);
  CHECK(r.result.signal == SIGKILL);  // the leader ignored SIGTERM
  CHECK(r.result.error.find("timed out after 1000 ms") != std::string::npos);
  // timeout + grace + drain bound, plus scheduling slack.
  CHECK(took < 1.0 + 0.3 + 0.3 + 0.5);
  CHECK(took >= 1.0);

  pid_t member_pid = read_pid(member), escaped_pid = read_pid(escaped);
  REQUIRE(member_pid > 0);
  REQUIRE(escaped_pid > 0);
  std::this_thread::sleep_for(100ms);  // init reaps the orphaned member
  CHECK_FALSE(test::process_alive(member_pid));
  // The setsid grandchild left the process group; only the PID namespace (isolation layer)
  // reaches it. It did not hold the call (checked above); clean it up here.
  ::kill(escaped_pid, SIGKILL);
  ::unlink(member.c_str());
  ::unlink(escaped.c_str());
  CHECK(test::zombie_children().empty());
}

TEST_CASE("a well-behaved command ends at SIGTERM, before the grace period", "[timeout]") {
  auto cfg = fast_config();
  cfg.kill_grace = 5s;
  test::Harness h(cfg);
  paddock::ExecOptions o;
  o.timeout = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = h.exec(test::argv({"/bin/sleep", "30"}), o);
  CHECK(r.ec == errc::timeout);
  CHECK(r.result.signal == SIGTERM);
  CHECK(test::seconds_since(t0) < 2.0);
}

TEST_CASE("after the command exits, a grandchild holding the pipe does not hold the call",
          "[timeout]") {
  test::Harness h(fast_config());
  const std::string escaped = temp_path("bg");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = h.exec(test::sh("setsid sh -c 'echo $$ > " + escaped + "; exec sleep 30' & echo done"));
  CHECK(test::seconds_since(t0) < 2.0);
  CHECK_FALSE(r.ec);
  CHECK(r.result.exit_code == 0);
  CHECK(r.result.stdout_data == "done\n");
  if (pid_t pid = read_pid(escaped); pid > 0) ::kill(pid, SIGKILL);
  ::unlink(escaped.c_str());
}

TEST_CASE("background jobs left in the group die with the command", "[timeout]") {
  test::Harness h(fast_config());
  const std::string job = temp_path("job");
  auto r = h.exec(test::sh("sleep 30 & echo $! > " + job));
  CHECK(r.result.exit_code == 0);
  pid_t pid = read_pid(job);
  REQUIRE(pid > 0);
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(test::process_alive(pid));
  ::unlink(job.c_str());
}

TEST_CASE("cancellation through the token's slot stops the command", "[timeout][cancel]") {
  test::Harness h(fast_config());
  asio::cancellation_signal cancel;
  std::promise<std::pair<std::error_code, paddock::ExecResult>> done;
  std::promise<void> started;
  paddock::ExecOptions o;
  o.on_started = [&](int) { started.set_value(); };
  h.manager.async_exec(
      test::argv({"/bin/sleep", "30"}), o,
      asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec, paddock::ExecResult r) {
        done.set_value({ec, std::move(r)});
      }));
  started.get_future().wait();
  const auto t0 = std::chrono::steady_clock::now();
  // Emit from the loop, as Asio requires of a cancellation signal.
  asio::post(h.runtime.executor(), [&] { cancel.emit(asio::cancellation_type::terminal); });
  auto [ec, r] = done.get_future().get();
  CHECK(ec == asio::error::operation_aborted);
  CHECK(r.signal == SIGTERM);
  CHECK(test::seconds_since(t0) < 1.0);
}

TEST_CASE("close() kills what is in flight and refuses new commands", "[timeout][close]") {
  test::Harness h(fast_config());
  std::promise<std::error_code> done;
  std::promise<void> started;
  paddock::ExecOptions o;
  o.on_started = [&](int) { started.set_value(); };
  h.manager.async_exec(test::argv({"/bin/sleep", "30"}), o,
                       [&](std::error_code ec, paddock::ExecResult) { done.set_value(ec); });
  started.get_future().wait();
  h.manager.close();
  CHECK(done.get_future().get() == asio::error::operation_aborted);
  auto after = h.exec(test::argv({"/bin/true"}));
  CHECK(after.ec == errc::manager_closed);
}
