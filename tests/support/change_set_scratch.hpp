// Runs in a change-set sandbox (sandbox/change_set.hpp) on a git scratch tree: the config,
// a runner that insists the set was inspected whole, and what the result held back.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "support/git_scratch.hpp"
#include "support/harness.hpp"

namespace test {

// The sandbox with its change store inside the scratch tree (outside the workspace).
inline paddock::Config layered(const Scratch& s) {
  paddock::Config c = test::sandbox_config();
  c.sandbox.filesystem.change_store = s.root + "/store";
  c.sandbox.filesystem.home = s.root + "/home";  // the host's git runs with this home
  return c;
}

inline paddock::ExecResult run_layered(test::Harness& h, const Scratch& s, const std::string& cwd,
                                       const std::string& script) {
  auto r = h.exec(test::sh(s.env() + script), test::git_in(cwd));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  REQUIRE(r.result.changes.pending.empty());
  return r.result;
}

inline std::string held(const paddock::ExecResult& r) {
  std::string out;
  for (const auto& h : r.changes.held) out += h.path + ": " + h.reason + "\n";
  return out;
}

inline bool held_with(const paddock::ExecResult& r, const std::string& path,
                      const std::string& why) {
  for (const auto& h : r.changes.held) {
    if (h.path == path && h.reason.find(why) != std::string::npos) return true;
  }
  return false;
}

// The sets left in a store (held-back ones stay; applied ones are gone, or kept empty as
// spares: `spare.<hex>`, counted by spares_left).
inline std::size_t sets_left(const std::string& store, bool spares = false) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(store, ec)) {
    const bool spare = e.path().filename().string().rfind("spare.", 0) == 0;
    n += e.is_directory() && spare == spares ? 1 : 0;
  }
  return n;
}
inline std::size_t sets_left(const Scratch& s) { return sets_left(s.root + "/store"); }
inline std::size_t spares_left(const std::string& store) { return sets_left(store, true); }

inline void host_runs_nothing(const Scratch& s, const std::vector<std::string>& commands) {
  for (const auto& c : commands) {
    auto r = s.host(c);
    INFO(c << " -> " << r.status << ": " << r.text);
    CHECK(r.status != 137);
  }
  CHECK_FALSE(s.canary_appeared());
}

// A planted .git/index held back while the rest of the set (notes.txt) is applied, and the
// host's `git` (with `git_options`) restoring, checking out and committing in the workspace
// afterwards writes no hook and runs nothing planted.
inline void index_held(const paddock::ExecResult& r, const Scratch& s,
                       const std::string& git_options = "") {
  const std::string git = "cd " + s.ws + " && git " + git_options;
  INFO(held(r));
  CHECK(held_with(r, s.ws + "/.git/index", "git index"));
  CHECK(std::filesystem::exists(s.ws + "/notes.txt"));
  host_runs_nothing(s, {git + " restore . ; git " + git_options + " checkout -- . ; true",
                        git + " commit -q --allow-empty -m h"});
  CHECK_FALSE(std::filesystem::exists(s.ws + "/.git/hooks/pre-commit"));
}

}  // namespace test
