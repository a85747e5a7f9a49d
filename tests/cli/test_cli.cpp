// `paddock run`: the exit-status contract, the one-line reasons, --json, live streaming.
// The CLI is run as a command by paddock's own Manager.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

namespace {

using test::paddock_cli;
int lines(const std::string& s) { return test::line_count(s); }

// A settings file for one test, removed after it.
struct SettingsFile {
  explicit SettingsFile(const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              ("paddock-cli-settings-" + std::to_string(::getpid()) + ".json"))
                 .string()) {
    std::ofstream(path) << text;
  }
  ~SettingsFile() { std::filesystem::remove(path); }
  std::string path;
};

constexpr const char* kUnsandboxedWarning = "paddock: warning: ran UNSANDBOXED: ";

}  // namespace

TEST_CASE("paddock run: the command's status, 128+N, 124, 125, 127", "[cli]") {
  CHECK(paddock_cli({"run", "--", "/bin/true"}).result.exit_code == 0);
  CHECK(paddock_cli({"run", "-c", "exit 42"}).result.exit_code == 42);
  // --no-sandbox: sandboxed, the command is its PID namespace's init, which does not die of a
  // signal it sends itself.
  CHECK(paddock_cli({"run", "--yes", "--no-sandbox", "-c", "kill -KILL $$"}).result.exit_code ==
        128 + 9);

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
}

TEST_CASE("where io_uring_setup is denied (container profiles), the CLI runs, the library says why",
          "[cli][io_backend]") {
  test::Harness h(test::host_config());
  // The CLI is on epoll: Docker's and containerd's default seccomp profiles deny io_uring.
  auto denied = h.exec(paddock::Command::exec(
      {DENY_BINARY, "io_uring", PADDOCK_BINARY, "run", "--", "/bin/echo", "fine"}));
  CHECK(denied.result.exit_code == 0);
  CHECK(denied.result.stdout_data == "fine\n");
  CHECK(denied.result.stderr_data.empty());
#ifdef EMBED_BINARY
  // An embedder on the io_uring library gets one line naming the cause and the way out.
  auto embedded = h.exec(paddock::Command::exec({DENY_BINARY, "io_uring", EMBED_BINARY}));
  if (std::string(PADDOCK_IO_BACKEND_NAME) == "io_uring") {
    CHECK(embedded.result.exit_code != 0);
    CHECK(embedded.result.stderr_data.find("io_uring is unavailable") != std::string::npos);
    CHECK(embedded.result.stderr_data.find("seccomp profile denies io_uring_setup") !=
          std::string::npos);
    CHECK(embedded.result.stderr_data.find("-DPADDOCK_IO_BACKEND=epoll") != std::string::npos);
  } else {
    CHECK(embedded.result.exit_code == 0);
  }
#endif
}

TEST_CASE("as an ordinary user, back-to-back and concurrent CLI runs never fail for io_uring",
          "[cli][io_backend][load]") {
  // Asio 1.22's ring (16,384 entries) is charged to RLIMIT_MEMLOCK without CAP_IPC_LOCK and freed
  // asynchronously: 32 of 60 back-to-back and 3 of 8 concurrent runs failed as nobody. The
  // nobody suite runs this case with an 8 MiB limit; as root it checks the same runs pass.
  test::Harness h(test::host_config());
  const std::string loop =
      std::string("set -u; fails=0; i=0; while [ $i -lt 40 ]; do ") + PADDOCK_BINARY +
      " run -- /bin/true || fails=$((fails+1)); i=$((i+1)); done; "
      "pids=; i=0; while [ $i -lt 8 ]; do " +
      PADDOCK_BINARY +
      " run -- /bin/true & pids=\"$pids $!\"; i=$((i+1)); done; "
      "for p in $pids; do wait $p || fails=$((fails+1)); done; echo fails=$fails";
  auto r = h.exec(paddock::Command::exec({"/bin/sh", "-c", "ulimit -l 8192 2>/dev/null; " + loop}));
  INFO(r.result.stderr_data);
  CHECK(r.result.stdout_data == "fails=0\n");
  CHECK(r.result.stderr_data.find("io_uring") == std::string::npos);
}

TEST_CASE("paddock run: a bad settings file, profile or flag is 125 with one line", "[cli]") {
  auto missing = paddock_cli({"run", "--settings", "/no/such.json", "--", "/bin/true"});
  CHECK(missing.result.exit_code == 125);
  CHECK(missing.result.stderr_data ==
        "paddock: E_CONFIG_INVALID: settings file /no/such.json: cannot open: No such file or "
        "directory\n");

  SettingsFile typo(R"({"filesystem": {"denyRead": ["~/.ssh", 7]}})");
  auto bad = paddock_cli({"run", "--settings", typo.path, "--", "/bin/true"});
  CHECK(bad.result.exit_code == 125);
  CHECK(bad.result.stderr_data == "paddock: E_CONFIG_INVALID: settings file " + typo.path +
                                      ": filesystem.denyRead[1]: expected a string (or "
                                      "{\"path\": \"<path>\", \"literal\": true}), got number\n");
  CHECK(bad.result.stdout_data.empty());

  auto profile = paddock_cli({"run", "--profile", "paranoid", "--", "/bin/true"});
  CHECK(profile.result.exit_code == 125);
  CHECK(profile.result.stderr_data ==
        "paddock: E_CONFIG_INVALID: profile: unknown profile 'paranoid' (valid: default, "
        "development, ci, read-only, agentary, agenvoy)\n");

  auto domain = paddock_cli({"run", "--allow-domain", "*", "--", "/bin/true"});
  CHECK(domain.result.exit_code == 125);
  CHECK(lines(domain.result.stderr_data) == 1);
  CHECK(domain.result.stderr_data.find("paddock: E_CONFIG_INVALID: network.allowedDomains[0]: '*' "
                                       "would allow every host") == 0);

  // A listed domain means filtering (srt's meaning), from any profile.
  auto listed = paddock_cli(
      {"run", "--profile", "read-only", "--allow-domain", "github.com", "--", "/bin/true"});
  CHECK(listed.result.exit_code == 0);

  auto network = paddock_cli({"run", "--network", "open", "--", "/bin/true"});
  CHECK(network.result.exit_code == 125);
  CHECK(network.result.stderr_data ==
        "paddock: E_CONFIG_INVALID: --network: expected blocked, filtered or allowed, got "
        "'open'\n");

  auto fallback = paddock_cli({"run", "--fallback", "loud", "--", "/bin/true"});
  CHECK(fallback.result.exit_code == 125);
  CHECK(lines(fallback.result.stderr_data) == 1);
}

TEST_CASE("paddock run: policy flags and settings are accepted and the command runs", "[cli]") {
  SettingsFile ok(R"({"network": {"allowedDomains": [], "deniedDomains": []},
                      "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."],
                                     "denyWrite": [".env"]},
                      "limits": {"processes": 512}})");
  auto r = paddock_cli(
      {"run",           "--settings",  ok.path,      "--profile",    "development", "--allow-write",
       "/tmp",          "--deny-read", "/root/.aws", "--deny-write", ".git/hooks",  "--allow-read",
       "/etc/hostname", "--network",   "blocked",    "--fallback",   "warn",        "--",
       "/bin/echo",     "ran"});
  CHECK(r.result.exit_code == 0);
  CHECK(r.result.stdout_data == "ran\n");

  // A repeatable flag takes one value: the program after it is not swallowed.
  auto one =
      paddock_cli({"run", "--no-sandbox", "--allow-write", "/tmp", "/bin/echo", "positional"});
  CHECK(one.result.exit_code == 0);
  CHECK(one.result.stdout_data == "positional\n");

  // Everything after `--` is the command's, whichever repeatable flag came last: its own
  // flags are never read as paddock's (`--no-sandbox` after `--` once ran on the host).
  for (const char* flag : {"--env", "--allow-write", "--deny-write", "--allow-read", "--deny-read",
                           "--allow-domain", "--deny-domain"}) {
    INFO(flag);
    const std::string value = std::string(flag) == "--env"            ? "X=1"
                              : std::string(flag).ends_with("domain") ? "example.com"
                                                                      : "/tmp";
    auto after = paddock_cli(
        {"run", flag, value, "--", "/bin/sh", "-c", "echo \"$X\" \"$0\"", "--no-sandbox"});
    CHECK(after.result.exit_code == 0);
    CHECK(after.result.stdout_data ==
          (std::string(flag) == "--env" ? "1 --no-sandbox\n" : " --no-sandbox\n"));
  }
}

TEST_CASE("paddock run: srt credentials with mode deny hide the file and the variable",
          "[cli][srt]") {
  const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
  const auto dir = std::filesystem::path(base != nullptr ? base : TEST_SCRATCH_DIR) /
                   ("cli-credentials-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "s3cret";
  std::ofstream(dir / "other") << "visible";
  SettingsFile settings(R"({"env": {"allow": ["PATH", "SECRET_TOKEN", "PLAIN"]},
                            "credentials": {
                              "files": [{"path": ")" +
                        (dir / "token").string() + R"(", "mode": "deny"}],
                              "envVars": [{"name": "SECRET_TOKEN", "mode": "deny"}]}})");
  auto r = paddock_cli({"run", "--settings", settings.path, "--", "/bin/sh", "-c",
                        "echo \"[$SECRET_TOKEN] [$PLAIN]\"; cat " + (dir / "other").string() +
                            "; echo; cat " + (dir / "token").string() + " || echo denied"},
                       test::with_env({{"SECRET_TOKEN", "s3cret"}, {"PLAIN", "plain"}}));
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data == "[] [plain]\nvisible\ndenied\n");
  // mask is refused before anything runs, saying why.
  SettingsFile mask(R"({"credentials": {"envVars": [{"name": "T", "mode": "mask"}]}})");
  auto refused = paddock_cli({"run", "--settings", mask.path, "--", "/bin/true"});
  CHECK(refused.result.exit_code == 125);
  CHECK(test::contains(refused.result.stderr_data,
                       "credentials.envVars[0].mode: mode \"mask\" needs the proxy"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("paddock run never runs unsandboxed quietly when the sandbox was asked for", "[cli]") {
  // --no-sandbox is explicit: no warning.
  auto off = paddock_cli({"run", "--no-sandbox", "--json", "--", "/bin/true"});
  CHECK(off.result.exit_code == 0);
  CHECK(nlohmann::json::parse(off.result.stdout_data)["sandboxed"] == false);
  CHECK(off.result.stderr_data.find(kUnsandboxedWarning) == std::string::npos);

  // With the sandbox asked for, the warning is there exactly when the result says unsandboxed
  // (whether this host can sandbox or not).
  auto on = paddock_cli({"run", "--fallback", "warn", "--json", "--", "/bin/true"});
  CHECK(on.result.exit_code == 0);
  bool sandboxed = nlohmann::json::parse(on.result.stdout_data)["sandboxed"].get<bool>();
  CHECK((on.result.stderr_data.find(kUnsandboxedWarning) == 0) == !sandboxed);
}

TEST_CASE("paddock run without user namespaces: strict refuses, warn runs unsandboxed",
          "[cli][fallback]") {
  test::Harness h(test::host_config());
  auto strict = h.exec(paddock::Command::exec(
      {DENY_BINARY, "userns", PADDOCK_BINARY, "run", "--", "/bin/echo", "fine"}));
  INFO(strict.result.stderr_data);
  CHECK(strict.result.exit_code == 125);
  CHECK(lines(strict.result.stderr_data) == 1);
  CHECK(strict.result.stderr_data.find("E_UNSUPPORTED_PLATFORM") != std::string::npos);
  CHECK(strict.result.stderr_data.find("namespaces failed") != std::string::npos);
  CHECK(strict.result.stdout_data.empty());  // nothing ran

  auto warn =
      h.exec(paddock::Command::exec({DENY_BINARY, "userns", PADDOCK_BINARY, "run", "--fallback",
                                     "warn", "--json", "--", "/bin/echo", "fine"}));
  INFO(warn.result.stderr_data);
  CHECK(warn.result.exit_code == 0);
  CHECK(warn.result.stdout_data.find("\"sandboxed\":false") != std::string::npos);
  CHECK(warn.result.stdout_data.find("fine") != std::string::npos);
  CHECK(warn.result.stderr_data.find("warning: ran UNSANDBOXED") != std::string::npos);
  // Why it ran on the host is status, apart from the error fields (nothing failed).
  auto j = nlohmann::json::parse(warn.result.stdout_data);
  CHECK(j["unsandboxed_reason"].get<std::string>().find("namespaces failed") != std::string::npos);
  CHECK_FALSE(j.contains("error"));
  CHECK_FALSE(j.contains("error_code"));
}

TEST_CASE(
    "fallback warn decides host or sandbox once, before planning: a sandbox that fails "
    "later is refused, never rerun on the host",
    "[cli][fallback]") {
  // Namespaces work (the start-up check passes), mount(2) is refused: the child's first mount
  // step fails. That used to undo the plan and rerun the command on the host.
  for (const std::string fallback : {"warn", "strict"}) {
    INFO(fallback);
    auto r =
        test::in_host_tmp(std::string(DENY_BINARY) + " mount \"$P\" run --fallback " + fallback +
                          " --cwd $d -- /bin/sh -c 'echo ran > ran'; echo status=$?; "
                          "test -e $d/ran && echo MARKER");
    INFO(r.result.stdout_data << r.result.stderr_data);
    CHECK(r.result.stdout_data == "status=125\n");
    CHECK(r.result.stderr_data.find("E_UNSUPPORTED_PLATFORM") != std::string::npos);
    CHECK(r.result.stderr_data.find("UNSANDBOXED") == std::string::npos);
  }
}
