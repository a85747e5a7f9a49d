// The attack suite: each test tries to cross one boundary from inside a sandbox, asserts the
// attempt failed, and checks on the host that nothing changed. Runs as root and (ctest entry
// unprivileged_supervision_suite) as nobody.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "support/attack_fixture.hpp"
#include "support/harness.hpp"
#include "support/processes.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::attack;
using test::bound_unix_socket;
using test::in;
using test::require_denied;
using test::sandbox_config;
using test::Tree;

namespace {

// `leader`: the command's paddock-init (ExecResult::pid), skipped: its argv carries the
// command's, and it is reaped just after the result (the command ends on its report, which it
// sends once nothing else is left in its namespace); the command's own processes are not.
bool any_process_with(const std::string& marker, int leader = 0) {
  return test::processes_with(marker, leader) > 0;
}

}  // namespace

TEST_CASE("attack: writes outside the writable roots fail and change nothing", "[attack][fs]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto before = Tree::snapshot(t.root);
  require_denied(attack(h, t, {"write", t.outside + "/file"}));
  require_denied(attack(h, t, {"write", t.outside + "/new"}));
  require_denied(attack(h, t, {"write", "/etc/paddock-attack"}));
  require_denied(attack(h, t, {"write", "/usr/bin/paddock-attack"}));
  // The workspace itself is writable: the same program can write there.
  auto ok = attack(h, t, {"write", t.ws + "/new.txt"});
  CHECK(ok.exit_code == 0);
  CHECK(Tree::read(t.ws + "/new.txt") == "attack\n");
  fs::remove(t.ws + "/new.txt");
  CHECK(Tree::snapshot(t.root) == before);
  CHECK_FALSE(fs::exists("/etc/paddock-attack"));
}

TEST_CASE("attack: symlinks and hardlinks in the workspace do not reach out", "[attack][fs]") {
  Tree t;
  fs::create_directory_symlink(t.outside, t.ws + "/planted");  // planted before the command
  test::Harness h(sandbox_config());
  auto before = Tree::snapshot(t.root);
  require_denied(attack(h, t, {"write", t.ws + "/planted/file"}));
  require_denied(attack(h, t, {"write", t.ws + "/planted/new"}));
  auto r = h.exec(test::sh("ln -s " + t.outside +
                           " own && echo x > own/new; "
                           "ln " +
                           t.outside + "/file hard; echo x >> own/file"),
                  in(t.ws));
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.exit_code != 0);
  CHECK_FALSE(fs::exists(t.ws + "/hard"));
  fs::remove(t.ws + "/own");
  CHECK(Tree::snapshot(t.root) == before);
  CHECK(Tree::read(t.outside + "/file") == "original\n");
}

TEST_CASE("attack: renames into denied or protected paths fail", "[attack][fs]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto before = Tree::snapshot(t.root);
  auto r = h.exec(test::sh("echo evil > x; mv x .git/hooks/post-checkout; r1=$?; "
                           "mv x " +
                           t.outside +
                           "/x; r2=$?; mv .git/hooks hooks2; r3=$?; "
                           "mv .bashrc rc2; r4=$?; rm -rf x hooks2; echo $r1 $r2 $r3 $r4"),
                  in(t.ws));
  REQUIRE(r.result.sandboxed);
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data.find("0") == std::string::npos);  // every mv failed
  CHECK(Tree::snapshot(t.root) == before);
}

TEST_CASE("attack: mandatory read-only paths, existing or not, stay as they were", "[attack][fs]") {
  Tree t;
  // A git worktree as a second writable root: its .git is a file pointing into the main
  // repository's git dir (also writable), whose hooks and config must stay read-only.
  fs::create_directories(t.root + "/main-repo/.git/worktrees/wt/");
  fs::create_directories(t.root + "/main-repo/.git/hooks");
  fs::create_directories(t.root + "/wt");
  Tree::write(t.root + "/wt/.git", "gitdir: ../main-repo/.git/worktrees/wt\n");
  Tree::write(t.root + "/main-repo/.git/worktrees/wt/commondir", "../..\n");
  Tree::write(t.root + "/main-repo/.git/config", "[core]\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.allow_write = {t.root + "/wt", t.root + "/main-repo"};
  test::Harness h(cfg);
  auto before = Tree::snapshot(t.root);
  for (const std::string& existing :
       {t.ws + "/.git/hooks/pre-commit", t.ws + "/.git/config", t.ws + "/.bashrc",
        t.root + "/main-repo/.git/config", t.root + "/main-repo/.git/hooks/pre-push"}) {
    INFO(existing);
    require_denied(attack(h, t, {"write", existing}));
  }
  // The main repository itself is writable (it is a root), its git metadata is not.
  CHECK(attack(h, t, {"write", t.root + "/main-repo/README"}).exit_code == 0);
  fs::remove(t.root + "/main-repo/README");
  CHECK(Tree::snapshot(t.root) == before);

  // Moving the parent away (the read-only mount would move with it) and making a new one:
  // the parent is a mount point in the sandbox, so neither rename nor removal works.
  auto moved = h.exec(test::sh("mv .git moved; r1=$?; mkdir -p .git/hooks; "
                               "echo evil > .git/hooks/pre-commit; r2=$?; "
                               "mv " +
                               t.root + "/main-repo/.git " + t.root +
                               "/gone; r3=$?; "
                               "rmdir .git/hooks; r4=$?; echo $r1 $r2 $r3 $r4"),
                      in(t.ws));
  REQUIRE(moved.result.sandboxed);
  INFO(moved.result.stdout_data << moved.result.stderr_data);
  CHECK(moved.result.stdout_data.find('0') == std::string::npos);
  CHECK(Tree::read(t.ws + "/.git/hooks/pre-commit") == "#!/bin/sh\n");
  CHECK(Tree::snapshot(t.root) == before);

  // Not there yet: the command may create them inside, but nothing survives on the host and
  // each one is reported.
  auto r = h.exec(test::sh("mkdir -p .vscode .idea .claude; echo x > .mcp.json; "
                           "echo x > .gitmodules; echo x > .zshrc; echo x > .vscode/tasks.json; "
                           "echo x > .git/hooks/post-merge; "
                           "echo x > .profile; true"),
                  in(t.ws));
  REQUIRE(r.result.sandboxed);
  // Quarantined (renamed in place, never deleted: the host may have written them), so the
  // tree is as before apart from the quarantined names.
  auto after = Tree::snapshot(t.root);
  std::erase_if(after, [](const auto& e) {
    return e.first.find(".paddock-quarantine-") != std::string::npos;
  });
  CHECK(after == before);
  std::string reported;
  for (const auto& v : r.result.violations) {
    CHECK(v.operation == "file-write");
    reported += v.path + " ";
  }
  INFO(reported);
  for (const char* created :
       {".vscode", ".idea", ".claude", ".mcp.json", ".gitmodules", ".zshrc", ".profile"}) {
    CHECK(reported.find(t.ws + "/" + created) != std::string::npos);
    CHECK_FALSE(fs::exists(t.ws + "/" + created));
  }
  // No stub was ever created on the host for them.
  CHECK_FALSE(fs::exists(t.ws + "/.mcp.json"));
}

TEST_CASE("attack: denied credentials and /etc/shadow are unreadable", "[attack][fs]") {
  Tree t;
  fs::create_directories(t.outside + "/home/.ssh");
  Tree::write(t.outside + "/home/.ssh/id_ed25519", "PRIVATE KEY\n");
  Tree::write(t.outside + "/home/.netrc", "machine x password hunter2\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.deny_read = {t.outside + "/home/.ssh", t.outside + "/home/.netrc"};
  test::Harness h(cfg);
  for (const auto& path : {t.outside + "/home/.ssh/id_ed25519", t.outside + "/home/.netrc",
                           std::string("/etc/shadow"), std::string("/etc/gshadow")}) {
    INFO(path);
    auto r = attack(h, t, {"read", path});
    require_denied(r);
    CHECK(r.stdout_data.find("PRIVATE") == std::string::npos);
    CHECK(r.stdout_data.find("hunter2") == std::string::npos);
    CHECK(r.stdout_data.find("root:") == std::string::npos);
  }
  auto ls = h.exec(test::sh("ls " + t.outside + "/home/.ssh"), in(t.ws));
  CHECK(ls.result.exit_code != 0);
  CHECK(ls.result.stdout_data.find("id_ed25519") == std::string::npos);
}

TEST_CASE("attack: the supervisor's /proc and processes are out of reach", "[attack][proc]") {
  Tree t;
  ::setenv("PADDOCK_ATTACK_SECRET", "s3cr3t-marker", 1);
  test::Harness h(sandbox_config());
  const std::string me = std::to_string(::getpid());
  auto r = h.exec(test::sh("cat /proc/" + me + "/environ; ls /proc | grep -c '^[0-9]'"), in(t.ws));
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.stdout_data.find("s3cr3t-marker") == std::string::npos);
  // Only the sandbox's own processes (the shell, ls, grep) are visible.
  CHECK(std::atoi(r.result.stdout_data.c_str()) <= 4);

  pid_t victim = ::fork();
  if (victim == 0) {
    ::execl("/bin/sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  require_denied(attack(h, t, {"kill", std::to_string(victim)}));
  require_denied(attack(h, t, {"ptrace", std::to_string(victim)}));
  require_denied(attack(h, t, {"ptrace", "1"}));
  CHECK(test::process_alive(victim));
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);
  ::unsetenv("PADDOCK_ATTACK_SECRET");
}

TEST_CASE("attack: no privilege from setuid binaries, mknod, mount or nested namespaces",
          "[attack][priv]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto before = Tree::snapshot(t.root);
  require_denied(attack(h, t, {"mknod", t.ws + "/null"}));
  CHECK_FALSE(fs::exists(t.ws + "/null"));
  require_denied(attack(h, t, {"mount", t.ws}));
  require_denied(attack(h, t, {"unshare-user"}));
  auto nested = h.exec(test::argv({"unshare", "-U", "-r", "true"}), in(t.ws));
  CHECK(nested.result.exit_code != 0);
  // setuid-root mount(8): with no_new_privs and nosuid it runs as us and cannot mount.
  auto su = h.exec(test::sh("mount -t tmpfs none " + t.ws +
                            " 2>&1; echo rc=$?; "
                            "su -c id root </dev/null 2>&1; echo rc=$?"),
                   in(t.ws));
  INFO(su.result.stdout_data);
  CHECK(su.result.stdout_data.find("rc=0") == std::string::npos);
  auto id = attack(h, t, {"euid"});
  CHECK(id.stdout_data.find("euid=" + std::to_string(::geteuid())) != std::string::npos);
  CHECK(Tree::snapshot(t.root) == before);
}

TEST_CASE("attack: io_uring and TIOCSTI are refused", "[attack][priv]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto uring = attack(h, t, {"io_uring"});
  require_denied(uring);
  CHECK(uring.stdout_data.find("EPERM") != std::string::npos);
  auto sti = attack(h, t, {"tiocsti"});
  require_denied(sti);
  CHECK(sti.stdout_data.find("EPERM") != std::string::npos);  // seccomp, not ENOTTY
}

TEST_CASE("attack: host unix sockets (path and abstract) are unreachable", "[attack][net]") {
  Tree t;
  // A listener on the host, by path inside the workspace and in the abstract namespace.
  std::string sock_path = t.ws + "/host.sock";
  int path_sock = bound_unix_socket(SOCK_STREAM, sock_path);
  REQUIRE(::listen(path_sock, 4) == 0);
  int abs_sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un b{};
  b.sun_family = AF_UNIX;
  std::string name = "paddock-attack-" + std::to_string(::getpid());
  std::memcpy(b.sun_path + 1, name.data(), name.size());
  REQUIRE(::bind(abs_sock, reinterpret_cast<sockaddr*>(&b),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) == 0);
  REQUIRE(::listen(abs_sock, 4) == 0);

  for (auto mode : {paddock::NetworkMode::blocked, paddock::NetworkMode::allowed}) {
    auto cfg = sandbox_config();
    cfg.sandbox.network.mode = mode;
    test::Harness h(cfg);
    require_denied(attack(h, t, {"unix-connect", sock_path}));
    require_denied(attack(h, t, {"abstract-connect", name}));
  }
  CHECK(::accept(path_sock, nullptr, nullptr) < 0);  // nobody connected
  CHECK(::accept(abs_sock, nullptr, nullptr) < 0);
  ::close(path_sock);
  ::close(abs_sock);
}

TEST_CASE("attack: blocked network reaches neither host loopback nor outside", "[attack][net]") {
  Tree t;
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof(a);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));

  test::Harness h(sandbox_config());
  require_denied(attack(h, t, {"tcp", "127.0.0.1", port}));
  require_denied(attack(h, t, {"tcp", "::1", port}));
  require_denied(attack(h, t, {"tcp", "1.1.1.1", "80"}));
  require_denied(attack(h, t, {"tcp", "10.0.0.1", "80"}));
  CHECK(::accept(listener, nullptr, nullptr) < 0);
  ::close(listener);

  // Loopback inside is the sandbox's own: up, and nothing of the host's listens there.
  // The namespace's own interfaces (/proc/net/dev is per network namespace): lo only, up.
  auto lo = h.exec(test::sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; "
                            "cat /proc/net/if_inet6 /proc/net/route"),
                   in(t.ws));
  INFO(lo.result.stdout_data);
  CHECK(lo.result.stdout_data.rfind("lo\n", 0) == 0);
  CHECK(lo.result.stdout_data.find("eth") == std::string::npos);
}

TEST_CASE("attack: a fork bomb is stopped by the process limit", "[attack][limits]") {
  Tree t;
  auto cfg = sandbox_config();
  cfg.sandbox.limits.processes = 64;
  test::Harness h(cfg);
  // 1,000 sleepers: the limit (64 by RLIMIT_NPROC; at most 300 for a root supervisor, whose
  // RLIMIT_NPROC the kernel ignores, through the namespace's pid_max) stops the loop.
  auto opts = in(t.ws);
  opts.timeout = 30s;
  // An odd duration as the marker: "sleep 20" also matched other suites' "sleep 200".
  auto r = h.exec(test::sh("n=0; while [ $n -lt 1000 ]; do sleep 20.0731 & n=$((n+1)); done; "
                           "echo started=$(jobs -p | wc -l)"),
                  opts);
  INFO(r.result.stdout_data << r.result.stderr_data);
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.stderr_data.find("fork") != std::string::npos);
  CHECK(r.result.duration < 25s);  // the shell gave up; it did not run into the timeout
  CHECK_FALSE(
      any_process_with("sleep 20.0731", r.result.pid));  // the namespace died with the shell
}

TEST_CASE("attack: a memory bomb is stopped by the memory limit", "[attack][limits]") {
  Tree t;
  auto cfg = sandbox_config();
  cfg.sandbox.limits.memory_bytes = 256ull << 20;
  test::Harness h(cfg);
  auto big = attack(h, t, {"alloc", "1024"});
  require_denied(big);
  auto small = attack(h, t, {"alloc", "16"});
  CHECK(small.exit_code == 0);
}

TEST_CASE("attack: the private /tmp, /var/tmp and /dev/shm share the memory limit",
          "[attack][limits]") {
  Tree t;
  auto cfg = sandbox_config();
  cfg.sandbox.limits.memory_bytes = 256ull << 20;
  test::Harness h(cfg);
  // Each alone at the limit would hold three times it in memory that RLIMIT_AS does not see.
  auto r = h.exec(test::sh("for d in /tmp /var/tmp /dev/shm; do "
                           "dd if=/dev/zero of=$d/fill bs=1M count=300 2>/dev/null; done; "
                           "du -smc /tmp/fill /var/tmp/fill /dev/shm/fill | tail -1"),
                  in(t.ws));
  REQUIRE(r.result.sandboxed);
  INFO(r.result.stdout_data << r.result.stderr_data);
  const long total_mib = std::strtol(r.result.stdout_data.c_str(), nullptr, 10);
  CHECK(total_mib > 0);
  CHECK(total_mib <= 256);
}

TEST_CASE("attack: a daemonised grandchild does not outlive the command or its timeout",
          "[attack][lifetime]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto opts = in(t.ws);
  opts.timeout = 1s;
  auto r = h.exec(test::sh("setsid sh -c 'exec sleep 4242' </dev/null >/dev/null 2>&1 & "
                           "sleep 60"),
                  opts);
  CHECK(r.result.timed_out);
  CHECK_FALSE(any_process_with("sleep 4242", r.result.pid));
  // Exiting normally with a daemon left behind: the daemon goes too.
  auto d = h.exec(test::sh("setsid sh -c 'exec sleep 4343' </dev/null >/dev/null 2>&1 & exit 0"),
                  in(t.ws));
  CHECK(d.result.exit_code == 0);
  CHECK_FALSE(any_process_with("sleep 4343", d.result.pid));
}

// A command completes on paddock-init's report, before the init's own exit: the init sends
// it only once nothing else is left in the namespace. Whatever the command left behind
// (daemonised, in its own session, just forked, or forking) is gone by the time its result is
// in, every time, in fresh sandboxes and in ones made ahead.
TEST_CASE("attack: nothing a command started is alive when its result arrives",
          "[attack][lifetime]") {
  Tree t;
  test::Harness h(sandbox_config());
  const std::string scripts[] = {
      "setsid sh -c 'exec sleep 5151' </dev/null >/dev/null 2>&1 & exit 0",
      "(sleep 5151 & sleep 5151 &) ; exit 0",
      "sh -c 'while :; do sleep 5151 & done' >/dev/null 2>&1 & sleep 0.05; exit 0",
  };
  for (int i = 0; i < 15; ++i) {
    for (const auto& script : scripts) {
      auto r = h.exec(test::sh(script), in(t.ws));
      INFO(script << " (run " << i << ")");
      REQUIRE(r.result.sandboxed);
      REQUIRE(r.result.pid > 0);
      REQUIRE_FALSE(any_process_with("sleep 5151", r.result.pid));
    }
  }
}

TEST_CASE("attack: the sandbox dies with its supervisor, even on kill -9", "[attack][lifetime]") {
  Tree t;
  pid_t supervisor = ::fork();
  if (supervisor == 0) {
    ::chdir(t.ws.c_str());
    ::execl(PADDOCK_BINARY, "paddock", "run", "--", "/bin/sleep", "4444", nullptr);
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!any_process_with("sleep 4444") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE(any_process_with("sleep 4444"));
  ::kill(supervisor, SIGKILL);
  ::waitpid(supervisor, nullptr, 0);
  deadline = std::chrono::steady_clock::now() + 5s;
  while (any_process_with("sleep 4444") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK_FALSE(any_process_with("sleep 4444"));
}

TEST_CASE("attack: as root, root-owned host files stay unreadable or unwritable",
          "[attack][root]") {
  if (::geteuid() != 0) {
    SUCCEED("not root: the unprivileged run covers the other side");
    return;
  }
  Tree t;
  REQUIRE(::chown(t.outside.c_str(), 0, 0) == 0);
  test::Harness h(sandbox_config());
  auto shadow = attack(h, t, {"read", "/etc/shadow"});
  require_denied(shadow);
  require_denied(attack(h, t, {"write", t.outside + "/file"}));
  require_denied(attack(h, t, {"write", "/etc/hostname"}));
  require_denied(attack(h, t, {"write", "/proc/sys/kernel/core_pattern"}));
  require_denied(attack(h, t, {"write", "/proc/sysrq-trigger"}));
  CHECK(Tree::read(t.outside + "/file") == "original\n");
}

TEST_CASE("attack: the clean-up of protected paths never follows a planted symlink",
          "[attack][fs]") {
  Tree t;
  // A host directory the command cannot even see, named like a protected path's last part.
  fs::create_directories(t.outside + "/victim/fish/sub");
  Tree::write(t.outside + "/victim/fish/sub/keep", "keep\n");
  test::Harness h(sandbox_config());
  // .config does not exist: .config/fish is watched. Point .config at the victim.
  auto r = h.exec(test::sh("ln -s " + t.outside + "/victim .config"), in(t.ws));
  REQUIRE(r.result.sandboxed);
  CHECK(Tree::read(t.outside + "/victim/fish/sub/keep") == "keep\n");
  CHECK_FALSE(fs::exists(fs::symlink_status(t.ws + "/.config")));  // the link itself went
  bool reported = false;
  for (const auto& v : r.result.violations) reported |= v.path == t.ws + "/.config";
  CHECK(reported);

  // A tree the command made hard to remove (unwritable directories) still goes.
  auto locked = h.exec(test::sh("mkdir -p .vscode/a/b && echo x > .vscode/a/b/tasks.json && "
                                "chmod 555 .vscode/a/b .vscode/a .vscode"),
                       in(t.ws));
  CHECK_FALSE(locked.ec);
  CHECK_FALSE(fs::exists(t.ws + "/.vscode"));
  // Quarantined with the modes the command gave it (nothing is deleted): make it removable
  // for ~Tree (as nobody, a 555 directory's entries cannot be unlinked).
  for (const auto& e : fs::directory_iterator(t.ws)) {
    if (e.path().filename().string().starts_with(".vscode.paddock-quarantine-")) {
      for (const auto& d : {e.path(), e.path() / "a", e.path() / "a" / "b"}) {
        ::chmod(d.c_str(), 0755);
      }
    }
  }
}

TEST_CASE("attack: a denied path's parent cannot be renamed away", "[attack][fs]") {
  Tree t;
  fs::create_directories(t.ws + "/proj/secrets");
  Tree::write(t.ws + "/proj/secrets/key", "TOPSECRET\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.deny_read = {t.ws + "/proj/secrets"};
  test::Harness h(cfg);
  auto mv = h.exec(test::sh("mv proj proj2; echo rc=$?; cat proj/secrets/key"), in(t.ws));
  INFO(mv.result.stdout_data << mv.result.stderr_data);
  CHECK(mv.result.stdout_data.find("rc=0") == std::string::npos);
  CHECK(mv.result.stdout_data.find("TOPSECRET") == std::string::npos);
  CHECK(fs::exists(t.ws + "/proj/secrets/key"));
}

TEST_CASE("attack: a working directory reached through a planted symlink is refused",
          "[attack][fs]") {
  Tree t;
  fs::create_directory_symlink(t.outside, t.ws + "/build");
  test::Harness h(sandbox_config());
  auto r = h.exec(test::sh("echo x > owned.txt"), in(t.ws + "/build"));
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK(r.result.error.find("symlink") != std::string::npos);
  CHECK_FALSE(fs::exists(t.outside + "/owned.txt"));
}

TEST_CASE("attack: the host's device nodes keep their modes", "[attack][priv]") {
  Tree t;
  struct stat null_before {
  }, full_before{};
  ::stat("/dev/null", &null_before);
  ::stat("/dev/full", &full_before);
  test::Harness h(sandbox_config());
  require_denied(attack(h, t, {"chmod", "/dev/null"}));
  require_denied(attack(h, t, {"chmod", "/dev/full"}));
  require_denied(attack(h, t, {"fchmod-stdin"}));  // stdin is /dev/null
  struct stat null_after {
  }, full_after{};
  ::stat("/dev/null", &null_after);
  ::stat("/dev/full", &full_after);
  CHECK(null_after.st_mode == null_before.st_mode);
  CHECK(full_after.st_mode == full_before.st_mode);
  // Still usable as devices.
  auto w = h.exec(test::sh("echo x > /dev/null && head -c 4 /dev/zero | wc -c"), in(t.ws));
  CHECK(w.result.stdout_data == "4\n");
}
