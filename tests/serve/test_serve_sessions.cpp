// Sessions through `paddock serve` (session_open, an exec with "session", session_close): a
// real socket, a plain blocking client. What lives on between commands, what each command's
// exit says it applied, what the close applies, and that a session ends with its connection.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "serve/daemon_fixture.hpp"
#include "serve/serve_client.hpp"
#include "support/change_set_scratch.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"
#include "support/polling.hpp"

namespace fs = std::filesystem;
using test::eventually;
using test::file_below;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

paddock::Config daemon_config(const test::Scratch& s) {
  auto c = test::layered(s);
  c.commands.classify = false;
  return c;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The stdout of one exec and its exit event.
std::pair<std::string, json> run(test::LineClient& c, const json& id, const json& session,
                                 const std::string& script) {
  c.send({{"type", "exec"}, {"id", id}, {"session", session}, {"shell", script}});
  std::string out;
  json exit;
  for (const auto& e : c.until("exit", id, 60s)) {
    if (e["type"] == "stdout") out += e["data"].get<std::string>();
    if (e["type"] == "error" && e.value("id", json()) == id) FAIL(e.dump());
    if (e["type"] == "exit") exit = e;
  }
  return {out, exit};
}

}  // namespace

TEST_CASE("serve: a session keeps its processes and /tmp across execs", "[serve][session]") {
  test::Scratch s;
  test::Daemon d(daemon_config(s));
  auto c = d.connect();
  c.send({{"type", "session_open"}, {"id", "s1"}, {"cwd", s.ws}});
  auto opened = c.until("session_opened", "s1", 60s).back();
  CHECK(opened["pid"].get<int>() > 0);
  CHECK(opened["cwd"] == s.ws);

  auto [out1, exit1] = run(c, 1, "s1",
                           "echo note > /tmp/n; sleep 60 >/dev/null 2>&1 & echo $! > /tmp/bg; "
                           "echo one > a.txt; echo started");
  CHECK(out1 == "started\n");
  CHECK(exit1["exit_code"] == 0);
  CHECK(exit1["changes"]["added"] == 1);
  CHECK(slurp(s.ws + "/a.txt") == "one\n");
  auto [out2, exit2] = run(c, 2, "s1", "cat /tmp/n; kill -0 $(cat /tmp/bg) && echo alive");
  CHECK(out2 == "note\nalive\n");
  // The exec's id is free again once it exited; the session's is not a command's.
  auto [out3, exit3] = run(c, 1, "s1", "(sleep 0.2; echo two > b.txt) >/dev/null 2>&1 & echo bg");
  CHECK(out3 == "bg\n");
  // Closing waits for nothing: what the background wrote by then is applied, the rest killed.
  REQUIRE(eventually([&] { return file_below(s.root + "/store", "b.txt"); }));
  c.send({{"type", "session_close"}, {"id", "s1"}});
  auto closed = c.until("session_closed", "s1", 60s).back();
  CHECK(closed["changes"]["added"] == 1);
  CHECK(closed["violations"].empty());
  CHECK(slurp(s.ws + "/b.txt") == "two\n");
  // Closed: its id names nothing any more.
  c.send({{"type", "exec"}, {"id", 4}, {"session", "s1"}, {"shell", "true"}});
  auto refused = c.until("error", 4).back();
  CHECK(refused["code"] == "E_CONFIG_INVALID");
  CHECK(refused["message"].get<std::string>().find("no session") != std::string::npos);
}

TEST_CASE("serve: session requests that cannot be served are refused", "[serve][session]") {
  test::Scratch s;
  test::Daemon d(daemon_config(s));
  auto c = d.connect();
  c.send({{"type", "exec"}, {"id", 1}, {"session", "nope"}, {"shell", "true"}});
  CHECK(c.until("error", 1).back()["code"] == "E_CONFIG_INVALID");
  c.send({{"type", "session_close"}, {"id", "nope"}});
  CHECK(c.until("error", "nope").back()["request"] == "session_close");
  c.send({{"type", "session_open"}, {"id", "s"}, {"cwd", s.ws}, {"bogus", 1}});
  CHECK(c.until("error", "s").back()["message"].get<std::string>().find("bogus") !=
        std::string::npos);
  c.send({{"type", "session_open"}, {"id", "s"}, {"cwd", s.ws + "/missing"}});
  CHECK(c.until("error", "s").back()["request"] == "session_open");
  c.send({{"type", "session_open"}, {"id", "s"}, {"cwd", s.ws}});
  c.until("session_opened", "s", 60s);
  c.send({{"type", "session_open"}, {"id", "s"}, {"cwd", s.ws}});
  CHECK(c.until("error", "s").back()["message"].get<std::string>().find("duplicate") !=
        std::string::npos);
  // A session's commands run where it opened, under its policy.
  c.send({{"type", "exec"}, {"id", 2}, {"session", "s"}, {"cwd", s.root}, {"shell", "true"}});
  auto wrong_cwd = c.until("error", 2).back();
  CHECK(wrong_cwd["code"] == "E_CONFIG_INVALID");
  CHECK(wrong_cwd["message"].get<std::string>().find("working directory") != std::string::npos);
}

TEST_CASE("serve: a session ends with its connection", "[serve][session]") {
  test::Scratch s;
  test::Daemon d(daemon_config(s));
  pid_t init = -1;
  {
    auto c = d.connect();
    c.send({{"type", "session_open"}, {"id", 7}, {"cwd", s.ws}});
    init = c.until("session_opened", 7, 60s).back()["pid"].get<pid_t>();
    CHECK(run(c, 1, 7, "echo in").first == "in\n");
    // An integer id is not the string "7".
    c.send({{"type", "exec"}, {"id", 2}, {"session", "7"}, {"shell", "true"}});
    CHECK(c.until("error", 2).back()["code"] == "E_CONFIG_INVALID");
  }
  REQUIRE(init > 0);
  CHECK(eventually([&] { return !test::process_alive(init); }));
}

TEST_CASE("serve: a session on a worktree the daemon makes", "[serve][session]") {
  test::Scratch s;
  s.repo(s.ws);
  test::Daemon d(daemon_config(s));
  auto c = d.connect();
  const std::string wt = s.root + "/wt";
  c.send({{"type", "session_open"},
          {"id", "w"},
          {"worktree", {{"repository", s.ws}, {"branch", "agent/x"}, {"on_close", "bogus"}}}});
  CHECK(c.until("error", "w").back()["message"].get<std::string>().find("worktree.on_close") !=
        std::string::npos);
  c.send({{"type", "session_open"},
          {"id", "w"},
          {"worktree",
           {{"repository", s.ws}, {"branch", "agent/x"}, {"path", wt}, {"on_close", "remove"}}}});
  auto opened = c.until("session_opened", "w", 60s).back();
  CHECK(opened["cwd"] == fs::canonical(wt).string());
  auto [out, exit] = run(c, 1, "w",
                         s.env() +
                             "echo x > x.txt && git add x.txt && git commit -qm x && "
                             "git branch --show-current");
  CHECK(out == "agent/x\n");
  CHECK(exit["exit_code"] == 0);
  c.send({{"type", "session_close"}, {"id", "w"}});
  auto closed = c.until("session_closed", "w", 60s).back();
  CHECK(closed["worktree"]["branch"] == "agent/x");
  CHECK(closed["worktree"]["result"] == "removed");
  CHECK_FALSE(fs::exists(wt));
  CHECK(s.host("git -C " + s.ws + " log -1 --format=%s agent/x").text == "x\n");
  CHECK(closed["worktree"]["head"].get<std::string>() + "\n" ==
        s.host("git -C " + s.ws + " rev-parse agent/x").text);
}
