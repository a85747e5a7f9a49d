// The path half of the filesystem policy: every test builds its own tree (a scratch directory) with
// a fake home and checks the exact rules, in order, that the mount layer would apply.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "paddock/errors.hpp"
#include "sandbox/path_policy.hpp"
#include "support/path_tree.hpp"

namespace fs = std::filesystem;
using paddock::FilesystemPolicy;
using paddock::sandbox::PathAccess;
using paddock::sandbox::resolve_filesystem;
using paddock::sandbox::ResolvedFilesystem;

using namespace test::paths;

TEST_CASE("home: ~ and ~/x expand with the given home", "[paths]") {
  Tree t;
  std::string home = t.dir("home");
  t.file("home/.secret");
  t.dir("home/proj");
  auto p = bare();
  p.deny_read = {"~"};
  p.allow_read = {"~/proj"};
  p.deny_write = {"~/.secret"};  // outside every writable root: a no-op, dropped
  auto r = resolve_filesystem(p, t.dir("w"), home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home, "allow_read " + home + "/proj"});
  CHECK(r.rules[0].origin == std::string("policy"));
  CHECK(r.rules[0].is_dir);

  p = bare();
  p.deny_read = {"~bob/.ssh"};
  CHECK_THROWS_WITH(resolve_filesystem(p, t.root, home),
                    "filesystem.denyRead[0]: ~bob/.ssh: only ~ and ~/ are expanded (not ~user); "
                    "write the path out");
}

TEST_CASE("relative paths resolve against the working directory", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.file("w/sub/file");
  t.file("outside");
  auto p = bare();
  p.deny_read = {"sub/file", "../outside", "./sub/../sub/file"};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) ==
        std::vector<std::string>{"deny_read " + t("outside"), "deny_read " + t("w/sub/file")});
  CHECK_FALSE(r.rules[1].is_dir);
}

TEST_CASE("a symlink in the workspace resolves to its real target", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.file("out/secret");
  t.link(t("out"), "w/link");
  auto p = bare();
  p.deny_read = {"link/secret", "link/../x-not-here"};
  auto r = resolve_filesystem(p, cwd, t("home"));
  // `..` after a link means the target's parent (as for the kernel), and x-not-here is missing.
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + t("out/secret")});

  auto c = paddock::sandbox::canonicalize(t("w/link/../w/link/secret"));
  CHECK(c.path == t("out/secret"));
  CHECK(c.exists);
  CHECK_FALSE(c.is_dir);
  char real[PATH_MAX];
  REQUIRE(::realpath(t("w/link/secret").c_str(), real) != nullptr);
  CHECK(paddock::sandbox::canonicalize(t("w/link/secret")).path == real);
}

TEST_CASE("a path that does not exist resolves through its nearest existing parent", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.dir("data");
  t.link(t("data"), "w/link");
  auto c = paddock::sandbox::canonicalize(t("w/link/new/../new2/file"));
  CHECK(c.path == t("data/new2/file"));
  CHECK_FALSE(c.exists);
  CHECK_FALSE(c.is_dir);

  auto p = bare();
  p.allow_write = {t("data")};
  p.deny_write = {"link/new/file", "link/.env"};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + t("data")});
  CHECK(r.writable_roots == std::vector<std::string>{t("data")});
  CHECK(r.protected_missing == std::vector<std::string>{t("data/.env"), t("data/new/file")});

  // Nothing can be created below a regular file: not worth a check after every command.
  t.file("data/plain");
  p.deny_write = {"link/plain/x"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + t("data")});
  CHECK(r.protected_missing.empty());
}

TEST_CASE("deny, then allow, then a deeper deny apply shallow to deep", "[paths]") {
  Tree t;
  std::string home = t.dir("home");
  t.file("home/proj/secret/key");
  t.file("home/proj/src/main.c");
  auto p = bare();
  p.deny_read = {"~/proj/secret", "~"};  // given out of order on purpose
  p.allow_read = {"~/proj"};
  auto r = resolve_filesystem(p, t.root, home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home, "allow_read " + home + "/proj",
                                             "deny_read " + home + "/proj/secret"});

  // A deny below an allow that re-exposes nothing hidden is still a deny; an allow outside
  // every deny is a no-op.
  p = bare();
  p.allow_read = {"~/proj"};
  p.deny_read = {"~/proj/secret"};
  r = resolve_filesystem(p, t.root, home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home + "/proj/secret"});
}

TEST_CASE("same path: allow_read beats deny_read, read_only beats writable", "[paths]") {
  Tree t;
  std::string home = t.dir("home");
  std::string cwd = t.dir("w");
  t.dir("home/x");
  t.dir("w/sub");
  auto p = bare();
  p.deny_read = {"~", "~/x"};
  p.allow_read = {"~/x"};
  auto r = resolve_filesystem(p, cwd, home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home, "allow_read " + home + "/x"});

  // Alone, deny + allow at one path cancel out: no rule at all, also in a writable root.
  p.deny_read = {"~/x"};
  CHECK(resolve_filesystem(p, cwd, home).rules.empty());
  p.allow_write_cwd = true;
  p.deny_read = {"sub"};
  p.allow_read = {"sub"};
  CHECK(lines(resolve_filesystem(p, cwd, home)) == std::vector<std::string>{"writable " + cwd});

  p = bare();
  p.allow_write_cwd = true;
  p.allow_write = {"sub"};
  p.deny_write = {"sub"};
  r = resolve_filesystem(p, cwd, home);
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd, "read_only " + cwd + "/sub"});
  CHECK(r.writable_roots == std::vector<std::string>{cwd});
  CHECK(r.rules[0].origin == std::string("working directory"));

  // allow_write implies read, even at a denied path; deny_write of it keeps it readable.
  p = bare();
  p.deny_read = {"~", "~/x"};
  p.allow_write = {"~/x"};
  r = resolve_filesystem(p, cwd, home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home, "writable " + home + "/x"});
  p.deny_write = {"~/x"};
  r = resolve_filesystem(p, cwd, home);
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + home, "allow_read " + home + "/x"});
  CHECK(r.writable_roots.empty());
}

TEST_CASE("deny_write inside allow_write, and above it", "[paths]") {
  Tree t;
  std::string data = t.dir("data");
  t.dir("data/locked/deeper");
  t.dir("data/open");
  auto p = bare();
  p.allow_write = {data, data + "/locked/deeper"};
  p.deny_write = {data + "/locked"};
  auto r = resolve_filesystem(p, t.root, t("home"));
  // deny_write wins over allow_write below it too.
  CHECK(lines(r) == std::vector<std::string>{"writable " + data, "read_only " + data + "/locked"});
  CHECK(r.writable_roots == std::vector<std::string>{data});

  // A nested writable root inside a writable root is a no-op.
  p.allow_write = {data, data + "/open"};
  p.deny_write.clear();
  r = resolve_filesystem(p, t.root, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + data});
}

TEST_CASE("globs match at several depths, from their fixed prefix", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.file("w/a.pem");
  t.file("w/.hidden.pem");
  t.file("w/x.txt");
  t.file("w/d1/b.pem");
  t.file("w/d1/d2/c.pem");
  t.file("w/.env");
  t.file("w/d1/.env");
  t.file("w/d1/d2/.env");
  t.file("w/secrets/s1");
  t.file("w/secrets/deep/s2");
  t.file("out/z.pem");
  t.file("out/target");
  t.link(t("out"), "w/dirlink");            // never walked into
  t.link(t("out/target"), "w/linked.pem");  // a matched link: its target for denies

  auto p = bare();
  p.deny_read = {"*.pem"};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + t("out/target"),
                                             "deny_read " + cwd + "/.hidden.pem",
                                             "deny_read " + cwd + "/a.pem"});

  p.deny_read = {"**/*.pem"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{
                        "deny_read " + t("out/target"), "deny_read " + cwd + "/.hidden.pem",
                        "deny_read " + cwd + "/a.pem", "deny_read " + cwd + "/d1/b.pem",
                        "deny_read " + cwd + "/d1/d2/c.pem"});

  p.deny_read = {"**/.env"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + cwd + "/.env",
                                             "deny_read " + cwd + "/d1/.env",
                                             "deny_read " + cwd + "/d1/d2/.env"});

  // `secrets/**` includes zero components: the directory itself, which covers the rest.
  p.deny_read = {"secrets/**", "d1/**/b.pem", "d1/**/c.pem", "d?/./d[0-9]/*.pem"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + cwd + "/secrets",
                                             "deny_read " + cwd + "/d1/b.pem",
                                             "deny_read " + cwd + "/d1/d2/c.pem"});
  CHECK(r.rules[0].is_dir);

  // A name that only looks like a pattern still names itself.
  t.file("w/app/[id]/page.tsx");
  p.deny_read = {"app/[id]"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + cwd + "/app/[id]"});

  // A glob that matches nothing emits nothing; allow rules skip matched symlinks (a command
  // could have planted them).
  p = bare();
  p.deny_read = {"**/*.key", t.root};
  p.allow_read = {"*.pem"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"deny_read " + t.root,
                                             "allow_read " + cwd + "/.hidden.pem",
                                             "allow_read " + cwd + "/a.pem"});
}

TEST_CASE("escaped glob characters are plain: srt's literal entries name one path", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.file("w/app/[id]/page.tsx");
  t.file("w/app/i/page.tsx");
  t.file("w/app/d/page.tsx");
  t.file("w/star*/x");
  t.file("w/starry/x");
  t.file("w/back\\slash/x");

  auto p = bare();
  p.allow_write = {"app/[id]"};  // a pattern: it matches `i` and `d`, and names itself too
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd + "/app/[id]",
                                             "writable " + cwd + "/app/d",
                                             "writable " + cwd + "/app/i"});
  // {"path": "app/[id]", "literal": true} arrives escaped: that directory only.
  p.allow_write = {"app/\\[id]"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd + "/app/[id]"});
  p.allow_write = {"star\\*", cwd + "/app/\\[id]/page.tsx"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd + "/star*",
                                             "writable " + cwd + "/app/[id]/page.tsx"});
  // Escaped inside a pattern too: `*` still globs, `\*` does not.
  p.allow_write = {"st*\\*/x"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd + "/star*/x"});
  // A backslash before anything else is itself; `\\` is one backslash.
  p.allow_write = {"back\\slash"};
  p.deny_write = {"back\\\\slash/x"};
  r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd + "/back\\slash",
                                             "read_only " + cwd + "/back\\slash/x"});
}

TEST_CASE("a glob that visits too many entries is refused, never truncated", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.dir("w/big");
  for (std::size_t i = 0; i < paddock::sandbox::kGlobVisitLimit; ++i) {
    std::ofstream(t("w/big/f" + std::to_string(i)));
  }
  auto p = bare();
  p.deny_read = {"big/x", "**/.env"};
  CHECK_THROWS_WITH(resolve_filesystem(p, cwd, t("home")),
                    "filesystem.denyRead[1]: **/.env: the pattern visits more than 10000 "
                    "directory entries; make its fixed prefix more specific");
  try {
    resolve_filesystem(p, cwd, t("home"));
  } catch (const paddock::Error& e) {
    CHECK(e.code() == paddock::errc::config_invalid);
  }
  // At the bound it works (big/ holds exactly kGlobVisitLimit entries).
  p.deny_read = {"big/f1*"};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(r.rules.size() == 1111);  // f1, f10-f19, f100-f199, f1000-f1999
  CHECK(r.rules.front().path == cwd + "/big/f1");
}

TEST_CASE("default credentials: present ones denied, absent ones protected where writable",
          "[paths]") {
  Tree t;
  std::string home = t.dir("home");
  std::string cwd = t.dir("w");
  t.file("home/.ssh/id_ed25519");
  t.file("home/.aws/credentials");
  t.file("home/.docker/config.json");
  FilesystemPolicy p = host_policy();  // defaults: default_denies and a writable cwd
  auto r = resolve_filesystem(p, cwd, home);
  CHECK(lines_under(r, home) ==
        std::vector<std::string>{"deny_read " + home + "/.aws", "deny_read " + home + "/.ssh",
                                 "deny_read " + home + "/.docker/config.json"});
  REQUIRE(rule_at(r, home + "/.ssh") != nullptr);
  CHECK(rule_at(r, home + "/.ssh")->origin == std::string("default credential"));
  CHECK(rule_at(r, home + "/.kube") == nullptr);
  if (::access("/etc/shadow", F_OK) == 0) {
    REQUIRE(rule_at(r, "/etc/shadow") != nullptr);
    CHECK(rule_at(r, "/etc/shadow")->access == PathAccess::deny_read);
  }
  // The home is not writable: its missing credentials cannot appear.
  for (const auto& m : r.protected_missing) CHECK(m.rfind(home, 0) != 0);

  // The cwd is the home (allowed explicitly): missing credentials there could be created, so
  // they are checked.
  p.allow_write_home = true;
  r = resolve_filesystem(p, home, home);
  CHECK(contains(r.protected_missing, home + "/.kube"));
  CHECK(contains(r.protected_missing, home + "/.git-credentials"));
  CHECK_FALSE(contains(r.protected_missing, home + "/.ssh"));
  CHECK(rule_at(r, home + "/.ssh")->access == PathAccess::deny_read);

  p.default_denies = false;
  r = resolve_filesystem(p, cwd, home);
  CHECK(lines(r) == std::vector<std::string>{"writable " + cwd});
  CHECK(r.protected_missing.empty());
}

TEST_CASE("mandatory names: existing ones read-only, missing ones protected", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  std::string data = t.dir("data");
  t.file("w/.bashrc");
  t.dir("w/.git/hooks");
  t.dir("w/.vscode/sub");
  t.file("data/.profile");
  t.file("elsewhere/.bashrc");
  FilesystemPolicy p = host_policy();
  p.change_sets = false;  // the git walk below is the written-through mode's (change sets skip it)
  p.allow_write = {data};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines_under(r, t.root) == std::vector<std::string>{"writable " + data, "writable " + cwd,
                                                           "read_only " + data + "/.profile",
                                                           "read_only " + cwd + "/.bashrc",
                                                           "read_only " + cwd + "/.vscode",
                                                           "read_only " + cwd + "/.git/hooks"});
  CHECK(rule_at(r, cwd + "/.bashrc")->origin == std::string("mandatory read-only"));
  CHECK(r.writable_roots == std::vector<std::string>{data, cwd});
  for (const char* missing : {"/.zshrc", "/.mcp.json", "/.claude"}) {
    CHECK(contains(r.protected_missing, cwd + missing));
    CHECK(contains(r.protected_missing, data + missing));
  }
  CHECK(contains(r.protected_missing, cwd + "/.git/config"));
  CHECK_FALSE(contains(r.protected_missing, cwd + "/.bashrc"));
  // Not a repository: a `.git` created there is judged as a whole after the command (the git
  // audit), not file by file.
  CHECK_FALSE(contains(r.protected_missing, data + "/.git/config"));
  CHECK_FALSE(contains(r.protected_missing, data + "/.git"));
  CHECK(r.git.dot_git.count(cwd + "/.git") == 1);
  CHECK(r.git.dot_git.count(data + "/.git") == 0);
  // Nothing is protected below a read-only path: the command cannot create it there.
  CHECK_FALSE(contains(r.protected_missing, cwd + "/.vscode/sub/.bashrc"));
  for (const auto& m : r.protected_missing) CHECK(m.rfind(t("elsewhere"), 0) != 0);
}

TEST_CASE("a git worktree's gitdir and common dir are protected where writable", "[paths]") {
  Tree t;
  std::string main = t.dir("main");
  t.dir("main/.git/hooks");
  t.file("main/.git/config");
  t.dir("main/.git/worktrees/wt");
  t.file("main/.git/worktrees/wt/commondir", "../..\n");
  std::string wt = t.dir("wt");
  t.file("wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
  const std::string gitdir = main + "/.git/worktrees/wt";

  FilesystemPolicy p = host_policy();
  p.change_sets = false;  // the git walk below is the written-through mode's (change sets skip it)
  // The main repository is writable: its own mandatory names cover .git/hooks and .git/config;
  // the worktree's git dir inside it is covered through the pointer only. (A `.git` directory
  // itself is never a writable root: test_root_guard.cpp.)
  p.allow_write = {main};
  auto r = resolve_filesystem(p, wt, t("home"));
  CHECK(lines_under(r, t.root) == std::vector<std::string>{"writable " + main, "writable " + wt,
                                                           "read_only " + wt + "/.git",
                                                           "read_only " + main + "/.git/config",
                                                           "read_only " + main + "/.git/hooks",
                                                           "read_only " + gitdir + "/commondir"});
  REQUIRE(rule_at(r, wt + "/.git") != nullptr);
  CHECK_FALSE(rule_at(r, wt + "/.git")->is_dir);
  for (const char* name : {"/hooks", "/config", "/config.worktree"}) {
    CHECK(contains(r.protected_missing, gitdir + name));
  }
  CHECK(contains(r.protected_missing, main + "/.git/config.worktree"));
  // Under a `.git` file nothing can be created: no pointless entries for it.
  CHECK_FALSE(contains(r.protected_missing, wt + "/.git/hooks"));

  // Only the worktree writable: the main repository is the read-only host already.
  p.allow_write.clear();
  r = resolve_filesystem(p, wt, t("home"));
  CHECK(lines_under(r, t.root) ==
        std::vector<std::string>{"writable " + wt, "read_only " + wt + "/.git"});
  for (const auto& m : r.protected_missing) CHECK(m.rfind(main, 0) != 0);

  // Submodules: the superproject keeps their git dirs under .git/modules/.
  t.dir("main/.git/modules/lib/hooks");
  p.allow_write = {main};
  r = resolve_filesystem(p, wt, t("home"));
  // .git/modules is read-only as a whole (a mandatory name), which covers every submodule.
  REQUIRE(rule_at(r, main + "/.git/modules") != nullptr);
  CHECK(rule_at(r, main + "/.git/modules")->access == PathAccess::read_only);

  // The submodule's checkout: a `.git` file with an absolute gitdir and no commondir. Its
  // pointer is read-only; .git/modules cannot be a writable root of its own (root_guard).
  t.file("wt/lib/.git", "gitdir: " + main + "/.git/modules/lib\n");
  p.allow_write = {wt + "/lib"};
  r = resolve_filesystem(p, wt, t("home"));
  REQUIRE(rule_at(r, wt + "/lib/.git") != nullptr);
  CHECK(rule_at(r, wt + "/lib/.git")->access == PathAccess::read_only);
  p.allow_write = {main + "/.git/modules", wt + "/lib"};
  CHECK_THROWS_WITH(
      resolve_filesystem(p, wt, t("home")),
      Catch::StartsWith("filesystem.allowWrite[0]: " + main +
                        "/.git/modules: is or lies in the git directory " + main + "/.git:"));
  CHECK(contains(r.git.protect, main + "/.git/modules/lib/hooks"));
  CHECK(contains(r.git.protect, main + "/.git/modules/lib/config"));
}

TEST_CASE("an allow rule may not leave a writable root through a symlink inside it", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  t.dir("etcish");
  t.dir("w/real");
  t.link(t("etcish"), "w/build");
  t.link("real", "w/out");
  FilesystemPolicy p = bare();
  p.allow_write_cwd = true;
  p.allow_write = {"./build"};
  CHECK_THROWS_WITH(
      resolve_filesystem(p, cwd, t("home")),
      Catch::StartsWith("filesystem.allowWrite[0]: ./build: resolves through the "
                        "symlink " +
                        cwd + "/build inside the writable root " + cwd + " to " + t("etcish")));
  // A link to a parent would make the root it creates vouch for itself. (The home is outside
  // the tree here: a root above a home is refused before links are looked at.)
  t.link("..", "w/up");
  p.allow_write = {"up"};
  CHECK_THROWS_WITH(
      resolve_filesystem(p, cwd, "/nonexistent-paddock-test-home"),
      Catch::StartsWith("filesystem.allowWrite[0]: up: resolves through the symlink " + cwd +
                        "/up inside the writable root "));
  p.allow_write = {};
  p.deny_read = {t.root};
  p.allow_read = {"build"};
  CHECK_THROWS_WITH(resolve_filesystem(p, cwd, t("home")),
                    Catch::StartsWith("filesystem.allowRead[0]: build: resolves through"));

  // A link that stays inside the root is fine; so is the real path named directly.
  p.deny_read.clear();
  p.allow_read.clear();
  p.allow_write = {"out", t("etcish")};
  auto r = resolve_filesystem(p, cwd, t("home"));
  CHECK(lines(r) == std::vector<std::string>{"writable " + t("etcish"), "writable " + cwd});
}

TEST_CASE("invalid entries name the field, the entry and why", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  auto check = [&](auto set, const std::string& message) {
    FilesystemPolicy p = bare();
    set(p);
    try {
      resolve_filesystem(p, cwd, t("home"));
      FAIL("no error; expected: " << message);
    } catch (const paddock::Error& e) {
      CHECK(e.code() == paddock::errc::config_invalid);
      CHECK_THAT(e.what(), Catch::StartsWith(message));
    }
  };
  check([](auto& p) { p.deny_read = {"ok", ""}; }, "filesystem.denyRead[1]: : empty path");
  check([](auto& p) { p.allow_read = {std::string("a\0b", 3)}; },
        "filesystem.allowRead[0]: a\\0b: path contains a NUL byte");
  check([](auto& p) { p.deny_write = {"src/a**b"}; },
        "filesystem.denyWrite[0]: src/a**b: '**' must be a whole path component");
  check([](auto& p) { p.deny_read = {"*/../x"}; },
        "filesystem.denyRead[0]: */../x: '..' after a wildcard is not supported");
  check([](auto& p) { p.allow_write = {"/"}; }, "filesystem.allowWrite[0]: /: resolves to /,");
  check([](auto& p) { p.allow_write = {"../../../../../../.."}; },
        "filesystem.allowWrite[0]: ../../../../../../..: resolves to /,");
  check([](auto& p) { p.deny_read = {"/proc"}; }, "filesystem.denyRead[0]: /proc: resolves to");
  check([](auto& p) { p.allow_read = {"/dev/"}; }, "filesystem.allowRead[0]: /dev/: resolves to");
  check([](auto& p) { p.deny_read = {"/proc/*/environ"}; },
        "filesystem.denyRead[0]: /proc/*/environ: wildcards are not expanded under /proc or /sys");

  FilesystemPolicy p = host_policy();
  CHECK_THROWS_WITH(resolve_filesystem(p, "relative/dir", t("home")),
                    "cwd: 'relative/dir': must be an absolute path");
  CHECK_THROWS_WITH(resolve_filesystem(p, "/", t("home")),
                    Catch::StartsWith("cwd (the working directory is writable: allowWriteCwd): /: "
                                      "resolves to /"));
  t.link("loop", "w/loop");
  p = bare();
  p.deny_read = {"loop/x"};
  CHECK_THROWS_WITH(resolve_filesystem(p, cwd, t("home")),
                    "filesystem.denyRead[0]: loop/x: too many levels of symbolic links");
}

TEST_CASE("the default lists hold the well-known entries", "[paths]") {
  const auto& creds = paddock::sandbox::default_credential_paths();
  for (const char* c : {"~/.ssh", "~/.aws", "~/.kube", "~/.docker/config.json", "~/.config/gcloud",
                        "~/.netrc", "~/.gnupg", "/etc/shadow", "/etc/ssh/ssh_host_*_key"}) {
    CHECK(contains(creds, c));
  }
  const auto& names = paddock::sandbox::mandatory_read_only_names();
  for (const char* n : {".git/hooks", ".git/config", ".bashrc", ".zshrc", ".profile", ".gitconfig",
                        ".gitmodules", ".mcp.json", ".vscode", ".idea", ".claude"}) {
    CHECK(contains(names, n));
  }
}

TEST_CASE("under the private /tmp an allowRead attaches the host's path, denials still hold",
          "[paths]") {
  // The other cases judge their /tmp trees as host paths (host_policy()); this one keeps the
  // private /tmp of the default policy.
  char tmpl[] = "/tmp/paddock-private-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  char real[PATH_MAX];
  REQUIRE(::realpath(tmpl, real) != nullptr);
  const std::string root = real;
  fs::create_directories(root + "/shown/sub");
  fs::create_directories(root + "/ws/secret");
  fs::create_directories(root + "/denied");
  std::ofstream(root + "/shown/f") << "x";
  FilesystemPolicy p = bare();
  p.private_tmp = true;
  p.allow_read = {root + "/shown", root + "/shown/sub"};
  p.deny_read = {root + "/denied", root + "/ws/secret"};
  p.allow_write = {root + "/ws"};
  auto r = resolve_filesystem(p, root + "/ws", "/nonexistent-home");
  // The allowRead is a real rule (it was dropped as a no-op and the path stayed hidden), once:
  // below it the host's tree is shown already. A denial is judged against the host's tree, so
  // it holds wherever the plan shows that tree later (a read-only cwd or program under /tmp).
  CHECK(lines(r) ==
        std::vector<std::string>{"deny_read " + root + "/denied", "allow_read " + root + "/shown",
                                 "writable " + root + "/ws", "deny_read " + root + "/ws/secret"});
  // Without a private /tmp the host's /tmp is as readable as the rest of the host.
  p.private_tmp = false;
  CHECK(lines(resolve_filesystem(p, root + "/ws", "/nonexistent-home")) ==
        std::vector<std::string>{"deny_read " + root + "/denied", "writable " + root + "/ws",
                                 "deny_read " + root + "/ws/secret"});
  fs::remove_all(root);
}

TEST_CASE("an allowRead through a symlink never re-opens a denial", "[paths]") {
  // Anyone who can write where the link sits (another local user in /tmp, a sandbox writing
  // its workspace or a writable home) chooses what it points at: `/tmp/x -> ~/.ssh` or
  // `~/notes -> .ssh` must not undo the default credential denial, nor a deny above the
  // target, nor an explicit denyRead.
  Tree t;
  std::string home = t.dir("home");
  std::string cwd = t.dir("w");
  t.file("home/.ssh/id_ed25519");
  t.file("home/private/notes");
  t.dir("drop");
  t.link(home + "/.ssh", "drop/keys");
  t.link(home + "/.ssh/id_ed25519", "drop/key");
  t.link(home + "/private", "drop/private");
  t.link(home + "/.ssh", "w/keys");
  t.link(".ssh", "home/notes");        // its directory is an ancestor of the target
  t.link(home + "/.ssh", "shared");    // likewise, in the tree's root
  FilesystemPolicy p = host_policy();  // default credential denies, a writable cwd
  for (const std::string& entry : {t("drop/keys"), t("drop/key"), t("drop/keys/id_ed25519"),
                                   home + "/notes", std::string("~/notes"), t("shared")}) {
    INFO(entry);
    p.allow_read = {entry};
    CHECK_THROWS_WITH(resolve_filesystem(p, cwd, home),
                      Catch::Contains("filesystem.allowRead[0]: " + entry) &&
                          Catch::Contains("a path the sandbox denies"));
  }
  // Inside the writable root, such a link is refused anyway.
  p.allow_read = {"./keys"};
  CHECK_THROWS_WITH(resolve_filesystem(p, cwd, home),
                    Catch::Contains("filesystem.allowRead[0]: ./keys: resolves through"));
  p.allow_read = {t("drop/private")};
  p.deny_read = {home + "/private"};
  CHECK_THROWS_WITH(resolve_filesystem(p, cwd, home),
                    Catch::Contains("resolves through the symlink " + t("drop/private")));
  // Nothing denied at the target: the link is as good as the path.
  p.deny_read = {};
  CHECK(rule_at(resolve_filesystem(p, cwd, home), home + "/.ssh")->access == PathAccess::deny_read);
  // Named directly, the denial is the user's own to lift.
  p.allow_read = {home + "/.ssh"};
  CHECK(rule_at(resolve_filesystem(p, cwd, home), home + "/.ssh") == nullptr);
}

TEST_CASE("a protected file with a second name is refused, not protected by one name only",
          "[paths]") {
  // `ln x .bashrc` in one run: the read-only mount of the next run covers `.bashrc` only; it
  // rewrites the file through `x`, or links `.bashrc` back after a concurrent sandbox's audit
  // quarantined it (the inode it recorded is the one it links back).
  Tree t;
  std::string cwd = t.dir("w");
  t.file("w/x");
  FilesystemPolicy p = host_policy();
  for (const char* name : {".bashrc", ".envrc", ".vscode/tasks.json"}) {
    INFO(name);
    fs::create_directories(fs::path(cwd + "/" + name).parent_path());
    fs::create_hard_link(cwd + "/x", cwd + "/" + name);
    CHECK_THROWS_WITH(resolve_filesystem(p, cwd, t("home")),
                      Catch::Contains(cwd + "/" + name + " has 2 hard links"));
    fs::remove(cwd + "/" + name);
    CHECK_NOTHROW(resolve_filesystem(p, cwd, t("home")));
  }
}

TEST_CASE("writable roots listed inner first are opened outer first", "[paths][roots]") {
  // The inner root must come from the outer one's descriptor (sandbox/root_views.hpp), however
  // the policy orders them: opened by name first, it could be a decoy swapped in between.
  Tree t;
  const std::string outer = t.dir("ws"), inner = t.dir("ws/a/inner"),
                    deeper = t.dir("ws/a/inner/x");
  for (const auto& order : std::vector<std::vector<std::string>>{
           {deeper, inner, outer}, {inner, outer, deeper}, {outer, deeper, inner}}) {
    auto p = bare();
    p.allow_write = order;
    p.allow_write_cwd = false;
    auto r = resolve_filesystem(p, t.dir("w"), t("home"));
    REQUIRE(r.roots != nullptr);
    CHECK(r.roots->opened_from(outer).empty());
    CHECK(r.roots->opened_from(inner) == outer);
    CHECK(r.roots->opened_from(deeper) == inner);
  }
}
