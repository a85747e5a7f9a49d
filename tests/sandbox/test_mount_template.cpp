// Sandboxes made from a mount template (sandbox/linux/mount_template.hpp): the view of the host
// built once in a mount namespace the kernel copies into each sandbox. Each promise of it is
// attacked here, as root and (through the unprivileged suite) as an ordinary user:
//   - the same sandbox as one built step by step (its mount table, what it can read and write);
//   - nothing shared between two sandboxes of one template (/tmp, /dev/shm, processes);
//   - never an older host than a fresh build: a denied file replaced on the host, a host mount
//     made after the template, a mount point of the template dropped by the host;
//   - the host unchanged afterwards.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox/linux/mount_template.hpp"
#include "support/attack_fixture.hpp"

namespace fs = std::filesystem;
using test::in;
using test::sandbox_config;
using test::sh;
using test::Tree;

namespace {

paddock::Config with_templates(bool on) {
  paddock::Config c = sandbox_config();
  c.mount_templates = on;
  c.warm_sandboxes = 0;  // every command builds its sandbox: the template is what is tested
  return c;
}

// The mount table as the command sees it: mount point, read-only or not, file system type,
// sorted (ids and peer groups differ from one sandbox to the next).
constexpr const char* kMountTable =
    "awk '{ split($6, o, \",\"); for (i = 7; $i != \"-\"; i++); print $5, o[1], $(i + 1) }' "
    "/proc/self/mountinfo | sort";

std::uint64_t served() { return paddock::sandbox::mount_template_stats().served; }
std::uint64_t made() { return paddock::sandbox::mount_template_stats().made; }

}  // namespace

TEST_CASE("mount templates: a sandbox from a template is the one built step by step",
          "[sandbox][template]") {
  Tree t;
  Tree::write(t.ws + "/kept.txt", "kept\n");
  const std::string probe = std::string(kMountTable) +
                            "; id -u; ls -a /dev /root /home 2>&1; cat /etc/shadow 2>&1;"
                            " cat kept.txt; touch /usr/x 2>&1; echo t > /tmp/t; cat /tmp/t;"
                            " ls /tmp /var/tmp /dev/shm; echo written > made.txt";
  test::Harness stepwise(with_templates(false));
  test::Harness templated(with_templates(true));
  const auto before = served();
  auto a = stepwise.exec(sh(probe), in(t.ws));
  REQUIRE(served() == before);
  REQUIRE(fs::remove(t.ws + "/made.txt"));
  auto b = templated.exec(sh(probe), in(t.ws));
  REQUIRE(!a.ec);
  REQUIRE(!b.ec);
  INFO(paddock::sandbox::mount_template_stats().stopped_by);
  REQUIRE_FALSE(paddock::sandbox::mount_template_stats().stopped);
  REQUIRE(served() > before);
  INFO(b.result.stdout_data);
  REQUIRE(b.result.exit_code == 0);
  // Only what the sandbox's /proc covers differs: the host's, left writable for the id maps.
  // Other tests mount on the host under their scratch directories meanwhile (ctest -j; every
  // scratch base's name has "test-scratch" in it): those mounts come and go between the two
  // runs and are left out; this test's own tree is not.
  auto table = [&](std::string text) {
    std::istringstream lines(text);
    std::string out;
    for (std::string line; std::getline(lines, line);) {
      if (line.find("test-scratch") != std::string::npos && line.rfind(t.root + "/", 0) != 0 &&
          line.rfind(t.root + " ", 0) != 0) {
        continue;
      }
      if (line == "/proc rw proc" || line == "/proc ro proc") line = "/proc (host's) proc";
      out += line + "\n";
    }
    return out;
  };
  REQUIRE(table(b.result.stdout_data) == table(a.result.stdout_data));
  CHECK(b.result.stdout_data.find("Permission denied") != std::string::npos);  // /etc/shadow
  CHECK(Tree::read(t.ws + "/made.txt") == "written\n");  // its change set was applied
}

TEST_CASE("mount templates: two sandboxes of one template share no /tmp /dev/shm or process",
          "[sandbox][template]") {
  Tree t;
  test::Harness h(with_templates(true));
  auto first = h.exec(sh("echo a > /tmp/a; echo a > /var/tmp/a; echo a > /dev/shm/a;"
                         " sleep 30 & echo $! > /tmp/pid; ls /tmp /var/tmp /dev/shm"),
                      in(t.ws));
  REQUIRE(first.result.exit_code == 0);
  REQUIRE(first.result.stdout_data.find("a") != std::string::npos);
  auto second =
      h.exec(sh("ls -A /tmp /var/tmp /dev/shm; ps -e -o comm= | grep -c sleep"), in(t.ws));
  INFO(second.result.stdout_data);
  CHECK(second.result.stdout_data.find("\na\n") == std::string::npos);
  CHECK(second.result.stdout_data.find("pid") == std::string::npos);
  CHECK(second.result.stdout_data.find("\n0\n") != std::string::npos);  // no sleep of the first
}

TEST_CASE("mount templates: a denied file replaced on the host is covered in the next sandbox",
          "[sandbox][template]") {
  Tree t;
  const std::string secret = t.outside + "/secret.txt";
  Tree::write(secret, "first secret\n");
  paddock::Config c = with_templates(true);
  c.sandbox.filesystem.deny_read.push_back(secret);
  test::Harness h(c);
  auto read = [&] { return h.exec(sh("cat " + secret + " 2>&1; true"), in(t.ws)); };
  auto first = read();
  REQUIRE(!first.ec);
  CHECK(first.result.stdout_data.find("first secret") == std::string::npos);
  const auto made_before = made();

  SECTION("replaced by a rename (a new inode: a new template)") {
    Tree::write(secret + ".new", "second secret\n");
    fs::rename(secret + ".new", secret);
    auto second = read();
    INFO(second.result.stdout_data);
    CHECK(second.result.stdout_data.find("second secret") == std::string::npos);
    CHECK(made() > made_before);
  }
  SECTION("unlinked and the same inode linked back (the template's cover dropped)") {
    // Every identity still matches; the template lost its cover of the file. It is checked
    // before each use (MountTemplate::intact) and made again.
    REQUIRE(test::relink_from_outside(secret, t.outside + "/via"));
    auto third = read();
    INFO(third.result.stdout_data << third.ec.message() << third.result.stderr_data);
    CHECK(!third.ec);
    CHECK(third.result.stdout_data.find("first secret") == std::string::npos);
    CHECK(third.result.stdout_data.find("Permission denied") != std::string::npos);
    CHECK(made() > made_before);
  }
  CHECK(Tree::read(secret).find("secret") != std::string::npos);
}

TEST_CASE("mount templates: a host mount made after the template is in the next sandbox",
          "[sandbox][template]") {
  if (::geteuid() != 0) return;  // mounting on the host needs root
  Tree t;
  fs::create_directories(t.outside + "/mnt");
  test::Harness h(with_templates(true));
  auto list = [&] { return h.exec(sh("ls " + t.outside + "/mnt"), in(t.ws)); };
  REQUIRE(list().result.stdout_data.empty());
  test::HostTmpfs mounted(t.outside + "/mnt");
  REQUIRE(mounted.mounted);
  Tree::write(t.outside + "/mnt/on-the-new-mount", "x");
  auto after = list();
  INFO(after.ec.message() << after.result.stderr_data);
  CHECK(after.result.stdout_data == "on-the-new-mount\n");
}

// The template's steps run before every sandbox's own: a cover of the view where a sandbox
// mounts (a denied /tmp) or above it (a denied /var over /var/tmp) would have become the lower
// layer of a writable /tmp, or left /var/tmp no mount point (hostile review helper-54). Such
// plans run every step themselves, and are the same sandbox as without templates.
TEST_CASE("mount templates: a denied /tmp or /var is the same as without templates",
          "[sandbox][template]") {
  Tree t;
  for (const char* denied : {"/tmp", "/var"}) {
    std::string outcome[2];
    for (bool templates : {false, true}) {
      paddock::Config c = with_templates(templates);
      c.sandbox.filesystem.deny_read.push_back(denied);
      test::Harness h(c);
      auto r = h.exec(sh("echo x > /tmp/x && echo wrote-tmp; ls /var/tmp >/dev/null 2>&1 &&"
                         " echo listed-var-tmp; echo done"),
                      in(t.ws));
      outcome[templates] = r.ec.message() + "|" + r.result.stdout_data;
    }
    INFO(denied << ": step by step: " << outcome[0] << "\nfrom a template: " << outcome[1]);
    CHECK(outcome[1] == outcome[0]);
    // A denied /tmp is no scratch space, with a template or without.
    if (std::string(denied) == "/tmp") CHECK(outcome[1].find("wrote-tmp") == std::string::npos);
  }
}
