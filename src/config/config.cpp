#include "paddock/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "config/call_domains.hpp"
#include "config/durations.hpp"
#include "net/domain_rules.hpp"
#include "paddock/command.hpp"
#include "paddock/errors.hpp"

namespace paddock {
namespace {

std::string ms(std::chrono::milliseconds v) { return std::to_string(v.count()) + " ms"; }

// A duration from the environment (config/durations.hpp); nullopt when unset.
std::optional<std::chrono::milliseconds> seconds_from_env(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  try {
    return configuration::parse_duration(raw, kHardTimeoutCap);
  } catch (const configuration::BadDuration& e) {
    throw Error(errc::config_invalid, std::string(name) + ": " + e.what());
  }
}

// The sandbox policy's checks name fields the way the settings file spells them
// (`filesystem.denyRead[2]`), since that is where a user meets them.
void validate_paths(const std::vector<std::string>& list, const std::string& field) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (list[i].empty()) throw Error(errc::config_invalid, where + ": empty path");
    if (list[i].find('\0') != std::string::npos) {
      throw Error(errc::config_invalid, where + ": path contains a NUL byte");
    }
  }
}

// Only the shape: the pattern grammar (wildcards, ports, IP literals) belongs to the proxy's
// domain matcher. A URL here is the usual mistake, so it gets its own message.
void validate_domains(const std::vector<std::string>& list, const std::string& field) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = field + "[" + std::to_string(i) + "]";
    const std::string& d = list[i];
    if (d.empty()) throw Error(errc::config_invalid, where + ": empty domain");
    if (d.find("://") != std::string::npos || d.find('/') != std::string::npos) {
      throw Error(errc::config_invalid,
                  where + ": '" + d + "' is a URL; give the host name only (e.g. example.com)");
    }
    for (char ch : d) {
      if (static_cast<unsigned char>(ch) <= ' ' || ch == 0x7f) {
        throw Error(errc::config_invalid,
                    where + ": '" + d + "' contains whitespace or a control character");
      }
    }
  }
}

void validate_sandbox(const SandboxPolicy& p) {
  auto bad = [](const std::string& field, const std::string& why) {
    throw Error(errc::config_invalid, field + ": " + why);
  };
  // A UTS hostname: the kernel takes up to 64 bytes; keep to what resolvers and prompts accept.
  if (p.hostname.empty() || p.hostname.size() > 64) {
    bad("sandbox.hostname", "must be 1 to 64 characters");
  }
  for (char ch : p.hostname) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.';
    if (!ok) bad("sandbox.hostname", "'" + p.hostname + "' may only use A-Z a-z 0-9 . -");
  }
  if (p.hostname.front() == '-' || p.hostname.front() == '.') {
    bad("sandbox.hostname", "must not start with '-' or '.'");
  }

  validate_paths(p.filesystem.deny_read, "filesystem.denyRead");
  validate_paths(p.filesystem.allow_read, "filesystem.allowRead");
  validate_paths(p.filesystem.allow_write, "filesystem.allowWrite");
  validate_paths(p.filesystem.deny_write, "filesystem.denyWrite");
  validate_paths(p.network.allow_unix_sockets, "network.allowUnixSockets");
  if (!p.network.allow_unix_sockets.empty() && !p.network.allow_all_unix_sockets) {
    bad("network.allowUnixSockets",
        "paddock cannot allow single unix sockets on Linux: seccomp cannot see the path a "
        "socket connects to, and a socket's file is reachable through the read-only host view "
        "(srt ignores this list on Linux, leaving every unix socket blocked). Remove the list "
        "to keep them all blocked, or set allowAllUnixSockets: true to allow every one");
  }
  // The home whose credentials and start-up files are protected: a relative one would protect
  // whatever the cwd makes of it.
  if (!p.filesystem.home.empty() &&
      (p.filesystem.home.front() != '/' || p.filesystem.home.find('\0') != std::string::npos)) {
    bad("filesystem.home", "'" + p.filesystem.home + "' must be an absolute path");
  }
  validate_domains(p.network.allowed_domains, "network.allowedDomains");
  validate_domains(p.network.denied_domains, "network.deniedDomains");

  // The whole grammar (wildcards, ports, IP literals, IDN), with the entry named on error.
  net::DomainRules(p.network.allowed_domains, p.network.denied_domains,
                   net::rule_options(p.network));
  for (const auto& [entry, reason] : p.network.denied_domain_reasons) {
    if (reason.empty()) bad("network.deniedDomainReasons." + entry, "empty reason");
  }
  // The host's network is not filtered: a deny list there would be silently ignored.
  if (p.network.mode == NetworkMode::allowed) {
    if (!p.network.denied_domains.empty()) {
      bad("network.deniedDomains",
          "network.mode allowed does not filter, so these would be ignored; use filtered");
    }
    if (!p.network.denied_resolved_addresses.empty()) {
      bad("network.deniedResolvedAddresses",
          "network.mode allowed does not filter, so these would be ignored; use filtered");
    }
  }

  // Limits (0 = none). The lower bounds catch unit mistakes and values with which not even a
  // dynamically linked `true` starts, which would otherwise surface as baffling exec failures.
  const ResourceLimits& l = p.limits;
  constexpr std::uint64_t kPidMaxLimit = 4194304;  // PID_MAX_LIMIT on 64-bit
  if (l.processes > kPidMaxLimit) {
    bad("limits.processes", std::to_string(l.processes) + " exceeds the kernel's maximum of " +
                                std::to_string(kPidMaxLimit) + " processes");
  }
  if (l.memory_bytes != 0 && l.memory_bytes < 16ull * 1024 * 1024) {
    bad("limits.memoryBytes", std::to_string(l.memory_bytes) +
                                  " bytes is below 16 MiB, too little to start a program "
                                  "(the value is in bytes, not MiB)");
  }
  if (l.open_files != 0 && l.open_files < 16) {
    bad("limits.openFiles",
        std::to_string(l.open_files) + " is below 16: the dynamic loader and stdio need a few");
  }
}
}  // namespace

void validate(const Config& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    throw Error(errc::config_invalid, field + ": " + why);
  };
  if (c.max_timeout.count() <= 0) bad("max_timeout", "must be positive");
  if (c.max_timeout > kHardTimeoutCap) {
    bad("max_timeout", ms(c.max_timeout) + " exceeds the hard cap of " + ms(kHardTimeoutCap));
  }
  if (c.default_timeout.count() <= 0) bad("default_timeout", "must be positive");
  if (c.default_timeout > c.max_timeout) {
    bad("default_timeout", ms(c.default_timeout) + " exceeds max_timeout " + ms(c.max_timeout));
  }
  if (c.kill_grace.count() < 0) bad("kill_grace", "must not be negative");
  if (c.commands.approval_timeout.count() <= 0) {
    bad("commands.approval_timeout", "must be positive");
  }
  validate(c.commands.custom, "commands");
  if (c.exit_drain.count() < 0) bad("exit_drain", "must not be negative");
  if (c.warm_sandboxes > 1024) {
    bad("warm_sandboxes", "at most 1024 (each is a process and four descriptors)");
  }
  if (c.warm_sandboxes > 0 && c.warm_sandbox_max_age.count() <= 0) {
    bad("warm_sandbox_max_age", "must be positive while warm_sandboxes is set");
  }
  if (c.shell.empty() || c.shell.front() != '/') bad("shell", "must be an absolute path");
  for (const auto& name : c.env_allow) {
    if (name.empty() || name.find('=') != std::string::npos) {
      bad("env_allow", "entry '" + name + "' is not a variable name (or NAME* prefix)");
    }
  }
  for (const auto& name : c.env_deny) {
    if (name.empty() || name.find_first_of("=*") != std::string::npos) {
      bad("env_deny", "entry '" + name + "' is not a variable name");
    }
  }
  validate_sandbox(c.sandbox);
}

Config apply_environment_overrides(Config c) {
  const auto max = seconds_from_env("PADDOCK_MAX_TIMEOUT_SECONDS");
  const auto def = seconds_from_env("PADDOCK_DEFAULT_TIMEOUT_SECONDS");
  configuration::apply_timeouts(c, def, max, "PADDOCK_DEFAULT_TIMEOUT_SECONDS",
                                "raise PADDOCK_MAX_TIMEOUT_SECONDS");
  return c;
}

// For most callers (an agent's commands, a library embedding paddock): the workspace (cwd) is
// writable, the rest of the host read-only and its credentials unreadable, no network but
// through the filtering proxy (nothing allowed until allowedDomains lists it), a
// private /tmp. Limits stop a fork bomb or an fd leak, not legitimate builds.
void validate_shell(const std::string& shell, const std::string& where) {
  // The classifier and the path guard read shell strings as POSIX shell: another language
  // (python3 -c) would run what they never saw.
  const std::string name = shell.substr(shell.rfind('/') + 1);
  static constexpr std::string_view kShells[] = {"sh",  "bash", "dash", "ash",
                                                 "ksh", "mksh", "zsh",  "busybox"};
  if (std::find(std::begin(kShells), std::end(kShells), name) == std::end(kShells)) {
    throw Error(errc::config_invalid,
                where + ": must be a POSIX shell (sh, bash, dash, ash, ksh, mksh, zsh), not " +
                    name + ": the classifier reads -c strings as shell");
  }
}

std::string default_shell() {
  for (const char* bash : {"/bin/bash", "/usr/bin/bash"}) {
    if (::access(bash, X_OK) == 0) return bash;
  }
  return "/bin/sh";
}

Config DefaultConfig() {
  Config c;
  c.sandbox.enabled = true;
  c.sandbox.fallback = FallbackMode::strict;
  // Filtered with an empty allowlist: no network, but a command that tries gets the proxy's
  // 403 saying which host was blocked, and the caller gets a violation naming it.
  c.sandbox.network.mode = NetworkMode::filtered;
  c.sandbox.filesystem.default_denies = true;
  c.sandbox.filesystem.allow_write_cwd = true;
  c.sandbox.filesystem.private_tmp = true;
  // RLIMIT_NPROC counts threads too, per sandbox (own user namespace): a JVM or a parallel
  // build uses hundreds, a fork bomb hits 4096 long before the host's pid_max.
  c.sandbox.limits.processes = 4096;
  // Per process: bounds an fd leak, and keeps tools that close() every fd up to the limit fast
  // when the supervisor has raised its own limit to hold thousands of pipes.
  c.sandbox.limits.open_files = 4096;
  // No memory limit by default: RLIMIT_AS counts address space, and the JVM, Go and V8 reserve
  // gigabytes they never touch, so any useful cap breaks them (memory.max, with a delegated
  // cgroup, is the real bound). No file-size or CPU limit: the timeout bounds the run.
  c.sandbox.limits.memory_bytes = 0;
  c.sandbox.limits.file_size_bytes = 0;
  c.sandbox.limits.cpu_seconds = 0;
  return apply_environment_overrides(std::move(c));
}

// For a developer at a terminal: whole build logs, and test suites / dev servers that listen
// on the sandbox's own loopback. Same isolation otherwise (still strict).
Config DevelopmentConfig() {
  Config c = DefaultConfig();
  c.max_output_bytes = 8 * 1024 * 1024;
  c.sandbox.network.allow_local_binding = true;
  return c;
}

// For CI jobs: the default policy plus the CI metadata variables build scripts read.
Config CIConfig() {
  Config c = DefaultConfig();
  // Named one by one so GITHUB_TOKEN & co. stay out.
  for (const char* name : {"GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_SHA", "GITHUB_REF",
                           "RUNNER_OS", "RUNNER_TEMP", "GITLAB_CI", "CI_COMMIT_SHA"}) {
    c.env_allow.emplace_back(name);
  }
  return c;
}

// For inspection (an agent reading a repository, a reviewer bot): nothing on the host is
// writable, not even the cwd. The private /tmp stays: it is not the host's, and many tools
// cannot start without a writable /tmp.
Config ReadOnlyConfig() {
  Config c = DefaultConfig();
  c.sandbox.filesystem.allow_write_cwd = false;
  c.sandbox.filesystem.allow_write.clear();
  c.sandbox.network.mode = NetworkMode::blocked;
  return c;
}

// Agentary's policy, opt-in: the agent edits and commits, nothing else. Repository topology
// (branches, resets, rebases, remotes) is refused outright, and what its bash deny-list names
// (in-place edits, installs, kills, background jobs, downloads, eval/source, permissions,
// services, containers, environment tricks) waits for a person, contained or not.
Config AgentaryConfig() {
  Config c = DefaultConfig();
  auto& o = c.commands.custom.overrides;
  for (const char* rule : {"git-topology", "git-remote-write", "git-config-override"})
    o[rule] = Decision::forbidden;
  for (const char* rule : {"in-place-edit",
                           "in-place-edit-perl",
                           "package-install",
                           "global-install",
                           "system-packages",
                           "process-kill",
                           "background",
                           "background-detach",
                           "eval-or-source",
                           "download-to-file",
                           "download-tool",
                           "network-listener",
                           "network-scan",
                           "permissions",
                           "services",
                           "containers",
                           "namespaces",
                           "scheduled-jobs",
                           "firewall",
                           "system-tuning",
                           "environment-injection",
                           "path-change",
                           "credential-read",
                           "recursive-delete-workdir",
                           "recursive-delete-unknown-path",
                           "loopback-connection",
                           "database-client"})
    o[rule] = Decision::escalated;
  return c;
}

// agenvoy's policy, opt-in: argv[0] decides. A program off the allow-list waits for a person;
// one on the deny-list never runs; the effect rules apply on top.
Config AgenvoyConfig() {
  Config c = DefaultConfig();
  c.commands.custom.allow_programs = {
      "ls",    "cat",   "head",     "tail",    "wc",       "grep",   "rg",      "find",   "sed",
      "awk",   "sort",  "uniq",     "cut",     "tr",       "diff",   "echo",    "printf", "pwd",
      "cd",    "test",  "[",        "true",    "false",    "mkdir",  "touch",   "cp",     "mv",
      "rm",    "which", "env",      "jq",      "git",      "make",   "cmake",   "ninja",  "ctest",
      "gcc",   "g++",   "cc",       "clang",   "clang++",  "python", "python3", "pytest", "pip",
      "pip3",  "uv",    "node",     "npm",     "npx",      "pnpm",   "yarn",    "tsc",    "cargo",
      "rustc", "go",    "java",     "javac",   "mvn",      "gradle", "sleep",   "xargs",  "tee",
      "stat",  "file",  "basename", "dirname", "realpath", "date",   "nl",      "less",   "more"};
  c.commands.custom.deny_programs = {
      "sudo", "su",   "doas",     "ssh",    "scp",    "nc",      "ncat",    "socat",
      "dd",   "mkfs", "shutdown", "reboot", "docker", "kubectl", "crontab", "systemctl"};
  return c;
}

namespace {

int openness(NetworkMode m) {
  switch (m) {
    case NetworkMode::blocked:
      return 0;
    case NetworkMode::filtered:
      return 1;
    case NetworkMode::allowed:
      return 2;
  }
  return 2;
}

}  // namespace

void validate(const CallPolicy& call, const Config& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    throw Error(errc::config_invalid, "policy." + field + ": " + why);
  };
  validate_paths(call.allow_write, "policy.allow_write");
  validate_paths(call.deny_read, "policy.deny_read");
  validate_paths(call.deny_write, "policy.deny_write");
  if (call.network && openness(*call.network) > openness(c.sandbox.network.mode)) {
    bad("network", std::string("a call may only narrow the network: the Manager's is ") +
                       to_string(c.sandbox.network.mode) + ", this call asked for " +
                       to_string(*call.network));
  }
  if (call.network == NetworkMode::filtered && c.sandbox.network.mode != NetworkMode::filtered) {
    bad("network", std::string("filtered needs the Manager's proxy, and its network is ") +
                       to_string(c.sandbox.network.mode) + " (a call can narrow to blocked)");
  }
  if (call.allowed_domains || !call.denied_domains.empty()) {
    const NetworkMode mode = call.network.value_or(c.sandbox.network.mode);
    if (mode != NetworkMode::filtered) {
      bad(call.allowed_domains ? "allowed_domains" : "denied_domains",
          std::string("domain lists apply to the filtered network only, and this call's is ") +
              to_string(mode));
    }
    if (call.allowed_domains) validate_domains(*call.allowed_domains, "policy.allowed_domains");
    validate_domains(call.denied_domains, "policy.denied_domains");
    configuration::call_domain_rules(call);  // the whole grammar, the entry named on error
  }
  if (call.shell && (call.shell->empty() || call.shell->front() != '/')) {
    bad("shell", "must be an absolute path");
  }
  if (call.shell) validate_shell(*call.shell, "policy.shell");
  if (call.commands) validate(*call.commands, "policy.commands");
  if (!c.sandbox.enabled && call.touches_sandbox()) {
    bad("filesystem/network",
        "the Manager runs commands unsandboxed: there is nothing to narrow "
        "or extend, and a denial would be silently ignored");
  }
}

SandboxPolicy with_call_policy(const SandboxPolicy& base, const CallPolicy& call) {
  SandboxPolicy p = base;
  auto& fs = p.filesystem;
  fs.allow_write.insert(fs.allow_write.end(), call.allow_write.begin(), call.allow_write.end());
  fs.deny_read.insert(fs.deny_read.end(), call.deny_read.begin(), call.deny_read.end());
  fs.deny_write.insert(fs.deny_write.end(), call.deny_write.begin(), call.deny_write.end());
  if (call.network) p.network.mode = *call.network;
  return p;
}

}  // namespace paddock
