// `paddock run`: the exit-status contract, the one-line reasons, --json, live streaming.
// The CLI is run as a command by paddock's own Manager.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/harness.hpp"

namespace {

paddock::BlockingResult paddock_cli(std::vector<std::string> args) {
  static test::Harness h;
  args.insert(args.begin(), PADDOCK_BINARY);
  return h.exec(paddock::Command::exec(std::move(args)));
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("paddock run: the command's status, 128+N, 124, 125, 127", "[cli]") {
  CHECK(paddock_cli({"run", "--", "/bin/true"}).result.exit_code == 0);
  CHECK(paddock_cli({"run", "-c", "exit 42"}).result.exit_code == 42);
  CHECK(paddock_cli({"run", "-c", "kill -KILL $$"}).result.exit_code == 128 + 9);

  auto timeout = paddock_cli({"run", "--timeout", "0.3", "--", "/bin/sleep", "30"});
  CHECK(timeout.result.exit_code == 124);
  CHECK(lines(timeout.result.stderr_data) == 1);
  CHECK(timeout.result.stderr_data.find("paddock: timed out after 300 ms") == 0);

  auto missing = paddock_cli({"run", "--", "no-such-program-y"});
  CHECK(missing.result.exit_code == 127);
  CHECK(lines(missing.result.stderr_data) == 1);
  CHECK(missing.result.stderr_data.find("command not found: no-such-program-y") !=
        std::string::npos);

  auto bad_cwd = paddock_cli({"run", "--cwd", "/no/such", "--", "/bin/true"});
  CHECK(bad_cwd.result.exit_code == 125);
  CHECK(bad_cwd.result.stderr_data ==
        "paddock: E_SPAWN_FAILED: working directory /no/such: No such file or directory\n");

  CHECK(paddock_cli({"run"}).result.exit_code == 125);
  CHECK(paddock_cli({"run", "--bogus-flag", "--", "true"}).result.exit_code == 125);
}

TEST_CASE("paddock run streams the command's output live, stdout and stderr apart", "[cli]") {
  auto r = paddock_cli({"run", "-c", "echo to-out; echo to-err >&2; exit 5"});
  CHECK(r.result.exit_code == 5);
  CHECK(r.result.stdout_data == "to-out\n");
  CHECK(r.result.stderr_data == "to-err\n");
}

TEST_CASE("paddock run --json prints one object with the contract's fields", "[cli]") {
  auto r = paddock_cli({"run", "--json", "--max-output", "4", "-c", "printf 123456; exit 2"});
  CHECK(r.result.exit_code == 2);
  auto j = nlohmann::json::parse(r.result.stdout_data);
  for (const char* key : {"exit_code", "signal", "timed_out", "stdout", "stderr", "truncated",
                          "duration_ms", "sandboxed", "decision", "violations"}) {
    CHECK(j.contains(key));
  }
  CHECK(j["exit_code"] == 2);
  CHECK(j["stdout"] == "1234");
  CHECK(j["truncated"] == true);
  CHECK(j["violations"].is_array());

  auto t = paddock_cli({"run", "--json", "--timeout", "0.2", "--", "/bin/sleep", "5"});
  auto tj = nlohmann::json::parse(t.result.stdout_data);
  CHECK(tj["timed_out"] == true);
  CHECK(tj["error_code"] == "E_TIMEOUT");
  CHECK(t.result.exit_code == 124);

  auto bin = paddock_cli({"run", "--json", "-c", "printf '\\377\\376ok'"});
  CHECK(nlohmann::json::parse(bin.result.stdout_data)["stdout"] == "\xEF\xBF\xBD\xEF\xBF\xBDok");
}

TEST_CASE("where io_uring_setup is denied, paddock says so in one line and exits 125",
          "[cli][io_backend]") {
  auto r = paddock_cli({"run", "--", "/bin/echo", "fine"});
  REQUIRE(r.result.exit_code == 0);
  test::Harness h;
  auto denied = h.exec(paddock::Command::exec(
      {DENY_IO_URING_BINARY, PADDOCK_BINARY, "run", "--", "/bin/echo", "fine"}));
  if (std::string(PADDOCK_IO_BACKEND_NAME) == "io_uring") {
    CHECK(denied.result.exit_code == 125);
    CHECK(lines(denied.result.stderr_data) == 1);
    CHECK(denied.result.stderr_data.find("io_uring is unavailable") != std::string::npos);
    CHECK(denied.result.stderr_data.find("-DPADDOCK_IO_BACKEND=epoll") != std::string::npos);
    CHECK(denied.result.stdout_data.empty());
  } else {
    // The epoll build is the way out: it runs where io_uring is denied.
    CHECK(denied.result.exit_code == 0);
    CHECK(denied.result.stdout_data == "fine\n");
  }
}
