// Several sandboxes on one workspace at once (threads on one Manager, and separate `paddock
// run` processes): each one's audit must hold although the others change the workspace under
// it. The host's git afterwards runs nothing any of them planted.
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <future>
#include <thread>

#include "support/attack_fixture.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::Scratch;

namespace {

// What these tests attack is the audit after the fact: commands write the workspace directly
// (`sandbox.changeSets: false`, for file systems overlayfs cannot layer). The same classes
// against change sets, the default: test_change_sets.cpp.
paddock::Config sandbox_config() {
  paddock::Config c = test::sandbox_config();
  c.sandbox.filesystem.change_sets = false;
  return c;
}

using test::git_in;

// Shell: wait (at most ~10 s) until `cond` holds.
std::string wait_until(const std::string& cond) {
  return "i=0; until " + cond + "; do i=$((i+1)); [ $i -gt 400 ] && break; sleep 0.025; done; ";
}

// Polls (at most ~10 s) until `path` exists: the other sandbox got that far.
bool appears(const std::string& path) {
  for (int i = 0; i < 400 && !fs::exists(path); ++i) std::this_thread::sleep_for(25ms);
  return fs::exists(path);
}

// The first of two racers: `script` (which touches a-ready once set up) in a sandbox on the
// workspace, on a thread of its own; returns once it is ready.
std::future<paddock::BlockingResult> start_first(test::Harness& h, const Scratch& s,
                                                 std::string script) {
  auto first = std::async(std::launch::async, [&h, &s, script = std::move(script)] {
    return h.exec(test::sh(script), git_in(s.ws));
  });
  REQUIRE(appears(s.ws + "/a-ready"));
  return first;
}

// `script` in a sandbox on the workspace, on a thread of its own, held after `prelude` until
// release(): returns once it started, so the host can act on the workspace in between.
std::future<paddock::BlockingResult> start_held(test::Harness& h, const Scratch& s,
                                                std::string script, paddock::ExecOptions options,
                                                const std::string& prelude = "") {
  auto held = std::async(std::launch::async,
                         [&h, options = std::move(options),
                          script = prelude + "touch started; " + wait_until("[ -e go ]") + script] {
                           return h.exec(test::sh(script), options);
                         });
  REQUIRE(appears(s.ws + "/started"));
  return held;
}
void release(const Scratch& s) { test::Tree::write(s.ws + "/go", ""); }

// What every racer tries: a new repository with a planted config, a new rc file, a new
// config.worktree in the shared git dir.
std::string plant(const Scratch& s, int i) {
  const std::string n = std::to_string(i);
  return "git init -q n" + n + " && git -C n" + n + " config core.fsmonitor 'touch " + s.canary +
         "'; echo 'touch " + s.canary +
         "' > .zshrc; "
         "printf '[core]\\n\\tfsmonitor = touch " +
         s.canary +
         "\\n' > .git/config.worktree; "
         "mkdir -p shared && git init -q shared 2>/dev/null; "
         "git -C shared config core.fsmonitor 'touch " +
         s.canary + "' 2>/dev/null; true";
}

void host_unchanged(const Scratch& s, int racers) {
  CHECK_FALSE(fs::exists(s.ws + "/.zshrc"));
  CHECK_FALSE(fs::exists(s.ws + "/.git/config.worktree"));
  // Racers write shared/.git's config at once: one whose `git config` lost the lock leaves a
  // repository git runs nothing from, which the audit keeps by design (new_repository.hpp).
  // Whatever is left there must be that inert.
  if (fs::exists(s.ws + "/shared/.git")) {
    auto r = s.host("git -C " + s.ws + "/shared config --local --get core.fsmonitor");
    INFO("shared/.git kept: " << r.text);
    CHECK(r.status == 1);  // no such key
  }
  std::vector<std::string> dirs = {s.ws, s.ws + "/shared"};
  for (int i = 0; i < racers; ++i) {
    INFO(i);
    CHECK_FALSE(fs::exists(s.ws + "/n" + std::to_string(i) + "/.git"));
    dirs.push_back(s.ws + "/n" + std::to_string(i));
  }
  for (const auto& d : dirs) {
    auto r = s.host("cd " + d + " && git status && git commit -q --allow-empty -m host");
    INFO(d << ": " << r.text);
    CHECK(r.status != 137);
  }
  CHECK_FALSE(s.canary_appeared());
}

}  // namespace

TEST_CASE("git state: two and eight sandboxes at once on one Manager", "[attack][git][race]") {
  for (int racers : {2, 8}) {
    Scratch s;
    s.repo(s.ws);
    test::Harness h(sandbox_config());
    std::vector<std::future<paddock::BlockingResult>> runs;
    for (int i = 0; i < racers; ++i) {
      // All start, then all plant: each one's plan saw none of the others' files.
      std::string script =
          s.env() + "touch ready." + std::to_string(i) + "; " +
          wait_until("[ $(ls ready.* | wc -l) -ge " + std::to_string(racers) + " ]") + plant(s, i);
      runs.push_back(std::async(
          std::launch::async, [&h, &s, script] { return h.exec(test::sh(script), git_in(s.ws)); }));
    }
    for (auto& f : runs) {
      auto r = f.get();
      INFO(r.result.stderr_data << r.result.error);
      CHECK(r.result.sandboxed);
      CHECK_FALSE(r.ec);
    }
    host_unchanged(s, racers);
  }
}

TEST_CASE("git state: a second sandbox cannot rebuild what the first one's audit moved away",
          "[attack][git][race]") {
  // A creates .zshrc and r/.git; B starts while they exist (so its plan mounts them read-only);
  // A's audit quarantines them, which moves B's read-only mounts along; B then makes new ones.
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto a = start_first(h, s,
                       s.env() + "echo 'touch " + C +
                           "' > .zshrc; git init -q r; git -C r config core.fsmonitor 'touch " + C +
                           "'; touch a-ready; " + wait_until("[ -e b-started ]"));
  auto b = h.exec(test::sh(s.env() + "touch b-started; " +
                           wait_until("[ ! -e .zshrc ] && [ ! -e r/.git ]") + "echo 'touch " + C +
                           "' > .zshrc; echo zshrc=$?; git init -q r; "
                           "git -C r config core.fsmonitor 'touch " +
                           C + "'; echo git=$?"),
                  git_in(s.ws));
  auto ra = a.get();
  std::string seen;
  for (const auto& v : b.result.violations) seen += v.path + ": " + v.detail + "\n";
  for (const auto& v : ra.result.violations) seen += "A " + v.path + ": " + v.detail + "\n";
  INFO(b.result.stdout_data << b.result.stderr_data << b.result.error << seen);
  CHECK_FALSE(ra.ec);
  CHECK_FALSE(b.ec);
  CHECK_FALSE(fs::exists(s.ws + "/.zshrc"));
  CHECK_FALSE(fs::exists(s.ws + "/r/.git"));
  CHECK(Scratch::quarantined(s.ws, ".zshrc") >= 1);
  host_unchanged(s, 0);
  CHECK(s.host("cd " + s.ws + "/r && git status").status != 137);
  CHECK_FALSE(s.canary_appeared());
}

TEST_CASE("git state: separate paddock run processes on one workspace", "[attack][git][race]") {
  Scratch s;
  s.repo(s.ws);
  constexpr int kRacers = 4;
  // Written through, as the rest of this file (they coordinate through the workspace, which
  // each change set would keep to itself).
  test::Tree::write(s.root + "/through.json", "{\"sandbox\": {\"changeSets\": false}}\n");
  std::string script;
  for (int i = 0; i < kRacers; ++i) {
    std::string body = "touch ready." + std::to_string(i) + "; " +
                       wait_until("[ $(ls ready.* | wc -l) -ge " + std::to_string(kRacers) + " ]") +
                       plant(s, i);
    script += std::string(PADDOCK_BINARY) + " run --settings " + s.root + "/through.json --cwd " +
              s.ws + " -c '" + Scratch::quote(body) + "' > " + s.root + "/out." +
              std::to_string(i) + " 2>&1 & ";
  }
  auto r = s.host(script + "wait");
  INFO(r.text);
  for (int i = 0; i < kRacers; ++i) {
    INFO(s.host("cat " + s.root + "/out." + std::to_string(i)).text);
  }
  CHECK(r.status != 137);
  host_unchanged(s, kRacers);
}

TEST_CASE("git state: what the host writes at a protected path during a run is moved, never lost",
          "[attack][git][race]") {
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  auto run = std::async(std::launch::async, [&] {
    return h.exec(test::sh("touch started; " + wait_until("[ -e host-done ]")), git_in(s.ws));
  });
  for (int i = 0; i < 400 && !fs::exists(s.ws + "/started"); ++i) {
    std::this_thread::sleep_for(25ms);
  }
  // The host, not the command, creates .zshrc meanwhile: the audit cannot tell who wrote it
  // (the command could have), so it is quarantined, with its content, and reported.
  REQUIRE(s.host("echo host-data > " + s.ws + "/.zshrc && touch " + s.ws + "/host-done").status ==
          0);
  auto r = run.get();
  CHECK_FALSE(r.ec);
  CHECK_FALSE(fs::exists(s.ws + "/.zshrc"));
  std::string moved;
  for (const auto& v : r.result.violations) {
    if (v.path == s.ws + "/.zshrc") moved = v.detail;
  }
  INFO(moved);
  REQUIRE(moved.find("moved to ") != std::string::npos);
  const std::string to = moved.substr(moved.find("moved to ") + 9);
  CHECK(s.host("cat '" + to + "'").text == "host-data\n");
}

TEST_CASE("git state: a second sandbox cannot put back the HEAD the first one's audit moved",
          "[attack][git][race]") {
  // A makes a bare repository x (and a repository r) with a planted config; B starts while
  // they exist (its plan knows them as existing git dirs); A's audit disarms them by moving
  // HEAD (and r's .git); B then puts them back: a new HEAD, or the moved one renamed back.
  for (const std::string spelling : {"new", "rename"}) {
    Scratch s;
    s.repo(s.ws);
    test::Harness h(sandbox_config());
    const std::string C = s.canary;
    auto a = start_first(
        h, s,
        s.env() +
            "mkdir -p x/objects x/refs && echo 'ref: refs/heads/main' > x/HEAD && printf "
            "'[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = " +
            s.ws + "/x\\n\\tfsmonitor = \"touch " + C +
            "; false\"\\n' > x/config; git init -q r; git -C r config core.fsmonitor "
            "'touch " +
            C + "'; touch a-ready; " + wait_until("[ -e b-started ]"));
    const std::string restore =
        spelling == "new"
            ? "echo 'ref: refs/heads/main' > x/HEAD; echo put=$?; "
            : "mv x/HEAD.paddock-quarantine-* x/HEAD; echo put=$?; "
              "mv r/.git.paddock-quarantine-* r/.git && mv r/.git/HEAD.paddock-quarantine-* "
              "r/.git/HEAD && mv r/.git/config.paddock-quarantine-* r/.git/config; echo git=$?; ";
    auto b = h.exec(test::sh(s.env() + "touch b-started; " +
                             wait_until("[ ! -e x/HEAD ] && [ ! -e r/.git ]") + restore),
                    git_in(s.ws));
    auto ra = a.get();
    std::string seen;
    for (const auto& v : b.result.violations) seen += v.path + ": " + v.detail + "\n";
    INFO(spelling << ": " << b.result.stdout_data << b.result.stderr_data << b.result.error
                  << seen);
    CHECK_FALSE(ra.ec);
    CHECK(b.result.stdout_data.find("put=0") != std::string::npos);  // the attack was made
    CHECK_FALSE(fs::exists(s.ws + "/x/HEAD"));
    for (const auto& d : {s.ws + "/x", s.ws + "/r", s.ws}) {
      auto r = s.host("cd " + d + " && git status");
      INFO(d << ": " << r.text);
      CHECK(r.status != 137);
    }
    CHECK_FALSE(s.canary_appeared());
  }
}

TEST_CASE("a second sandbox cannot link back a start-up file the first one's audit moved",
          "[attack][race]") {
  // A creates .bashrc (one name), B starts while it exists (its plan mounts it read-only and
  // records its inode); A then gives it a second name `x`, and A's audit quarantines .bashrc,
  // which moves B's mount along. B links `x` back as .bashrc: the inode B recorded, now with
  // two names. Also the plain spelling: a .bashrc that already has a second name when a run
  // starts is refused outright.
  Scratch s;
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto a = start_first(h, s,
                       "echo 'touch " + C + "' > .bashrc; touch a-ready; " +
                           wait_until("[ -e b-started ]") + "ln .bashrc x");
  auto b = h.exec(test::sh("touch b-started; " + wait_until("[ ! -e .bashrc ]") +
                           "ln x .bashrc; echo linked=$?"),
                  git_in(s.ws));
  auto ra = a.get();
  INFO(b.result.stdout_data << b.result.stderr_data << b.result.error);
  CHECK_FALSE(ra.ec);
  CHECK_FALSE(b.ec);
  CHECK_FALSE(fs::exists(s.ws + "/.bashrc"));
  CHECK(Scratch::quarantined(s.ws, ".bashrc") >= 1);
  CHECK(s.host("HOME=" + s.ws + " bash -i -c true").status == 0);
  CHECK_FALSE(s.canary_appeared());

  // Two names when the run starts: refused, nothing runs.
  s.host("cd " + s.ws + " && echo 'touch " + C + "' > y && ln y .bashrc");
  auto c = h.exec(test::sh("echo ran"), git_in(s.ws));
  CHECK(c.ec == paddock::errc::config_invalid);
  CHECK(c.result.stdout_data.empty());
  CHECK(c.result.error.find("2 hard links") != std::string::npos);
}

TEST_CASE("git state: a protected file unlinked and linked back from outside is caught",
          "[attack][git][race]") {
  // A creates sub/.git after it started (so nothing of it is protected in A's mounts); B
  // starts while it exists (its config read-only in B's). A unlinks the config and links the
  // same inode back: the kernel drops B's read-only mount on the unlinked name (a mount point
  // in another mount namespace), and (dev, ino) are unchanged. B then writes the config. B's
  // audit must catch the change, and the host's git must run nothing.
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  const std::string C = s.canary;
  auto a =
      start_first(h, s,
                  s.env() + "git init -q sub && touch a-ready; " + wait_until("[ -e b-started ]") +
                      "ln sub/.git/config k && rm sub/.git/config && ln k sub/.git/config "
                      "&& rm k && echo relinked");
  auto b = std::async(std::launch::async, [&] {
    return h.exec(test::sh(s.env() + "touch b-started; " + wait_until("[ -e go ]") +
                           "printf '[core]\\n\\tfsmonitor = touch " + C +
                           "\\n' >> sub/.git/config; echo wrote=$?"),
                  git_in(s.ws));
  });
  auto ra = a.get();  // A and its audit are done (sub/.git was inert then: kept)
  INFO(ra.result.stdout_data << ra.result.stderr_data);
  REQUIRE(ra.result.stdout_data == "relinked\n");
  test::Tree::write(s.ws + "/go", "");
  auto rb = b.get();
  std::string seen;
  for (const auto& v : rb.result.violations) seen += v.path + ": " + v.detail + "\n";
  INFO(rb.result.stdout_data << rb.result.stderr_data << rb.result.error << seen);
  // Either the write failed, or the audit moved the changed config away.
  if (rb.result.stdout_data != "wrote=0\n")
    SUCCEED("the write failed");
  else
    CHECK(Scratch::quarantined(s.ws + "/sub/.git", "config") >= 1);
  CHECK(s.host("cd " + s.ws + "/sub && git status").status != 137);
  CHECK_FALSE(s.canary_appeared());
}

TEST_CASE("a protected symlink linked back from outside and re-pointed is caught",
          "[attack][git][race]") {
  // .envrc -> store/envrc is pinned as a link. The host (another mount namespace) unlinks it
  // and links the same inode back during the run: the pin is dropped here. The command then
  // re-points the name at its own file. The audit must move the new link away.
  Scratch s;
  s.repo(s.ws);
  fs::create_directories(s.ws + "/store");
  test::Tree::write(s.ws + "/store/envrc", "export SAFE=1\n");
  fs::create_symlink("store/envrc", s.ws + "/.envrc");
  test::Tree::write(s.ws + "/evil", "touch " + s.canary + "\n");
  test::Harness h(sandbox_config());
  auto run = start_held(h, s, "rm -f .envrc && ln -s evil .envrc; echo relinked=$?", git_in(s.ws));
  const std::string link = s.ws + "/.envrc", kept = s.root + "/envrc-link";
  REQUIRE(test::relink_from_outside(link, kept));
  release(s);
  auto r = run.get();
  std::string seen;
  for (const auto& v : r.result.violations) seen += v.path + ": " + v.detail + "\n";
  INFO(r.result.stdout_data << r.result.stderr_data << seen);
  // The host follows .envrc to the store again, or finds nothing there: never to `evil`.
  std::error_code ec;
  const auto target = fs::read_symlink(link, ec);
  CHECK((ec || target == "store/envrc"));
  CHECK(seen.find("dropped from outside") != std::string::npos);
}

TEST_CASE("what the host adds to a protected directory during a run stays where it is",
          "[git][race]") {
  // A directory's change time moves with every entry added: that is no evidence of anything,
  // and the host's own directory must not be moved aside for it.
  Scratch s;
  s.repo(s.ws);
  test::Harness h(sandbox_config());
  auto run = std::async(std::launch::async, [&] {
    return h.exec(test::sh("touch started; " + wait_until("[ -e go ]") + "true"), git_in(s.ws));
  });
  REQUIRE(appears(s.ws + "/started"));
  test::Tree::write(s.ws + "/.git/info/from-host", "kept\n");
  test::Tree::write(s.ws + "/.git/hooks/post-checkout.sample", "# sample\n");
  test::Tree::write(s.ws + "/go", "");
  auto r = run.get();
  CHECK(r.result.violations.empty());
  CHECK(test::Tree::read(s.ws + "/.git/info/from-host") == "kept\n");
  CHECK(Scratch::quarantined(s.ws + "/.git", "info") == 0);
  CHECK(Scratch::quarantined(s.ws + "/.git", "hooks") == 0);
}

TEST_CASE("a protected file's mount dropped while its sandbox is set up is caught",
          "[attack][git][race]") {
  // The host (any other mount namespace) unlinks .git/config and links the same inode back,
  // over and over, while fresh sandboxes start: a drop that lands after the child mounted the
  // read-only cover but before paddock-init opened its mount table left the init's counts
  // equal, and the command's write to the host's config went unreported (hostile review).
  // Every run must end with the write refused, or the config quarantined; the host's git
  // never runs what was written.
  Scratch s;
  s.repo(s.ws);
  auto cfg = sandbox_config();
  cfg.warm_sandboxes = 0;  // every sandbox made at its command's start
  test::Harness h(cfg);
  const std::string config = s.ws + "/.git/config", kept = s.root + "/config-link";
  const std::string clean = test::Tree::read(config);
  int wrote = 0, caught = 0;
  for (int i = 0; i < 12; ++i) {
    // The flicker stops once the command wrote (and before it ends): a host that re-linked
    // the inode after the audit moved it would put the planted file back itself.
    const std::string written = s.ws + "/written", stopped = s.ws + "/flicker-stopped";
    std::atomic<bool> returned{false};  // the command never started (its plan refused)
    std::thread flicker([&] {
      std::error_code ec;
      while (!fs::exists(written, ec) && !returned.load()) {
        test::relink_from_outside(config, kept);
        std::this_thread::sleep_for(300us);  // the plan's hard-link check sees one link
      }
      test::Tree::write(stopped, "");
    });
    auto r = h.exec(test::sh("printf '[core]\\n\\tfsmonitor = touch " + s.canary +
                             "\\n' >> .git/config 2>/dev/null; echo wrote=$?; touch written; " +
                             wait_until("[ -e flicker-stopped ]")),
                    git_in(s.ws));
    returned = true;
    flicker.join();
    fs::remove(written);
    fs::remove(stopped);
    std::string seen;
    for (const auto& v : r.result.violations) seen += v.raw + "\n";
    INFO("run " << i << ": " << r.result.stdout_data << r.result.error << "\n" << seen);
    if (r.result.stdout_data == "wrote=0\n") ++wrote;
    std::error_code ec;
    if (fs::exists(config, ec)) {
      // Never the planted line in the host's config: refused, or moved away.
      CHECK(test::Tree::read(config).find("fsmonitor") == std::string::npos);
    }
    if (Scratch::quarantined(s.ws + "/.git", "config") > 0) ++caught;
    // The next run starts from the host's own config again.
    s.host("cd " + s.ws + "/.git && rm -f config.paddock-quarantine-* " + kept);
    test::Tree::write(config, clean);
    CHECK(s.host("cd " + s.ws + " && git status").status == 0);
    CHECK_FALSE(s.canary_appeared());
  }
  INFO("writes that landed: " << wrote << ", caught: " << caught);
  CHECK(caught >= wrote);  // every write that landed was moved away
}

TEST_CASE("a mount dropped after the start check with no other mount event is caught",
          "[attack][git][race]") {
  // A fresh sandbox (none made ahead: nothing else mounts meanwhile) loses its cover of
  // .git/config after paddock-init's start check; the command writes the host's config. Only
  // the init's check at the end sees the drop, and it must read its table whatever the
  // kernel's change mark says: older kernels leave a namespace unmarked for a drop from
  // outside when no other mount moved the global event counter since its own last mount (CI:
  // a planted config stayed, 1 run in 12, in the flicker test above).
  Scratch s;
  s.repo(s.ws);
  auto cfg = sandbox_config();
  cfg.warm_sandboxes = 0;
  test::Harness h(cfg);
  for (int i = 0; i < 3; ++i) {
    auto run = start_held(
        h, s,
        "printf '[core]\\n\\tfsmonitor = touch " + s.canary + "\\n' >> .git/config; echo wrote=$?",
        git_in(s.ws));
    const std::string config = s.ws + "/.git/config", kept = s.root + "/config-link";
    const std::string clean = test::Tree::read(config);
    REQUIRE(test::relink_from_outside(config, kept));
    release(s);
    auto r = run.get();
    std::string seen;
    for (const auto& v : r.result.violations) seen += v.raw + "\n";
    INFO("run " << i << ": " << r.result.stdout_data << r.result.error << "\n" << seen);
    CHECK(r.result.stdout_data == "wrote=0\n");  // the cover was gone: the write landed
    CHECK(seen.find("mounts dropped") != std::string::npos);
    CHECK(Scratch::quarantined(s.ws + "/.git", "config") == 1);
    CHECK(test::Tree::read(config).find("fsmonitor") == std::string::npos);
    s.host("cd " + s.ws + "/.git && rm -f config.paddock-quarantine-* " + kept +
           " ../go ../started");
    test::Tree::write(config, clean);
    CHECK(s.host("cd " + s.ws + " && git status").status == 0);
    CHECK_FALSE(s.canary_appeared());
  }
}

TEST_CASE("a sandbox whose init is killed before it reports is audited as if mounts dropped",
          "[attack][git][race]") {
  // The host drops the read-only mount over .git/config during the run; the command ignores
  // SIGTERM, writes the host's config and outlives its timeout and grace, so paddock-init is
  // killed before it can report the drop. Nothing then says the mounts held: the audit
  // compares as after a drop (hostile review: the planted config stayed and the host's git
  // ran it).
  Scratch s;
  s.repo(s.ws);
  auto cfg = sandbox_config();
  cfg.kill_grace = 200ms;
  test::Harness h(cfg);
  auto o = git_in(s.ws);
  o.timeout = 1500ms;
  auto run = start_held(h, s,
                        "printf '[core]\\n\\tfsmonitor = touch " + s.canary +
                            "\\n' >> .git/config; echo wrote=$?; sleep 30",
                        o, "trap '' TERM; ");
  const std::string config = s.ws + "/.git/config", kept = s.root + "/config-link";
  REQUIRE(test::relink_from_outside(config, kept));
  release(s);
  auto r = run.get();
  std::string seen;
  for (const auto& v : r.result.violations) seen += v.raw + "\n";
  INFO(r.result.stdout_data << r.result.error << "\n" << seen);
  CHECK(r.result.timed_out);
  std::error_code ec;
  if (r.result.stdout_data.find("wrote=0") != std::string::npos) {
    CHECK(Scratch::quarantined(s.ws + "/.git", "config") >= 1);
  }
  if (fs::exists(config, ec))
    CHECK(test::Tree::read(config).find("fsmonitor") == std::string::npos);
  s.host("cd " + s.ws + " && git status");
  CHECK_FALSE(s.canary_appeared());
}

TEST_CASE("a mount hidden by a rename while the sandbox starts cannot balance a drop",
          "[attack][git][race]") {
  // Hostile review: /proc/PID/mountinfo leaves out a mount whose mount point a rename moved
  // out of a bind's root, with no mount event. A host mount in the workspace, hidden that way
  // while the sandbox started and shown again before the end, made the init's count come out
  // even although the read-only cover of .git/config was dropped meanwhile: the planted
  // config ran on the host. The init now checks the plan's mount points, not a count.
  if (::geteuid() != 0) {
    SUCCEED("needs a host mount in the workspace (root); the check itself runs everywhere");
    return;
  }
  // Not below the host's /tmp (a checkout there): the kernel will not overlay a tree with a
  // locked mount below it, so every sandbox started meanwhile would get an empty private /tmp.
  Scratch s("/var/cache/paddock-test-scratch-root");
  s.repo(s.ws);
  const std::string d = s.ws + "/d", out = s.root + "/d-out", m = s.ws + "/d/m";
  fs::create_directories(m);
  const test::HostTmpfs mount(m);
  REQUIRE(mount.mounted);
  test::Harness h(sandbox_config());
  const std::string config = s.ws + "/.git/config", kept = s.root + "/config-link";
  const std::string clean = test::Tree::read(config);
  for (int i = 0; i < 8; ++i) {  // the count-based check missed it about one run in three
    std::atomic<bool> stop{false};
    std::thread flip([&] {  // hide and show the host mount while the sandbox starts
      while (!stop.load()) {
        if (::rename(d.c_str(), out.c_str()) != 0) break;
        std::this_thread::sleep_for(1ms);
        ::rename(out.c_str(), d.c_str());
        std::this_thread::sleep_for(1ms);
      }
    });
    auto run = std::async(std::launch::async, [&] {
      return h.exec(test::sh("sleep 0.3; touch started; " + wait_until("[ -e go ]") +
                             "printf '[core]\\n\\tfsmonitor = touch " + s.canary +
                             "\\n' >> .git/config 2>/dev/null; echo wrote=$?"),
                    git_in(s.ws));
    });
    const bool started = appears(s.ws + "/started");
    stop = true;
    flip.join();  // the mount is shown again
    REQUIRE(started);
    REQUIRE(test::relink_from_outside(config, kept));  // the drop
    test::Tree::write(s.ws + "/go", "");
    auto r = run.get();
    std::string seen;
    for (const auto& v : r.result.violations) seen += v.raw + "\n";
    INFO("run " << i << ": " << r.result.stdout_data << r.result.error << "\n" << seen);
    std::error_code ec;
    if (fs::exists(config, ec)) {
      CHECK(test::Tree::read(config).find("fsmonitor") == std::string::npos);
    }
    if (r.result.stdout_data == "wrote=0\n") {
      CHECK(Scratch::quarantined(s.ws + "/.git", "config") >= 1);
    }
    CHECK(s.host("cd " + s.ws + " && git status").status == 0);
    CHECK_FALSE(s.canary_appeared());
    s.host("cd " + s.ws + "/.git && rm -f config.paddock-quarantine-*; rm -f " + s.ws +
           "/started " + s.ws + "/go");
    test::Tree::write(config, clean);
  }
}
