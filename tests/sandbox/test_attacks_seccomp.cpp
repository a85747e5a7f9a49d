// Attacks on what only seccomp stops, from inside a real sandbox: datagram sockets that could
// address any host socket path, and setuid/setgid files left in the workspace for whoever runs
// them later. Each spelling is tried, must fail, and the host is checked afterwards. Runs as
// root and (ctest entry unprivileged_supervision_suite) as nobody.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using test::attack;
using test::bound_unix_socket;
using test::in;
using test::require_denied;
using test::sandbox_config;
using test::Tree;

namespace {

// The permission bits as the host sees them; -1 when the path does not exist.
long host_mode(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_mode & 07777) : -1;
}

bool nothing_arrived(int host) {
  char buf[16];
  return ::recv(host, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

}  // namespace

TEST_CASE("attack: datagram sockets cannot reach host socket paths", "[attack][net]") {
  Tree t;
  std::string path = t.ws + "/log.sock";
  int host = bound_unix_socket(SOCK_DGRAM, path);
  ::chmod(path.c_str(), 0777);
  for (auto mode : {paddock::NetworkMode::blocked, paddock::NetworkMode::allowed}) {
    auto cfg = sandbox_config();
    cfg.sandbox.network.mode = mode;
    test::Harness h(cfg);
    for (const char* how :
         {"socketpair-dgram", "socketpair-raw", "socketpair-raw-flags", "socketpair-raw-high",
          "socketpair-type-6", "socket-dgram", "socket-raw"}) {
      INFO(how);
      auto r = attack(h, t, {"dgram-send", path, how});
      require_denied(r);
      CHECK(r.stdout_data.find("EPERM") != std::string::npos);  // refused by the filter
      CHECK(nothing_arrived(host));
    }
    // The pairs that stay allowed are connected: the address is refused or ignored.
    auto stream = attack(h, t, {"dgram-send", path, "socketpair-stream"});
    require_denied(stream);
    CHECK(stream.stdout_data.find("EISCONN") != std::string::npos);
    attack(h, t, {"dgram-send", path, "socketpair-seqpacket"});
    CHECK(nothing_arrived(host));
  }
  ::close(host);
}

TEST_CASE("attack: no spelling leaves a setuid or setgid file in the workspace",
          "[attack][setid]") {
  Tree t;
  const std::string victim = t.ws + "/victim";
  Tree::write(victim, "#!/bin/sh\nid\n");
  ::chmod(victim.c_str(), 0755);
  test::Harness h(sandbox_config());
  auto before = Tree::snapshot(t.root);

  for (const char* how :
       {"chmod-suid", "chmod-sgid", "chmod-high", "fchmod", "fchmodat", "fchmodat2"}) {
    INFO(how);
    auto r = attack(h, t, {"setid", how, victim});
    require_denied(r);
    CHECK(r.stdout_data.find("EPERM") != std::string::npos);
    CHECK(host_mode(victim) == 0755);
  }
  for (const char* how :
       {"open-creat", "openat-creat", "creat", "mknod", "mknodat", "tmpfile-link", "openat2"}) {
    INFO(how);
    const std::string made = t.ws + "/made-" + how;
    auto r = attack(h, t, {"setid", how, made});
    require_denied(r);
    // openat2 is refused as unknown (ENOSYS) so that callers fall back to openat.
    const char* why = std::string(how) == "openat2" ? "ENOSYS" : "EPERM";
    CHECK(r.stdout_data.find(why) != std::string::npos);
    CHECK(host_mode(made) == -1);
  }
  // The tools a command would really use, and a shell that tries them all (the snapshot
  // below also proves the hard links were not made).
  auto sh = h.exec(test::sh("cp victim v2; chmod 4755 v2; chmod u+s victim; chmod g+s victim; "
                            "install -m 6755 victim v3; mkdir -m 2755 d; "
                            "python3 -c 'import os; os.chmod(\"victim\", 0o4755)'; "
                            "ls -l v2 v3 victim; stat -c %a d; rm -rf v2 v3 d; "
                            // A hard link keeps a host setuid binary (and its bugs) alive past
                            // its upgrade: the workspace is another mount, so EXDEV.
                            "ln /usr/bin/su su; ln /usr/bin/passwd passwd"),
                   in(t.ws));
  INFO(sh.result.stdout_data << sh.result.stderr_data);
  REQUIRE(sh.result.sandboxed);
  CHECK(host_mode(victim) == 0755);
  CHECK(sh.result.stdout_data.find("rws") == std::string::npos);
  CHECK(sh.result.stdout_data.find("rwxr-s") == std::string::npos);
  CHECK(Tree::snapshot(t.root) == before);
}

TEST_CASE("attack: ordinary chmod still works in the workspace", "[attack][setid]") {
  Tree t;
  test::Harness h(sandbox_config());
  auto r = h.exec(test::sh("echo x > a; echo y > b; chmod 755 a && chmod 644 b && "
                           "chmod 700 . && chmod 755 . && mkdir -m 1777 shared && "
                           "python3 -c 'import os,stat; os.chmod(\"b\", os.stat(\"b\").st_mode "
                           "| stat.S_IXUSR)'"),
                  in(t.ws));
  INFO(r.result.stdout_data << r.result.stderr_data);
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.exit_code == 0);
  CHECK(host_mode(t.ws + "/a") == 0755);
  CHECK(host_mode(t.ws + "/b") == 0744);
  CHECK(host_mode(t.ws + "/shared") == 01777);
}

TEST_CASE("attack: file capabilities cannot be set (no CAP_SETFCAP after the drop)",
          "[attack][setid]") {
  Tree t;
  const std::string victim = t.ws + "/victim";
  Tree::write(victim, "#!/bin/sh\n");
  test::Harness h(sandbox_config());
  auto r = attack(h, t, {"setxattr", "security.capability", victim});
  require_denied(r);
  CHECK(r.stdout_data.find("EPERM") != std::string::npos);
  char buf[64];
  CHECK(::getxattr(victim.c_str(), "security.capability", buf, sizeof buf) < 0);
  CHECK(errno == ENODATA);
  // The same call from the host as root (with CAP_SETFCAP) works: the spelling is a real one,
  // and what refuses it in the sandbox is the capability drop.
  if (::geteuid() == 0) {
    const std::string control = t.outside + "/control";
    Tree::write(control, "#!/bin/sh\n");
    test::Harness host(test::host_config());
    auto ok = host.exec(test::argv({ATTACK_BINARY, "setxattr", "security.capability", control}),
                        in(t.ws));
    INFO(ok.result.stdout_data);
    CHECK(ok.result.exit_code == 0);
    CHECK(::getxattr(control.c_str(), "security.capability", buf, sizeof buf) > 0);
  }
  // Other attributes on the same file work: the refusal is about capabilities, not xattrs.
  auto user = attack(h, t, {"setxattr", "user.paddock", victim});
  INFO(user.stdout_data);
  if (user.stdout_data.find("ENOTSUP") == std::string::npos) CHECK(user.exit_code == 0);
}
