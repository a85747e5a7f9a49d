// Sessions (paddock/session.hpp): one sandbox across the commands of one agent. What lives on
// (processes, /tmp), what each command's end applies to the workspace (and what it holds
// back), what one command may do to the next (signals, descriptors), and how a session ends
// (close, idle, a killed sandbox). Tagged [session]: the suite runs again as nobody.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <thread>

#include "paddock/manager.hpp"
#include "paddock/session.hpp"
#include "support/change_set_scratch.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"
#include "support/polling.hpp"

namespace fs = std::filesystem;
using test::eventually;
using test::file_below;
using namespace std::chrono_literals;
using test::Scratch;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct SessionRig {
  Scratch s;
  test::Harness h{test::layered(s)};
  std::shared_ptr<paddock::Session> session;

  // `setup`: run on the host first (what the session then finds there).
  explicit SessionRig(paddock::SessionOptions o = {}, const std::string& setup = {}) {
    if (!setup.empty()) REQUIRE(s.host("cd " + s.ws + " && " + setup).status == 0);
    if (!o.cwd) o.cwd = s.ws;
    session = h.manager.open_session(std::move(o));
  }
  paddock::BlockingResult run(const std::string& script, std::chrono::milliseconds timeout = 60s) {
    paddock::ExecOptions o;
    o.session = session;
    o.timeout = timeout;
    auto r = h.exec(test::sh(s.env() + script), std::move(o));
    UNSCOPED_INFO(script << "\n -> " << r.ec.message() << ": " << r.result.stdout_data
                         << r.result.stderr_data << r.result.error);
    return r;
  }
};

}  // namespace

TEST_CASE("sessions: processes and /tmp live on between commands", "[session]") {
  SessionRig rig;
  auto a = rig.run("echo note > /tmp/note; sleep 60 >/dev/null 2>&1 & echo $! > /tmp/bg");
  REQUIRE_FALSE(a.ec);
  CHECK(a.result.exit_code == 0);
  CHECK(a.result.sandboxed);
  auto b = rig.run("cat /tmp/note; kill -0 $(cat /tmp/bg) && echo alive");
  REQUIRE_FALSE(b.ec);
  CHECK(b.result.stdout_data == "note\nalive\n");
  // The sandbox's /tmp is its own: the host's has no note.
  CHECK_FALSE((fs::exists("/tmp/note") && slurp("/tmp/note") == "note\n"));
  // One shell variable does not live on (a new shell per command), the working directory
  // is the session's each time.
  auto c = rig.run("cd /; X=1");
  auto d = rig.run("echo \"[$X]\"; pwd");
  CHECK(d.result.stdout_data == "[]\n" + rig.s.ws + "\n");
  const auto summary = rig.session->close();
  CHECK(summary.failure.empty());
  CHECK(rig.session->ended());
  CHECK(test::zombie_children().empty());
}

TEST_CASE("sessions: each command's workspace writes are applied when it ends", "[session]") {
  SessionRig rig;
  const std::string f = rig.s.ws + "/f.txt";
  auto a = rig.run("echo one > f.txt; mkdir -p d/e; echo x > d/e/g");
  REQUIRE_FALSE(a.ec);
  CHECK(slurp(f) == "one\n");
  CHECK(slurp(rig.s.ws + "/d/e/g") == "x\n");
  CHECK(a.result.changes.added >= 3);
  CHECK(a.result.changes.pending.empty());
  // Changed again: applied again, as a change of the command's own (not a conflict with the
  // copy the first apply wrote).
  auto b = rig.run("echo two > f.txt");
  CHECK(slurp(f) == "two\n");
  CHECK(b.result.changes.modified == 1);
  CHECK(b.result.changes.held.empty());
  // Nothing new: nothing applied again.
  auto c = rig.run("cat f.txt");
  CHECK(c.result.stdout_data == "two\n");
  CHECK(c.result.changes.added + c.result.changes.modified + c.result.changes.deleted == 0);
  // Deleted in the session: deleted on the host.
  auto d = rig.run("rm f.txt; rm -r d");
  CHECK(d.result.changes.held.empty());
  CHECK_FALSE(fs::exists(f));
  CHECK_FALSE(fs::exists(rig.s.ws + "/d"));
  // Made again after its deletion: there again.
  rig.run("echo three > f.txt");
  CHECK(slurp(f) == "three\n");
  const auto summary = rig.session->close();
  CHECK(summary.failure.empty());
  CHECK(summary.changes.held.empty());
  CHECK(slurp(f) == "three\n");
  CHECK(test::sets_left(rig.s) == 0);  // the set is gone (or kept as a spare)
}

TEST_CASE("sessions: the host's own change between commands is never overwritten", "[session]") {
  SessionRig rig;
  const std::string f = rig.s.ws + "/f.txt";
  rig.run("echo mine > f.txt");
  REQUIRE(slurp(f) == "mine\n");
  { std::ofstream(f) << "host\n"; }  // the person edits the file meanwhile
  auto b = rig.run("echo again > f.txt");
  CHECK(test::held_with(b.result, f, "conflict"));
  CHECK(slurp(f) == "host\n");
  rig.session->close();
  CHECK(slurp(f) == "host\n");
}

TEST_CASE("sessions: the host's deletion of what a command wrote stands", "[session]") {
  SessionRig rig;
  const std::string f = rig.s.ws + "/f.txt";
  rig.run("echo mine > f.txt");
  REQUIRE(slurp(f) == "mine\n");
  fs::remove(f);  // the person deletes it meanwhile
  // The layer still has the old copy: it never comes back by itself.
  auto b = rig.run("true");
  CHECK_FALSE(fs::exists(f));
  CHECK(b.result.changes.held.empty());
  // Written again in the session: a conflict, held back (and said once).
  auto c = rig.run("echo again > f.txt");
  CHECK(test::held_with(c.result, f, "conflict: deleted on the host"));
  CHECK_FALSE(fs::exists(f));
  auto said = [&](const paddock::ExecResult& r) {
    return std::count_if(r.violations.begin(), r.violations.end(),
                         [&](const paddock::Violation& v) { return v.path == f; });
  };
  CHECK(said(c.result) == 1);
  auto d = rig.run("true");
  CHECK(test::held_with(d.result, f, "conflict"));  // still waiting ...
  CHECK(said(d.result) == 0);                       // ... but not told again
  const auto summary = rig.session->close();
  CHECK_FALSE(fs::exists(f));
  CHECK_FALSE(summary.changes.held.empty());
}

TEST_CASE("sessions: what background processes write is applied later", "[session]") {
  SessionRig rig;
  rig.run("(sleep 0.2; echo late > late.txt) >/dev/null 2>&1 &");
  // The next command's end applies it.
  auto b = rig.run("while [ ! -s late.txt ]; do sleep 0.05; done");
  CHECK(slurp(rig.s.ws + "/late.txt") == "late\n");
  // The session's end applies what came after the last command.
  rig.run("(sleep 0.2; echo last > last.txt) >/dev/null 2>&1 &");
  REQUIRE(eventually([&] { return file_below(rig.s.root + "/store", "last.txt"); }));
  CHECK_FALSE(fs::exists(rig.s.ws + "/last.txt"));
  const auto summary = rig.session->close();
  CHECK(summary.changes.added == 1);
  CHECK(slurp(rig.s.ws + "/last.txt") == "last\n");
}

TEST_CASE("sessions: protected paths are held back per command", "[session]") {
  SessionRig rig({}, "git init -q && git commit -q --allow-empty -m i");
  auto a = rig.run("echo ok > notes.txt; mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch " +
                   rig.s.canary + "\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit");
  // Refused at the write (the repository's hooks are read-only in the sandbox), or held back.
  CHECK((test::held_with(a.result, rig.s.ws + "/.git/hooks/pre-commit", "") ||
         a.result.stderr_data.find("Read-only") != std::string::npos));
  CHECK(fs::exists(rig.s.ws + "/notes.txt"));
  CHECK_FALSE(fs::exists(rig.s.ws + "/.git/hooks/pre-commit"));
  // Held again by the next command's end and by the session's: never applied.
  auto b = rig.run("git config core.hooksPath /tmp; true");
  rig.session->close();
  CHECK_FALSE(fs::exists(rig.s.ws + "/.git/hooks/pre-commit"));
  test::host_runs_nothing(rig.s, {"cd " + rig.s.ws + " && git commit -q --allow-empty -m h"});
}

TEST_CASE("sessions: a timeout ends the command and not the session", "[session]") {
  SessionRig rig;
  rig.run("sleep 60 >/dev/null 2>&1 & echo $! > /tmp/bg");
  auto slow = rig.run("sleep 60", 300ms);
  CHECK(slow.ec == paddock::errc::timeout);
  CHECK(slow.result.timed_out);
  // A command that ignores SIGTERM is killed after the grace.
  auto stubborn = rig.run("trap '' TERM; sleep 60", 300ms);
  CHECK(stubborn.ec == paddock::errc::timeout);
  auto next = rig.run("kill -0 $(cat /tmp/bg) && echo alive");
  CHECK_FALSE(next.ec);
  CHECK(next.result.stdout_data == "alive\n");
}

TEST_CASE("sessions: one command at a time", "[session]") {
  SessionRig rig;
  paddock::ExecOptions o;
  o.session = rig.session;
  std::promise<paddock::BlockingResult> first;
  bool started = false;
  o.on_started = [&](pid_t) { started = true; };
  rig.h.manager.async_exec(test::sh("sleep 1"), o, [&](std::error_code ec, paddock::ExecResult r) {
    first.set_value({ec, std::move(r)});
  });
  REQUIRE(eventually([&] { return started; }));
  auto second = rig.run("echo no");
  CHECK(second.ec == paddock::errc::spawn_failed);
  CHECK(second.result.error.find("one at a time") != std::string::npos);
  auto done = first.get_future().get();
  CHECK_FALSE(done.ec);
  CHECK(rig.run("echo yes").result.stdout_data == "yes\n");
}

TEST_CASE("sessions: a command gets no descriptor of the session's init", "[session]") {
  SessionRig rig;
  // 3: the report pipes, 4: the control socket (init_report.hpp); nothing above 2 but what
  // the shell opens itself.
  auto r = rig.run(
      "for fd in 3 4 5 6 7 8 9 10 11 12; do [ -e /proc/self/fd/$fd ] && "
      "echo open $fd; done; echo checked; kill -TERM 1; sleep 30");
  CHECK(r.result.stdout_data == "checked\n");
  // SIGTERM to PID 1 from inside is passed on to the running command's group (it ends as
  // killed by it), never taken by the init: the session lives.
  CHECK(r.result.signal == SIGTERM);
  CHECK(rig.run("echo still").result.stdout_data == "still\n");
}

TEST_CASE("sessions: a closed or killed session refuses commands", "[session]") {
  SECTION("closed") {
    SessionRig rig;
    const pid_t init = rig.session->pid();
    rig.run("sleep 60 >/dev/null 2>&1 &");
    rig.session->close();
    CHECK_FALSE(test::process_alive(init));
    auto r = rig.run("echo no");
    CHECK(r.ec == paddock::errc::spawn_failed);
    CHECK(r.result.error.find("ended") != std::string::npos);
    // close() again: the first summary.
    CHECK(rig.session->close().failure.empty());
  }
  SECTION("killed") {
    SessionRig rig;
    REQUIRE(::kill(rig.session->pid(), SIGKILL) == 0);
    REQUIRE(eventually([&] { return rig.session->ended(); }));
    auto r = rig.run("echo no");
    CHECK(r.ec == paddock::errc::spawn_failed);
    rig.session->close();
  }
  SECTION("killed while a command runs") {
    SessionRig rig;
    paddock::ExecOptions o;
    o.session = rig.session;
    o.on_started = [&](pid_t) { ::kill(rig.session->pid(), SIGKILL); };
    auto r = rig.h.exec(test::sh("sleep 30"), o);
    CHECK(r.ec == paddock::errc::spawn_failed);
    CHECK(r.result.error.find("session ended") != std::string::npos);
    rig.session->close();
  }
  CHECK(test::zombie_children().empty());
}

TEST_CASE("sessions: an idle session ends by itself", "[session]") {
  paddock::SessionOptions o;
  o.idle_timeout = 200ms;
  SessionRig rig(o);
  rig.run("echo kept > kept.txt; sleep 60 >/dev/null 2>&1 &");
  REQUIRE(eventually([&] { return rig.session->ended(); }));
  CHECK(slurp(rig.s.ws + "/kept.txt") == "kept\n");
}

TEST_CASE("sessions: two sessions share nothing", "[session]") {
  SessionRig one;
  paddock::SessionOptions o2;
  o2.cwd = one.s.ws;
  auto two = one.h.manager.open_session(o2);
  one.run("echo mine > /tmp/x");
  paddock::ExecOptions o;
  o.session = two;
  auto r = one.h.exec(test::sh("cat /tmp/x 2>/dev/null || echo none"), o);
  CHECK(r.result.stdout_data == "none\n");
  two->close();
}

TEST_CASE("sessions: the cwd and the policy are the session's", "[session]") {
  SessionRig rig;
  paddock::ExecOptions o;
  o.session = rig.session;
  o.cwd = rig.s.root;
  auto r = rig.h.exec(test::sh("true"), o);
  CHECK(r.ec == paddock::errc::config_invalid);
  o.cwd = rig.s.ws;  // the session's own: fine
  CHECK_FALSE(rig.h.exec(test::sh("true"), o).ec);
  o.policy.allow_write = {rig.s.root};
  CHECK(rig.h.exec(test::sh("true"), o).ec == paddock::errc::config_invalid);
}

TEST_CASE("sessions: git commits in a session reach the host's repository", "[session]") {
  // The repository is there before the session opens: a host change during the session is a
  // conflict for it (the host's test below).
  SessionRig rig({}, "git init -q && echo a > a && git add a && git commit -q -m a");
  auto one = rig.run("echo b > b && git add b && git commit -q -m b && git log --oneline | wc -l");
  CHECK(one.result.stdout_data == "2\n");
  INFO(test::held(one.result));
  CHECK(one.result.violations.empty());
  CHECK(one.result.changes.held.empty());
  auto two = rig.run("echo c >> b && git commit -q -am c && git log --oneline | wc -l");
  CHECK(two.result.stdout_data == "3\n");
  INFO(test::held(two.result));
  CHECK(two.result.violations.empty());
  CHECK(two.result.changes.held.empty());
  const auto summary = rig.session->close();
  CHECK(summary.violations.empty());
  // The host's own git sees the commits, whole.
  auto log = rig.s.host("cd " + rig.s.ws +
                        " && git fsck --no-progress && git log --format=%s | tr '\\n' ,");
  CHECK(log.status == 0);
  CHECK(log.text == "c,b,a,");
  CHECK(rig.s.host("cd " + rig.s.ws + " && git status --porcelain").text.empty());
}

TEST_CASE("sessions: the host's git status between two commits takes no commit apart",
          "[session]") {
  SessionRig rig({}, "git init -q -b main && echo a > f && git add f && git commit -qm one");
  const std::string git = "cd " + rig.s.ws + " && git ";
  auto commit = [&](const std::string& line, const std::string& message) {
    auto r = rig.run("echo " + line + " >> f && git commit -qam " + message);
    CHECK(r.result.exit_code == 0);
    INFO(test::held(r.result));
    CHECK(r.result.changes.held.empty());
  };
  commit("b", "two");
  // The host's git refreshes the index's stat data: the applied files are new inodes to it.
  const std::string index = rig.s.ws + "/.git/index";
  struct stat before, after;
  REQUIRE(::stat(index.c_str(), &before) == 0);
  // (Rewritten only when git finds stat data to refresh: the same bytes put back by hand make
  // sure the host's copy is another file, the content as the session's apply left it.)
  REQUIRE(rig.s.host(git + "status --porcelain && cp .git/index .git/i && mv .git/i .git/index")
              .status == 0);
  REQUIRE(::stat(index.c_str(), &after) == 0);
  CHECK((after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
         after.st_ctim.tv_nsec != before.st_ctim.tv_nsec));  // another file now
  commit("c", "three");
  CHECK(rig.s.host(git + "log --format=%s").text == "three\ntwo\none\n");
  CHECK(rig.s.host(git + "status --porcelain").text.empty());  // index, HEAD and files agree
  // Staging on the host is a real change of the index: the session's next one is a conflict.
  REQUIRE(rig.s.host("echo host > " + rig.s.ws + "/g && " + git + "add g").status == 0);
  auto r = rig.run("echo d >> f && git commit -qam four");
  CHECK(test::held_with(r.result, rig.s.ws + "/.git/index", "conflict"));
  CHECK(rig.s.host(git + "diff --cached --name-only").text.find("g\n") != std::string::npos);
  rig.session->close();
}

TEST_CASE("sessions: what is applied is what was judged, whatever runs meanwhile",
          "[session][attack]") {
  // A process of the session keeps swapping a new repository's HEAD and config between what
  // the judge passes and what it holds back (a malformed HEAD; a config with core.fsmonitor),
  // by rename, while commands end and their sets are applied. The host must never get a
  // refused version, at any command's end nor at the session's.
  SessionRig rig;
  const std::string sub = rig.s.ws + "/sub/.git";
  auto made = rig.run(
      "git init -q sub && cd sub/.git && cp HEAD good.head && cp config "
      "good.config && printf 'garbage\\n' > bad.head && { cat config; printf "
      "'[core]\\n\\tfsmonitor = touch " +
      rig.s.canary + "\\n'; } > bad.config");
  REQUIRE_FALSE(made.ec);
  REQUIRE(fs::exists(sub + "/HEAD"));
  // Swapped by renameat2(RENAME_EXCHANGE) in a tight loop: each name is always one of the two.
  rig.run(
      "cd sub/.git && python3 -c 'import ctypes\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "while True:\n"
      "  libc.renameat2(-100, b\"HEAD\", -100, b\"bad.head\", 2)\n"
      "  libc.renameat2(-100, b\"config\", -100, b\"bad.config\", 2)\n"
      "' >/dev/null 2>&1 &");
  auto host_clean = [&] {
    const std::string head = slurp(sub + "/HEAD");
    const std::string config = slurp(sub + "/config");
    INFO(head << config);
    return head.find("garbage") == std::string::npos &&
           config.find("fsmonitor") == std::string::npos;
  };
  for (int i = 0; i < 25; ++i) {
    rig.run("true");
    REQUIRE(host_clean());
  }
  rig.session->close();
  CHECK(host_clean());
  test::host_runs_nothing(rig.s, {"cd " + rig.s.ws + "/sub && git status; true"});
}

TEST_CASE("sessions: a command that leaves its process group still ends at its timeout",
          "[session][attack]") {
  SessionRig rig;
  // One child stays in the command's group, one makes a group of its own, and the command
  // moves itself into that one: the group's SIGKILL alone would miss the command.
  const auto started = std::chrono::steady_clock::now();
  auto r = rig.run(
      "exec python3 -c 'import os, time\n"
      "b = os.fork()\n"
      "if b == 0:\n  os.setpgid(0, 0); time.sleep(60); os._exit(0)\n"
      "a = os.fork()\n"
      "if a == 0:\n  time.sleep(60); os._exit(0)\n"
      "time.sleep(0.2); os.setpgid(0, b); print(\"moved\", flush=True); "
      "time.sleep(60)'",
      1000ms);
  CHECK(r.ec == paddock::errc::timeout);
  CHECK(test::seconds_since(started) < 20);
  CHECK(rig.run("echo next").result.stdout_data == "next\n");
}

TEST_CASE("sessions: a sparse file stays sparse on the host", "[session]") {
  SessionRig rig;
  auto r = rig.run("truncate -s 1G sparse.bin && printf x >> sparse.bin");
  REQUIRE_FALSE(r.ec);
  struct stat st;
  REQUIRE(::stat((rig.s.ws + "/sparse.bin").c_str(), &st) == 0);
  CHECK(st.st_size == (1 << 30) + 1);
  CHECK(st.st_blocks * 512 < 16 * 1024 * 1024);  // holes kept, not a gigabyte of zeros
}

TEST_CASE("sessions: a directory made a git directory later does not bring its config along",
          "[session][attack]") {
  // First a plain directory with a `config` (no git directory yet: applied as any file), then
  // what makes it one. The host's git would obey that config from then on.
  const std::string config = "printf '[core]\\n\\tfsmonitor = touch CANARY\\n' > x/config";
  auto attack = [&](const std::function<paddock::ExecResult(const std::string&)>& run,
                    const test::Scratch& s) {
    const std::string planted = std::regex_replace(config, std::regex("CANARY"), s.canary);
    auto first = run("mkdir -p x/hooks && " + planted);
    CHECK(std::filesystem::exists(s.ws + "/x/config"));
    auto second = run("cd x && mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD");
    INFO(test::held(second));
    CHECK(test::held_with(second, s.ws + "/x/HEAD", "never judged as git's"));
    CHECK_FALSE(std::filesystem::exists(s.ws + "/x/HEAD"));
    test::host_runs_nothing(
        s, {"git --git-dir=" + s.ws + "/x status; true", "cd " + s.ws + "/x && git status; true"});
  };
  SECTION("in a session") {
    SessionRig rig;
    attack([&](const std::string& script) { return rig.run(script).result; }, rig.s);
  }
  SECTION("in two sandboxes one after the other") {
    test::Scratch s;
    test::Harness h(test::layered(s));
    attack([&](const std::string& script) { return test::run_layered(h, s, s.ws, script); }, s);
  }
}
