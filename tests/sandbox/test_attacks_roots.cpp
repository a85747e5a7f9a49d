// Attacks on where the writable roots are: a working directory that is a protected directory
// (`tools -> .git`), and a writable home whose start-up files the host runs later. Each one
// runs in a real sandbox, then checks the host as the host will use it (its git, its shell),
// with a control run that proves the check would see a planted file. Fake homes only.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "paddock/errors.hpp"
#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using test::attack;
using test::in;
using test::require_denied;
using test::sandbox_config;
using test::Tree;

namespace {

// A command run on the host (unsandboxed) with HOME set: what the user's shell and git do later.
paddock::ExecResult on_host(const std::string& home, std::vector<std::string> args,
                            const std::string& cwd) {
  test::Harness host(test::host_config());
  paddock::ExecOptions o = in(cwd);
  o.env = {{"HOME", home}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  auto r = host.exec(test::argv(std::move(args)), std::move(o));
  REQUIRE_FALSE(r.ec);
  return r.result;
}

// A fake home under the scratch tree whose .bashrc sources ~/.bash_aliases (Debian's default).
std::string make_home(const Tree& t) {
  const std::string home = t.root + "/home";
  fs::create_directories(home);
  Tree::write(home + "/.bashrc", "[ -f \"$HOME/.bash_aliases\" ] && . \"$HOME/.bash_aliases\"\n");
  return home;
}

// Plants a start-up file for each way the host could run it; `canary` appears if one runs.
std::string planting_script(const std::string& home, const std::string& canary) {
  return "H=" + home + "; C=" + canary +
         "; echo \"touch $C\" >> $H/.bash_aliases; echo \"touch $C\" >> $H/.bashrc;"
         " mkdir -p $H/.config/git && printf '[paddock]\\n\\tplanted = yes\\n' > "
         "$H/.config/git/config; printf '[paddock]\\n\\tplanted = yes\\n' >> $H/.gitconfig;"
         " mkdir -p $H/bin && echo \"touch $C\" > $H/bin/git; echo ok > $H/notes.txt; true";
}

// The host's shell and git with that home run nothing and see nothing planted.
void require_nothing_planted(const std::string& home, const std::string& canary,
                             const std::string& cwd) {
  on_host(home, {"bash", "-i", "-c", "true"}, cwd);
  CHECK_FALSE(fs::exists(canary));
  auto git = on_host(home, {"git", "config", "--get", "paddock.planted"}, cwd);
  CHECK(git.exit_code == 1);  // not set anywhere
  CHECK(git.stdout_data.empty());
}

}  // namespace

TEST_CASE("attack: a working directory inside .git is refused, by any spelling",
          "[attack][fs][roots]") {
  Tree t;
  fs::create_directories(t.ws + "/.git/objects");
  fs::create_directory_symlink(".git", t.ws + "/tools");  // stays inside its directory
  fs::create_directory_symlink(".git/hooks", t.ws + "/hk");
  const std::string plant =
      "printf '[alias]\\n\\tst = !touch x\\n' >> config; echo evil > hooks/post-checkout;"
      " echo evil > post-checkout; echo evil > ../.git/config; true";
  auto before = Tree::snapshot(t.root);
  test::Harness h(sandbox_config());
  for (const std::string& cwd :
       {t.ws + "/tools", t.ws + "/hk", t.ws + "/.git", t.ws + "/.git/objects"}) {
    INFO(cwd);
    auto r = h.exec(test::sh(plant), in(cwd));
    CHECK(r.ec == paddock::errc::config_invalid);
    CHECK(r.result.error.find("git directory " + t.ws + "/.git") != std::string::npos);
  }
  // As a second writable root spelled with `..` back into it.
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write = {t.ws + "/.git/hooks/.."};
  test::Harness h2(cfg);
  auto r = h2.exec(test::sh("echo evil > .git/config"), in(t.ws));
  CHECK(r.ec == paddock::errc::config_invalid);
  // The CLI, as a user types it: a relative --cwd.
  auto cli = on_host(t.root + "/nohome",
                     {PADDOCK_BINARY, "run", "--cwd", ".git", "--", "sh", "-c", plant}, t.ws);
  CHECK(cli.exit_code == 125);
  CHECK(cli.stderr_data.find("git directory") != std::string::npos);
  CHECK(Tree::snapshot(t.root) == before);
  CHECK(Tree::read(t.ws + "/.git/config") == "[core]\n");

  // Control: without the default protections the same run goes through and rewrites the
  // repository's config, so the snapshot above would have seen it.
  auto off = sandbox_config();
  off.sandbox.filesystem.default_denies = false;
  test::Harness h3(off);
  auto control = h3.exec(test::sh(plant), in(t.ws + "/tools"));
  REQUIRE_FALSE(control.ec);
  CHECK(Tree::read(t.ws + "/.git/config") != "[core]\n");
  CHECK(fs::exists(t.ws + "/.git/hooks/post-checkout"));
}

TEST_CASE("attack: the home as the working directory is refused unless asked for",
          "[attack][fs][roots]") {
  Tree t;
  const std::string home = make_home(t);
  const std::string canary = t.root + "/canary";
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.home = home;
  test::Harness h(cfg);
  auto r = h.exec(test::sh(planting_script(home, canary)), in(home));
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK(r.result.error.find("is the home directory") != std::string::npos);
  // `paddock run` typed in the home: refused, saying how to go on.
  auto cli =
      on_host(home, {PADDOCK_BINARY, "run", "--", "sh", "-c", planting_script(home, canary)}, home);
  CHECK(cli.exit_code == 125);
  CHECK(cli.stderr_data.find("--cwd") != std::string::npos);
  CHECK(cli.stderr_data.find("allowWriteHome") != std::string::npos);
  CHECK_FALSE(fs::exists(home + "/notes.txt"));
  require_nothing_planted(home, canary, t.root);
}

TEST_CASE("attack: with allowWriteHome, start-up files cannot be planted in the home",
          "[attack][fs][roots]") {
  Tree t;
  const std::string home = make_home(t);
  const std::string canary = t.root + "/canary";
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.home = home;
  cfg.sandbox.filesystem.allow_write_home = true;
  test::Harness h(cfg);

  // Existing files and directories: read-only in the sandbox.
  Tree::write(home + "/.bash_aliases", "# mine\n");
  fs::create_directories(home + "/.config");
  auto r = h.exec(test::sh(planting_script(home, canary)), in(home));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  CHECK(Tree::read(home + "/notes.txt") == "ok\n");  // the home itself is writable
  CHECK(Tree::read(home + "/.bash_aliases") == "# mine\n");
  CHECK(fs::is_empty(home + "/.config"));
  for (const char* gone : {"/.gitconfig", "/bin"}) CHECK_FALSE(fs::exists(home + gone));
  require_nothing_planted(home, canary, t.root);

  // srt's settings file chooses the next run's sandbox: neither planted nor rewritten.
  h.exec(test::sh("printf '{}' > .srt-settings.json; echo done"), in(home));
  CHECK_FALSE(fs::exists(home + "/.srt-settings.json"));
  Tree::write(home + "/.srt-settings.json", "{\"network\": {\"allowedDomains\": []}}");
  h.exec(test::sh("printf '{\"network\": {\"mode\": \"allowed\"}}' > .srt-settings.json"),
         in(home));
  CHECK(Tree::read(home + "/.srt-settings.json") == "{\"network\": {\"allowedDomains\": []}}");
  fs::remove(home + "/.srt-settings.json");

  // Missing ones: created inside, removed after the command and reported.
  fs::remove(home + "/.bash_aliases");
  fs::remove(home + "/.config");
  auto missing = h.exec(test::sh(planting_script(home, canary)), in(home));
  REQUIRE_FALSE(missing.ec);
  std::string reported;
  for (const auto& v : missing.result.violations) reported += v.path + " ";
  INFO(reported);
  for (const char* gone : {"/.bash_aliases", "/.config", "/.gitconfig", "/bin"}) {
    CHECK_FALSE(fs::exists(home + gone));
    CHECK(reported.find(home + gone) != std::string::npos);
  }
  require_nothing_planted(home, canary, t.root);

  // Control: the same files written on the host are run and seen by the same checks.
  Tree::write(home + "/.bash_aliases", "touch " + canary + "\n");
  fs::create_directories(home + "/.config/git");
  Tree::write(home + "/.config/git/config", "[paddock]\n\tplanted = yes\n");
  on_host(home, {"bash", "-i", "-c", "true"}, t.root);
  CHECK(fs::exists(canary));
  CHECK(on_host(home, {"git", "config", "--get", "paddock.planted"}, t.root).stdout_data ==
        "yes\n");
}
