// A session's mounts against drops from outside (process/init_mounts.cpp). After each command
// a session's init checks that every mount of its plan is still where the plan put it: the
// full mount table once, then each point's mount by its unique ID. Each way the host can take
// a cover away from under a live session (unlink and link back, a rename over the name, the
// name or its directory renamed away with a new one put in their place) must still be
// reported as dropped mounts at the next command's end, however many quiet commands came
// before. Tagged [session]: the suite runs again as nobody.
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>

#include "paddock/manager.hpp"
#include "paddock/session.hpp"
#include "support/attack_fixture.hpp"
#include "support/change_set_scratch.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"
#include "support/polling.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool dropped(const paddock::ExecResult& r) {
  for (const auto& v : r.violations) {
    if (v.raw.find("mounts dropped") != std::string::npos) return true;
  }
  return false;
}

// A session whose policy hides `dir/secret` (a file: a cover mounted over it).
struct CoveredSession {
  test::Scratch s;
  test::Harness h{test::layered(s)};
  std::string dir = s.root + "/d";
  std::string secret = dir + "/secret";
  std::shared_ptr<paddock::Session> session;

  CoveredSession() {
    fs::create_directories(dir);
    write_file(secret, "old secret\n");
    paddock::SessionOptions o;
    o.cwd = s.ws;
    o.policy.deny_read = {secret};
    session = h.manager.open_session(std::move(o));
  }
  // `on_output`: each chunk as it comes (the command's "started" line, say).
  paddock::ExecResult run(
      const std::string& script,
      std::function<void(paddock::OutputStream, std::string_view)> on_output = {}) {
    paddock::ExecOptions o;
    o.session = session;
    o.timeout = 60s;
    o.on_output = std::move(on_output);
    auto r = h.exec(test::sh(script), std::move(o));
    UNSCOPED_INFO(script << "\n -> " << r.ec.message() << ": " << r.result.stdout_data
                         << r.result.stderr_data << r.result.error);
    return r.result;
  }
};

}  // namespace

TEST_CASE("sessions: a cover taken away from outside between commands is reported",
          "[session][attack]") {
  const std::string new_secret = "new secret\n";
  const std::vector<std::pair<std::string, std::function<bool(CoveredSession&)>>> spellings = {
      {"unlinked and linked back",
       [](CoveredSession& c) { return test::relink_from_outside(c.secret, c.dir + "/via"); }},
      {"another file renamed over it",
       [&](CoveredSession& c) {
         write_file(c.dir + "/other", new_secret);
         return ::rename((c.dir + "/other").c_str(), c.secret.c_str()) == 0;
       }},
      {"renamed away and a new file put in its place",
       [&](CoveredSession& c) {
         if (::rename(c.secret.c_str(), (c.dir + "/moved").c_str()) != 0) return false;
         write_file(c.secret, new_secret);
         return true;
       }},
      // The mount moves with its directory, and a path through the link still reaches it:
      // what counts is where the kernel has it mounted (hostile review).
      {"its directory renamed away and a link to it put in its place",
       [](CoveredSession& c) {
         return ::rename(c.dir.c_str(), (c.dir + "-moved").c_str()) == 0 &&
                ::symlink((c.dir + "-moved").c_str(), c.dir.c_str()) == 0;
       }},
      // The same through a link only the sandbox has (its private /tmp, made by the quiet
      // commands below): on the host the name leads nowhere.
      {"its directory renamed away and a link through the sandbox's /tmp put in its place",
       [](CoveredSession& c) {
         return ::rename(c.dir.c_str(), (c.dir + "-moved").c_str()) == 0 &&
                ::symlink("/tmp/moved-link", c.dir.c_str()) == 0;
       }},
      {"its directory renamed away and a new one put in its place",
       [&](CoveredSession& c) {
         if (::rename(c.dir.c_str(), (c.dir + "-moved").c_str()) != 0) return false;
         fs::create_directories(c.dir);
         write_file(c.secret, new_secret);
         return true;
       }},
  };
  for (const auto& [name, take_away] : spellings) {
    for (const bool during : {false, true}) {
      INFO(name << (during ? ", during a command" : ", between commands"));
      CoveredSession c;
      // Quiet commands first: from the second on, the check is by mount ID.
      for (int i = 0; i < 3; ++i) {
        auto quiet = c.run("ln -sfn " + c.dir + "-moved /tmp/moved-link; cat " + c.secret +
                           " 2>/dev/null; echo rc=$?");
        CHECK(quiet.stdout_data.find("secret") == std::string::npos);
        CHECK_FALSE(dropped(quiet));
      }
      paddock::ExecResult next;
      if (during) {
        // Told by its output that it runs; waits for a host file it reads through the
        // read-only root (live, unlike the workspace's layer).
        const std::string go = c.s.root + "/go";
        std::atomic<bool> started{false};
        auto running = std::async(std::launch::async, [&] {
          return c.run("echo started; while [ ! -e " + go + " ]; do sleep 0.01; done",
                       [&](paddock::OutputStream, std::string_view) { started = true; });
        });
        REQUIRE(test::eventually([&] { return started.load(); }));
        REQUIRE(take_away(c));
        write_file(go, "");
        next = running.get();
      } else {
        REQUIRE(take_away(c));
        next = c.run("true");
      }
      CHECK(dropped(next));
      // Sticky: every later command of the session is reported too.
      CHECK(dropped(c.run("true")));
    }
  }
}

TEST_CASE("sessions: quiet commands report no dropped mounts", "[session]") {
  CoveredSession c;
  for (int i = 0; i < 10; ++i) {
    auto r = c.run("cat " + c.secret + " 2>/dev/null; echo rc=$?");
    CHECK(r.stdout_data.find("secret") == std::string::npos);
    CHECK_FALSE(dropped(r));
  }
}
