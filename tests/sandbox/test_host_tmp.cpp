// The host's /tmp in the sandbox: an overlay (the host's entries read-only, every write
// private). What a hostile host-side actor or the kernel can do around it: renames in the
// host's /tmp while a sandbox is set up must not move where a workspace under it is attached,
// and a /tmp the kernel will not overlay (mounts below it) becomes an empty private tmpfs.
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using test::host_shell;
using test::in;
using test::sandbox_config;
using test::Tree;

namespace {

// A directory of the host's /tmp (or /var/tmp) itself, whatever TMPDIR says: what the tests
// are about lives there.
struct HostTmpDir {
  explicit HostTmpDir(const std::string& under) {
    std::string tmpl = under + "/paddock-host-tmp-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
    ::chmod(path.c_str(), 0755);
  }
  ~HostTmpDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

}  // namespace

TEST_CASE("attack: a directory above the workspace flipped for a symlink while plans are made",
          "[attack][fs][race][tmp][git]") {
  // Another sandbox writing above the workspace (its root is `d`, this one's `d/a/ws`), or
  // the host, renames `a` away, puts a symlink to a decoy there, and puts `a` back, as fast as
  // it can. A plan that resolved the workspace by name saw `a/ws/.git` missing at one instant
  // ("not a repository": no cover on .git/config) and the child attached the real workspace
  // a moment later: the command wrote the real .git/config and the host's git ran it. The plan
  // and the audit now look below a writable root only through its descriptor. Where the
  // workspace itself is a mount point in the host's /tmp, the sandbox's merged /tmp must not
  // let the rename move it either (its mount points are made in the private upper layer).
  HostTmpDir d("/tmp");
  const std::string a = d.path + "/a", ws = a + "/ws", parked = d.path + "/parked";
  const std::string decoy = d.path + "/decoy/ws";  // a legitimate place to land: inside `d`
  fs::create_directories(ws);
  fs::create_directories(decoy + "/.git");
  REQUIRE(host_shell("git init -q " + ws) == 0);
  const std::string clean = Tree::read(ws + "/.git/config");
  test::Harness h(sandbox_config());

  // Every other command runs with the flipper paused and `a` the real directory: those must
  // simply work (so the test proves it ran both ways, not only refusals).
  test::Racer flip([&] {
    if (::rename(a.c_str(), parked.c_str()) != 0) return;
    ::symlink("decoy", a.c_str());
    ::unlink(a.c_str());
    while (::rename(parked.c_str(), a.c_str()) != 0) std::this_thread::yield();
  });
  int ran_flipping = 0, ran_paused = 0, in_decoy = 0;
  std::vector<std::string> in_ws;  // checked once the flipper has stopped
  for (int i = 0; i < 40; ++i) {
    const bool flip_now = i % 2 == 0;
    flip.race(flip_now);
    const std::string marker = "marker-" + std::to_string(i);
    auto r = h.exec(test::sh("pwd; printf '[core]\\n\\tfsmonitor = touch planted\\n' >> "
                             ".git/config 2>/dev/null && echo CONFIG-WRITTEN; echo x > " +
                             marker),
                    in(ws));
    if (!flip_now) CHECK_FALSE(r.ec);
    if (r.ec || r.result.exit_code != 0) continue;  // refused while the host renamed: fine
    ++(flip_now ? ran_flipping : ran_paused);
    const std::string where = r.result.stdout_data.substr(0, r.result.stdout_data.find('\n'));
    if (where == decoy) {  // planned while `a` was the link: the decoy is where it ran
      ++in_decoy;
      continue;
    }
    CHECK(where == ws);
    CHECK(r.result.stdout_data.find("CONFIG-WRITTEN") == std::string::npos);
    in_ws.push_back(marker);
  }
  flip.race(false);
  REQUIRE(fs::is_directory(ws));
  for (const auto& marker : in_ws) CHECK(fs::exists(ws + "/" + marker));
  // The host's git finds its config as it was and runs nothing.
  CHECK(Tree::read(ws + "/.git/config") == clean);
  CHECK(host_shell("git -C " + ws + " status --short") == 0);
  CHECK_FALSE(fs::exists(ws + "/planted"));
  CHECK(ran_paused == 20);
  WARN("while the host renamed: " << ran_flipping << " of 20 ran (" << in_decoy
                                  << " in the decoy)");
}

TEST_CASE("attack: the workspace exchanged with a decoy directory while plans are made",
          "[attack][fs][race][tmp][git]") {
  // The same with two real directories swapped by RENAME_EXCHANGE (no symlink for
  // RESOLVE_NO_SYMLINKS to catch): the working directory was identified by name before its
  // root was opened, so a swap in between had the policy scan the decoy (no .git: nothing
  // protected) and the child attach the identified, real workspace (hostile review, shown
  // with a debugger pinning the timing). Seen through its root it must be the identified one.
  // The window is microseconds: free running this rarely wins it, but whatever it wins must
  // never reach the real .git.
  HostTmpDir d("/tmp");
  const std::string a = d.path + "/a", b = d.path + "/b", ws = a + "/ws";
  fs::create_directories(ws);
  fs::create_directories(b + "/ws");
  REQUIRE(host_shell("git init -q " + ws) == 0);
  const std::string clean = Tree::read(ws + "/.git/config");
  test::Harness h(sandbox_config());
  // Swapping during every other command; the others (paused, `a` the real one) must work.
  std::atomic<int> swaps{0};
  const auto exchange = [&] {
    return ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
  };
  test::Racer flip([&] { swaps += exchange() ? 1 : 0; },
                   [&] { return fs::exists(ws + "/.git"); });  // paused: the real one at `a`
  int ran_swapping = 0, ran_paused = 0;
  for (int i = 0; i < 40; ++i) {
    const bool swap_now = i % 2 == 0;
    flip.race(swap_now);
    auto r =
        h.exec(test::sh("printf '[core]\\n\\tfsmonitor = touch planted\\n' >> .git/config "
                        "2>/dev/null && echo CONFIG-WRITTEN; echo hook > .git/hooks/pre-commit "
                        "2>/dev/null && echo HOOK-WRITTEN; true"),
               in(ws));
    if (!swap_now) CHECK_FALSE(r.ec);
    if (r.ec) continue;
    ++(swap_now ? ran_swapping : ran_paused);
    // Run in the decoy (no .git there when planned), the writes land in that change set and
    // are held back: what counts is the real .git below, unchanged. Unswapped, they fail.
    if (swap_now) continue;
    CHECK(r.result.stdout_data.find("CONFIG-WRITTEN") == std::string::npos);
    CHECK(r.result.stdout_data.find("HOOK-WRITTEN") == std::string::npos);
  }
  flip.race(false);
  REQUIRE(fs::exists(ws + "/.git"));
  CHECK(Tree::read(ws + "/.git/config") == clean);
  CHECK_FALSE(fs::exists(ws + "/.git/hooks/pre-commit"));
  CHECK(host_shell("git -C " + ws + " status --short") == 0);
  CHECK_FALSE(fs::exists(ws + "/planted"));
  CHECK(ran_paused == 20);
  WARN("while swapping: " << ran_swapping << " of 20 ran; directories swapped " << swaps
                          << " times");
}

TEST_CASE("a mount below the host's /var/tmp: the sandbox's /var/tmp is private and empty",
          "[fs][tmp]") {
  // Mounts inherited into a user namespace are locked: the kernel will not overlay a tree
  // with locked mounts below it (that would show what they hide). The command still runs,
  // with an empty private /var/tmp, and /tmp is unaffected.
  if (::geteuid() != 0 || !fs::is_directory("/var/tmp")) {
    SUCCEED("needs a host mount below /var/tmp (root)");
    return;
  }
  HostTmpDir vd("/var/tmp"), td("/tmp");
  Tree::write(vd.path + "/f", "var\n");
  Tree::write(td.path + "/f", "tmp\n");
  const std::string m = vd.path + "/m";
  fs::create_directory(m);
  const test::HostTmpfs mount(m);
  REQUIRE(mount.mounted);
  Tree t;
  test::Harness h(sandbox_config());
  auto r = h.exec(test::sh("cat " + vd.path + "/f 2>/dev/null || echo var-hidden; cat " + td.path +
                           "/f; echo w > /var/tmp/own && cat /var/tmp/own"),
                  in(t.ws));
  CHECK_FALSE(r.ec);
  CHECK(r.result.stdout_data == "var-hidden\ntmp\nw\n");
  CHECK_FALSE(fs::exists("/var/tmp/own"));
}
