// A session's apply (ApplyOptions::keep_layer, sandbox/change_staging.cpp): the layer stays
// mounted and its processes may still write it. What such an apply must never do: leave the
// set where `paddock changes` would take it from under the live sandbox, or run the process
// out of descriptors. Tagged [session]: the suite runs again as nobody.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sandbox/change_apply.hpp"
#include "sandbox/change_set.hpp"
#include "support/git_scratch.hpp"

namespace fs = std::filesystem;
using paddock::sandbox::ApplyOptions;
using paddock::sandbox::ChangeSetInfo;
using test::Scratch;

namespace {

struct KeptSet {
  Scratch s;
  std::string store = s.root + "/store";
  ChangeSetInfo set;
  KeptSet() {
    fs::create_directories(store);
    fs::permissions(store, fs::perms::owner_all);
    ChangeSetInfo proto;
    proto.roots.push_back(s.ws);
    proto.command = "test";
    set = paddock::sandbox::create_change_set(store, proto);
  }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = fs::path(set.upper(0)) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string state() const { return paddock::sandbox::load_change_set(store, set.id).state; }
};

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

}  // namespace

TEST_CASE("kept-layer apply: a failure leaves a session's set open, never pending",
          "[session][changes]") {
  KeptSet k;
  k.write("a.txt", "a\n");
  ApplyOptions options;
  options.keep_layer = true;
  options.max_entries = 0;  // the walk fails: nothing can be inspected whole
  const auto summary = paddock::sandbox::apply_change_set(k.set, options);
  CHECK_FALSE(summary.pending.empty());
  CHECK_FALSE(fs::exists(k.s.ws + "/a.txt"));
  // Still "open" (its owner, this process, is alive: `paddock changes` calls it running and
  // refuses it), the reason kept as its note.
  CHECK(k.state() == "open");
  CHECK(paddock::sandbox::load_change_set(k.store, k.set.id).note == summary.pending);
  // The same failure without a live layer: pending, for a person.
  options.keep_layer = false;
  paddock::sandbox::apply_change_set(k.set, options);
  CHECK(k.state() == "pending");
}

TEST_CASE("kept-layer apply: thousands of files take no descriptor each", "[session][changes]") {
  KeptSet k;
  constexpr int kFiles = 3000;
  for (int i = 0; i < kFiles; ++i) k.write("d/f" + std::to_string(i), std::to_string(i) + "\n");
  // Fewer descriptors than files: one held per staged file would fail with EMFILE.
  struct rlimit old;
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
  struct rlimit low = old;
  low.rlim_cur = open_descriptors() + 256;
  REQUIRE(low.rlim_cur < kFiles);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  ApplyOptions options;
  options.keep_layer = true;
  const auto summary = paddock::sandbox::apply_change_set(k.set, options);
  ::setrlimit(RLIMIT_NOFILE, &old);
  INFO(summary.pending);
  CHECK(summary.pending.empty());
  CHECK(summary.added == kFiles + 1);
  for (int i : {0, kFiles / 2, kFiles - 1}) {
    std::ifstream in(k.s.ws + "/d/f" + std::to_string(i));
    std::string line;
    std::getline(in, line);
    CHECK(line == std::to_string(i));
  }
  // The next apply copies nothing again: every entry is as the last one left it.
  const auto again = paddock::sandbox::apply_change_set(k.set, options);
  CHECK(again.added + again.modified + again.deleted == 0);
  CHECK(again.pending.empty());
}

TEST_CASE("kept-layer apply: what cannot be judged on the host is never applied",
          "[session][changes][attack]") {
  SECTION("a git directory under another name the supervisor cannot open") {
    // As nobody, a host directory of mode 0300 cannot be opened: its git files must not be
    // taken for absent (a config with fsmonitor then passing as a plain file).
    KeptSet k;
    const std::string gitdir = k.s.ws + "/meta/app.gitdir";
    for (const char* d : {"objects", "refs"}) fs::create_directories(gitdir + "/" + d);
    std::ofstream(gitdir + "/HEAD") << "ref: refs/heads/main\n";
    k.write("meta/app.gitdir/config", "[core]\n\tfsmonitor = touch " + k.s.canary + "\n");
    ::chmod(gitdir.c_str(), 0300);
    ApplyOptions options;
    options.keep_layer = true;
    const auto summary = paddock::sandbox::apply_change_set(k.set, options);
    ::chmod(gitdir.c_str(), 0755);
    CHECK(summary.added == 0);
    CHECK_FALSE(fs::exists(gitdir + "/config"));
  }
  SECTION("the host's git config that cannot be listed") {
    KeptSet k;
    k.write("notes.txt", "n\n");
    // A git that dies before it lists anything (as one out of descriptors would fail): its
    // config is not known. (No git at all is no failure: then nothing runs git's config.)
    const std::string bin = k.s.root + "/bin";
    fs::create_directories(bin);
    std::ofstream(bin + "/git") << "#!/bin/sh\nkill -9 $$\n";
    fs::permissions(bin + "/git",
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
    ::setenv("PATH", (bin + ":" + path).c_str(), 1);
    ApplyOptions options;
    options.keep_layer = true;
    const auto summary = paddock::sandbox::apply_change_set(k.set, options);
    ::setenv("PATH", path.c_str(), 1);
    CHECK(summary.pending.find("git config") != std::string::npos);
    CHECK_FALSE(fs::exists(k.s.ws + "/notes.txt"));
    CHECK(k.state() == "open");
    // No git at all: nothing names anything, the set applies.
    ::setenv("PATH", "/nonexistent", 1);
    const auto no_git = paddock::sandbox::apply_change_set(k.set, options);
    ::setenv("PATH", path.c_str(), 1);
    CHECK(no_git.pending.empty());
    CHECK(fs::exists(k.s.ws + "/notes.txt"));
  }
  SECTION("a directory the command made unreadable stays the owner's to open") {
    KeptSet k;
    k.write("d/f.txt", "f\n");
    ::chmod((k.set.upper(0) + "/d").c_str(), 0300);
    ApplyOptions options;
    options.keep_layer = true;
    const auto summary = paddock::sandbox::apply_change_set(k.set, options);
    ::chmod((k.set.upper(0) + "/d").c_str(), 0700);
    struct stat st;
    if (::stat((k.s.ws + "/d").c_str(), &st) == 0) {
      CHECK((st.st_mode & 0700) == 0700);  // applied: its owner can open it
    } else {
      CHECK_FALSE(summary.pending.empty());  // unprivileged: the layer itself unreadable
    }
  }
}

TEST_CASE("kept-layer apply: a dead session's set holds back what the host lacks",
          "[session][changes]") {
  KeptSet k;
  k.write("new.txt", "maybe deleted by the host after an apply\n");
  k.set.session = true;  // saved so; its record of what was applied went with its session
  paddock::sandbox::save_change_set(k.set);
  auto set = paddock::sandbox::load_change_set(k.store, k.set.id);
  CHECK(set.session);
  CHECK_FALSE(set.applied_known);
  const auto summary = paddock::sandbox::apply_change_set(set, ApplyOptions{});
  CHECK(summary.added == 0);
  REQUIRE(summary.held.size() == 1);
  CHECK(summary.held[0].reason.find("dead session") != std::string::npos);
  CHECK_FALSE(fs::exists(k.s.ws + "/new.txt"));
}
