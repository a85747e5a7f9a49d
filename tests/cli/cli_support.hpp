// The paddock binary under test, run as a command by the tests' own Manager. It is not the
// untrusted command: it runs on the host and sets up its own sandbox (which it could not do
// nested inside ours).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/harness.hpp"

namespace test {

// Up to 64 MiB of paddock's output is kept, so a test can see a stream past paddock's caps.
inline paddock::BlockingResult paddock_cli(std::vector<std::string> args,
                                           paddock::ExecOptions options = {}) {
  static Harness h(host_config());
  args.insert(args.begin(), PADDOCK_BINARY);
  if (!options.max_output_bytes) options.max_output_bytes = 64 * 1024 * 1024;
  return h.exec(paddock::Command::exec(std::move(args)), std::move(options));
}

// A bash script run on the host with the paddock binary as $P: for pipelines, stdin,
// redirections and signals sent from outside, which need a shell around paddock. The
// harness's own timeout (60 s) is far above what any of these needs once it works, and far
// below paddock's default (600 s) that a pipeline which never ends would run into.
inline paddock::BlockingResult around_paddock(const std::string& script) {
  static Harness h(host_config());
  paddock::ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  options.env["P"] = PADDOCK_BINARY;
  // The sets the runs leave (held back by design, or a killed paddock's) go to the build's
  // store, as the library's tests' do (tests/CMakeLists.txt), never the user's own.
  // Outside the writable root a run from the suite's own directory has (the build, when the
  // suite is run by hand from there; ctest runs it from build/tests).
  const char* given = std::getenv("PADDOCK_CHANGE_STORE");
  std::string store = given != nullptr ? given : std::string(TEST_SCRATCH_DIR) + "/change-store";
  const std::string cwd = std::filesystem::current_path().string() + "/";
  if (store.rfind(cwd, 0) == 0) {
    store = "/var/tmp/paddock-test-changes-" + std::to_string(::geteuid());
  }
  options.env["PADDOCK_CHANGE_STORE"] = store;
  return h.exec(paddock::Command::exec({"/bin/bash", "-c", script}), options);
}

// around_paddock() with $d, a scratch directory under the host's /tmp, removed afterwards.
inline paddock::BlockingResult in_host_tmp(const std::string& script) {
  return around_paddock("d=$(mktemp -d); " + script + "; rm -rf $d");
}

// A script prologue: $d, a scratch directory outside /tmp (the runs' workspaces must be the
// host's own, so the host sees what a run applied), named <kind>-XXXXXX, with the workspace
// $d/ws (the cwd) and the change store $d/store; `setup` runs after, `cleanup` on exit
// before $d goes. The harness passes no variable of ours to the script: the base is spelled in.
inline std::string workspace_scratch(const std::string& kind, const std::string& setup = {},
                                     const std::string& cleanup = {}) {
  const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
  return std::string("set -u; base=") + (base != nullptr ? base : TEST_SCRATCH_DIR) +
         "; mkdir -p $base; d=$(mktemp -d $base/" + kind +
         "-XXXXXX) || exit 1; chmod 755 $d; mkdir $d/ws; export PADDOCK_CHANGE_STORE=$d/store; " +
         // in_layer NAME: waits (10 s at most) until a running command's write of NAME is in
         // its change set's layer; set_id: the id of the one set `paddock changes` lists.
         "in_layer() { for i in $(seq 1 400); do ls $d/store/*/roots/0/upper/\"$1\" >/dev/null "
         "2>&1 && return 0; sleep 0.025; done; return 1; };"
         " set_id() { $P changes list --json | sed 's/.*\"id\":\"\\([0-9a-f]*\\)\".*/\\1/'; }; " +
         setup + " trap '" + cleanup + " rm -rf $d' EXIT; cd $d/ws; ";
}

inline paddock::ExecOptions with_env(std::map<std::string, std::string> env) {
  paddock::ExecOptions o;
  o.env = std::move(env);
  return o;
}

inline int line_count(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace test
