// Deciding before running, through the real CLI: `paddock check`, and `paddock run` refusing a
// forbidden command, refusing an escalated one with no one to ask, running it with --yes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

using test::around_paddock;
using test::paddock_cli;

TEST_CASE("paddock check: decision, rule, reason and every part, as text and JSON",
          "[cli][classifier]") {
  auto text = paddock_cli({"check", "--", "rm", "-rf", "/"});
  CHECK(text.result.exit_code == 0);
  CHECK(text.result.stdout_data.find("forbidden (recursive-delete-root-or-home)") == 0);
  auto j = nlohmann::json::parse(
      paddock_cli({"check", "--json", "-c", "ls; git push; curl x | sh"}).result.stdout_data);
  CHECK(j["decision"] == "forbidden");
  CHECK(j["rule"] == "pipe-to-shell");
  REQUIRE(j["parts"].size() == 4);
  CHECK(j["parts"][0]["decision"] == "allow");
  CHECK(j["parts"][1]["rule"] == "git-remote-write");
  // Arguments after -- are the command's, never paddock's flags.
  auto flags = nlohmann::json::parse(
      paddock_cli({"check", "--json", "--", "echo", "--json", "-c", "rm -rf /"})
          .result.stdout_data);
  CHECK(flags["decision"] == "allow");
  // run's own options are taken, so one option list serves both (new-user trial helper-44).
  auto shared = paddock_cli({"check", "--no-helper", "--yes", "--timeout", "5", "--", "ls"});
  CHECK(shared.result.exit_code == 0);
  CHECK(shared.result.stdout_data.find("allow") == 0);
  auto bad = paddock_cli({"check"});
  CHECK(bad.result.exit_code == 125);
  CHECK(bad.result.stderr_data.find("paddock: check:") == 0);
}

TEST_CASE("paddock run: forbidden never starts (126, one line), escalated needs --yes",
          "[cli][classifier]") {
  auto r = around_paddock(
      "d=$(mktemp -d); cd $d; $P run -- sh -c 'touch ran; rm -rf /'; echo status=$?; "
      "ls; $P run -- sh -c 'touch asked; chmod o+w asked' </dev/null; echo status=$?; ls; "
      "$P run --yes --json -- sh -c 'touch approved; chmod o+w approved'; echo; echo status=$?; "
      "ls; "
      "cd /; rm -rf $d");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  // Forbidden: nothing ran, status 126, the rule and reason on one stderr line.
  CHECK(out.find("status=126\nstatus=126\n") == 0);
  CHECK(out.find("ran") == std::string::npos);
  CHECK(out.find("asked") == std::string::npos);
  CHECK(r.result.stderr_data.find("paddock: E_FORBIDDEN_COMMAND: forbidden by rule "
                                  "recursive-delete-root-or-home: ") == 0);
  CHECK(r.result.stderr_data.find("paddock: E_ESCALATED_COMMAND: needs approval (rule "
                                  "world-writable: ") != std::string::npos);
  CHECK(r.result.stderr_data.find("--yes approves it") != std::string::npos);
  // --yes: it runs, and the JSON says it was escalated, by which rule.
  CHECK(out.find("\"decision\":\"escalated\"") != std::string::npos);
  CHECK(out.find("\"rule\":\"world-writable\"") != std::string::npos);
  CHECK(out.find("status=0\napproved\n") != std::string::npos);
  CHECK(r.result.stderr_data.find("paddock: approved by --yes: ") != std::string::npos);
}

TEST_CASE("with no --settings, ~/.srt-settings.json is read, as srt does", "[cli][settings]") {
  // HOME is a scratch directory with srt's file in it; the command runs elsewhere.
  auto r = test::in_host_tmp(
      "mkdir -p $d/home $d/ws && echo secret > $d/ws/key && "
      "printf '{\"filesystem\": {\"denyRead\": [\"'$d'/ws/key\"]}}' > $d/home/.srt-settings.json "
      "&& "
      "cd $d/ws && HOME=$d/home $P run -- cat key; echo status=$?; "
      "HOME=$d/home $P run --settings /dev/null -- true 2>/dev/null; echo named=$?; "
      "HOME=$d/nohome $P run -- cat key");
  INFO(r.result.stdout_data << r.result.stderr_data);
  // Denied by the default file: cat fails; a named file replaces it (here an invalid one:
  // refused, 125); without the file, the default policy reads it.
  CHECK(r.result.stdout_data.find("secret\nstatus") == std::string::npos);
  CHECK(r.result.stdout_data.find("named=125") != std::string::npos);
  CHECK(r.result.stdout_data.ends_with("secret\n"));
}
