// The validated configuration a Manager runs with.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "paddock/classifier.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock {

// The shell of Command::shell_string: bash when the host has it (the language the classifier
// reads, and what srt runs), /bin/sh otherwise.
std::string default_shell();
// Throws Error(config_invalid) naming `where` unless `shell` is a POSIX shell by name.
void validate_shell(const std::string& shell, const std::string& where);

// The output caps, one home each. Kept in memory (ExecResult, a --json run, ServeClient's
// result): 1 MiB per stream, since an agent reads at most a few hundred KiB usefully and
// 1,000 commands in flight must not be able to hold gigabytes. Streamed and kept nowhere (a
// `paddock run` without --json, `paddock serve`): no cap unless the caller names one.
inline constexpr std::size_t kDefaultMaxOutputBytes = std::size_t{1} << 20;
inline constexpr std::size_t kUncappedOutput = static_cast<std::size_t>(-1);

struct Config {
  // Per-stream bytes kept in ExecResult (and streamed). Past it the pipe is drained and
  // dropped. kDefaultMaxOutputBytes (below).
  std::size_t max_output_bytes = kDefaultMaxOutputBytes;

  // Timeouts: per-call default and the cap no call may exceed (agenvoy's 10 min / 60 min).
  // PADDOCK_DEFAULT_TIMEOUT_SECONDS / PADDOCK_MAX_TIMEOUT_SECONDS override them through
  // apply_environment_overrides(), never above kHardTimeoutCap.
  std::chrono::milliseconds default_timeout = std::chrono::minutes(10);
  std::chrono::milliseconds max_timeout = std::chrono::minutes(60);
  // After SIGTERM, how long the command gets before SIGKILL.
  std::chrono::milliseconds kill_grace = std::chrono::seconds(2);
  // After the command's leader is gone (exited or killed), how long we keep reading for
  // output still in flight before closing the pipes: a grandchild that escaped the process
  // group and holds the pipe open must not hold the call.
  std::chrono::milliseconds exit_drain = std::chrono::milliseconds(500);

  // Variables of the supervisor's environment a command may see; everything else (tokens,
  // API keys) stays out. Entries ending in '*' are prefixes (LC_*).
  std::vector<std::string> env_allow = {"PATH", "HOME",  "LANG",      "LANGUAGE", "LC_*",
                                        "TERM", "TZ",    "USER",      "LOGNAME",  "TMPDIR",
                                        "CI",   "SHELL", "COLORTERM", "NO_COLOR"};
  // Never passed from the supervisor's environment, whatever env_allow says (srt's
  // credentials.envVars with mode "deny"). A caller's explicit ExecOptions::env still is.
  std::vector<std::string> env_deny;
  // The shell used for Command::shell_string (`paddock run -c`, --shell PATH).
  std::string shell = default_shell();

  // Isolation of every command (namespaces, filesystem, network, seccomp, limits).
  SandboxPolicy sandbox;

  // Deciding before running (paddock/classifier.hpp): every command is classified; a
  // forbidden one never starts (E_FORBIDDEN_COMMAND), an escalated one waits for approval
  // (ExecOptions::approve, else Manager::set_approval) and without one is refused
  // (E_ESCALATED_COMMAND). Off: every command is `sandboxed`, no rule is consulted.
  struct Commands {
    bool classify = true;
    // An approval that has not answered by then is a denial.
    std::chrono::milliseconds approval_timeout = std::chrono::minutes(5);
    // The settings' own rules, overrides and program lists (paddock/classifier.hpp).
    CommandRules custom;
    // Opt-in: a path-like argument that resolves outside the working directory and the
    // writable roots refuses the command before it starts (E_SANDBOX_VIOLATION, naming it).
    bool path_guard = false;
    bool operator==(const Commands&) const = default;
  } commands;

  // Keep network namespaces between commands (a root supervisor only; unprivileged ones make
  // one per command anyway): saves ~0.5 ms a command under churn. A process that runs a
  // single command (the CLI) turns it off: the pool only adds a namespace made in the parent
  // and a socket check when it comes back.
  bool reuse_network_namespaces = true;

  // Build the sandbox's view of the host once and let the kernel copy it into each sandbox
  // (a mount namespace with no process, docs/build-once.md §1): a sandbox then runs ~11 mount
  // steps of its own instead of ~60. Plans it cannot serve run every step, as with false.
  bool mount_templates = true;

  // Sandboxes made ahead: once a sandboxed command has ended, a worker thread makes another
  // for the same plan (in the pause before the caller's next command: made while the command
  // ran, it slowed that command's own start about as much as it saved), whose init waits for
  // a command; the next command with that plan (same working directory, policy, host state)
  // uses it and skips the clone, namespaces, mounts, Landlock and seccomp on its own path. It
  // still makes its own plan when it starts and uses a waiting sandbox only if the plans are
  // identical, by host object (manager/warm_sandboxes.hpp). At most this many wait at once
  // (each: one sleeping process, five descriptors); 0: off. A process that runs a single
  // command (the CLI) turns it off.
  std::size_t warm_sandboxes = 4;
  // A waiting sandbox older than this is discarded unused: its view of the host's mount table
  // is as old as it is, and it keeps the host's file systems busy (a copy of every mount):
  // an unmount or an eject on the host says "busy" until then.
  std::chrono::milliseconds warm_sandbox_max_age = std::chrono::seconds(10);

  bool operator==(const Config&) const = default;
};

inline constexpr std::chrono::milliseconds kHardTimeoutCap = std::chrono::minutes(60);

// Throws paddock::Error(errc::config_invalid) naming the field and the reason.
void validate(const Config& config);
// A call's policy against the Config it narrows or extends (ExecOptions::policy).
struct CallPolicy;
void validate(const CallPolicy& call, const Config& config);
// The Manager's sandbox policy with a call's additions (validated first).
SandboxPolicy with_call_policy(const SandboxPolicy& base, const CallPolicy& call);

// Applies PADDOCK_DEFAULT_TIMEOUT_SECONDS and PADDOCK_MAX_TIMEOUT_SECONDS from the process
// environment. A malformed value, or one above the hard cap, is an error, not ignored.
Config apply_environment_overrides(Config config);

// Presets; each says in config.cpp who it is for. profile_config() (settings.hpp) picks one by
// name ("default", "development", "ci", "read-only").
Config DefaultConfig();
Config DevelopmentConfig();
Config CIConfig();
Config ReadOnlyConfig();
// Strict, opt-in: the seeds' word-based policies on top of the default one (config.cpp says
// what each refuses). `--profile agentary`, `--profile agenvoy`.
Config AgentaryConfig();
Config AgenvoyConfig();

}  // namespace paddock
