// The write guard for an agent's own file tools: the same boundary a sandboxed command has,
// answered on the host, against symlinks, `..` and paths that do not exist yet.
#include <catch2/catch.hpp>
#include <filesystem>

#include "paddock/manager.hpp"
#include "sandbox/write_guard.hpp"
#include "support/harness.hpp"
#include "support/path_tree.hpp"

namespace fs = std::filesystem;
using paddock::sandbox::check_write;
using test::paths::host_policy;
using test::paths::Tree;

TEST_CASE("write guard: writable roots yes, protected, outside, through links no",
          "[paths][write-guard]") {
  Tree t;
  const std::string home = t.dir("home");
  const std::string cwd = t.dir("w");
  t.dir("outside");
  t.dir("w/src");
  t.dir("w/.git/hooks");
  t.file("w/.git/HEAD", "ref: refs/heads/main\n");
  t.dir("w/.git/objects");
  t.dir("w/.git/refs");
  t.link(t("outside"), "w/out");
  paddock::FilesystemPolicy p = host_policy();
  p.deny_write = {"./locked"};
  t.dir("w/locked");
  const auto yes = [&](const std::string& path) {
    const auto r = check_write(p, cwd, home, path);
    INFO(path << " -> " << r.path << ": " << r.reason);
    CHECK(r.allowed);
    return r;
  };
  const auto no = [&](const std::string& path, const std::string& why) {
    const auto r = check_write(p, cwd, home, path);
    INFO(path << " -> " << r.path << ": " << r.reason);
    CHECK_FALSE(r.allowed);
    CHECK(r.reason.find(why) != std::string::npos);
  };
  CHECK(yes("src/main.cpp").path == cwd + "/src/main.cpp");
  yes(cwd + "/new/dir/not/there/yet.txt");
  yes("./src/../README.md");
  // Protected names, existing or not: git runs them, shells read them.
  no(".bashrc", "protected");
  no(".envrc", "protected");
  no(".git/hooks/pre-commit", ".git");
  no(".git/config", ".git");
  no(".vscode/tasks.json", "protected");
  no("locked/x", "read-only");
  // Out of the root: by `..`, by an absolute path, through a link in the workspace.
  no("../outside/x", "outside every writable root");
  no(t("outside/x"), "outside every writable root");
  const auto through = check_write(p, cwd, home, "out/x");
  CHECK_FALSE(through.allowed);
  CHECK(through.path == t("outside/x"));
  no(home + "/.ssh/authorized_keys", "outside every writable root");
  // A repository a file tool could assemble: no .git anywhere, no HEAD, no pointer files.
  no("sub/.git/config", ".git");
  no("sub/.git", ".git");
  no("store/HEAD", "repository");
  no("store/commondir", "repository");
  // A NUL byte: open() would stop at it, at a protected name.
  no(std::string(".bashrc\0x", 9), "NUL");
}

TEST_CASE("a call's writable root may not reach what the Manager hides", "[write-guard]") {
  Tree t;
  const std::string cwd = t.dir("w");
  t.dir("w/secret/deeper");
  paddock::FilesystemPolicy p = host_policy();
  p.deny_read = {cwd + "/secret"};
  using paddock::sandbox::call_root_conflict;
  for (const std::string& root :
       std::vector<std::string>{cwd + "/secret", cwd + "/secret/deeper", cwd, "./secret"}) {
    INFO(root);
    CHECK(call_root_conflict(p, {root}, cwd, t("home")).has_value());
  }
  t.dir("w/other");
  CHECK_FALSE(call_root_conflict(p, {cwd + "/other"}, cwd, t("home")).has_value());
}

TEST_CASE("Manager::check_write answers with the Manager's policy, relative to a cwd",
          "[write-guard]") {
  Tree t;
  const std::string cwd = t.dir("w");
  test::Harness h(test::unclassified());
  CHECK(h.manager.check_write("notes.txt", cwd).allowed);
  CHECK_FALSE(h.manager.check_write(".bashrc", cwd).allowed);
  CHECK_FALSE(h.manager.check_write("/etc/passwd", cwd).allowed);
  CHECK_THROWS_AS(h.manager.check_write("x", t("missing-dir")), paddock::Error);
}
