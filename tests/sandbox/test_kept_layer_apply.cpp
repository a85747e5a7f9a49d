// A session's apply (ApplyOptions::keep_layer, sandbox/change_staging.cpp): the layer stays
// mounted and its processes may still write it. What such an apply must never do: leave the
// set where `paddock changes` would take it from under the live sandbox, or run the process
// out of descriptors. Tagged [session]: the suite runs again as nobody.
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
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
