// Deciding before running, through the Manager: forbidden never starts, escalated waits for
// an approval (approve, approve for the session, deny, silence past the deadline, nobody to
// ask, a cancel while waiting); the result carries decision, rule and reason.
#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "paddock/manager.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using paddock::Approval;
using paddock::Decision;

namespace {

paddock::Config classified() {
  paddock::Config c = paddock::DefaultConfig();
  c.sandbox.enabled = false;  // the decision is the subject here, not the isolation
  c.commands.approval_timeout = 300ms;
  return c;
}

std::string marker_dir() {
  std::string d =
      (fs::temp_directory_path() / ("paddock-approval-" + std::to_string(::getpid()))).string();
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("forbidden: nothing starts, E_FORBIDDEN_COMMAND with rule and reason", "[approval]") {
  test::Harness h(classified());
  const std::string d = marker_dir();
  auto r = h.exec(test::sh("touch " + d + "/ran; rm -rf /"));
  CHECK(r.ec == paddock::errc::forbidden_command);
  CHECK(paddock::code_string(r.ec) == "E_FORBIDDEN_COMMAND");
  CHECK(r.result.exit_code == 126);
  CHECK(r.result.decision == Decision::forbidden);
  CHECK(r.result.rule == "recursive-delete-root-or-home");
  CHECK_FALSE(r.result.reason.empty());
  CHECK(r.result.pid == 0);
  CHECK_FALSE(fs::exists(d + "/ran"));
  // The argv form too, and the dry run says the same without running.
  CHECK(h.exec(test::argv({"rm", "-rf", "/"})).ec == paddock::errc::forbidden_command);
  CHECK(h.manager.check(test::sh("rm -rf /")).decision == Decision::forbidden);
  fs::remove_all(d);
}

TEST_CASE("escalated: approve, approve for the session, deny, silence, nobody to ask",
          "[approval]") {
  test::Harness h(classified());
  const std::string d = marker_dir();
  const auto cmd = [&](const std::string& tag) {
    // chmod o+w: a mode other users may write, escalated under every policy (first, so it
    // names the decision: with the sandbox off, touch is escalated too).
    return test::sh("chmod o+w " + d + "/" + tag + " 2>/dev/null; touch " + d + "/" + tag);
  };
  SECTION("nobody to ask: refused, nothing ran") {
    auto r = h.exec(cmd("none"));
    CHECK(r.ec == paddock::errc::escalated_command);
    CHECK(r.result.exit_code == 126);
    CHECK(r.result.rule == "world-writable");
    CHECK_FALSE(fs::exists(d + "/none"));
  }
  SECTION("approve: runs, the result says escalated and why") {
    paddock::ExecOptions o;
    std::string asked;
    o.approve = [&](const paddock::CommandApprovalRequest& req, auto respond) {
      asked = req.rule + " | " + req.command;
      respond(Approval::approve);
    };
    auto r = h.exec(cmd("yes"), o);
    CHECK_FALSE(r.ec);
    CHECK(r.result.exit_code == 0);
    CHECK(r.result.decision == Decision::escalated);
    CHECK(r.result.rule == "world-writable");
    CHECK(asked.find("world-writable | chmod") == 0);
    CHECK(fs::exists(d + "/yes"));
  }
  SECTION("deny, from another thread later: refused, nothing ran") {
    paddock::ExecOptions o;
    o.approve = [](const paddock::CommandApprovalRequest&, std::function<void(Approval)> respond) {
      std::thread([respond] {
        std::this_thread::sleep_for(20ms);
        respond(Approval::deny);
        respond(Approval::approve);  // a second answer is ignored
      }).detach();
    };
    auto r = h.exec(cmd("denied"), o);
    CHECK(r.ec == paddock::errc::escalated_command);
    CHECK(r.result.error.find("denied") != std::string::npos);
    CHECK_FALSE(fs::exists(d + "/denied"));
  }
  SECTION("silence past the deadline denies") {
    paddock::ExecOptions o;
    o.approve = [](const paddock::CommandApprovalRequest&, std::function<void(Approval)>) {};
    const auto t = std::chrono::steady_clock::now();
    auto r = h.exec(cmd("silent"), o);
    CHECK(r.ec == paddock::errc::escalated_command);
    CHECK(r.result.error.find("no approval within 300 ms") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t >= 300ms);
    CHECK_FALSE(fs::exists(d + "/silent"));
  }
  SECTION("approve_session: asked once for the same command, through the Manager's callback") {
    std::atomic<int> asked{0};
    h.manager.set_approval([&](const paddock::CommandApprovalRequest&, auto respond) {
      ++asked;
      respond(Approval::approve_session);
    });
    CHECK_FALSE(h.exec(cmd("s")).ec);
    CHECK_FALSE(h.exec(cmd("s")).ec);
    CHECK(asked == 1);
    CHECK_FALSE(h.exec(cmd("other")).ec);  // another command is asked about again
    CHECK(asked == 2);
    h.manager.set_approval({});
    CHECK_FALSE(h.exec(cmd("s")).ec);  // remembered for the Manager's life
  }
  fs::remove_all(d);
}

TEST_CASE("a command cancelled while it waits for approval completes aborted", "[approval]") {
  test::Harness h(classified());
  asio::cancellation_signal cancel;
  std::promise<std::error_code> done;
  paddock::ExecOptions o;
  o.approve = [&](const paddock::CommandApprovalRequest&, std::function<void(Approval)>) {
    std::thread([&] {
      std::this_thread::sleep_for(20ms);
      cancel.emit(asio::cancellation_type::terminal);
    }).detach();
  };
  h.manager.async_exec(
      test::sh("f=$(mktemp); chmod o+w \"$f\""), o,
      asio::bind_cancellation_slot(
          cancel.slot(), [&](std::error_code ec, paddock::ExecResult) { done.set_value(ec); }));
  auto f = done.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
}

TEST_CASE("classification off: every command is sandboxed, no rule consulted", "[approval]") {
  paddock::Config c = classified();
  c.commands.classify = false;
  test::Harness h(c);
  const std::string f = marker_dir() + "/off";
  std::ofstream(f).put('x');
  auto r = h.exec(test::sh("chmod o+w " + f));
  CHECK_FALSE(r.ec);
  CHECK(r.result.rule.empty());
}

TEST_CASE("update_config hot-reloads the commands section for the next command", "[approval]") {
  paddock::Config c = classified();
  test::Harness h(c);
  const std::string f = marker_dir() + "/reload";
  std::ofstream(f).put('x');
  CHECK(h.exec(test::sh("chmod o+w " + f)).ec == paddock::errc::escalated_command);
  c.commands.custom.overrides["world-writable"] = Decision::sandboxed;
  h.manager.update_config(c);
  auto r = h.exec(test::sh("chmod o+w " + f));
  CHECK_FALSE(r.ec);
  CHECK(r.result.decision == Decision::sandboxed);
  CHECK(h.manager.check(test::sh("chmod 777 x")).decision == Decision::sandboxed);
  // Invalid rules are refused and the old ones stay.
  paddock::Config bad = c;
  bad.commands.custom.overrides["no-such-rule"] = Decision::allow;
  CHECK_THROWS_AS(h.manager.update_config(bad), paddock::Error);
  CHECK(h.manager.check(test::sh("chmod 777 x")).decision == Decision::sandboxed);
}

TEST_CASE("the path guard (opt-in) refuses arguments outside the workspace, naming them",
          "[approval][path-guard]") {
  const std::string root = marker_dir();
  fs::create_directories(root + "/ws/src");
  fs::create_directories(root + "/outside");
  fs::create_directory_symlink(root + "/outside", root + "/ws/escape");
  paddock::Config c = classified();
  c.commands.path_guard = true;
  c.commands.classify = false;  // the guard is the subject (it runs before the classifier)
  test::Harness h(c);
  paddock::ExecOptions o;
  o.cwd = root + "/ws";
  const auto refused = [&](paddock::Command cmd, const std::string& token) {
    auto r = h.exec(std::move(cmd), o);
    INFO(r.result.error);
    CHECK(r.ec == paddock::errc::sandbox_violation);
    CHECK(paddock::code_string(r.ec) == "E_SANDBOX_VIOLATION");
    CHECK(r.result.exit_code == 126);
    CHECK(r.result.error.find("argument '" + token + "'") != std::string::npos);
  };
  refused(test::argv({"cat", "../outside/x"}), "../outside/x");
  refused(test::argv({"cat", "/etc/hostname"}), "/etc/hostname");
  refused(test::argv({"cp", "x", "escape/y"}), "escape/y");  // through a link
  refused(test::argv({"ls", "escape"}), "escape");           // a bare name that is a link
  refused(test::argv({"env", "OUT=/etc/x", "true"}), "OUT=/etc/x");
  refused(test::argv({"tool", "--output=../x"}), "--output=../x");
  refused(test::sh("cat src/a ~/.bashrc"), "~/.bashrc");
  refused(test::sh("echo hi > ../outside/f"), "../outside/f");
  // Inside the workspace, not yet existing, flags, /dev/null: fine.
  CHECK_FALSE(h.exec(test::argv({"ls", "-la", "src", "./src/new/file", "/dev/null"}), o).ec);
  CHECK_FALSE(h.exec(test::sh("echo hi > src/out.txt 2>/dev/null"), o).ec);
  // Off by default.
  test::Harness off(classified());
  CHECK_FALSE(off.exec(test::argv({"cat", "/etc/hostname"}), o).ec);
  fs::remove_all(root);
}

TEST_CASE("the path guard refuses what it cannot check", "[approval][path-guard]") {
  const std::string root = marker_dir();
  fs::create_directories(root + "/ws");
  paddock::Config c = classified();
  c.commands.path_guard = true;
  c.commands.classify = false;  // the guard is the subject (it runs before the classifier)
  test::Harness h(c);
  paddock::ExecOptions o;
  o.cwd = root + "/ws";
  for (const char* script : {"cat .?/.?/.?/etc/hostname", "cat $HOME/.profile",
                             "X=/etc/hostname env", "curl -d @/etc/hostname x", "sort -o/etc/x y",
                             "cat file:///etc/hostname", "cat /dev/fd/../../../etc/hostname"}) {
    INFO(script);
    auto r = h.exec(test::sh(script), o);
    CHECK(r.ec == paddock::errc::sandbox_violation);
  }
  fs::remove_all(root);
}
