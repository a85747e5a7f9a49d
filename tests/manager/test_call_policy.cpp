// Policy for one call (ExecOptions::policy): more writable roots and denials, a narrower
// network, another shell and other classifier rules, for that call only; never wider than
// the Manager's network; checked like the Config.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "paddock/manager.hpp"
#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
  fs::path dir = fs::path(base != nullptr ? base : TEST_SCRATCH_DIR) /
                 (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "ws");
  fs::create_directories(dir / "extra");
  fs::create_directories(dir / "ws" / "secret");
  std::ofstream(dir / "ws" / "secret" / "key") << "KEY";
  return dir.string();
}

}  // namespace

TEST_CASE("per-call policy: a writable root and a denial for one call only", "[call-policy]") {
  const std::string d = scratch("call-policy");
  test::Harness h(test::sandbox_config());
  paddock::ExecOptions o;
  o.cwd = d + "/ws";
  o.policy.allow_write = {d + "/extra"};
  o.policy.deny_read = {d + "/ws/secret"};
  auto r = h.exec(
      test::sh("echo x > " + d + "/extra/f && echo wrote; cat secret/key || echo denied"), o);
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  CHECK(r.result.stdout_data == "wrote\ndenied\n");
  CHECK(fs::exists(d + "/extra/f"));
  // The next call without them: the Manager's policy again.
  paddock::ExecOptions plain;
  plain.cwd = d + "/ws";
  auto again =
      h.exec(test::sh("echo y > " + d + "/extra/g || echo read-only; cat secret/key"), plain);
  CHECK(again.result.stdout_data == "read-only\nKEY");
  CHECK_FALSE(fs::exists(d + "/extra/g"));
  fs::remove_all(d);
}

TEST_CASE("per-call policy: the network only narrows", "[call-policy]") {
  test::Harness h(test::sandbox_config());  // filtered
  paddock::ExecOptions o;
  o.policy.network = paddock::NetworkMode::blocked;
  auto blocked = h.exec(test::sh("echo ${HTTPS_PROXY:-no proxy}"), o);
  CHECK_FALSE(blocked.ec);
  CHECK(blocked.result.stdout_data == "no proxy\n");
  o.policy.network = paddock::NetworkMode::allowed;
  auto wider = h.exec(test::sh("true"), o);
  CHECK(wider.ec == paddock::errc::config_invalid);
  CHECK(wider.result.error.find("policy.network: a call may only narrow") == 0);
}

TEST_CASE("per-call policy: shell, classifier rules, and bad entries", "[call-policy]") {
  paddock::Config c = paddock::DefaultConfig();
  c.sandbox.enabled = false;
  test::Harness h(c);
  paddock::ExecOptions o;
  o.policy.shell = "/bin/bash";
  auto bash = h.exec(paddock::Command::shell_string("echo $BASH_VERSION | cut -c1"), o);
  CHECK(bash.result.stdout_data.size() == 2);  // a digit and a newline: bash ran it
  o.policy.commands = paddock::CommandRules{};
  // A call's rules add to the Manager's and are only ever stricter: lowering a built-in rule
  // or lifting a forbidden one does nothing; raising one does, for this call.
  o.policy.commands->overrides["process-kill"] = paddock::Decision::sandboxed;
  o.policy.commands->overrides["kernel-modules"] = paddock::Decision::allow;
  o.policy.commands->deny_programs = {"date"};
  o.policy.commands->rules.push_back({{"rm"}, paddock::Decision::allow, "too broad"});
  CHECK(h.exec(test::sh("kill -0 $$"), o).ec == paddock::errc::escalated_command);
  CHECK(h.exec(test::argv({"insmod", "x"}), o).ec == paddock::errc::forbidden_command);
  CHECK(h.exec(test::argv({"rm", "-rf", "/"}), o).ec == paddock::errc::forbidden_command);
  CHECK(h.exec(test::argv({"date"}), o).ec == paddock::errc::forbidden_command);
  CHECK_FALSE(h.exec(test::argv({"date"})).ec);
  paddock::ExecOptions bad;
  bad.policy.shell = "bash";
  CHECK(h.exec(test::sh("true"), bad).result.error == "policy.shell: must be an absolute path");
  bad.policy.shell.reset();
  bad.policy.allow_write = {""};
  CHECK(h.exec(test::sh("true"), bad).ec == paddock::errc::config_invalid);
  // Unsandboxed, a denial could not be applied: refused, not silently dropped.
  paddock::ExecOptions deny;
  deny.policy.deny_read = {"/etc"};
  CHECK(h.exec(test::sh("true"), deny).result.error.find("unsandboxed") != std::string::npos);
}

TEST_CASE("per-call policy: a writable root may not undo the Manager's denyRead", "[call-policy]") {
  const std::string d = scratch("call-policy-deny");
  paddock::Config c = test::sandbox_config();
  c.sandbox.filesystem.deny_read = {d + "/ws/secret"};
  test::Harness h(c);
  paddock::ExecOptions o;
  o.cwd = d + "/ws";
  o.policy.allow_write = {d + "/ws/secret"};
  auto r = h.exec(test::sh("cat secret/key"), o);
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK(r.result.error.find("denyRead hides") != std::string::npos);
  CHECK(r.result.stdout_data.empty());
  fs::remove_all(d);
}

TEST_CASE("per-call policy: only a POSIX shell, approvals are for the shell and policy too",
          "[call-policy]") {
  paddock::Config c = paddock::DefaultConfig();
  c.sandbox.enabled = false;
  test::Harness h(c);
  paddock::ExecOptions py;
  py.policy.shell = "/usr/bin/python3";
  CHECK(h.exec(paddock::Command::shell_string("print(1)"), py)
            .result.error.find("policy.shell: must be a POSIX shell") == 0);
  // approve_session under one shell does not carry over to another.
  int asked = 0;
  h.manager.set_approval([&](const paddock::CommandApprovalRequest&, auto respond) {
    ++asked;
    respond(paddock::Approval::approve_session);
  });
  paddock::ExecOptions sh;
  sh.policy.shell = "/bin/sh";
  paddock::ExecOptions bash;
  bash.policy.shell = "/bin/bash";
  CHECK_FALSE(h.exec(paddock::Command::shell_string("kill -0 $$"), sh).ec);
  CHECK_FALSE(h.exec(paddock::Command::shell_string("kill -0 $$"), sh).ec);
  CHECK(asked == 1);
  CHECK_FALSE(h.exec(paddock::Command::shell_string("kill -0 $$"), bash).ec);
  CHECK(asked == 2);
}

TEST_CASE("update_config: filesystem rules apply to the next command, the rest is refused",
          "[call-policy]") {
  const std::string d = scratch("reload-fs");
  auto cfg = test::sandbox_config();
  test::Harness h(cfg);
  paddock::ExecOptions o;
  o.cwd = d + "/ws";
  const std::string script =
      "cat secret/key || echo denied; echo x > " + d + "/extra/f && echo wrote || echo read-only";
  CHECK(h.exec(test::sh(script), o).result.stdout_data == "KEYread-only\n");

  cfg.sandbox.filesystem.deny_read.push_back(d + "/ws/secret");
  cfg.sandbox.filesystem.allow_write.push_back(d + "/extra");
  h.manager.update_config(cfg);
  CHECK(h.manager.config().sandbox.filesystem.allow_write.back() == d + "/extra");
  auto r = h.exec(test::sh(script), o);
  INFO(r.result.stderr_data << r.result.error);
  CHECK(r.result.stdout_data == "denied\nwrote\n");
  CHECK(fs::exists(d + "/extra/f"));
  // The write guard answers with the new rules too.
  CHECK(h.manager.check_write(d + "/extra/g", d + "/ws").allowed);

  // Back again: the next command is read-only there once more.
  cfg.sandbox.filesystem.allow_write.pop_back();
  h.manager.update_config(cfg);
  CHECK(h.exec(test::sh("echo y > " + d + "/extra/g || echo read-only"), o).result.stdout_data ==
        "read-only\n");
  CHECK_FALSE(h.manager.check_write(d + "/extra/g", d + "/ws").allowed);

  // What shaped the Manager itself stays: refused, and the old config is kept.
  auto other = cfg;
  other.sandbox.network.allow_all_unix_sockets = true;
  CHECK_THROWS_WITH(h.manager.update_config(other),
                    Catch::Contains("only the filesystem rules, the network domain rules"));
  other = cfg;
  other.sandbox.filesystem.home = "/elsewhere";
  CHECK_THROWS_WITH(h.manager.update_config(other), Catch::Contains("filesystem.home"));
  fs::remove_all(d);
}

TEST_CASE(
    "review: a call's root may not undo a literal or glob denyRead, domain lists need a "
    "sandbox, the policy is the one the call started with",
    "[call-policy]") {
  const std::string d = scratch("call-policy-review");
  fs::create_directories(d + "/ws/box[1]");
  std::ofstream(d + "/ws/box[1]/key") << "SECRET1";
  fs::create_directories(d + "/ws/g/x/secret");
  std::ofstream(d + "/ws/g/x/secret/key") << "SECRET2";
  auto cfg = test::sandbox_config();
  // {"path": ".../box[1]", "literal": true} arrives escaped; the glob matches g/x/secret.
  cfg.sandbox.filesystem.deny_read = {d + "/ws/box\\[1]", d + "/ws/g/*/secret"};
  test::Harness h(cfg);
  for (const std::string& root : {d + "/ws/box[1]", d + "/ws/g/x/secret", d + "/ws/g"}) {
    INFO(root);
    paddock::ExecOptions o;
    o.cwd = d + "/ws";
    o.policy.allow_write = {root};
    auto r = h.exec(test::sh("cat 'box[1]/key' g/x/secret/key"), o);
    CHECK(r.ec == paddock::errc::config_invalid);
    CHECK_THAT(r.result.error, Catch::Contains("a call may not undo it"));
    CHECK(r.result.stdout_data.empty());
  }

  // Domain lists cannot apply where commands run on the host: refused, not dropped.
  auto host = test::host_config();
  host.sandbox.network.mode = paddock::NetworkMode::filtered;
  test::Harness unsandboxed(host);
  paddock::ExecOptions o;
  o.policy.denied_domains = {"*"};
  auto r = unsandboxed.exec(test::sh("true"), o);
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK_THAT(r.result.error, Catch::Contains("silently ignored"));
  fs::remove_all(d);
}

TEST_CASE("review: update_config while a command waits for approval does not change its policy",
          "[call-policy][approval]") {
  const std::string d = scratch("reload-approval");
  auto cfg = test::sandbox_config();
  cfg.commands = paddock::DefaultConfig().commands;  // classify: chmod o+w is escalated
  cfg.sandbox.filesystem.deny_read = {d + "/ws/secret"};
  test::Harness h(cfg);
  auto opened = cfg;
  opened.sandbox.filesystem.deny_read.clear();
  paddock::ExecOptions o;
  o.cwd = d + "/ws";
  o.approve = [&](const paddock::CommandApprovalRequest&, auto respond) {
    h.manager.update_config(opened);  // lands between the decision and the launch
    respond(paddock::Approval::approve);
  };
  auto r = h.exec(test::sh("cat secret/key || echo denied; f=$(mktemp); chmod o+w \"$f\""), o);
  INFO(r.result.error << r.result.stderr_data);
  CHECK(r.result.stdout_data == "denied\n");
  // The next command has the new policy.
  paddock::ExecOptions next;
  next.cwd = d + "/ws";
  CHECK(h.exec(test::sh("cat secret/key"), next).result.stdout_data == "KEY");
  fs::remove_all(d);
}
