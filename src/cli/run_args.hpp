// What `paddock run` was asked to do, shared by the local run (run_command.cpp) and the run
// through a daemon (connect_client.cpp, --connect).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "paddock/settings.hpp"

namespace paddock::cli {

struct RunArgs {
  std::vector<std::string> argv;
  std::string shell;
  std::string shell_program;  // --shell PATH: what runs -c STRING (default: bash when present)
  std::string cwd;
  std::vector<std::string> env;
  std::optional<std::chrono::milliseconds> timeout;  // parse_timeout(): never 0, nan or inf
  std::optional<std::size_t> max_output;             // parse_byte_count(): never 0
  bool json = false;
  std::string stdin_mode = "auto";  // auto (inherit unless a terminal), inherit, none
  bool yes = false;                 // approve an escalated command without asking
  bool helper = false;              // --helper: through this user's helper (run_helper.hpp)
  bool no_helper = false;           // --no-helper: in this process, whatever PADDOCK_HELPER says
  // Policy: the profile is the base, the settings file goes on top, then the flags.
  std::string profile = "default";
  std::string settings;
  PolicyFlags policy;
  // Through a daemon (`paddock serve`) instead of here: unix:PATH or tcp:HOST:PORT.
  std::string connect;
  std::string token_file;
  // In this session of the daemon (`paddock session run`): its cwd and policy, not ours.
  std::string session;
};

// A `paddock run` helper (run_helper.cpp) in place of the daemon --connect names: its policy
// is the caller's own (nothing to narrow, no flag refused), the caller's environment goes with
// the command, and -c STRING ARGS runs in the caller's shell.
struct HelperTarget {
  int socket = -1;  // connected
  std::string shell;
  std::size_t json_cap = 0;  // --json without --max-output: the policy's output.maxBytes
  // Our hello was sent and answered with this key (run_through_helper): every line we send
  // carries it (serve::RequestRules::keyed_lines).
  std::string conn_key;
};

// The run through a daemon: same output and exit-status contract as a local run.
int run_connected(const RunArgs& args, const HelperTarget* helper = nullptr);

}  // namespace paddock::cli
