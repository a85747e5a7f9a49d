// paddock's own diagnostics: spdlog, level from PADDOCK_LOG or -v, JSON lines with --json; the
// user-facing `paddock:` lines are not affected.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_support.hpp"

using test::contains;
using test::paddock_cli;
using test::with_env;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("paddock logs nothing by default, -v and PADDOCK_LOG turn diagnostics on",
          "[cli][logging]") {
  auto quiet = paddock_cli({"run", "--", "/bin/echo", "hi"});
  CHECK(quiet.result.exit_code == 0);
  CHECK(quiet.result.stdout_data == "hi\n");
  CHECK(quiet.result.stderr_data.empty());

  auto info = paddock_cli({"run", "-v", "--", "/bin/echo", "hi"});
  INFO(info.result.stderr_data);
  CHECK(info.result.exit_code == 0);
  CHECK(info.result.stdout_data == "hi\n");  // logs never go to stdout
  CHECK(contains(info.result.stderr_data, "paddock[info]: started: pid "));
  CHECK(contains(info.result.stderr_data, "paddock[info]: finished: exit 0, signal 0"));
  CHECK_FALSE(contains(info.result.stderr_data, "[debug]"));

  // -vv (debug) before the subcommand, or PADDOCK_LOG=debug: the policy and the version too.
  for (auto r : {paddock_cli({"-vv", "run", "--", "/bin/true"}),
                 paddock_cli({"run", "--", "/bin/true"}, with_env({{"PADDOCK_LOG", "debug"}}))}) {
    INFO(r.result.stderr_data);
    CHECK(r.result.exit_code == 0);
    CHECK(contains(r.result.stderr_data,
                   "paddock[debug]: policy: profile default, sandbox on, "
                   "network filtered, fallback strict"));
    CHECK(contains(r.result.stderr_data, "paddock[debug]: paddock "));
  }
  // PADDOCK_LOG=error is quieter than the default; -v still wins (the more verbose wins).
  auto err = paddock_cli({"run", "--", "/bin/true"}, with_env({{"PADDOCK_LOG", "error"}}));
  CHECK(err.result.stderr_data.empty());
  auto both = paddock_cli({"run", "-v", "--", "/bin/true"}, with_env({{"PADDOCK_LOG", "off"}}));
  CHECK(contains(both.result.stderr_data, "[info]"));

  auto bad = paddock_cli({"run", "--", "/bin/echo", "ran"}, with_env({{"PADDOCK_LOG", "loud"}}));
  CHECK(bad.result.exit_code == 125);
  CHECK(bad.result.stderr_data ==
        "paddock: PADDOCK_LOG: expected trace, debug, info, warn, error or off, got 'loud'\n");
  CHECK(bad.result.stdout_data.empty());
}

TEST_CASE("paddock run --json: logs are JSON lines on stderr, paddock: lines unchanged",
          "[cli][logging]") {
  auto r = paddock_cli({"run", "--json", "--allow-domain", "allowed.test", "--", "/bin/sh", "-c",
                        "curl -s --max-time 10 http://denied.test/ >/dev/null; exit 3"},
                       with_env({{"PADDOCK_LOG", "debug"}}));
  INFO(r.result.stderr_data);
  CHECK(r.result.exit_code == 3);
  auto result = nlohmann::json::parse(r.result.stdout_data);  // stdout: the one result object
  CHECK(result["exit_code"] == 3);
  int logs = 0;
  bool refused = false;
  for (const auto& line : lines_of(r.result.stderr_data)) {
    if (line.rfind("paddock: ", 0) == 0) continue;  // user-facing lines stay text
    auto j = nlohmann::json::parse(line);           // every other line is one JSON object
    CHECK(j.contains("time"));
    CHECK(j.contains("level"));
    CHECK(j.contains("message"));
    refused = refused || (j["level"] == "info" &&
                          contains(j["message"].get<std::string>(), "refused http denied.test:80"));
    ++logs;
  }
  CHECK(logs >= 3);  // version, policy, started, finished, the refused request
  CHECK(refused);
}

TEST_CASE("paddock's log lines escape control bytes a command controls", "[cli][logging]") {
  // The program name is the command's; in a log line it must not reach the terminal raw.
  auto r = paddock_cli({"run", "-vv", "--", "/no/such/\x1b[2Jprogram", "arg"});
  INFO(r.result.stderr_data);
  CHECK(r.result.exit_code == 127);
  CHECK(contains(r.result.stderr_data, "paddock[debug]: command: /no/such/\\x1b[2Jprogram arg\n"));
  CHECK_FALSE(contains(r.result.stderr_data, "\x1b"));
}
