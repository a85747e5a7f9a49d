// Attacks on how the sandbox reaches host paths: a working directory swapped for a symlink
// between the supervisor's check and the child's use (another sandbox can do that in a shared
// workspace), protected names that are themselves symlinks, and what a denied file looks like.
// Runs as root and (ctest entry unprivileged_supervision_suite) as nobody.
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using test::host_shell;
using test::in;
using test::sandbox_config;
using test::Tree;

TEST_CASE("attack: a working directory swapped for a symlink during set-up never opens its target",
          "[attack][fs][race]") {
  Tree t;
  // A stand-in for the user's home: what the swap would expose, writable, with ~/.ssh readable.
  fs::create_directories(t.outside + "/home/.ssh");
  Tree::write(t.outside + "/home/.ssh/id_ed25519", "PRIVATE KEY\n");
  fs::create_directory(t.ws + "/a");
  Tree::write(t.ws + "/a/inside", "inside\n");
  fs::create_directory_symlink(t.outside + "/home", t.ws + "/swap");
  const auto before = Tree::snapshot(t.outside);

  // What a second sandbox with this workspace writable can do: exchange the directory and a
  // symlink to the home, as fast as it can, while this one starts commands in `a`. Every other
  // command runs with the swapper paused and `a` a directory again: those must simply work
  // (the test proves it ran both ways, not only refusals).
  const std::string a = t.ws + "/a", swap = t.ws + "/swap";
  test::Racer swapper([&] {
    ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, swap.c_str(), RENAME_EXCHANGE);
  });
  // Back to the start: `a` the directory, `swap` the link. (The audit after a racing run may
  // have quarantined whichever of the two stood at `a` then: a writable root replaced.)
  auto quiet = [&] {
    swapper.race(false);
    const std::string keep = t.ws + "/.keep-dir";
    for (const auto& e : fs::directory_iterator(t.ws)) {
      const std::string name = e.path().filename().string();
      if (name != "a" && name != "swap" && !name.starts_with("a.paddock-quarantine")) continue;
      if (fs::is_directory(fs::symlink_status(e.path()))) {
        fs::rename(e.path(), keep);
      } else {
        fs::remove(e.path());
      }
    }
    fs::rename(keep, a);
    fs::create_directory_symlink(t.outside + "/home", swap);
  };
  test::Harness h(sandbox_config());
  int ran = 0, refused = 0;
  for (int i = 0; i < 200; ++i) {
    const bool racing = i % 2 == 1;
    if (racing) {
      swapper.race(true);
    } else {
      quiet();
    }
    auto r = h.exec(test::sh("cat .ssh/id_ed25519 2>/dev/null; echo owned > owned 2>/dev/null; "
                             "cat inside 2>/dev/null; true"),
                    in(a));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    if (!racing) CHECK_FALSE(r.ec);
    if (r.ec) {
      ++refused;
      // Refused as a change under us, never as a platform without sandboxing (under
      // `fallback: warn` that would run the command on the host).
      CHECK(r.ec != paddock::errc::unsupported_platform);
      continue;
    }
    ++ran;
    CHECK(r.result.sandboxed);
    CHECK(r.result.stdout_data.find("PRIVATE") == std::string::npos);
    CHECK(r.result.stdout_data == "inside\n");
  }
  swapper.race(false);
  INFO("ran " << ran << ", refused " << refused);
  CHECK(ran >= 100);
  CHECK(Tree::snapshot(t.outside) == before);
  CHECK_FALSE(fs::exists(t.outside + "/home/owned"));
}

TEST_CASE("attack: protected names that are symlinks keep pointing where the host will look",
          "[attack][fs]") {
  Tree t;
  // .bashrc -> dotfiles/bashrc and .git/hooks -> ../githooks inside the workspace; a second
  // workspace whose .git is a link to a git dir elsewhere (a layout some tools make).
  fs::create_directories(t.ws + "/dotfiles");
  Tree::write(t.ws + "/dotfiles/bashrc", "# the real rc\n");
  fs::remove(t.ws + "/.bashrc");
  fs::create_symlink("dotfiles/bashrc", t.ws + "/.bashrc");
  fs::create_directories(t.ws + "/githooks");
  Tree::write(t.ws + "/githooks/pre-commit", "#!/bin/sh\n");
  fs::remove_all(t.ws + "/.git/hooks");
  fs::create_directory_symlink("../githooks", t.ws + "/.git/hooks");
  const std::string repo = t.root + "/repo", store = t.root + "/store.git";
  REQUIRE(host_shell("git init -q " + repo) == 0);
  fs::rename(repo + "/.git", store);
  fs::create_directory_symlink("../store.git", repo + "/.git");
  const std::string canary = t.root + "/CANARY";
  const std::string plant = "touch " + canary;

  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write = {repo};
  test::Harness h(cfg);
  const auto before = Tree::snapshot(t.root);
  // Every way of making the name resolve to something the command wrote.
  const std::string script =
      "rm -f .bashrc; ln -sfn /tmp/evil .bashrc; mv .bashrc .bashrc.old; "
      "echo '" +
      plant +
      "' >> dotfiles/bashrc; mv dotfiles dotfiles.old; "
      "rm -f .git/hooks; mv .git/hooks .git/hooks.old; ln -sfn ../evilhooks .git/hooks; "
      "echo '" +
      plant +
      "' > githooks/pre-commit; mv githooks githooks.old; "
      "cd " +
      repo +
      " && { rm -f .git; mv .git .git.old; "
      "mkdir -p .git2 && printf '[core]\\n\\tfsmonitor = " +
      plant +
      "\\n' > .git2/config; "
      "mv -T .git2 .git; ln -sfn .git2 .git; rm -rf .git2; }; true";
  auto r = h.exec(test::sh(script), in(t.ws));
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(Tree::snapshot(t.root) == before);
  CHECK(fs::read_symlink(t.ws + "/.bashrc") == "dotfiles/bashrc");
  CHECK(fs::read_symlink(repo + "/.git") == "../store.git");

  // The host's own tools on the result: an interactive bash with this HOME reads .bashrc,
  // git status and a commit in the repository read its config and run its hooks.
  CHECK(host_shell("HOME=" + t.ws + " bash -i -c true") == 0);
  CHECK(host_shell("git -C " + repo + " status") == 0);
  CHECK(host_shell("git -C " + repo +
                   " -c user.name=t -c user.email=t@t commit -q "
                   "--allow-empty -m x") == 0);
  CHECK_FALSE(fs::exists(canary));

  // Work next to the protected names still works.
  auto ok = h.exec(test::sh("echo fine > notes.txt && cat notes.txt"), in(t.ws));
  CHECK(ok.result.exit_code == 0);
  CHECK(ok.result.stdout_data == "fine\n");
}

TEST_CASE("attack: a denied file fails to open (EACCES), it does not read as empty",
          "[attack][fs]") {
  Tree t;
  fs::create_directories(t.outside + "/home");
  Tree::write(t.outside + "/home/.netrc", "machine x password hunter2\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.deny_read = {t.outside + "/home/.netrc"};
  test::Harness h(cfg);
  const std::string path = t.outside + "/home/.netrc";
  auto r = h.exec(test::sh("cat " + path + "; echo status=$?; : > " + path +
                           " 2>/dev/null; echo write=$?; chmod 644 " + path +
                           " 2>/dev/null; echo chmod=$?; ls -a /dev"),
                  in(t.ws));
  REQUIRE(r.result.sandboxed);
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data.find("hunter2") == std::string::npos);
  CHECK(r.result.stdout_data.find("status=1") != std::string::npos);
  CHECK(r.result.stderr_data.find("Permission denied") != std::string::npos);
  CHECK(r.result.stdout_data.find("write=0") == std::string::npos);
  CHECK(r.result.stdout_data.find("chmod=0") == std::string::npos);
  // The cover's source is gone from the sandbox's /dev once the covers are in place.
  CHECK(r.result.stdout_data.find(".paddock-denied") == std::string::npos);
  CHECK(Tree::read(path) == "machine x password hunter2\n");
}

TEST_CASE("a read-only run from a directory under the private /tmp sees that directory",
          "[attack][fs]") {
  // A checkout under /tmp (newcomers clone there): the sandbox's /tmp is private, so the
  // working directory is shown again, read-only. It used to fail set-up as an "unsupported
  // platform", which `fallback: warn` turned into an unsandboxed run.
  std::string dir = "/tmp/paddock-ro-XXXXXX";
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  ::chmod(dir.c_str(), 0755);
  Tree::write(dir + "/README", "hello\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write_cwd = false;
  cfg.sandbox.fallback = paddock::FallbackMode::warn;
  test::Harness h(cfg);
  auto r = h.exec(test::sh("cat README; echo x > new 2>/dev/null || echo read-only; "
                           "echo y > /tmp/scratch && echo tmp-writable"),
                  in(dir));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  CHECK_FALSE(r.ec);
  CHECK(r.result.sandboxed);
  CHECK(r.result.stdout_data == "hello\nread-only\ntmp-writable\n");
  CHECK_FALSE(fs::exists(dir + "/new"));
  CHECK_FALSE(fs::exists("/tmp/scratch"));
  fs::remove_all(dir);
}

TEST_CASE("attack: a symlink planted by one sandbox does not widen another's writable roots",
          "[attack][fs]") {
  Tree t;
  fs::create_directories(t.outside + "/home");
  fs::create_directories(t.ws + "/proj");
  const auto before = Tree::snapshot(t.outside);
  // Sandbox B, with the whole workspace writable, plants a link to the "home".
  test::Harness b(sandbox_config());
  auto plant = b.exec(test::sh("ln -s " + t.outside + "/home cache"), in(t.ws));
  REQUIRE(plant.result.exit_code == 0);
  // Sandbox A works in proj and is allowed to write the workspace's cache directory.
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write = {t.ws + "/cache"};
  test::Harness a(cfg);
  auto r = a.exec(test::sh("touch " + t.ws + "/cache/OWNED"), in(t.ws + "/proj"));
  INFO(r.result.error);
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK(r.result.error.find("symlink") != std::string::npos);
  CHECK(Tree::snapshot(t.outside) == before);
}

TEST_CASE("a writable root inside /dev, /proc, /sys or the host's start-up dirs is refused",
          "[attack][fs]") {
  Tree t;
  for (const char* dir : {"/dev/pts", "/dev/shm", "/sys/fs/cgroup", "/proc/self", "/etc",
                          "/etc/profile.d", "/usr/local/bin", "/bin"}) {
    INFO(dir);
    test::Harness h(sandbox_config());
    auto r = h.exec(test::sh("true"), in(dir));
    CHECK(r.ec == paddock::errc::config_invalid);
    auto cfg = sandbox_config();
    cfg.sandbox.filesystem.allow_write = {dir};
    test::Harness h2(cfg);
    CHECK(h2.exec(test::sh("true"), in(t.ws)).ec == paddock::errc::config_invalid);
  }
}

TEST_CASE("a program under the host's /tmp runs, and what it writes there stays private",
          "[attack][fs]") {
  // A checkout under /tmp: its tools and test binaries live there. The host's /tmp is shown
  // read-only below the sandbox's private writes: a write over the tool or a file next to it
  // changes nothing on the host.
  std::string dir = "/tmp/paddock-exe-XXXXXX";
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  ::chmod(dir.c_str(), 0755);
  fs::copy_file("/bin/echo", dir + "/tool");
  Tree::write(dir + "/data", "host tmp\n");
  Tree t;
  test::Harness h(sandbox_config());
  auto r = h.exec(test::argv({dir + "/tool", "ran"}), in(t.ws));
  CHECK_FALSE(r.ec);
  CHECK(r.result.stdout_data == "ran\n");
  auto other = h.exec(test::sh("cat " + dir + "/data && echo x > " + dir + "/tool && echo y >> " +
                               dir + "/data && rm " + dir + "/data && echo written"),
                      in(t.ws));
  CHECK(other.result.stdout_data == "host tmp\nwritten\n");
  CHECK(Tree::read(dir + "/data") == "host tmp\n");
  CHECK(fs::file_size(dir + "/tool") == fs::file_size("/bin/echo"));
  fs::remove_all(dir);
}
