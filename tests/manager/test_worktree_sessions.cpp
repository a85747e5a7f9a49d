// Sessions on a worktree paddock makes (SessionOptions::worktree): paddock runs `git worktree
// add -b` and, at the end, `remove` and `branch -D` on the host; the agent inside only
// commits on its branch. Its commits reach the host's repository; the repository's other
// branches, its main index and HEAD, its config and hooks never change, and the host's git
// runs nothing planted. Tagged [session]: the suite runs again as nobody.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "paddock/manager.hpp"
#include "paddock/session.hpp"
#include "support/change_set_scratch.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using paddock::WorktreeOptions;
using test::Scratch;

namespace {

struct WorktreeRig {
  Scratch s;
  test::Harness h{test::layered(s)};
  std::string wt = s.root + "/wt";
  std::shared_ptr<paddock::Session> session;

  explicit WorktreeRig(WorktreeOptions::OnClose on_close = WorktreeOptions::OnClose::keep) {
    s.repo(s.ws);
    paddock::SessionOptions o;
    o.worktree = WorktreeOptions{s.ws, "agent/one", "HEAD", wt, on_close, {}};
    session = h.manager.open_session(std::move(o));
  }
  paddock::ExecResult run(const std::string& script) {
    paddock::ExecOptions o;
    o.session = session;
    o.timeout = 60s;
    auto r = h.exec(test::sh(s.env() + script), std::move(o));
    UNSCOPED_INFO(script << "\n -> " << r.ec.message() << ": " << r.result.stdout_data
                         << r.result.stderr_data << r.result.error << "\n"
                         << test::held(r.result));
    return r.result;
  }
  std::string host_git(const std::string& args) const {
    return s.host("git -C " + s.ws + " " + args).text;
  }
};

}  // namespace

TEST_CASE("worktree sessions: commits reach the branch and nothing else moves",
          "[session][changes][attack]") {
  WorktreeRig rig;
  CHECK(rig.session->cwd() == fs::canonical(rig.wt).string());
  const std::string main_before = rig.host_git("rev-parse main");
  const std::string config_before = test::Tree::read(rig.s.ws + "/.git/config");
  auto a = rig.run(
      "echo hi > f.txt && git add f.txt && git commit -qm 'agent commit' && git log --oneline");
  CHECK(a.exit_code == 0);
  CHECK(a.changes.held.empty());
  CHECK(rig.host_git("log --format=%s agent/one") == "agent commit\nbase\n");
  // The worktree is clean for the host's git: its index came along with the commit.
  CHECK(rig.s.host("git -C " + rig.wt + " status --porcelain").text.empty());

  // What a worktree session must not do, in several spellings: other branches moved or made,
  // the main work tree's index and HEAD, the repository's config and hooks.
  const std::string common = "$(git rev-parse --git-common-dir)";
  auto b = rig.run(
      "git branch evil; git update-ref refs/heads/main HEAD;"
      " git tag t1; cp " +
      common + "/worktrees/*/index " + common +
      "/index;"
      " echo 'ref: refs/heads/agent/one' > " +
      common +
      "/HEAD;"
      " chmod 0777 " +
      common + "/objects " + common +
      "/worktrees/wt;"
      " echo 'ref: refs/heads/main' > " +
      common +
      "/refs/heads/agent/one;"
      " git config core.fsmonitor 'touch " +
      rig.s.canary +
      "';"
      " printf '#!/bin/sh\\ntouch " +
      rig.s.canary + "\\n' > " + common + "/hooks/post-checkout; chmod +x " + common +
      "/hooks/post-checkout; true");
  for (const char* held :
       {"/.git/refs/heads/evil", "/.git/refs/heads/main", "/.git/refs/tags/t1", "/.git/config",
        "/.git/hooks/post-checkout", "/.git/index", "/.git/refs/heads/agent/one"}) {
    INFO(held);
    CHECK(test::held_with(b, rig.s.ws + held, ""));
  }
  // A pack in the shared object store could name main's objects with other bytes: held.
  auto packed = rig.run("git repack -q -d; ls " + common + "/objects/pack");
  CHECK(std::any_of(packed.changes.held.begin(), packed.changes.held.end(),
                    [](const paddock::HeldChange& h) {
                      return h.path.find("/objects/pack/") != std::string::npos &&
                             h.reason.find("new pack") != std::string::npos;
                    }));
  // The worktree's own HEAD at another branch: the host's next commit there would move it.
  auto c = rig.run("echo 'ref: refs/heads/main' > $(git rev-parse --git-dir)/HEAD");
  CHECK(test::held_with(c, rig.s.ws + "/.git/worktrees/wt/HEAD", "another branch"));
  const auto summary = rig.session->close();
  CHECK(summary.branch == "agent/one");
  CHECK(summary.branch_head == rig.host_git("rev-parse agent/one").substr(0, 40));
  CHECK(summary.worktree == "kept");
  CHECK(rig.host_git("rev-parse main") == main_before);
  CHECK(rig.host_git("branch --list evil").empty());
  CHECK(rig.host_git("tag").empty());
  CHECK(test::Tree::read(rig.s.ws + "/.git/config") == config_before);
  CHECK(test::Tree::read(rig.s.ws + "/.git/HEAD") == "ref: refs/heads/main\n");
  // No directory of the git directory writable to others (any local user could plant there).
  for (const char* dir : {"/.git/objects", "/.git/worktrees/wt"}) {
    struct stat st;
    REQUIRE(::stat((rig.s.ws + dir).c_str(), &st) == 0);
    CHECK((st.st_mode & 022) == 0);
  }
  test::host_runs_nothing(rig.s, {"cd " + rig.s.ws + " && git status && git checkout -q main",
                                  "cd " + rig.wt +
                                      " && git status && git commit -q "
                                      "--allow-empty -m host"});
  CHECK(rig.s.host("cd " + rig.s.ws + " && git status --porcelain").text.empty());
}

TEST_CASE("worktree sessions: the end keeps or hands back or discards the branch",
          "[session][changes]") {
  SECTION("keep") {
    WorktreeRig rig(WorktreeOptions::OnClose::keep);
    rig.run("git commit -q --allow-empty -m one");
    CHECK(rig.session->close().worktree == "kept");
    CHECK(fs::exists(rig.wt + "/base.txt"));
    CHECK(rig.host_git("log -1 --format=%s agent/one") == "one\n");
  }
  SECTION("remove: the branch handed back") {
    WorktreeRig rig(WorktreeOptions::OnClose::remove);
    rig.run("git commit -q --allow-empty -m one");
    CHECK(rig.session->close().worktree == "removed");
    CHECK_FALSE(fs::exists(rig.wt));
    CHECK(rig.host_git("log -1 --format=%s agent/one") == "one\n");
    CHECK(rig.host_git("worktree list --porcelain").find(rig.wt) == std::string::npos);
  }
  SECTION("remove: uncommitted work keeps the worktree") {
    WorktreeRig rig(WorktreeOptions::OnClose::remove);
    rig.run("echo draft > draft.txt");
    const auto summary = rig.session->close();
    CHECK(summary.worktree.starts_with("kept: "));
    CHECK(test::Tree::read(rig.wt + "/draft.txt") == "draft\n");
  }
  SECTION("discard") {
    WorktreeRig rig(WorktreeOptions::OnClose::discard);
    rig.run("echo draft > draft.txt; git commit -q --allow-empty -m one");
    CHECK(rig.session->close().worktree == "discarded");
    CHECK_FALSE(fs::exists(rig.wt));
    CHECK(rig.host_git("branch --list agent/one").empty());
  }
}

TEST_CASE("worktree sessions: what cannot be made is refused and leaves nothing",
          "[session][changes]") {
  Scratch s;
  test::Harness h(test::layered(s));
  s.repo(s.ws);
  REQUIRE(s.host("git -C " + s.ws + " branch taken").status == 0);
  fs::create_directories(s.root + "/plain");
  fs::create_directories(s.root + "/exists");
  auto open = [&](WorktreeOptions w) {
    paddock::SessionOptions o;
    o.worktree = std::move(w);
    h.manager.open_session(std::move(o));
  };
  const std::string wt = s.root + "/wt";
  struct Case {
    WorktreeOptions w;
    const char* says;
  };
  const Case cases[] = {
      {{s.root + "/plain", "b1", "HEAD", wt, {}, {}}, "git repository"},  // none, or not its top
      {{s.root + "/nosuch", "b1", "HEAD", wt, {}, {}}, "No such file"},
      {{s.ws, "taken", "HEAD", wt, {}, {}}, "exists already"},
      {{s.ws, "-b", "HEAD", wt, {}, {}}, "not a valid branch name"},
      {{s.ws, "a..b", "HEAD", wt, {}, {}}, "not a valid branch name"},
      {{s.ws, "@{-1}", "HEAD", wt, {}, {}}, "not a valid branch name"},
      {{s.ws, "@", "HEAD", wt, {}, {}}, "not a valid branch name"},
      {{s.ws, "b6", "HEAD", s.root + "/no/such/dir/wt", {}, {}}, "No such file"},
      {{s.ws, "b7", "HEAD", wt, {}, {s.root + "/plain"}}, "outside the daemon's --root"},
      {{s.ws, "b2", "--orphan", wt, {}, {}}, "is not a commit"},
      {{s.ws, "b3", "nosuchrev", wt, {}, {}}, "is not a commit"},
      {{s.ws, "b4", "HEAD", s.root + "/exists", {}, {}}, "exists already"},
  };
  for (const auto& c : cases) {
    INFO(c.w.repository << " " << c.w.branch << " " << c.w.base << " " << c.w.path);
    CHECK_THROWS_WITH(open(c.w), Catch::Contains(c.says));
  }
  paddock::SessionOptions both;
  both.cwd = s.ws;
  both.worktree = WorktreeOptions{s.ws, "b5", "HEAD", wt, {}, {}};
  CHECK_THROWS_WITH(h.manager.open_session(both), Catch::Contains("give no cwd"));
  CHECK_FALSE(fs::exists(wt));
  CHECK(s.host("git -C " + s.ws + " branch --list 'b*'").text.empty());
  CHECK(s.host("git -C " + s.ws + " worktree list").text.find(wt) == std::string::npos);
}
