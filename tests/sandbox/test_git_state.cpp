// Git state the host runs later (sandbox/git_state.cpp) and the post-run audit that
// quarantines instead of deleting (sandbox/quarantine.cpp, post_run_audit.cpp). Each test
// builds real repositories with the host's git, lets a sandboxed command plant config, hooks,
// pointers and special files in every layout, then runs the host's real git (under a timeout)
// and checks that the canary the planted config would create never appears. Tagged [attack]:
// the suite runs again as nobody, where the chmod 555/000 cases matter most.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "sandbox/post_run_audit.hpp"
#include "support/attack_fixture.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using test::Scratch;

namespace {

// What these tests attack is the audit after the fact: commands write the workspace directly
// (`sandbox.changeSets: false`, for file systems overlayfs cannot layer). The same classes
// against change sets, the default: test_change_sets.cpp.
paddock::Config sandbox_config() {
  paddock::Config c = test::sandbox_config();
  c.sandbox.filesystem.change_sets = false;
  return c;
}

using test::git_in;

paddock::BlockingResult run(test::Harness& h, const Scratch& s, const std::string& cwd,
                            const std::string& script) {
  auto r = h.exec(test::sh(s.env() + script), git_in(cwd));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  return r;
}

std::string reported(const paddock::ExecResult& r) {
  std::string out;
  for (const auto& v : r.violations) out += v.path + ": " + v.detail + "\n";
  return out;
}

// The host's git after the command: each command must finish (no FIFO hang) and none may run
// anything the command planted.
void host_git_is_safe(const Scratch& s, const std::vector<std::string>& commands) {
  for (const auto& c : commands) {
    auto r = s.host(c);
    INFO(c << " -> " << r.status << ": " << r.text);
    CHECK(r.status != 137);  // killed by the timeout: git hung
  }
  CHECK_FALSE(s.canary_appeared());
}

}  // namespace

TEST_CASE("git state: a plain repository's config, hooks and pointers stay the host's",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto r = run(
      h, s, s.ws,
      "git config core.fsmonitor 'touch " + C +
          "' && echo SET1; "
          "git config core.hooksPath /tmp && echo SET2; "
          "printf '#!/bin/sh\\ntouch " +
          C +
          "\\n' > .git/hooks/pre-commit && echo SET3; "
          "printf '[core]\\n\\tfsmonitor = touch " +
          C +
          "\\n' > .git/config.worktree; "
          "mkdir -p .git/info 2>/dev/null; echo '* filter=x' > .git/info/attributes && echo SET4; "
          "echo x > f.txt && git add f.txt && git commit -q -m sandbox && echo COMMITTED; "
          "echo ../elsewhere > .git/commondir");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  for (const char* set : {"SET1", "SET2", "SET3", "SET4"}) {
    CHECK(r.result.stdout_data.find(set) == std::string::npos);
  }
  CHECK(r.result.stdout_data.find("COMMITTED") != std::string::npos);  // git works inside
  // What did not exist was created in the sandbox and is quarantined, not deleted.
  CHECK_FALSE(fs::exists(s.ws + "/.git/config.worktree"));
  CHECK_FALSE(fs::exists(s.ws + "/.git/commondir"));
  CHECK(Scratch::quarantined(s.ws + "/.git", "config.worktree") == 1);
  CHECK(Scratch::quarantined(s.ws + "/.git", "commondir") == 1);
  host_git_is_safe(
      s, {"cd " + s.ws + " && git status", "cd " + s.ws + " && git commit -q --allow-empty -m host",
          "cd " + s.ws + " && git log --oneline | grep -q sandbox"});
  CHECK(s.host("cd " + s.ws + " && git log --oneline | grep -q sandbox").status == 0);
}

TEST_CASE("git state: new repositories anywhere are quarantined, nested and bare alike",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  s.repo(s.ws + "/inner");                              // a nested repository
  s.host("git init -q --bare " + s.ws + "/store.git");  // a bare one
  const std::string inner_config = s.host("cat " + s.ws + "/inner/.git/config").text;
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto r = run(
      h, s, s.ws,
      "git -C inner config core.fsmonitor 'touch " + C +
          "' && echo SET1; "
          "echo x > inner/.git/hooks/pre-commit && echo SET2; "
          "git --git-dir=store.git config core.fsmonitor 'touch " +
          C +
          "' && echo SET3; "
          "mkdir -p a/b/c && git init -q a/b/c && git -C a/b/c config core.fsmonitor 'touch " +
          C +
          "'; "
          "mkdir -p gf && printf 'gitdir: ../evil.git\\n' > gf/.git; "
          "git init -q --bare evil.git && git --git-dir=evil.git config core.fsmonitor 'touch " +
          C +
          "'; "
          "mkdir -p d && git init -q --separate-git-dir=d/sep.git d/wt 2>&1; "
          "git -C d/wt config core.fsmonitor 'touch " +
          C + "'; true");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  for (const char* set : {"SET1", "SET2", "SET3"}) {
    CHECK(r.result.stdout_data.find(set) == std::string::npos);
  }
  CHECK(s.host("cat " + s.ws + "/inner/.git/config").text == inner_config);
  CHECK_FALSE(fs::exists(s.ws + "/a/b/c/.git"));
  CHECK(Scratch::quarantined(s.ws + "/a/b/c", ".git") == 1);
  CHECK_FALSE(fs::exists(s.ws + "/gf/.git"));
  CHECK_FALSE(fs::exists(s.ws + "/evil.git/HEAD"));  // no longer a git dir to git
  CHECK_FALSE(fs::exists(s.ws + "/d/wt/.git"));
  CHECK_FALSE(fs::exists(s.ws + "/d/sep.git/HEAD"));
  host_git_is_safe(s,
                   {"cd " + s.ws + " && git status", "cd " + s.ws + "/inner && git status",
                    "cd " + s.ws + "/inner && git commit -q --allow-empty -m host",
                    "cd " + s.ws + "/a/b/c && git status", "cd " + s.ws + "/gf && git status",
                    "cd " + s.ws + "/evil.git && git status", "cd " + s.ws + "/d/wt && git status",
                    "cd " + s.ws + "/store.git && git log"});
}

TEST_CASE("git state: a plain clone or init made in the sandbox is kept, a planted hook is not",
          "[attack][git]") {
  Scratch s;
  const std::string origin = s.root + "/origin";
  s.repo(origin);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto r = run(h, s, s.ws,
               "git clone -q " + origin +
                   " clone && git init -q fresh && "
                   "git clone -q --bare " +
                   origin +
                   " mirror.git && "
                   "git clone -q " +
                   origin + " hooked && printf '#!/bin/sh\ntouch " + C +
                   "\n' > hooked/.git/hooks/pre-commit && chmod +x hooked/.git/hooks/pre-commit "
                   "&& git clone -q " +
                   origin +
                   " aliased && git -C aliased config alias.st "
                   "'!touch " +
                   C + "' && echo DONE");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  CHECK(r.result.stdout_data.find("DONE") != std::string::npos);
  CHECK(fs::is_directory(s.ws + "/clone/.git"));
  CHECK(fs::is_directory(s.ws + "/fresh/.git"));
  CHECK(fs::exists(s.ws + "/mirror.git/HEAD"));
  CHECK_FALSE(fs::exists(s.ws + "/hooked/.git"));
  CHECK(Scratch::quarantined(s.ws + "/hooked", ".git") == 1);
  CHECK_FALSE(fs::exists(s.ws + "/aliased/.git"));
  host_git_is_safe(s, {"cd " + s.ws + "/clone && git status && git log --oneline | grep -q base",
                       "cd " + s.ws + "/hooked && git commit -q --allow-empty -m host",
                       "cd " + s.ws + "/aliased && git st"});
  CHECK(s.host("cd " + s.ws + "/clone && git status").status == 0);
}

TEST_CASE("git state: a linked worktree's pointers and config.worktree stay the host's",
          "[attack][git]") {
  Scratch s;
  const std::string main = s.root + "/main", wt = s.root + "/wt";
  s.repo(main);
  // With worktreeConfig on, git reads worktrees/<name>/config.worktree: a planted one would run.
  REQUIRE(s.host("git -C " + main + " config extensions.worktreeConfig true && git -C " + main +
                 " worktree add -q " + wt)
              .status == 0);
  const std::string priv = main + "/.git/worktrees/wt";
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write = {main};  // a commit in the worktree writes there
  test::Harness h(cfg);
  const std::string C = s.canary;
  auto r = run(h, s, wt,
               "echo ../../elsewhere > " + priv +
                   "/commondir && echo SET1; "
                   "echo /elsewhere > " +
                   priv +
                   "/gitdir && echo SET2; "
                   "printf '[core]\\n\\tfsmonitor = touch " +
                   C + "\\n' > " + priv +
                   "/config.worktree; "
                   "git config --worktree core.fsmonitor 'touch " +
                   C +
                   "'; "
                   "printf 'gitdir: /elsewhere\\n' > .git && echo SET3; "
                   "echo y > g.txt && git add g.txt && git commit -q -m sandbox && echo COMMITTED");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  for (const char* set : {"SET1", "SET2", "SET3"}) {
    CHECK(r.result.stdout_data.find(set) == std::string::npos);
  }
  CHECK(r.result.stdout_data.find("COMMITTED") != std::string::npos);
  CHECK_FALSE(fs::exists(priv + "/config.worktree"));
  host_git_is_safe(
      s, {"cd " + wt + " && git status", "cd " + wt + " && git commit -q --allow-empty -m host",
          "cd " + main + " && git status"});
}

TEST_CASE("git state: a submodule's gitfile and config stay the host's", "[attack][git]") {
  Scratch s;
  const std::string lib = s.root + "/lib";
  s.repo(lib);
  s.repo(s.ws);
  auto add = s.host("cd " + s.ws + " && git -c protocol.file.allow=always submodule add -q " + lib +
                    " sub && git commit -q -m sub");
  INFO(add.text);
  REQUIRE(add.status == 0);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto r = run(h, s, s.ws,
               "git -C sub config core.fsmonitor 'touch " + C +
                   "' && echo SET1; "
                   "printf 'gitdir: ../evil\\n' > sub/.git && echo SET2; "
                   "echo x > .git/modules/sub/hooks/pre-commit && echo SET3; "
                   "printf '[submodule \"sub\"]\\n\\tupdate = !touch " +
                   C +
                   "\\n' > .gitmodules && "
                   "echo SET4; true");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  for (const char* set : {"SET1", "SET2", "SET3", "SET4"}) {
    CHECK(r.result.stdout_data.find(set) == std::string::npos);
  }
  host_git_is_safe(s, {"cd " + s.ws + " && git status", "cd " + s.ws + "/sub && git status",
                       "cd " + s.ws + "/sub && git commit -q --allow-empty -m host"});
}

TEST_CASE("git state: FIFOs where git opens files are quarantined, the host's git never hangs",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  s.repo(s.ws + "/inner");
  test::Harness h(sandbox_config());
  auto r = run(h, s, s.ws,
               "rm -f .git/HEAD && mkfifo .git/HEAD; mkfifo .git/refs/heads/evil; "
               "mkfifo .gitignore; mkdir -p deep && mkfifo deep/.gitattributes; "
               "rm -f inner/.git/index && mkfifo inner/.git/index; "
               "ln -s ../.git/HEAD deep/.gitignore 2>/dev/null; "
               "tree=$(git -C inner rev-parse HEAD^{tree}) && o=inner/.git/objects/$(echo $tree | "
               "cut -c1-2)/$(echo $tree | cut -c3-) && chmod u+w $(dirname $o) && rm -f $o && "
               "mkfifo $o && echo OBJECT; rm -f .git/logs/HEAD && mkfifo .git/logs/HEAD; true");
  CHECK(r.result.stdout_data.find("OBJECT") != std::string::npos);
  INFO(reported(r.result));
  CHECK_FALSE(r.ec);
  for (const std::string& p :
       {s.ws + "/.git/HEAD", s.ws + "/.git/refs/heads/evil", s.ws + "/.gitignore",
        s.ws + "/deep/.gitattributes", s.ws + "/inner/.git/index", s.ws + "/.git/logs/HEAD"}) {
    INFO(p);
    struct stat st {};
    CHECK((::lstat(p.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)));
  }
  CHECK(Scratch::quarantined(s.ws + "/.git", "HEAD") == 1);
  host_git_is_safe(s, {"cd " + s.ws + " && git status", "cd " + s.ws + "/inner && git status",
                       "cd " + s.ws + "/deep && git status"});
}

TEST_CASE("git state: unwritable and unsearchable parents do not save what a command planted",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto r = run(h, s, s.ws,
               "mkdir -p locked && git init -q locked && git -C locked config core.fsmonitor "
               "'touch " +
                   C +
                   "' && chmod 555 locked; "
                   "mkdir -p hidden/x && git init -q hidden/x && git -C hidden/x config "
                   "core.fsmonitor 'touch " +
                   C +
                   "' && chmod 000 hidden; "
                   "mkdir .vscode && echo '{}' > .vscode/tasks.json && chmod 555 .vscode . ; true");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result) << r.result.error);
  CHECK_FALSE(r.ec);
  CHECK(Scratch::quarantined(s.ws + "/locked", ".git") == 1);
  CHECK(Scratch::quarantined(s.ws, ".vscode") == 1);
  CHECK_FALSE(fs::exists(s.ws + "/.vscode"));
  // The modes the command set are put back: only the offending entries moved.
  struct stat st {};
  REQUIRE(::stat((s.ws + "/locked").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0555);
  REQUIRE(::stat((s.ws + "/hidden").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0);
  s.host("chmod 755 " + s.ws + " " + s.ws + "/hidden");
  CHECK(Scratch::quarantined(s.ws + "/hidden/x", ".git") == 1);
  host_git_is_safe(
      s, {"cd " + s.ws + "/locked && git status", "cd " + s.ws + "/hidden/x && git status"});
}

TEST_CASE("git state: past its bound the scan refuses and the audit fails, never silently",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  for (int i = 0; i < 40; ++i) s.host("touch " + s.ws + "/f" + std::to_string(i));
  s.host("mkdir -p " + s.ws + "/a/b/c/d/e/f");
  paddock::sandbox::GitScanLimits small;
  small.entries = 20;
  CHECK_THROWS_WITH(
      paddock::sandbox::scan_git_state({s.ws}, small),
      Catch::Contains("more than 20 directory entries") && Catch::Contains("not run"));
  small = {};
  small.depth = 3;
  CHECK_THROWS_WITH(paddock::sandbox::scan_git_state({s.ws}, small),
                    Catch::Contains("deeper than 3 directories"));

  // Within the bound before the command; the command adds enough to pass it: the run fails
  // with E_SANDBOX_VIOLATION and a message that says the host must not run git there.
  paddock::sandbox::AuditPlan plan;
  plan.git = paddock::sandbox::scan_git_state({s.ws});
  plan.git.limits.entries = 60;
  s.host("mkdir " + s.ws + "/more && cd " + s.ws + "/more && touch $(seq 1 40)");
  auto report = paddock::sandbox::audit_after_command(plan, "test");
  CHECK_THAT(report.failure, Catch::Contains("stopped") && Catch::Contains("must not run git"));
}

TEST_CASE("git state: a git dir git accepts is one to the audit: links, commondir, the root itself",
          "[attack][git]") {
  // git's is_git_directory follows symlinks to objects/ and refs/ and takes them from a
  // commondir; with `.git/HEAD` made garbage, discovery falls back to the directory itself.
  Scratch s;
  s.repo(s.ws);
  s.host("mkdir -p " + s.ws + "/src " + s.ws + "/hexhead " + s.ws + "/linkhead " + s.ws +
         "/common/sub && touch " + s.ws + "/src/a.c");
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto plant = [&](const std::string& dir, const std::string& head) {
    return "cd " + dir + " && mkdir -p od refs/heads && ln -s od objects && " + head +
           " && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree "
           "= " +
           dir + "\\n\\tfsmonitor = \"touch " + C + "; false\"\\n' > config; cd " + s.ws + "; ";
  };
  auto r = run(h, s, s.ws,
               "echo garbage > .git/HEAD; " + plant(s.ws, "echo 'ref: refs/heads/main' > HEAD") +
                   plant(s.ws + "/src", "echo 'ref:  refs/heads/main' > HEAD") +
                   plant(s.ws + "/hexhead", "printf '%040d\\n' 0 > HEAD") +
                   plant(s.ws + "/linkhead", "ln -s refs/heads/main HEAD") +
                   // HEAD + commondir: objects, refs and config come from the common dir.
                   "cd common && mkdir -p objects refs && printf "
                   "'[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
                   "\\tworktree = " +
                   s.ws + "/common/sub\\n\\tfsmonitor = \"touch " + C +
                   "; false\"\\n' > config && cd sub && echo 'ref: refs/heads/main' > HEAD && "
                   "echo .. > commondir; true");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  for (const std::string& d : std::vector<std::string>{s.ws, s.ws + "/src", s.ws + "/hexhead",
                                                       s.ws + "/linkhead", s.ws + "/common/sub"}) {
    INFO(d);
    CHECK_FALSE(fs::exists(d + "/HEAD"));
    CHECK(Scratch::quarantined(d, "HEAD") == 1);
  }
  host_git_is_safe(
      s, {"cd " + s.ws + " && git status", "cd " + s.ws + "/src && git status",
          "cd " + s.ws + "/hexhead && git status", "cd " + s.ws + "/linkhead && git status",
          "cd " + s.ws + "/common/sub && git status"});
}

TEST_CASE("git state: a second name of a repository's config or hook is no way around read-only",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  // Run 1: new repositories whose config or hook has another name in the workspace, made by
  // link(2), `ln`, and `cp -l`: each is quarantined (a later run could rewrite the other name).
  auto r = run(h, s, s.ws,
               "git init -q sub && ln sub/.git/config notes.txt; "
               "git init -q sub2 && cp -l sub2/.git/config sub2/cfg.txt; "
               "git init -q sub3 && ln sub3/.git/hooks/pre-commit.sample hook.txt; "
               "mkdir bare && cd bare && git init -q --bare . && ln config ../bare.txt; true");
  INFO(r.result.stdout_data << r.result.stderr_data << reported(r.result));
  CHECK_FALSE(r.ec);
  CHECK(Scratch::quarantined(s.ws + "/sub", ".git") == 1);
  CHECK(Scratch::quarantined(s.ws + "/sub2", ".git") == 1);
  CHECK(Scratch::quarantined(s.ws + "/sub3", ".git") == 1);
  CHECK_FALSE(fs::exists(s.ws + "/bare/HEAD"));
  // Run 2 rewrites the other names: none of them is a repository's config any more.
  auto r2 = run(h, s, s.ws,
                "for f in notes.txt sub2/cfg.txt bare.txt; do printf '[core]\\n\\t"
                "repositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "
                "\"touch " +
                    C + "; false\"\\n' > $f; done; printf '#!/bin/sh\\ntouch " + C +
                    "\\n' > hook.txt; true");
  CHECK_FALSE(r2.ec);
  host_git_is_safe(s, {"cd " + s.ws + "/sub && git status", "cd " + s.ws + "/sub2 && git status",
                       "cd " + s.ws + "/sub3 && git status", "cd " + s.ws + "/bare && git status"});

  // A protected file with a second name the host made (or an old run left): refused up front,
  // with the path named, for a config, a hook and a bare repository's config.
  for (const std::string link : {".git/config", ".git/hooks/pre-commit", "store.git/config"}) {
    Scratch t;
    t.repo(t.ws);
    t.host("cd " + t.ws +
           " && git init -q --bare store.git && printf '#!/bin/sh\\n' > "
           ".git/hooks/pre-commit && ln " +
           link + " other-name");
    test::Harness h2(sandbox_config());
    auto refused = h2.exec(test::sh("echo RAN"), git_in(t.ws));
    INFO(link << ": " << refused.result.error);
    CHECK(refused.ec == paddock::errc::config_invalid);
    CHECK(refused.result.error.find(t.ws + "/" + link) != std::string::npos);
    CHECK(refused.result.error.find("hard links") != std::string::npos);
    CHECK(refused.result.stdout_data.find("RAN") == std::string::npos);
  }
}

TEST_CASE("git state: FIFOs at any depth of a git dir are quarantined (rebase, sequencer, refs)",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  s.repo(s.ws + "/inner");
  test::Harness h(sandbox_config());
  const std::vector<std::string> fifos = {
      ".git/rebase-merge/head-name", ".git/rebase-merge/interactive",
      ".git/rebase-apply/applying",  ".git/sequencer/todo",
      ".git/refs/remotes/o/a/b/c",   "inner/.git/rebase-merge/head-name",
      ".git/logs/refs/heads/main2",  "inner/.git/sequencer/opts"};
  std::string script =
      "python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "
      ".git/rebase-merge/onto 2>/dev/null; ";
  for (const auto& f : fifos) {
    script += "mkdir -p $(dirname " + f + ") && mkfifo " + f + "; ";
  }
  // Another spelling: a FIFO renamed into place from outside the git dir.
  script +=
      "mkfifo p && mkdir -p inner/.git/rebase-apply && mv p inner/.git/rebase-apply/next; true";
  auto r = run(h, s, s.ws, script);
  INFO(reported(r.result));
  CHECK_FALSE(r.ec);
  std::vector<std::string> all = fifos;
  all.push_back("inner/.git/rebase-apply/next");
  all.push_back(".git/rebase-merge/onto");
  for (const auto& f : all) {
    INFO(f);
    struct stat st {};
    CHECK((::lstat((s.ws + "/" + f).c_str(), &st) != 0 ||
           !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))));
  }
  CHECK(Scratch::quarantined(s.ws + "/.git/rebase-merge", "head-name") == 1);
  host_git_is_safe(s, {"cd " + s.ws + " && git status", "cd " + s.ws + "/inner && git status",
                       "cd " + s.ws + " && git log -1 --all", "cd " + s.ws + " && git branch -a"});
}

TEST_CASE("git state: a tree deeper than the bound is moved away and the audit goes on",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  // Deep trees (past kGitScanDepthLimit, by mkdir -p and by a long single path) next to
  // shallow repositories with a planted config: the audit must still reach the shallow ones.
  const std::string deep =
      "$(seq -s/ 1 " + std::to_string(paddock::sandbox::kGitScanDepthLimit + 6) + ")";
  auto r =
      run(h, s, s.ws,
          "for n in a b c; do mkdir -p $n/" + deep + "; done; mkdir -p d/" + deep +
              " && git init -q d/" + deep +
              "; for n in z y; do git init -q $n && git -C $n config core.fsmonitor 'touch " + C +
              "; false'; done; mkdir -p x/objects x/refs && echo 'ref: refs/heads/main' > "
              "x/HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = "
              "false\\n\\tworktree = " +
              s.ws + "/x\\n\\tfsmonitor = \"touch " + C + "; false\"\\n' > x/config; true");
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error << reported(r.result));
  CHECK_FALSE(r.ec);
  CHECK(reported(r.result).find("deeper than") != std::string::npos);
  CHECK(Scratch::quarantined(s.ws + "/z", ".git") == 1);
  CHECK(Scratch::quarantined(s.ws + "/y", ".git") == 1);
  CHECK_FALSE(fs::exists(s.ws + "/x/HEAD"));
  host_git_is_safe(s, {"cd " + s.ws + " && git status", "cd " + s.ws + "/z && git status",
                       "cd " + s.ws + "/y && git status", "cd " + s.ws + "/x && git status"});
}

TEST_CASE("git state: past the entry bound every shallower level was still checked",
          "[attack][git]") {
  Scratch s;
  s.repo(s.ws);
  paddock::sandbox::AuditPlan plan;
  plan.git = paddock::sandbox::scan_git_state({s.ws});
  plan.git.limits.entries = 60;
  // One deep, wide subtree (listed first or not: readdir order is the file system's) and a
  // shallow repository with a planted config: breadth-first, the shallow one is judged first.
  s.host("mkdir -p " + s.ws + "/deep/a/b && cd " + s.ws + "/deep/a/b && touch $(seq 1 200)");
  s.host("cd " + s.ws + " && git init -q z && git -C z config core.fsmonitor 'touch " + s.canary +
         "; false'");
  auto report = paddock::sandbox::audit_after_command(plan, "test");
  CHECK_THAT(report.failure, Catch::Contains("more than 60") && Catch::Contains("levels below") &&
                                 Catch::Contains("must not run git"));
  CHECK(Scratch::quarantined(s.ws + "/z", ".git") == 1);
  host_git_is_safe(s, {"cd " + s.ws + "/z && git status"});
}
