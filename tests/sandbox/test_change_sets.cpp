// Change sets (sandbox/change_set.hpp, change_apply.hpp): a sandboxed command writes a
// copy-on-write layer over its workspace, and paddock applies it after the command, holding
// back what the host would run later. Each attack plants by several spellings, then runs the
// host's own git and shell on the workspace (a canary must not appear) and checks that the
// planted file never reached the workspace. Tagged [attack]: the suite runs again as nobody.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "support/attack_fixture.hpp"
#include "support/change_set_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::held;
using test::held_with;
using test::host_runs_nothing;
using test::layered;
using test::Scratch;
using test::sets_left;

TEST_CASE("change sets: ordinary work reaches the workspace whole", "[attack][changes]") {
  Scratch s;
  s.repo(s.ws);
  fs::create_directories(s.ws + "/olddir/deep");
  test::Tree::write(s.ws + "/olddir/deep/x", "x\n");
  test::Tree::write(s.ws + "/gone.txt", "gone\n");
  s.host("cd " + s.ws + " && git add -A && git commit -q -m more");
  test::Harness h(layered(s));
  auto r = run_layered(
      h, s, s.ws,
      "echo new > new.txt && echo more >> base.txt && mkdir -p d/e && echo f > d/e/f &&"
      " ln -s base.txt link && rm gone.txt && rm -rf olddir && mkdir olddir &&"
      " echo again > olddir/y && git add -A && git commit -q -m sandboxed && echo done");
  INFO(held(r));
  CHECK(r.stdout_data == "done\n");
  CHECK(r.changes.held.empty());
  CHECK(r.changes.added >= 4);
  CHECK(r.changes.deleted >= 1);
  CHECK(test::Tree::read(s.ws + "/new.txt") == "new\n");
  CHECK(test::Tree::read(s.ws + "/base.txt") == "base\nmore\n");
  CHECK(test::Tree::read(s.ws + "/d/e/f") == "f\n");
  CHECK(fs::read_symlink(s.ws + "/link") == "base.txt");
  CHECK_FALSE(fs::exists(s.ws + "/gone.txt"));
  CHECK_FALSE(fs::exists(s.ws + "/olddir/deep"));  // the directory was replaced, not merged
  CHECK(test::Tree::read(s.ws + "/olddir/y") == "again\n");
  // The host's git sees the commit the sandbox made, and a clean tree.
  auto log = s.host("cd " + s.ws + " && git log --format=%s -1 && git status --porcelain");
  CHECK(log.text == "sandboxed\n");
  CHECK(sets_left(s) == 0);
}

TEST_CASE("change sets: a repository made in the sandbox arrives whole and inert",
          "[attack][changes]") {
  Scratch s;
  test::Harness h(layered(s));
  auto r =
      run_layered(h, s, s.ws,
                  "git init -q -b main made && cd made && echo a > a && git add a &&"
                  " git commit -q -m first && git remote add origin https://example.com/x.git");
  INFO(held(r));
  CHECK(r.changes.held.empty());
  auto log = s.host("cd " + s.ws + "/made && git log --format=%s && git remote -v | head -1");
  CHECK(log.text.starts_with("first\norigin\thttps://example.com/x.git"));
  // The same with config the host's git would obey: the config is held, the rest arrives.
  auto bad = run_layered(h, s, s.ws,
                         "git init -q -b main bad && git -C bad config core.fsmonitor 'touch " +
                             s.canary + "' && echo b > bad/b");
  CHECK(held_with(bad, s.ws + "/bad/.git/config", "git config"));
  CHECK(fs::exists(s.ws + "/bad/b"));
  host_runs_nothing(s, {"cd " + s.ws + "/bad && git status", "cd " + s.ws + "/bad && git add b"});
}

TEST_CASE("attack: a hooks directory named by core.hooksPath is held back, wherever it is",
          "[attack][changes]") {
  for (const std::string where : {"relative", "dot-relative", "absolute", "global"}) {
    DYNAMIC_SECTION(where) {
      Scratch s;
      s.repo(s.ws);
      const std::string dir = s.ws + "/scripts/githooks";
      const std::string value = where == "relative"       ? "scripts/githooks"
                                : where == "dot-relative" ? "./scripts/../scripts/githooks/"
                                                          : dir;
      if (where == "global") {
        s.host("git config --global core.hooksPath " + value);
      } else {
        s.host("cd " + s.ws + " && git config core.hooksPath " + value);
      }
      test::Harness h(layered(s));
      auto r =
          run_layered(h, s, s.ws,
                      "mkdir -p scripts/githooks && for hk in pre-commit post-commit commit-msg; do"
                      " printf '#!/bin/sh\\ntouch " +
                          s.canary +
                          "\\n' > scripts/githooks/$hk; chmod +x scripts/githooks/$hk; done;"
                          " echo ok > ordinary.txt");
      INFO(held(r));
      CHECK(held_with(r, dir + "/pre-commit", "core.hookspath"));
      CHECK_FALSE(fs::exists(dir + "/pre-commit"));
      CHECK(fs::exists(s.ws + "/ordinary.txt"));
      host_runs_nothing(s, {"cd " + s.ws + " && git add -A && git commit -q -m host"});
    }
  }
}

TEST_CASE("attack: files the repository's config includes are held back", "[attack][changes]") {
  for (const std::string how : {"include-relative", "include-absolute", "includeIf-gitdir"}) {
    DYNAMIC_SECTION(how) {
      Scratch s;
      s.repo(s.ws);
      fs::create_directories(s.ws + "/cfg");
      test::Tree::write(s.ws + "/cfg/extra.cfg", "[user]\n\tname = t\n");
      const std::string key = how == "includeIf-gitdir" ? "includeIf.gitdir:" + s.ws + "/.git.path"
                                                        : std::string("include.path");
      const std::string value =
          how == "include-absolute" ? s.ws + "/cfg/extra.cfg" : "../cfg/extra.cfg";
      s.host("cd " + s.ws + " && git config '" + key + "' " + value);
      test::Harness h(layered(s));
      auto r = run_layered(h, s, s.ws,
                           "printf '[core]\\n\\tfsmonitor = touch " + s.canary +
                               "\\n[alias]\\n\\tst = !touch " + s.canary + "\\n' >> cfg/extra.cfg");
      INFO(held(r));
      CHECK(held_with(r, s.ws + "/cfg/extra.cfg", "include"));
      CHECK(test::Tree::read(s.ws + "/cfg/extra.cfg") == "[user]\n\tname = t\n");
      host_runs_nothing(s, {"cd " + s.ws + " && git status", "cd " + s.ws + " && git st"});
    }
  }
}

TEST_CASE("attack: a file the global git config includes is held back in any workspace",
          "[attack][changes]") {
  // The workspace is no repository: the host's git reads the include from every repository
  // all the same.
  Scratch s;
  const std::string extra = s.ws + "/dot/extra.gitconfig";
  fs::create_directories(s.ws + "/dot");
  test::Tree::write(extra, "[user]\n\tname = t\n");
  // Also: an include behind an includeIf for another repository (git --list does not follow
  // a false condition), and an include whose name is a link (replacing the link counts).
  fs::create_directories(s.root + "/cfg");
  // (with a byte order mark, which git skips)
  test::Tree::write(s.root + "/cfg/b.inc",
                    "\xEF\xBB\xBF[include]\n\tpath = " + s.ws + "/dot/c.inc\n");
  test::Tree::write(s.ws + "/dot/real.inc", "[user]\n\tname = t\n");
  fs::create_symlink("real.inc", s.ws + "/dot/link.inc");
  test::Tree::write(s.root + "/home/.gitconfig",
                    "[include]\n\tpath = " + extra + "\n\tpath = " + s.ws +
                        "/dot/link.inc\n[includeIf \"gitdir:" + s.root +
                        "/elsewhere/\"]\n\tpath = " + s.root + "/cfg/b.inc\n");
  s.repo(s.root + "/other");
  s.repo(s.root + "/elsewhere");
  test::Harness h(layered(s));
  const std::string fsmonitor = "[core]\\n\\tfsmonitor = touch " + s.canary + "\\n";
  auto r = run_layered(h, s, s.ws + "/dot",
                       "printf '" + fsmonitor + "' >> extra.gitconfig; printf '" + fsmonitor +
                           "' > c.inc; rm link.inc; printf '" + fsmonitor +
                           "' > link.inc; echo ok > notes.txt");
  INFO(held(r));
  CHECK(held_with(r, extra, "include"));
  CHECK(held_with(r, s.ws + "/dot/c.inc", "include"));
  CHECK(held_with(r, s.ws + "/dot/link.inc", "include"));
  CHECK_FALSE(fs::exists(s.ws + "/dot/c.inc"));
  CHECK(fs::is_symlink(s.ws + "/dot/link.inc"));
  CHECK(test::Tree::read(extra) == "[user]\n\tname = t\n");
  CHECK(fs::exists(s.ws + "/dot/notes.txt"));
  host_runs_nothing(
      s, {"cd " + s.root + "/other && git status", "cd " + s.root + "/elsewhere && git status"});
}

TEST_CASE("attack: sequencer state, git pointers and nested repositories are held back",
          "[attack][changes]") {
  Scratch s;
  s.repo(s.ws);
  s.repo(s.ws + "/nested");
  fs::create_directories(s.root + "/elsewhere");
  s.host("git init -q --bare " + s.root + "/elsewhere/evil.git && git -C " + s.root +
         "/elsewhere/evil.git config core.fsmonitor 'touch " + s.canary + "'");
  test::Harness h(layered(s));
  const std::string C = s.canary;
  auto r =
      run_layered(h, s, s.ws,
                  "mkdir -p .git/rebase-merge .git/sequencer .git/rebase-apply sub;"
                  " printf 'exec touch " +
                      C +
                      "\\n' > .git/rebase-merge/git-rebase-todo;"
                      " echo refs/heads/main > .git/rebase-merge/head-name;"
                      " git rev-parse HEAD > .git/rebase-merge/onto;"
                      " git rev-parse HEAD > .git/rebase-merge/orig-head;"
                      " printf 'exec touch " +
                      C +
                      "\\n' > .git/sequencer/todo;"
                      " echo 'git bisect start' > .git/BISECT_LOG; echo x > .git/rebase-apply/next;"
                      " mkdir -p .git/objects/info && echo " +
                      s.root +
                      "/elsewhere/evil.git/objects"
                      " > .git/objects/info/alternates;"
                      " echo 'gitdir: " +
                      s.root +
                      "/elsewhere/evil.git' > sub/.git;"
                      " printf '[core]\\n\\tfsmonitor = touch " +
                      C +
                      "\\n' >> nested/.git/config 2>/dev/null;"
                      " mkdir -p deep/er && git init -q deep/er/repo && git -C deep/er/repo config"
                      " core.pager 'touch " +
                      C +
                      "';"
                      // rerere: a recorded "resolution" for the path MERGE_RR names, which
                      // the host's next commit would write there (.git/config).
                      " H=2222222222222222222222222222222222222222; mkdir -p .git/rr-cache/$H;"
                      " cp .git/config .git/rr-cache/$H/preimage; { cat .git/config; printf"
                      " '[core]\\n\\tfsmonitor = \"touch " +
                      C +
                      "; false\"\\n'; } > .git/rr-cache/$H/postimage;"
                      " printf \"$H.-1\\t.git/config\\0\" > .git/MERGE_RR;"
                      // a legacy remote the host's `git pull` would fetch from
                      " mkdir -p .git/branches && echo 'file:///nowhere#main' >"
                      " .git/branches/origin; git replace -f HEAD $(git commit-tree"
                      " HEAD^{tree} -m other) && git pack-refs --all; true");
  INFO(held(r));
  CHECK(held_with(r, s.ws + "/.git/rebase-merge/git-rebase-todo", "sequencer"));
  CHECK(held_with(r, s.ws + "/.git/sequencer/todo", "sequencer"));
  CHECK(held_with(r, s.ws + "/.git/objects/info/alternates", "objects/info"));
  CHECK(held_with(r, s.ws + "/sub/.git", "gitfile"));
  CHECK(held_with(r, s.ws + "/deep/er/repo/.git/config", "git config"));
  CHECK(held_with(r, s.ws + "/.git/MERGE_RR", "git directory state"));
  CHECK(held_with(r, s.ws + "/.git/rr-cache", "git directory state"));
  CHECK_FALSE(fs::exists(s.ws + "/.git/rr-cache"));
  CHECK(held_with(r, s.ws + "/.git/branches/origin", "git directory state"));
  CHECK(r.stderr_data.find("replace") == std::string::npos);
  bool replace_held = false;
  for (const auto& hc : r.changes.held)
    replace_held |= hc.reason.find("replace ref") != std::string::npos;
  CHECK(replace_held);
  CHECK_FALSE(fs::exists(s.ws + "/.git/rebase-merge"));
  CHECK_FALSE(fs::exists(s.ws + "/sub/.git"));
  host_runs_nothing(s, {"cd " + s.ws + " && git rebase --continue", "cd " + s.ws + " && git status",
                        "cd " + s.ws + "/sub && git status", "cd " + s.ws + "/nested && git status",
                        "cd " + s.ws + "/deep/er/repo && git log | cat",
                        "cd " + s.ws + " && git bisect replay .git/BISECT_LOG",
                        "cd " + s.ws + " && git commit -q --allow-empty -m h && git status"});
}

TEST_CASE("attack: start-up and configuration files in a writable home are held back",
          "[attack][changes]") {
  Scratch s;
  const std::string home = s.root + "/home";
  test::Tree::write(home + "/.bashrc", "[ -f ~/.bash_aliases ] && . ~/.bash_aliases\n");
  paddock::Config c = layered(s);
  c.sandbox.filesystem.allow_write_home = true;
  c.sandbox.filesystem.home = home;
  test::Harness h(c);
  const std::string C = "touch " + s.canary;
  const std::vector<std::string> planted = {".lesskey",
                                            ".gdbinit",
                                            ".sqliterc",
                                            ".psqlrc",
                                            ".irbrc",
                                            ".Rprofile",
                                            ".ipython/profile_default/startup/00.py",
                                            ".local/share/bash-completion/completions/git",
                                            ".pydistutils.cfg",
                                            ".config/pip/pip.conf",
                                            ".curlrc",
                                            ".bash_aliases",
                                            "bin/git",
                                            ".local/bin/git",
                                            ".config/git/config",
                                            ".ssh/authorized_keys",
                                            ".newtool/init.sh"};
  std::string script = "cd " + home + ";";
  for (const auto& p : planted) {
    script += " mkdir -p \"$(dirname " + p + ")\" && echo '" + C + "' > " + p + ";";
  }
  script += " echo notes > notes.txt; true";
  auto r = run_layered(h, s, home, script);
  INFO(held(r));
  for (const auto& p : planted) {
    INFO(p);
    CHECK_FALSE(fs::exists(home + "/" + p));
  }
  CHECK(test::Tree::read(home + "/notes.txt") == "notes\n");
  host_runs_nothing(s, {"bash -i -c true", "cd " + home + " && git --version"});
}

TEST_CASE("attack: special files and setuid bits never reach the workspace", "[attack][changes]") {
  Scratch s;
  test::Harness h(layered(s));
  auto r =
      run_layered(h, s, s.ws,
                  "mkfifo pipe; echo x > suid; chmod 4755 suid; echo y > sgid; chmod 2755 sgid;"
                  " python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")' "
                  "2>/dev/null; echo fine > fine; true");
  INFO(held(r));
  CHECK(held_with(r, s.ws + "/pipe", "FIFO"));
  CHECK_FALSE(fs::exists(s.ws + "/pipe"));
  CHECK_FALSE(fs::exists(s.ws + "/sock"));
  // seccomp refuses the mode bits at chmod already; whatever arrives has none.
  for (const char* name : {"suid", "sgid"}) {
    struct stat st {};
    if (::lstat((s.ws + "/" + name).c_str(), &st) == 0) {
      CHECK((st.st_mode & (S_ISUID | S_ISGID)) == 0);
    }
  }
  CHECK(fs::exists(s.ws + "/fine"));
}

TEST_CASE("change sets: the host's edit during the run is a conflict, never overwritten",
          "[attack][changes]") {
  Scratch s;
  test::Tree::write(s.ws + "/shared.txt", "original\n");
  test::Harness h(layered(s));
  auto first = std::async(std::launch::async, [&] {
    return h.exec(test::sh("echo A > shared.txt; echo a > a.txt; sleep 1"), test::git_in(s.ws));
  });
  auto second = std::async(std::launch::async, [&] {
    return h.exec(test::sh("echo B > shared.txt; echo b > b.txt; sleep 3"), test::git_in(s.ws));
  });
  auto a = first.get().result;
  auto b = second.get().result;
  INFO(held(a) << held(b));
  // The first applied; the second found shared.txt changed since it started.
  CHECK(a.changes.held.empty());
  CHECK(held_with(b, s.ws + "/shared.txt", "conflict"));
  CHECK(test::Tree::read(s.ws + "/shared.txt") == "A\n");
  CHECK(fs::exists(s.ws + "/a.txt"));
  CHECK(fs::exists(s.ws + "/b.txt"));
}

// The set starts on a stamp later than any change the host made before it: the file
// system's coarse clock gives a save made in the same tick as the set the same change
// time, which read as "changed during the run" and held the command's own edit back.
TEST_CASE("change sets: the host's save just before a run is the host's, never a conflict",
          "[attack][changes]") {
  Scratch s;
  const std::string f = s.ws + "/saved.txt";
  test::Harness h(layered(s));
  for (int i = 0; i < 30; ++i) {
    // Three ways an editor saves: in place, a new file renamed over, a mode change.
    const std::string text = "save " + std::to_string(i) + "\n";
    switch (i % 3) {
      case 0:
        test::Tree::write(f, text);
        break;
      case 1:
        test::Tree::write(f + ".swp", text);
        fs::rename(f + ".swp", f);
        break;
      default:
        test::Tree::write(f, text);
        fs::permissions(f, fs::perms::owner_all, fs::perm_options::add);
        break;
    }
    auto r = run_layered(h, s, s.ws, "echo ran >> saved.txt");
    INFO("save " << i << ": " << held(r));
    REQUIRE(r.changes.held.empty());
    CHECK(test::Tree::read(f) == text + "ran\n");
  }
}

// The other side of the same stamp: a host write that lands as the sandbox is made, in the
// same clock tick, is never overwritten unseen. A writer saves while a command reads the file
// and then replaces it; each run either applied over exactly what the command read or held
// the file as a conflict. Once with the store on the workspace's file system, once on another
// (/dev/shm), whose stamps the workspace's do not share.
TEST_CASE("change sets: a host save racing the sandbox's start is seen or is a conflict",
          "[attack][changes]") {
  Scratch s;
  const std::string f = s.ws + "/saved.txt";
  std::string shm = "/dev/shm/paddock-store-XXXXXX";
  const bool foreign = ::mkdtemp(shm.data()) != nullptr;
  struct stat a {
  }, b{};
  INFO("store on another file system: " << (foreign ? shm : "none"));
  CHECK((foreign && ::stat(shm.c_str(), &a) == 0 && ::stat(s.ws.c_str(), &b) == 0 &&
         a.st_dev != b.st_dev));
  for (const std::string& store : {s.root + "/store", shm}) {
    if (store == shm && !foreign) continue;
    paddock::Config c = layered(s);
    c.sandbox.filesystem.change_store = store;
    test::Harness h(c);
    int conflicts = 0, late = 0;
    for (int i = 0; i < 20; ++i) {
      test::Tree::write(f, "start\n");
      std::string last;
      const auto started = std::chrono::steady_clock::now();
      std::chrono::steady_clock::time_point written;
      std::thread writer([&] {
        for (int n = 0; n < 1 + i; ++n) {  // from before the start to well after
          last = std::to_string(i) + "." + std::to_string(n) + "\n";
          test::Tree::write(f, last);
          std::this_thread::sleep_for(200us);
        }
        written = std::chrono::steady_clock::now();
      });
      auto r = run_layered(h, s, s.ws, "cat saved.txt; echo B > saved.txt; sleep 0.1");
      writer.join();
      INFO(store << " run " << i << ": read " << r.stdout_data << held(r));
      // The writer is meant to be done long before the command's sleep is. One held up longer
      // (a loaded machine) may save after the apply, which no check can see: not this test.
      if (written - started > 90ms) {
        ++late;
        continue;
      }
      if (r.changes.held.empty()) {
        CHECK(r.stdout_data == last);  // every host save came before the command read
        CHECK(test::Tree::read(f) == "B\n");
      } else {
        ++conflicts;
        CHECK(held_with(r, f, "conflict"));
        CHECK(test::Tree::read(f) == last);
      }
    }
    WARN(store << ": " << conflicts << " of 20 runs were conflicts, " << late
               << " had their writer held up past the command");
    CHECK(late < 20);
  }
  std::error_code ec;
  if (foreign) fs::remove_all(shm, ec);
}

TEST_CASE("change sets: the store is hidden from the command", "[attack][changes]") {
  Scratch s;
  test::Harness h(layered(s));
  run_layered(h, s, s.ws, "mkfifo keep");  // a held set stays in the store
  REQUIRE(sets_left(s) == 1);
  auto r =
      run_layered(h, s, s.ws, "ls " + s.root + "/store; cat " + s.root + "/store/*/set.json; true");
  CHECK(r.stdout_data.empty());
}

TEST_CASE("change sets: git works below the root of a repository", "[attack][changes]") {
  // Also under the host's /tmp, where the directories around the root are the sandbox's
  // private overlay: a write above the root must fail there too, not vanish.
  for (const std::string& under : {std::string(), std::string("/tmp")}) {
    DYNAMIC_SECTION("under " << (under.empty() ? "the scratch tree" : under)) {
      Scratch s(under);
      s.repo(s.ws);
      fs::create_directories(s.ws + "/src");
      test::Harness h(layered(s));
      auto r = run_layered(
          h, s, s.ws + "/src",
          "git status --porcelain >/dev/null && git log --format=%s -1 && echo x > here.txt &&"
          " (echo y > ../Makefile) 2>/dev/null; echo $?");
      CHECK(r.stdout_data == "base\n1\n");  // above the writable root: refused, not lost silently
      CHECK(fs::exists(s.ws + "/src/here.txt"));
      CHECK_FALSE(fs::exists(s.ws + "/Makefile"));
    }
  }
}

TEST_CASE("attack: what a review found around the rules stays held back", "[attack][changes]") {
  Scratch s;
  s.repo(s.ws);
  s.repo(s.ws + "/sub");
  fs::create_directories(s.ws + "/tools/hooks");
  test::Tree::write(s.ws + "/tools/hooks/keep", "keep\n");
  s.host("cd " + s.ws + " && git config core.hooksPath tools/hooks");
  test::Harness h(layered(s));
  const std::string C = "touch " + s.canary;
  // A new repository's config padded past what is read: judged whole or held.
  auto padded =
      run_layered(h, s, s.ws,
                  "git init -q padded && { printf '[core]\\n\\tbare = false\\n';"
                  " i=0; while [ $i -lt 1500 ]; do echo '# padding padding padding padding';"
                  " i=$((i+1)); done; printf '[core]\\n\\tfsmonitor = \"" +
                      C + "; false\"\\n'; } > padded/.git/config");
  CHECK(held_with(padded, s.ws + "/padded/.git/config", "git config"));
  // A link over the directory the host's core.hooksPath names.
  auto linked =
      run_layered(h, s, s.ws,
                  "rm -rf tools && mkdir -p x/hooks && printf '#!/bin/sh\\n" + C +
                      "\\n' > x/hooks/pre-commit && chmod +x x/hooks/pre-commit && ln -s x tools");
  CHECK(held_with(linked, s.ws + "/tools", "replaces the way to"));
  CHECK(fs::is_directory(fs::symlink_status(s.ws + "/tools")));
  CHECK(test::Tree::read(s.ws + "/tools/hooks/keep") == "keep\n");
  // History deleted wholesale, or a nested repository deleted with its directory.
  auto wiped = run_layered(h, s, s.ws, "rm -rf .git/objects .git/refs sub");
  INFO(held(wiped));
  CHECK(fs::is_directory(s.ws + "/.git/objects"));
  CHECK(fs::is_directory(s.ws + "/sub/.git"));
  // A git directory by commondir (HEAD beside it, objects elsewhere).
  auto common =
      run_layered(h, s, s.ws,
                  "mkdir -p evil c/objects c/refs && echo 'ref: refs/heads/main' > evil/HEAD &&"
                  " echo ../c > evil/commondir && printf '[alias]\\n\\tst = !" +
                      C + "\\n' > c/config");
  CHECK_FALSE(fs::exists(s.ws + "/evil/commondir"));
  // Names git hook managers and editors read, anywhere below the root.
  auto names =
      run_layered(h, s, s.ws,
                  "mkdir -p pkg/.vscode && echo '{}' > pkg/.vscode/tasks.json && echo 'x' >"
                  " pkg/.envrc && echo 'repos: []' > .pre-commit-config.yaml");
  CHECK_FALSE(fs::exists(s.ws + "/pkg/.vscode"));
  CHECK_FALSE(fs::exists(s.ws + "/pkg/.envrc"));
  CHECK_FALSE(fs::exists(s.ws + "/.pre-commit-config.yaml"));
  // The root made a bare repository (HEAD, objects, refs, config) once .git's HEAD is gone,
  // and packs overwritten: held.
  s.host("cd " + s.ws + " && git gc -q");
  auto bare = run_layered(h, s, s.ws,
                          "rm .git/HEAD; echo 'ref: refs/heads/main' > HEAD; mkdir -p objects refs;"
                          " printf '[alias]\\n\\tst = !" +
                              C +
                              "\\n' > config;"
                              " for f in .git/objects/pack/*; do chmod u+w $f; : > $f; done");
  INFO(held(bare));
  CHECK(fs::exists(s.ws + "/.git/HEAD"));
  CHECK_FALSE(fs::exists(s.ws + "/config"));
  CHECK(s.host("cd " + s.ws + " && git log --oneline | grep -q base").status == 0);
  host_runs_nothing(s, {"cd " + s.ws + " && git st",
                        "cd " + s.ws + " && git status && git commit -q --allow-empty -m h",
                        "cd " + s.ws + "/padded && git status", "cd " + s.ws + "/evil && git st",
                        "cd " + s.ws + "/sub && git log | cat"});
}

TEST_CASE("attack: a worktree's common directory without HEAD is a git directory",
          "[attack][changes]") {
  // A linked worktree outside the workspace whose common directory lies in it: git asks the
  // common directory for objects and refs only (HEAD is the worktree's own), and obeys its
  // config and hooks.
  Scratch s;
  const std::string shared = s.ws + "/shared", wt = s.root + "/wt", gitdir = s.root + "/wtgit";
  s.host("git init -q --bare " + shared + " && rm " + shared + "/HEAD && mkdir -p " + wt + " " +
         gitdir + " && echo 'ref: refs/heads/main' > " + gitdir + "/HEAD && echo " + shared +
         " > " + gitdir + "/commondir && echo " + wt + "/.git > " + gitdir +
         "/gitdir && echo 'gitdir: " + gitdir + "' > " + wt + "/.git");
  REQUIRE(s.host("cd " + wt + " && git status").status == 0);
  test::Harness h(layered(s));
  const std::string C = "touch " + s.canary;
  auto r = run_layered(h, s, s.ws,
                       "printf '[core]\\n\\tfsmonitor = " + C +
                           "\\n' >> shared/config;"
                           " printf '#!/bin/sh\\n" +
                           C +
                           "\\n' > shared/hooks/pre-commit;"
                           " chmod +x shared/hooks/pre-commit; mkdir -p shared/info;"
                           " echo '* diff=x' > shared/info/attributes; echo ok > notes.txt");
  INFO(held(r));
  CHECK(held_with(r, shared + "/config", "config"));
  CHECK(held_with(r, shared + "/hooks/pre-commit", "git hook"));
  CHECK(fs::exists(s.ws + "/notes.txt"));
  host_runs_nothing(s, {"cd " + wt + " && git status && git commit -q --allow-empty -m h"});
}

TEST_CASE("attack: an index naming paths git must never write is held back", "[attack][changes]") {
  // git reads an index without checking its paths; the host's `git restore .` then writes
  // wherever an entry points. Each entry spelled another way: above the work tree, into the
  // git directory, absolute, through `.GIT`.
  // "ext:": the same behind a version-2 entry with the extended-flags bit set (git reads the
  // two extra bytes in any version; a parser that does not reads another name). "term:": a
  // name not ended by a NUL where its length says (git goes by the length; a parser that
  // goes by the NUL reads another name). "nul:": a NUL inside the length (git's checkout
  // goes by the NUL). "sha256:": a SHA-256 repository's index, read with SHA-1's layout
  // by a parser that guesses.
  const std::vector<std::string> spellings = {"../outside.txt",
                                              ".git/hooks/pre-commit",
                                              "/tmp/paddock-abs.txt",
                                              "sub/.GIT/config",
                                              "ext:x/../.git/hooks/pre-commit",
                                              "term:.git/hooks/pre-commit",
                                              "nul:.git/hooks/pre-commit",
                                              "sha256:.git/hooks/pre-commit"};
  for (const std::string& bad : spellings) {
    DYNAMIC_SECTION(bad) {
      Scratch s;
      if (bad.starts_with("sha256:")) {
        s.host("git init -q --object-format=sha256 " + s.ws + " && cd " + s.ws +
               " && git commit -q --allow-empty -m base");
      } else {
        s.repo(s.ws);
      }
      test::Harness h(layered(s));
      const std::string payload = "#!/bin/sh\\ntouch " + s.canary + "\\n";
      auto r =
          run_layered(h, s, s.ws,
                      "blob=$(printf '" + payload +
                          "' | git hash-object -w --stdin) && python3 - \"$blob\" '" + bad +
                          "' <<'PY'\n"
                          "import hashlib, struct, sys\n"
                          "oid, path = bytes.fromhex(sys.argv[1]), sys.argv[2].encode()\n"
                          "kind, _, rest = path.partition(b':')\n"
                          "kind, path = (kind, rest) if rest else (b'', path)\n"
                          "name = path + (b'\\0x' if kind == b'nul' else b'')\n"
                          "e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, 0o100755, 0, 0, 0) + oid\n"
                          "e += struct.pack('>HH', 0x4FFF, 0x2000) if kind == b'ext' else "
                          "struct.pack('>H', len(name))\n"
                          "e += name + (b'qqqqq' if kind == b'term' else b'')\n"
                          "e += b'\\0' * (8 - len(e) % 8)\n"
                          "body = b'DIRC' + struct.pack('>II', 2, 1) + e\n"
                          "digest = hashlib.sha256 if len(oid) == 32 else hashlib.sha1\n"
                          "open('.git/index', 'wb').write(body + digest(body).digest())\n"
                          "PY\n"
                          "echo ok > notes.txt");
      index_held(r, s);
      CHECK_FALSE(fs::exists(s.root + "/outside.txt"));
    }
  }
}

TEST_CASE("attack: an index git reads on several threads is judged as git reads it",
          "[attack][changes]") {
  // git loads a large index on several threads from the offsets its EOIE and IEOT extensions
  // give, not entry after entry. An entry hidden where a reader in sequence sees an unknown
  // extension, and offsets that lead git to it: "eoie" says the extensions start after it,
  // "ieot" keeps EOIE true and points a block at it. "v4": every entry where it is read, but
  // a block starts at an entry that keeps part of the previous name, which git's block reader
  // does not have: it reads `.git-` then `.git/hooks/pre-commit` where the sequence is
  // `-.git-` then `-.git/hooks/pre-commit`.
  for (const char* spelling : {"eoie", "ieot", "v4"}) {
    DYNAMIC_SECTION(spelling) {
      Scratch s;
      s.repo(s.ws);
      test::Harness h(layered(s));
      const std::string hook = "#!/bin/sh\\ntouch " + s.canary + "\\n";
      auto r = run_layered(
          h, s, s.ws,
          "blob=$(printf '" + hook + "' | git hash-object -w --stdin) && python3 - \"$blob\" " +
              spelling +
              " <<'PY'\n"
              "import hashlib, struct, sys\n"
              "H = lambda b: hashlib.sha1(b).digest()\n"
              "hook, how = bytes.fromhex(sys.argv[1]), sys.argv[2]\n"
              "clean = H(b'blob 6\\0hello\\n')\n"
              "def entry(name, oid, mode, ctime=(0, 0)):\n"
              "    e = struct.pack('>10I', ctime[0], ctime[1], 0, 0, 0, 0, mode, 0, 0, 0) + oid\n"
              "    e += struct.pack('>H', len(name)) + name\n"
              "    return e + b'\\0' * (8 - len(e) % 8)\n"
              "seq = [entry(b'f%05d' % i, clean, 0o100644) for i in range(4)]\n"
              "size = len(entry(b'.git/hooks/pre-commit', hook, 0o100755))\n"
              "hidden = entry(b'.git/hooks/pre-commit', hook, 0o100755, (0x5A5A5A5A, size - 8))\n"
              "body = b'DIRC' + struct.pack('>II', 2, 4) + b''.join(seq)\n"
              "at = len(body)\n"
              "body += hidden\n"
              "blocks = [(at, 1), (12 + len(seq[0]), 3)]\n"
              "ieot = struct.pack('>I', 1) + b''.join(struct.pack('>II', o, n) for o, n in "
              "blocks)\n"
              "exts = b'IEOT' + struct.pack('>I', len(ieot)) + ieot\n"
              "start = len(body) if how == 'eoie' else at\n"
              "head = exts[:8] if how == 'eoie' else b'ZZZZ' + struct.pack('>I', size - 8) + "
              "exts[:8]\n"
              "exts += b'EOIE' + struct.pack('>I', 24) + struct.pack('>I', start) + H(head)\n"
              "if how == 'v4':\n"
              "    def e4(name, keep, oid, mode):\n"
              "        e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + oid\n"
              "        return e + struct.pack('>H', 0xFFF) + bytes([keep]) + name + b'\\0'\n"
              "    v4 = [e4(b'-', 0, clean, 0o100644), e4(b'.git-', 0, clean, 0o100644),\n"
              "          e4(b'/hooks/pre-commit', 1, hook, 0o100755)]\n"
              "    body = b'DIRC' + struct.pack('>II', 4, 3) + b''.join(v4)\n"
              "    start = len(body)\n"
              "    blocks = [(12, 1), (12 + len(v4[0]), 2)]\n"
              "    ieot = struct.pack('>I', 1) + b''.join(struct.pack('>II', o, n) for o, n in "
              "blocks)\n"
              "    exts = b'IEOT' + struct.pack('>I', len(ieot)) + ieot\n"
              "    exts += b'EOIE' + struct.pack('>I', 24) + struct.pack('>I', start) + "
              "H(exts[:8])\n"
              "body += exts\n"
              "open('.git/index', 'wb').write(body + H(body))\n"
              "PY\n"
              "echo ok > notes.txt");
      index_held(r, s, "-c index.threads=3");
    }
  }
}

TEST_CASE("attack: an untracked cache naming paths outside its directory is held back",
          "[attack][changes]") {
  // The untracked cache (UNTR) lists, per directory, the names git takes as untracked
  // without reading the directory; `git clean` deletes them. A name that is no single
  // component (`..`, `../../xy`, `.git`) would send the deletion elsewhere. Each replaces, at
  // the same length, a name git itself recorded.
  for (const std::string bad : {"..", "../../xy", ".git", "a/.GIT"}) {
    DYNAMIC_SECTION(bad) {
      Scratch s;
      s.repo(s.ws);
      test::Harness h(layered(s));
      const std::string mine(bad.size(), 'q');
      auto r = run_layered(
          h, s, s.ws,
          "touch " + mine +
              " && git -c core.untrackedCache=true update-index --untracked-cache "
              "&& git -c core.untrackedCache=true status --porcelain >/dev/null && python3 - " +
              mine + " '" + bad +
              "' <<'PY'\n"
              "import hashlib, sys\n"
              "mine, bad = sys.argv[1].encode(), sys.argv[2].encode()\n"
              "body = open('.git/index', 'rb').read()[:-20]\n"
              "at = body.index(b'UNTR')\n"
              "assert b'\\0' + mine + b'\\0' in body[at:]\n"
              "body = body[:at] + body[at:].replace(b'\\0' + mine + b'\\0', b'\\0' + bad + "
              "b'\\0')\n"
              "open('.git/index', 'wb').write(body + hashlib.sha1(body).digest())\n"
              "PY\n"
              "echo ok > notes.txt");
      INFO(held(r));
      CHECK(held_with(r, s.ws + "/.git/index", "untracked cache"));
      CHECK(fs::exists(s.ws + "/notes.txt"));
      s.host("cd " + s.ws + " && git clean -fdq");
      CHECK(fs::exists(s.ws + "/.git/HEAD"));
      CHECK(fs::is_directory(s.root));
    }
  }
}

TEST_CASE("change sets: split, sparse and SHA-256 repositories commit as usual",
          "[attack][changes]") {
  // The index's other shapes git writes in ordinary work: a split index (entries without a
  // name, a shared index beside it), a sparse index (directory entries), SHA-256 names.
  for (const char* setup : {"git config core.splitIndex true && git update-index --split-index",
                            "mkdir -p a b && echo a > a/f && echo b > b/f && git add a b && "
                            "git commit -q -m ab && git sparse-checkout set --cone "
                            "--sparse-index a",
                            "git config index.threads 4 && git config index.recordOffsetTable "
                            "true && git config index.recordEndOfIndexEntries true && "
                            "b=$(echo x | git hash-object -w --stdin) && seq -f \"100644 $b\t"
                            "f%06g\" 25000 | git update-index --add --index-info && git commit "
                            "-q -m many && git update-index --index-version 4",
                            "git config core.untrackedCache true && mkdir -p u/v && touch u/v/w x "
                            "&& git status --porcelain >/dev/null",
                            "sha256"}) {
    DYNAMIC_SECTION(setup) {
      Scratch s;
      if (std::string(setup) == "sha256") {
        s.host("git init -q --object-format=sha256 " + s.ws + " && cd " + s.ws +
               " && git commit -q --allow-empty -m base");
      } else {
        s.repo(s.ws);
        REQUIRE(s.host("cd " + s.ws + " && " + setup).status == 0);
      }
      test::Harness h(layered(s));
      auto r = run_layered(h, s, s.ws,
                           "echo new > new.txt && git add new.txt && git commit -q -m new && "
                           "echo more >> new.txt && git add new.txt");
      INFO(held(r));
      CHECK(r.changes.held.empty());
      CHECK(s.host("cd " + s.ws + " && git log --format=%s -1").text == "new\n");
      CHECK(s.host("cd " + s.ws + " && git diff --cached --stat | wc -l").text == "2\n");
    }
  }
}

TEST_CASE("attack: a dotfiles workspace linked into the home's start-up directories is held",
          "[attack][changes]") {
  // GNU stow's layout: ~/.config/fish and ~/.config/git are links into a dotfiles checkout,
  // and the workspace is that checkout.
  Scratch s;
  const std::string config = s.root + "/home/.config";
  fs::create_directories(config);
  fs::create_directories(s.ws + "/fish");
  fs::create_directories(s.ws + "/git");
  fs::create_symlink(s.ws + "/fish", config + "/fish");
  fs::create_symlink(s.ws + "/git", config + "/git");
  s.repo(s.root + "/other");
  test::Harness h(layered(s));
  auto r =
      run_layered(h, s, s.ws,
                  "echo 'touch " + s.canary +
                      "' > fish/config.fish; printf '[core]\\n\\tfsmonitor = touch " + s.canary +
                      "\\n' > git/config; rm -rf fish; mkdir fish; echo ok >"
                      " notes.txt");
  INFO(held(r));
  CHECK(held_with(r, s.ws + "/git/config", "start-up path through the link"));
  CHECK(held_with(r, s.ws + "/fish", "start-up path through the link"));
  CHECK_FALSE(fs::exists(s.ws + "/git/config"));
  CHECK(fs::exists(s.ws + "/notes.txt"));
  host_runs_nothing(s, {"cd " + s.root + "/other && git status"});
}

TEST_CASE("attack: start-up files linked one by one, deep in the home, are held",
          "[attack][changes]") {
  // stow --no-folding (and any stow into directories that exist) links file by file, deep in
  // ~/.config, under the names the checkout mirrors; a hand-made link may name a directory.
  Scratch s;
  const std::string config = s.root + "/home/.config";
  for (const char* d : {"/nvim", "/fish/conf.d", "/kitty", "/git"}) {
    fs::create_directories(config + d);
  }
  for (const char* d : {"/nvim/.config/nvim", "/fish/.config/fish/conf.d",
                        "/kitty/.config/kitty/themes", "/tools/git"}) {
    fs::create_directories(s.ws + d);
  }
  const auto put = [](const std::string& path, const char* text) { std::ofstream(path) << text; };
  const auto text_of = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  put(s.ws + "/nvim/.config/nvim/init.lua", "-- rc\n");
  put(s.ws + "/fish/.config/fish/conf.d/paths.fish", "# rc\n");
  fs::create_symlink(s.ws + "/nvim/.config/nvim/init.lua", config + "/nvim/init.lua");
  fs::create_symlink(s.ws + "/fish/.config/fish/conf.d/paths.fish",
                     config + "/fish/conf.d/paths.fish");
  fs::create_symlink(s.ws + "/kitty/.config/kitty/themes", config + "/kitty/themes");
  test::Harness h(layered(s));
  const std::string canary = "touch " + s.canary;
  auto r = run_layered(
      h, s, s.ws,
      "echo 'os.execute(\"" + canary +
          "\")' >> nvim/.config/nvim/init.lua;"
          " echo '" +
          canary +
          "' > fish/.config/fish/conf.d/paths.fish;"
          " echo 'include " +
          canary +
          "' > kitty/.config/kitty/themes/dark.conf;"
          // the way to a linked file replaced: its directory swapped for a link
          " mv fish/.config/fish/conf.d fish/old && ln -s /tmp fish/.config/fish/conf.d;"
          // ordinary work beside them passes: a new file, a directory ~/.config also has, deleted
          " echo ok > notes.txt; rm -rf tools/git");
  INFO(held(r));
  CHECK(held_with(r, s.ws + "/nvim/.config/nvim/init.lua", "start-up path through the link"));
  CHECK(held_with(r, s.ws + "/kitty/.config/kitty/themes/dark.conf",
                  "start-up path through the link"));
  CHECK(held_with(r, s.ws + "/fish/.config/fish/conf.d", "start-up"));
  CHECK(text_of(s.ws + "/nvim/.config/nvim/init.lua") == "-- rc\n");
  CHECK(text_of(s.ws + "/fish/.config/fish/conf.d/paths.fish") == "# rc\n");
  CHECK_FALSE(fs::exists(s.ws + "/kitty/.config/kitty/themes/dark.conf"));
  CHECK(fs::exists(s.ws + "/notes.txt"));
  CHECK_FALSE(fs::exists(s.ws + "/tools/git"));
  CHECK_FALSE(fs::exists(s.canary));
}
