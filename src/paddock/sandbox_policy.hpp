// What the sandbox allows: the policy part of Config. Field meanings follow srt's settings
// file (`filesystem.*`, `network.*`) so an srt user's file means the same here; paddock's own
// knobs (limits, fallback, network mode) sit beside them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace paddock {

// Paths may start with `~/` (the supervisor's $HOME) and may contain globs: `*` matches within
// one path component, `**` any number of components. Relative paths are relative to the
// command's working directory. Checked after realpath; a path that does not exist yet is
// checked through its nearest existing parent.
struct FilesystemPolicy {
  // Readable everywhere except these (deny-then-allow: allow_read re-exposes paths inside a
  // denied region; a more specific deny inside an allowed region stays denied).
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_read;
  // The host is read-only except these roots (plus a private /tmp); deny_write wins.
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  // The command's working directory is writable (srt's default behaviour).
  bool allow_write_cwd = true;
  // The common git directory of a linked worktree paddock made for a session
  // (SessionOptions::worktree), writable as a root of its own so commits reach the branch; its
  // change set is judged as every git directory's (config, hooks, replace refs, the index
  // held back). Set by paddock only: no settings key or call policy reaches it.
  std::vector<std::string> git_dir_roots;
  // A writable root (the cwd included) may be the home directory itself. Off, such a run is
  // refused: with the home writable, start-up files the host runs later (~/.bash_aliases,
  // ~/.config/git/config, ~/bin on PATH) could be planted. On, with default_denies, the home's
  // start-up and credential files (sandbox/default_paths.cpp) stay read-only or hidden — a
  // list, so anything else the host runs from the home is writable. A directory above a home
  // is never a writable root.
  bool allow_write_home = false;
  // The home directory `~` means and whose credentials and start-up files are protected;
  // empty: $HOME. The passwd entry's home is protected as well when it differs.
  std::string home;
  // The homes unreadable: `~` and the passwd entry's home, /root and /home as a whole. What
  // shows through: the writable roots and the repository around them, a read-only working
  // directory, the program run, the toolchains and package caches tools need
  // (sandbox/default_paths.cpp, read-only), `allow_read` entries (`~` shows the whole home
  // again), and a ~/.gitconfig that holds only the host's git identity. The credential list
  // still applies inside what shows.
  bool hide_home = true;
  // A private, empty tmpfs on /tmp (and /var/tmp) instead of the host's.
  bool private_tmp = true;
  // Credentials (~/.ssh, ~/.aws, /etc/shadow, ...) unreadable, and the files that run on the
  // host later (.git/hooks, shell rc files, ...) read-only inside writable roots. On by
  // default; turning them off is an explicit, logged choice.
  bool default_denies = true;
  // Copy-on-write writable roots: the command writes a private layer over each writable
  // directory, and paddock applies that change set to the host after the command exits,
  // holding back what git or a shell would run later (sandbox/change_set.hpp). Fail closed: if
  // paddock dies first, nothing is applied and the set waits for `paddock changes`. Off: the
  // command writes the host's directories directly and an audit after it moves away what it
  // finds (fail open: a killed paddock never audits) — for file systems overlayfs cannot use.
  bool change_sets = true;
  // Where change sets wait; empty: $PADDOCK_CHANGE_STORE, else $XDG_STATE_HOME/paddock/changes
  // (~/.local/state/...), else /var/tmp/paddock-changes-<uid> (also used when the first
  // choice lies inside a writable root).
  std::string change_store;

  bool operator==(const FilesystemPolicy&) const = default;
};

enum class NetworkMode {
  blocked,   // own network namespace with loopback only; nothing reaches the host or outside
  filtered,  // own network namespace whose only way out is paddock's domain-filtering proxy
  allowed,   // the host's network, unfiltered
};

// In filtered mode the proxy listens on 127.0.0.1:kSandboxProxyPort inside the sandbox's own
// network namespace (so every sandbox has the same, fixed proxy URL; the port is taken there).
inline constexpr std::uint16_t kSandboxProxyPort = 3128;

struct NetworkPolicy {
  NetworkMode mode = NetworkMode::blocked;
  // Filtered mode, srt's semantics (net/domain_rules.hpp): deny wins, empty allows nothing,
  // `*.example.com` strict subdomains, `host:port` one port, IP literals only when listed.
  std::vector<std::string> allowed_domains;
  std::vector<std::string>
      denied_domains;  // also `*` (every host) and `*:22` (every host, port 22)
  // A name is never dialled at an address in these ranges (IP literals or CIDRs, srt's
  // deniedResolvedAddresses) unless an allowedDomains entry lists that address itself; on top
  // of the built-in special ranges (loopback, private, metadata, ...).
  std::vector<std::string> denied_resolved_addresses;
  // The reason a denial by that exact deniedDomains entry reports (srt's deniedDomainReasons).
  std::map<std::string, std::string> denied_domain_reasons;
  // A host listed nowhere is denied without asking NetworkHooks::approval (srt's
  // strictAllowlist). A call's domain lists only ever narrow, so they need no such switch.
  bool strict_allowlist = false;
  // Unix sockets bypass a network namespace; socket(AF_UNIX) is refused by seccomp unless
  // allow_all_unix_sockets. Seccomp cannot see the path a socket connects to, so single
  // sockets cannot be allowed: a non-empty list is refused unless allow_all_unix_sockets
  // (srt ignores the list on Linux and blocks every socket; paddock says so instead).
  std::vector<std::string> allow_unix_sockets;
  bool allow_all_unix_sockets = false;
  // TCP bind/connect on the sandbox's own loopback in blocked mode (off: Landlock denies TCP).
  // On by default: the loopback of the sandbox's own network namespace reaches nothing but the
  // sandbox itself (a test suite's server and its client), as in srt; only an explicit
  // `allowLocalBinding: false` turns it off. Filtered mode always allows it: the proxy is
  // reached over that loopback, and so is a test server the command starts (NO_PROXY covers
  // localhost).
  bool allow_local_binding = true;

  bool operator==(const NetworkPolicy&) const = default;
};

// 0 = no limit. Applied as rlimits always (processes also as the PID namespace's pid_max where
// the kernel has per-namespace pid_max, since root's RLIMIT_NPROC is not enforced), and as
// cgroup v2 limits where a cgroup is delegated to us.
struct ResourceLimits {
  std::uint64_t processes = 0;        // RLIMIT_NPROC (per sandbox: own user namespace)
  std::uint64_t memory_bytes = 0;     // RLIMIT_AS (+ memory.max)
  std::uint64_t open_files = 0;       // RLIMIT_NOFILE
  std::uint64_t cpu_seconds = 0;      // RLIMIT_CPU
  std::uint64_t file_size_bytes = 0;  // RLIMIT_FSIZE

  bool operator==(const ResourceLimits&) const = default;
};

// Where isolation cannot be set up: `strict` refuses (E_UNSUPPORTED_PLATFORM /
// E_DEPENDENCY_MISSING naming what is missing); `warn` runs the command unsandboxed, with
// ExecResult::sandboxed == false and a warning.
enum class FallbackMode { strict, warn };

struct SandboxPolicy {
  bool enabled = true;  // false: run on the host, unsandboxed (sandboxed=false)
  FallbackMode fallback = FallbackMode::strict;
  FilesystemPolicy filesystem;
  NetworkPolicy network;
  ResourceLimits limits;
  std::string hostname = "paddock";

  bool operator==(const SandboxPolicy&) const = default;
};

const char* to_string(NetworkMode m) noexcept;
const char* to_string(FallbackMode m) noexcept;
std::optional<NetworkMode> network_mode_from_string(std::string_view s) noexcept;

}  // namespace paddock
