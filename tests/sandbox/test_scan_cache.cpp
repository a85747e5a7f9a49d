// The scan cache (sandbox/scan_cache.cpp) under attack: after a scan has cached every
// directory of a workspace, a command changes it in the ways that keep some inode, content or
// timestamp as it was; the next scan through the cache must decide exactly what a scan with
// no cache decides, and the audit through it must still quarantine what a command planted.
// Tagged [attack]: the suite runs again as nobody.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "sandbox/git_state.hpp"
#include "sandbox/post_run_audit.hpp"
#include "sandbox/scan_cache.hpp"
#include "support/attack_fixture.hpp"
#include "support/git_scratch.hpp"
#include "support/harness.hpp"
#include "support/package_tree.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using paddock::sandbox::GitState;
using paddock::sandbox::scan_git_state;
using paddock::sandbox::ScanCache;
using test::Scratch;

namespace {

// Far more than a tick (the ext4 scratch trees have nanosecond timestamps): the tests wait
// for it instead of the process cache's 2.5 s.
constexpr auto kTestSettle = 50ms;

void same_result(const GitState& cached, const GitState& fresh) {
  CHECK(cached.dot_git == fresh.dot_git);
  CHECK(cached.bare == fresh.bare);
  CHECK(cached.git_dirs == fresh.git_dirs);
  CHECK(cached.heads == fresh.heads);
  CHECK(cached.protect == fresh.protect);
}

bool protects(const GitState& g, const std::string& path) {
  return std::binary_search(g.protect.begin(), g.protect.end(), path);
}

// Scans through `cache` until a scan takes every directory from it (each must have settled
// first): polled with a deadline. Returns the directories that scan checked.
std::size_t warm(ScanCache& cache, const std::vector<std::string>& roots) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (true) {
    const auto before = cache.stats();
    scan_git_state(roots, {}, &cache);
    const auto after = cache.stats();
    if (after.misses == before.misses && after.hits > before.hits) return after.hits - before.hits;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(kTestSettle / 5);
  }
}

// The scan through the warm cache equals one without it; returns the fresh one. The cached
// scan must still take some directories from the cache (or this proves nothing).
GitState compare(ScanCache& cache, const std::vector<std::string>& roots) {
  const auto hits = cache.stats().hits;
  GitState cached = scan_git_state(roots, {}, &cache);
  GitState fresh = scan_git_state(roots, {}, nullptr);
  CHECK(cache.stats().hits > hits);
  same_result(cached, fresh);
  return fresh;
}

struct timespec mtime_of(const std::string& path) {
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mtim;
}

long long ctime_ns(const std::string& path) {
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec;
}

// A workspace with a repository at its top, a deep plain tree, a repository in a subtree,
// and a linked gitfile (`--separate-git-dir`) whose git dir lies outside.
void build(const Scratch& s) {
  s.repo(s.ws);
  auto r = s.host("mkdir -p " + s.ws + "/a/b/c/d " + s.ws + "/x && touch " + s.ws + "/a/b/c/d/f1 " +
                  s.ws + "/a/b/c/f2 && git init -q " + s.ws +
                  "/a/sub/r && git init -q --separate-git-dir " + s.root + "/gd1 " + s.ws +
                  "/w && git init -q --bare " + s.root + "/gd2");
  INFO(r.text);
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE(
    "scan cache: after a warm scan, every change a command can make is seen as a fresh "
    "walk sees it",
    "[attack][git][scan_cache]") {
  Scratch s;
  build(s);
  ScanCache cache(ScanCache::kDefaultMaxBytes, kTestSettle);
  const std::vector<std::string> roots{s.ws};
  REQUIRE(warm(cache, roots) >= 8);

  SECTION("a new repository deep in the tree") {
    REQUIRE(s.host("git init -q " + s.ws + "/a/b/c/d/deep").status == 0);
    CHECK(protects(compare(cache, roots), s.ws + "/a/b/c/d/deep/.git/config"));
  }
  SECTION("a gitfile rewritten in place to point at another git dir") {
    const long long dir_ctime = ctime_ns(s.ws + "/w");
    Scratch::Out r = s.host("printf 'gitdir: " + s.root + "/gd2\\n' >" + s.ws + "/w/.git");
    REQUIRE(r.status == 0);
    CHECK(ctime_ns(s.ws + "/w") == dir_ctime);  // the directory did not change, the file did
    GitState g = compare(cache, roots);
    CHECK(protects(g, s.root + "/gd2/config"));
    CHECK_FALSE(protects(g, s.root + "/gd1/config"));
  }
  SECTION("a commondir rewritten in place") {
    REQUIRE(s.host("echo " + s.root + "/gd2 >" + s.root + "/gd1/commondir").status == 0);
    CHECK(protects(compare(cache, roots), s.root + "/gd2/hooks"));
  }
  SECTION("a subtree holding a repository renamed elsewhere in the tree") {
    REQUIRE(s.host("mv " + s.ws + "/a/sub " + s.ws + "/x/moved").status == 0);
    GitState g = compare(cache, roots);
    CHECK(protects(g, s.ws + "/x/moved/r/.git/config"));
    CHECK_FALSE(protects(g, s.ws + "/a/sub/r/.git/config"));
  }
  SECTION("a subtree renamed in, from outside the workspace") {
    REQUIRE(
        s.host("git init -q " + s.root + "/out/r && mv " + s.root + "/out " + s.ws + "/a/b/c/in")
            .status == 0);
    CHECK(protects(compare(cache, roots), s.ws + "/a/b/c/in/r/.git/config"));
  }
  SECTION("a .git added, then the directory's mtime set back to what the cache saw") {
    const std::string dir = s.ws + "/a/b/c";
    const struct timespec old = mtime_of(dir);
    REQUIRE(s.host("git init -q " + s.root + "/t && mv " + s.root + "/t/.git " + dir + "/.git")
                .status == 0);
    const struct timespec times[2] = {{0, UTIME_OMIT}, old};
    REQUIRE(::utimensat(AT_FDCWD, dir.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
    CHECK(mtime_of(dir).tv_sec == old.tv_sec);
    CHECK(mtime_of(dir).tv_nsec == old.tv_nsec);
    CHECK(protects(compare(cache, roots), dir + "/.git/config"));
  }
  SECTION("a gitfile replaced by a git dir, and a git dir by a gitfile") {
    REQUIRE(s.host("rm " + s.ws + "/w/.git && git init -q " + s.ws + "/w && rm -rf " + s.ws +
                   "/a/sub/r/.git && printf 'gitdir: " + s.root + "/gd2\\n' >" + s.ws +
                   "/a/sub/r/.git")
                .status == 0);
    GitState g = compare(cache, roots);
    CHECK(protects(g, s.ws + "/w/.git/config"));
    CHECK(protects(g, s.ws + "/a/sub/r/.git"));
    CHECK(protects(g, s.root + "/gd2/config"));
  }
  SECTION("a directory replaced by a symlink (to a repository outside, and to one inside)") {
    REQUIRE(s.host("mv " + s.ws + "/a/sub " + s.root + "/sub && ln -s " + s.root + "/sub " + s.ws +
                   "/a/sub && rm -rf " + s.ws + "/a/b/c/d && ln -s ../../sub " + s.ws + "/a/b/c/d")
                .status == 0);
    GitState g = compare(cache, roots);
    CHECK_FALSE(protects(g, s.ws + "/a/sub/r/.git/config"));
  }
  SECTION("a .git directory replaced by a symlink to another git dir") {
    REQUIRE(s.host("rm -rf " + s.ws + "/a/sub/r/.git && ln -s " + s.root + "/gd2 " + s.ws +
                   "/a/sub/r/.git")
                .status == 0);
    CHECK(protects(compare(cache, roots), s.root + "/gd2/config"));
  }
  SECTION("a bare repository made out of a plain directory") {
    REQUIRE(s.host("cd " + s.ws + "/a/b && mkdir objects refs && echo 'ref: refs/heads/m' >HEAD")
                .status == 0);
    GitState g = compare(cache, roots);
    CHECK(std::count(g.bare.begin(), g.bare.end(), s.ws + "/a/b") == 1);
  }
}

TEST_CASE("scan cache: the audit through a warm cache quarantines a planted repository",
          "[attack][git][scan_cache]") {
  Scratch s;
  build(s);
  ScanCache cache(ScanCache::kDefaultMaxBytes, kTestSettle);
  REQUIRE(warm(cache, {s.ws}) >= 8);
  paddock::sandbox::AuditPlan plan;
  plan.git = scan_git_state({s.ws}, {}, &cache);
  REQUIRE(plan.git.cache == &cache);
  // What a command would do: a repository whose config runs a program, its parent's mtime
  // set back; a FIFO where git opens .gitattributes, in a directory the cache knows.
  const std::string dir = s.ws + "/a/b/c/d";
  const struct timespec old = mtime_of(dir);
  REQUIRE(s.host("git init -q " + dir + "/evil && git -C " + dir +
                 "/evil config core.fsmonitor 'touch " + s.canary + "' && mkfifo " + s.ws +
                 "/x/.gitattributes")
              .status == 0);
  const struct timespec times[2] = {{0, UTIME_OMIT}, old};
  REQUIRE(::utimensat(AT_FDCWD, dir.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
  auto report = paddock::sandbox::audit_after_command(plan, "test");
  CHECK(report.failure.empty());
  CHECK(Scratch::quarantined(dir + "/evil", ".git") == 1);
  CHECK(Scratch::quarantined(s.ws + "/x", ".gitattributes") == 1);
  CHECK(std::any_of(report.violations.begin(), report.violations.end(),
                    [&](const auto& v) { return v.path == dir + "/evil/.git"; }));
}

TEST_CASE("scan cache: concurrent scans through one cache agree with a fresh scan",
          "[git][scan_cache]") {
  Scratch s;
  build(s);
  ScanCache cache(ScanCache::kDefaultMaxBytes, kTestSettle);
  warm(cache, {s.ws});
  const GitState fresh = scan_git_state({s.ws}, {}, nullptr);
  std::vector<GitState> results(4);
  {
    std::vector<std::jthread> threads;
    for (auto& r : results) {
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i) r = scan_git_state({s.ws}, {}, &cache);
      });
    }
  }
  for (const auto& r : results) same_result(r, fresh);
}

TEST_CASE("scan cache: bounded in memory, least recently used first out", "[scan_cache]") {
  Scratch s;
  for (int i = 0; i < 50; ++i) fs::create_directories(s.ws + "/d" + std::to_string(i) + "/e");
  // Room for a few listings only: the cache stays under it and the scans stay right.
  ScanCache cache(2048, kTestSettle);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (cache.stats().evicted == 0) {
    scan_git_state({s.ws}, {}, &cache);
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(kTestSettle / 5);
  }
  CHECK(cache.stats().bytes <= 2048);
  same_result(scan_git_state({s.ws}, {}, &cache), scan_git_state({s.ws}, {}, nullptr));
}

TEST_CASE("scan cache: the bound counts work, past it the error says what to do",
          "[git][scan_cache]") {
  Scratch s;
  REQUIRE(test::make_package_tree(s.ws, 2000));
  paddock::sandbox::GitScanLimits small;
  small.entries = 1000;
  ScanCache cache(ScanCache::kDefaultMaxBytes, kTestSettle);
  // Cold, every entry is listed: past the bound, refused, with the way out.
  CHECK_THROWS_WITH(scan_git_state({s.ws}, small, &cache),
                    Catch::Contains("more than 1000 directory entries") &&
                        Catch::Contains("not run") && Catch::Contains("writable roots smaller") &&
                        Catch::Contains("node_modules"));
  // Warm, each of its ~80 directories counts once: the same complete walk, within the bound.
  const std::size_t dirs = warm(cache, {s.ws});
  CHECK(dirs < 1000);
  same_result(scan_git_state({s.ws}, small, &cache), scan_git_state({s.ws}, {}, nullptr));
}

// 300k files: each run walks the tree before and after the command. Creating it takes most
// of the time (~10 s on 2 loaded cores).
TEST_CASE(
    "scan cache: a sandboxed command runs in a workspace of 300k files, and the audit "
    "still finds a repository planted deep in it",
    "[attack][git][scan_cache][.slow]") {
  Scratch s;
  s.repo(s.ws);
  REQUIRE(test::make_package_tree(s.ws, 300'000));
  paddock::Config through = test::sandbox_config();
  through.sandbox.filesystem.change_sets = false;  // the audit is what this test checks
  test::Harness h(through);
  for (int i = 0; i < 2; ++i) {  // cold, then warm
    auto r = h.exec(test::sh("true"), test::in(s.ws));
    INFO(r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.exit_code == 0);
  }
  const std::string deep = s.ws + "/node_modules/package-2999/lib/internal";
  auto r = h.exec(test::sh("mkdir -p x/.git/objects x/.git/refs && echo 'ref: refs/heads/m' "
                           ">x/.git/HEAD && printf '[core]\\n\\tfsmonitor = touch " +
                           s.canary + "\\n' >x/.git/config"),
                  test::in(deep));
  CHECK(Scratch::quarantined(deep + "/x", ".git") == 1);
  CHECK(std::any_of(r.result.violations.begin(), r.result.violations.end(),
                    [&](const auto& v) { return v.path == deep + "/x/.git"; }));
}

TEST_CASE("scan cache: a directory changed less than `settle` before its listing is not kept",
          "[git][scan_cache]") {
  Scratch s;
  build(s);
  // Coarse timestamps: a change in the same tick as the last one may leave ctime as it was,
  // so a listing of a recently changed directory could be stale under an unchanged key.
  ScanCache cache(ScanCache::kDefaultMaxBytes, std::chrono::hours(1));
  for (int i = 0; i < 3; ++i) scan_git_state({s.ws}, {}, &cache);
  CHECK(cache.stats().stored == 0);
  CHECK(cache.stats().hits == 0);
  CHECK(cache.stats().too_recent >= 3 * 8);
}

TEST_CASE("scan cache: only file systems that keep ctime locally are cached", "[scan_cache]") {
  Scratch s;
  auto on = [](const char* path) {
    int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const bool yes = ScanCache::cacheable_fs(fd);
    ::close(fd);
    return yes;
  };
  CHECK(on(s.ws.c_str()));  // ext4 (the scratch tree) or tmpfs
  CHECK_FALSE(on("/proc"));
  CHECK_FALSE(on("/sys"));
}
