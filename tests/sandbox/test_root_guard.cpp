// Which directories may be writable roots (sandbox/root_guard.cpp), and the built-in lists that
// protect a home (sandbox/default_paths.cpp): each refusal by several spellings, each
// protection as the rule the mount layer gets. Fake homes only, under /tmp.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "paddock/errors.hpp"
#include "sandbox/path_policy.hpp"
#include "sandbox/root_views.hpp"
#include "support/path_tree.hpp"

using paddock::FilesystemPolicy;
using paddock::sandbox::PathAccess;
using paddock::sandbox::resolve_filesystem;
using namespace test::paths;

namespace {

const std::string kCwdField = "cwd (the working directory is writable: allowWriteCwd): ";

// The config_invalid message resolve_filesystem throws (it must throw).
std::string refusal(const FilesystemPolicy& p, const std::string& cwd, const std::string& home) {
  try {
    resolve_filesystem(p, cwd, home);
  } catch (const paddock::Error& e) {
    CHECK(e.code() == paddock::errc::config_invalid);
    return e.what();
  }
  FAIL("not refused: cwd " << cwd);
  return {};
}

// A repository with hooks and config, and links into its git dir as a previous command could
// have planted them.
struct Repo {
  explicit Repo(const Tree& t) : repo(t.dir("repo")) {
    t.file("repo/.git/config", "[core]\n");
    t.file("repo/.git/HEAD", "ref: refs/heads/main\n");
    t.dir("repo/.git/hooks");
    t.dir("repo/.git/objects");
    t.dir("repo/.git/refs");
    t.link(".git", "repo/tools");
    t.link(".git/hooks", "repo/hk");
    t.link("../.git", "repo/sub/up");
  }
  std::string repo;
};

}  // namespace

TEST_CASE("roots: a git directory is never a writable root, by any spelling", "[paths]") {
  Tree t;
  Repo r(t);
  std::string home = t.dir("home");
  FilesystemPolicy p = host_policy();  // defaults: a writable cwd, default protections
  // The cwd through a link that stays inside its directory (`tools -> .git`), named directly,
  // below it, and through a link in a subdirectory.
  for (const std::string& cwd : {r.repo + "/tools", r.repo + "/.git", r.repo + "/hk",
                                 r.repo + "/.git/objects", r.repo + "/sub/up/refs"}) {
    INFO(cwd);
    std::string why = refusal(p, cwd, home);
    CHECK_THAT(why, Catch::StartsWith(kCwdField + cwd));
    CHECK_THAT(why, Catch::Contains("is or lies in the git directory " + r.repo + "/.git:"));
  }
  // allowWrite entries: `..` back into .git, relative and absolute, globs.
  p.allow_write_cwd = false;
  for (const std::string& entry :
       {std::string(".git/hooks/.."), std::string("./tools"), r.repo + "/.git/hooks",
        std::string(".gi?"), std::string("*/hooks")}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, r.repo, home),
               Catch::StartsWith("filesystem.allowWrite[0]: " + entry + ": ") &&
                   Catch::Contains("git directory " + r.repo + "/.git"));
  }
  // A git directory not called .git (a bare repository, --separate-git-dir), or a worktree's
  // (HEAD and commondir): recognised by its content.
  t.file("store.git/HEAD", "ref: refs/heads/main\n");
  t.dir("store.git/objects");
  t.dir("store.git/refs");
  t.dir("store.git/hooks");
  t.file("gitdirs/wt/HEAD", "0000\n");
  t.file("gitdirs/wt/commondir", "../../store.git\n");
  for (const std::string& entry : {t("store.git"), t("store.git/hooks"), t("gitdirs/wt")}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, r.repo, home), Catch::Contains("(HEAD, objects and refs)"));
  }
  // The repository itself is the usual root; its hooks and config stay read-only inside it.
  p = host_policy();
  auto ok = resolve_filesystem(p, r.repo, home);
  CHECK(rule_at(ok, r.repo)->access == PathAccess::writable);
  CHECK(rule_at(ok, r.repo + "/.git/hooks")->access == PathAccess::read_only);
  // Without the default protections nothing is protected, so nothing is refused either.
  p.default_denies = false;
  CHECK(resolve_filesystem(p, r.repo + "/tools", home).writable_roots ==
        std::vector<std::string>{r.repo + "/.git"});
}

TEST_CASE("roots: nothing inside a mandatory read-only name is a writable root", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  std::string home = t.dir("home");
  t.dir("w/.vscode/sub");
  t.dir("w/.husky/_");
  t.dir("w/.config/fish/functions");
  t.dir("w/.claude/commands");
  t.file("w/.bashrc", "# rc\n");
  t.link(".vscode", "w/editor");
  FilesystemPolicy p = host_policy();
  CHECK_THAT(refusal(p, cwd + "/editor", home),
             Catch::Contains("resolves to " + cwd + "/.vscode, which is or lies in " + cwd +
                             "/.vscode, which stays read-only in every writable root"));
  p.allow_write_cwd = false;  // no root above them at all: the names still count
  for (const char* entry : {".vscode/sub", ".husky/_", ".config/fish/functions", ".claude/commands",
                            "editor/sub", ".bashrc"}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, cwd, home),
               Catch::StartsWith(std::string("filesystem.allowWrite[0]: ") + entry));
  }
  // A name only counts as a whole component.
  t.dir("w/my.vscode");
  t.dir("w/.config/fisher");
  p.allow_write = {"my.vscode", ".config/fisher"};
  CHECK(resolve_filesystem(p, cwd, home).writable_roots.size() == 2);
}

TEST_CASE("roots: a credential is never writable, however it is named", "[paths]") {
  Tree t;
  std::string cwd = t.dir("w");
  std::string home = t.dir("home");
  t.file("home/.ssh/id_ed25519", "KEY\n");
  t.file("home/.aws/sso/cache/token", "T\n");
  t.dir("home/.config/gh");
  t.link(home + "/.ssh", "w/keys");
  FilesystemPolicy p = host_policy();
  p.allow_write_cwd = false;
  for (const std::string& entry : {std::string("~/.ssh"), std::string("keys"), home + "/.ssh/",
                                   std::string("~/.aws/sso/cache"), std::string("~/.config/gh")}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, cwd, home), Catch::Contains(", a default credential") ||
                                          Catch::Contains("a home's start-up file"));
  }
  p.allow_write.clear();
  p.allow_write_cwd = true;
  CHECK_THAT(refusal(p, cwd + "/keys", home), Catch::Contains("is or lies in " + home + "/.ssh"));
}

TEST_CASE("roots: the home is writable only when asked, and never what is above it", "[paths]") {
  Tree t;
  std::string home = t.dir("users/me");
  t.link("users/me", "me-link");
  FilesystemPolicy p = host_policy();
  // The cwd is the home: the usual way to get here is `paddock run` typed in ~.
  std::string why = refusal(p, home, home);
  CHECK_THAT(why, Catch::StartsWith(kCwdField + home + ": is the home directory"));
  CHECK_THAT(why, Catch::Contains("--cwd") && Catch::Contains("sandbox.allowWriteHome"));
  CHECK_THAT(refusal(p, t("me-link"), home), Catch::Contains("is the home directory"));
  p.allow_write_cwd = false;
  for (const std::string& entry :
       {std::string("~"), std::string("~/"), home + "/.", t("me-link"), t("users"), t.root}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, t.dir("w"), home), Catch::Contains("home directory"));
  }
  // Asked for: the home itself, yet still nothing above it.
  p.allow_write_home = true;
  p.allow_write = {"~"};
  CHECK(resolve_filesystem(p, t.dir("w"), home).writable_roots == std::vector<std::string>{home});
  p.allow_write = {t("users")};
  CHECK_THAT(refusal(p, t.dir("w"), home), Catch::Contains("contains the home directory " + home));
  // A home given as `/` (what an unset HOME becomes) is none: nothing would be writable else.
  p = host_policy();
  CHECK(resolve_filesystem(p, t.dir("w"), "/").writable_roots == std::vector<std::string>{t("w")});
}

TEST_CASE("roots: the passwd entry's home is protected when HOME points elsewhere", "[paths]") {
  passwd* pw = ::getpwuid(::geteuid());
  struct stat st;
  if (pw == nullptr || pw->pw_dir == nullptr || ::stat(pw->pw_dir, &st) != 0 ||
      !S_ISDIR(st.st_mode) || std::string(pw->pw_dir) == "/") {
    SUCCEED("no usable passwd home for this user (nobody's is /nonexistent)");
    return;
  }
  Tree t;
  std::string fake = t.dir("home");
  FilesystemPolicy p = host_policy();
  // Only resolved, never written: the real home is not touched.
  auto real = paddock::sandbox::canonicalize(pw->pw_dir).path;
  CHECK_THAT(refusal(p, real, fake), Catch::Contains("is the home directory"));
}

TEST_CASE("home start-up files stay read-only in a writable home, wherever they lead", "[paths]") {
  Tree t;
  std::string home = t.dir("home");
  std::string cwd = t.dir("w");
  t.file("home/.bash_aliases", "alias ls=ls\n");
  t.dir("home/.config/git");
  t.dir("home/.local/bin");
  t.file("home/.ssh/config", "Host x\n");
  t.file("home/.python_history", "token=abc\n");
  t.dir("home/.cache/pip");
  FilesystemPolicy p = host_policy();
  p.allow_write_home = true;
  auto r = resolve_filesystem(p, home, home);
  CHECK(rule_at(r, home)->access == PathAccess::writable);
  for (const char* ro : {"/.bash_aliases", "/.config", "/.local/bin"}) {
    INFO(ro);
    REQUIRE(rule_at(r, home + ro) != nullptr);
    CHECK(rule_at(r, home + ro)->access == PathAccess::read_only);
    CHECK(rule_at(r, home + ro)->origin == std::string("home start-up"));
  }
  for (const char* hidden : {"/.ssh", "/.python_history"}) {
    INFO(hidden);
    REQUIRE(rule_at(r, home + hidden) != nullptr);
    CHECK(rule_at(r, home + hidden)->access == PathAccess::deny_read);
  }
  CHECK(rule_at(r, home + "/.cache") == nullptr);  // caches are what a writable home is for
  for (const char* missing : {"/.bashrc", "/.profile", "/.zshenv", "/bin", "/.pam_environment",
                              "/.xinitrc", "/.local/lib", "/.node_repl_history", "/.gitconfig"}) {
    INFO(missing);
    CHECK(contains(r.protected_missing, home + missing));
  }
  // A writable root inside the home that holds start-up paths: they stay read-only there.
  p.allow_write_home = false;
  p.allow_write_cwd = false;
  p.allow_write = {"~/.local"};
  r = resolve_filesystem(p, cwd, home);
  CHECK(lines_under(r, home) == std::vector<std::string>{"writable " + home + "/.local",
                                                         "deny_read " + home + "/.python_history",
                                                         "deny_read " + home + "/.ssh",
                                                         "read_only " + home + "/.local/bin"});
  for (const char* entry : {"~/.config/git", "~/.local/bin", "~/.bash_aliases"}) {
    INFO(entry);
    p.allow_write = {entry};
    CHECK_THAT(refusal(p, cwd, home), Catch::Contains("a home's start-up file"));
  }

  // Dotfiles kept in a repository: ~/.bashrc links there, so the repository's file is what
  // the host's shell runs, and it stays read-only when the repository is the cwd.
  t.file("dotfiles/bashrc", "# rc\n");
  t.link(t("dotfiles/bashrc"), "home/.bashrc");
  p = host_policy();
  r = resolve_filesystem(p, t("dotfiles"), home);
  REQUIRE(rule_at(r, t("dotfiles/bashrc")) != nullptr);
  CHECK(rule_at(r, t("dotfiles/bashrc"))->access == PathAccess::read_only);
}

TEST_CASE("the built-in lists hold the credentials and start-up files named in the issue",
          "[paths]") {
  const auto& creds = paddock::sandbox::default_credential_paths();
  for (const char* c : {"~/.config/github-copilot",
                        "~/.gemini",
                        "~/.m2/settings.xml",
                        "~/.config/containers/auth.json",
                        "~/.gradle/gradle.properties",
                        "~/.config/glab-cli",
                        "~/.composer/auth.json",
                        "~/.config/sops",
                        "~/.claude.json",
                        "~/.config/op",
                        "~/.bash_history",
                        "~/.zsh_history",
                        "~/.histfile",
                        "~/.python_history",
                        "~/.node_repl_history",
                        "~/.psql_history",
                        "~/.mysql_history",
                        "~/.sqlite_history",
                        "~/.lesshst",
                        "~/.irb_history",
                        "~/.rediscli_history",
                        "~/.local/share/fish/fish_history"}) {
    CHECK(contains(creds, c));
  }
  const auto& startup = paddock::sandbox::home_startup_paths();
  for (const char* s : {"~/.bash_aliases", "~/.bashrc", "~/.zshenv", "~/.kshrc", "~/.config",
                        "~/.local/bin", "~/bin", "~/.gitconfig", "~/.pam_environment", "~/.xinitrc",
                        "~/.bash_logout", "~/.zlogout"}) {
    CHECK(contains(startup, s));
  }
  // Every entry names a path under a home or an absolute one, and appears once.
  for (const auto* list : {&creds, &startup}) {
    std::vector<std::string> sorted = *list;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    for (const auto& e : *list) CHECK((e.starts_with("~/") || e.starts_with("/")));
  }
}

TEST_CASE("built-in entries behind symlinks in the home are denied where they really are",
          "[paths]") {
  // Most entries are looked up in the home's listings (one readdir per directory, no lstat per
  // entry); a link on the way must still be followed.
  Tree t;
  std::string home = t.dir("home");
  t.file("vault/aws/credentials", "K\n");
  t.file("vault/op/config", "K\n");
  t.link(t("vault/aws"), "home/.aws");
  t.dir("home/.config");
  t.link("../../vault/op", "home/.config/op");
  t.link(t("vault"), "home/.local");  // a linked directory on the way to ~/.local/bin
  t.dir("vault/bin");
  FilesystemPolicy p = host_policy();
  p.allow_write_cwd = false;
  p.allow_write = {t("vault")};
  auto r = resolve_filesystem(p, t.dir("w"), home);
  CHECK(lines_under(r, t("vault")) ==
        std::vector<std::string>{"writable " + t("vault"), "deny_read " + t("vault/aws"),
                                 "read_only " + t("vault/bin"), "deny_read " + t("vault/op")});
  CHECK(contains(r.protected_missing, t("vault/lib")));  // ~/.local/lib, missing
}

TEST_CASE("a writable root inside another is opened from the outer one's descriptor",
          "[sandbox][roots]") {
  // The outer root is opened; then, before the inner one is, the outer directory is renamed
  // away and a decoy tree made at its name (what the host, or a sandbox that can write above,
  // could do between the two opens). Opened by name, the inner root would be the decoy's; it
  // must be the one inside the tree the outer descriptor holds. Also: a symlink on the way
  // below the outer root is refused, and the same directory twice is one directory.
  Tree t;
  const std::string outer = t.dir("ws"), inner = t.dir("ws/sub");
  struct stat real {};
  REQUIRE(::stat(inner.c_str(), &real) == 0);
  paddock::sandbox::RootViews views;
  views.add(outer);
  views.add(outer);  // the same directory twice: one directory
  struct stat outer_real {
  }, outer_got{};
  REQUIRE(::stat(outer.c_str(), &outer_real) == 0);
  REQUIRE(::fstat(views.beneath(outer).first, &outer_got) == 0);
  CHECK(outer_got.st_ino == outer_real.st_ino);
  REQUIRE(::rename(outer.c_str(), t("ws-real").c_str()) == 0);
  t.dir("ws/sub");  // the decoy
  views.add(inner);
  const auto [fd, rest] = views.beneath(inner);
  CHECK(rest.empty());
  struct stat got {};
  REQUIRE(::fstat(fd, &got) == 0);
  CHECK(got.st_ino == real.st_ino);
  CHECK(got.st_dev == real.st_dev);
  // A symlink below the outer root where the inner one should be: refused, not followed.
  t.dir("ws-real/elsewhere");
  REQUIRE(::rename(t("ws-real/sub").c_str(), t("ws-real/moved").c_str()) == 0);
  REQUIRE(::symlink("elsewhere", t("ws-real/sub").c_str()) == 0);
  paddock::sandbox::RootViews again;
  again.add(t("ws-real"));
  CHECK_THROWS_AS(again.add(t("ws-real/sub")), paddock::Error);
}
