// `paddock run` through a helper: a small daemon of the user's own (cli/user_daemon.hpp) that
// keeps a Manager, with its sandboxes made ahead and network namespaces reused, between runs,
// so a run is a client and one round trip instead of a whole sandbox built by a new process.
//
// A helper serves exactly one execution context, named by its socket: a hash of everything its
// Manager and its commands take from the process that started it (helper_key in
// run_helper.cpp: the binary, the profile, the settings file's bytes, the flags, the policy
// environment, the uid and groups, capabilities, rlimits, umask, cgroup, namespaces, root and
// security label). A run whose context differs in any of them gets a helper of its own, so a
// changed policy or another view is never served by one made for the old; the command's
// environment and working directory are the caller's, sent with each run. The helper is
// forked from the run that first needs it, with the Config that run resolved: the policy is
// the same object, never re-read. It accepts this uid alone and exits after an idle time
// (PADDOCK_HELPER_IDLE_SECONDS, default 600). The default for `paddock run` (helper_wanted).
#pragma once

#include <optional>

#include "cli/run_args.hpp"
#include "paddock/config.hpp"

namespace paddock::cli {

// Whether this run goes through a helper: by default (not with --no-helper or
// PADDOCK_HELPER=0, unless --helper says so), sandboxed (else nothing to keep), not with the
// caller's terminal as the command's stdin (a helper relays stdin through a socket: the
// command would see no terminal), not under a seccomp filter or no_new_privs. nullopt:
// PADDOCK_HELPER is neither 0 nor 1 (said on stderr).
std::optional<bool> helper_wanted(const RunArgs& args, const Config& config);

// The command's exit status through this context's helper (started first when none serves
// it), or nullopt when none can be used: the caller runs the command itself (said at -v).
// Call before any thread exists: it may fork the helper.
// `settings_text`: the settings file's bytes `config` was made from (run_config).
std::optional<int> run_through_helper(const RunArgs& args, const Config& config,
                                      const std::string& settings_text);

}  // namespace paddock::cli
