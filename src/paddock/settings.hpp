// The settings file (docs/cli.md, "srt settings files as they are"): a superset of srt's
// `~/.srt-settings.json`, so an srt user can point paddock at the file they have. Layering, lowest
// first: a profile (a preset by name), then the file, then command-line flags.
//
// srt's fields (srt 0.0.83's schema), with srt's meaning:
//   network.allowedDomains, network.deniedDomains        string arrays (domain patterns;
//     `host:port`, `[v6]:port`; a bare `*` or `*:port` in deniedDomains only)
//   network.deniedDomainReasons    {deniedDomains entry: reason}, reported with its denials
//   network.deniedResolvedAddresses  IP literals / CIDRs a name must not resolve into
//   network.strictAllowlist        unlisted hosts are denied without asking an approval hook
//   network.allowAllUnixSockets, network.allowLocalBinding   booleans
//     (allowLocalBinding defaults to true: the sandbox's own loopback is its own; only an
//     explicit false makes Landlock refuse TCP bind/connect in blocked mode)
//   network.allowUnixSockets       only with allowAllUnixSockets true (see refused below)
//   filesystem.denyRead, allowRead, allowWrite, denyWrite    arrays of paths (a glob where one
//     reads as one) or {"path": P, "literal": true} (never a glob)
//   credentials.files / envVars with mode "deny": the file joins denyRead, the variable is
//     never passed from the supervisor's environment (Config::env_deny)
// As in srt, a file is the whole policy: a list present in the file replaces the base's list
// (it does not append), and two things follow srt's defaults unless paddock's own keys say
// otherwise:
//   - `filesystem.allowWrite` present and `sandbox.allowWriteCwd` absent: the cwd is NOT
//     writable (srt denies writes everywhere outside allowWrite; list "." to allow it);
//   - `network.allowedDomains` present and `network.mode` absent: mode is `filtered` if the
//     list is non-empty, else `blocked` (srt filters everything through its proxy).
//
// srt keys accepted (type-checked) without effect, each because it has none on Linux or in
// paddock; ignoring them never makes paddock weaker than srt or sends traffic elsewhere:
//   top level: $schema, ignoreViolations (paddock reports every violation),
//     enableWeakerNestedSandbox (paddock never weakens itself), enableWeakerNetworkIsolation,
//     allowAppleEvents, allowPty (macOS), ripgrep, mandatoryDenySearchDepth (paddock protects
//     at every depth), seccomp, bwrapPath, socatPath, javaAgentJarPath (srt's helpers), windows,
//     git (safe.directory: the sandbox keeps the caller's uid, so git's ownership check passes)
//   network: allowMachLookup (macOS), allowAllDomains, allowPlaintextHeaderSet and
//     ambiguousRequestTarget (read only with filterRequest, which a file cannot set)
//   credentials: allowPlaintextInject, sigv4, and the mask-only keys of a deny entry
// srt keys refused with an error naming the key and why (never silently dropped):
//   network.httpProxyPort, socksProxyPort, parentProxy, mitmProxy (traffic goes through
//     paddock's own proxy only), tlsTerminate, filterRequest, and when set
//     stripResponseHeaders, refuseOpaqueTunnels, requireHostMatch (paddock's proxy does not
//     terminate TLS or rewrite responses); allowUnixSockets without allowAllUnixSockets
//     (seccomp cannot allow single sockets by path; srt ignores the list on Linux);
//   filesystem.allowGitConfig true, filesystem.disabled true; allowNestedUserNamespaces true;
//   credentials with mode "mask", credentials.awsPairs (masking needs TLS termination).
//
// paddock's own keys, beside srt's:
//   network.mode               "blocked" | "filtered" | "allowed"
//   sandbox    { enabled: bool, fallback: "strict"|"warn", hostname: string, privateTmp: bool,
//                defaultDenies: bool, allowWriteCwd: bool, allowWriteHome: bool,
//                hideHome: bool, changeSets: bool, changeStore: absolute path }
//              allowWriteHome: the home itself may be a writable root (FilesystemPolicy::
//              allow_write_home); off, a cwd or allowWrite entry that is the home is refused
//              hideHome: the homes unreadable but for a read allow-list (on by default;
//              FilesystemPolicy::hide_home); off, srt's behaviour
//   limits     { processes, memoryBytes, openFiles, cpuSeconds, fileSizeBytes }  integers >= 0
//   env        { allow: [variable names or NAME* prefixes] }  (credentials' denials win)
//   timeouts   { defaultSeconds, maxSeconds }  numbers > 0
//   output     { maxBytes }  integer > 0
//
// Every error is Error(errc::config_invalid, "<json.path>: <why>") naming the field, e.g.
// "network.deniedDomains[2]: expected a string, got number"; an unknown key is an error (with a
// "did you mean" when one known key is close). Nothing falls back to a default silently.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "paddock/config.hpp"

namespace paddock {

// Applies a parsed settings document on top of `base`, then validate()s the result.
Config apply_settings(const nlohmann::json& doc, Config base);

// Parses settings text (JSON; duplicate keys are an error, since the later one would silently
// win) and applies it. `origin` names the text in errors: "<origin>: <why>".
Config apply_settings_text(std::string_view text, Config base,
                           std::string_view origin = "settings");

// Reads and applies a file (a regular file or a pipe such as `<(...)`; at most 4 MiB). Errors
// read "settings file <path>: <why>"; invalid JSON gives the line and column.
Config load_settings_file(const std::string& path, Config base);
// Its bytes alone (the same checks and errors).
std::string read_settings_file(const std::string& path);

// Command-line style overrides (`paddock run` flags; the serve protocol's policy overrides):
// lists append to what the profile and file gave, the rest replace. Strings, not enums, so
// that a bad value is reported here naming its flag ("--network: expected ...").
struct PolicyFlags {
  std::vector<std::string> allow_write, deny_write, allow_read, deny_read;  // paths
  std::vector<std::string> allow_domains, deny_domains;
  std::string network;   // "" = keep; else blocked|filtered|allowed. Allowing a domain with
                         // no --network turns blocked into filtered (srt's meaning).
  std::string fallback;  // "" = keep; else strict|warn
  bool no_sandbox = false;
  bool allow_write_home = false;  // true = the home may be a writable root (never turns it off)
};

// Applies the flags on top of `base`, then validate()s.
Config apply_policy_flags(Config base, const PolicyFlags& flags);

// The whole layering: profile_config(profile), then the settings file (if `settings_path` is
// not empty), then the flags.
// srt's own default: ~/.srt-settings.json, read when no settings file is named. Its path when
// $HOME names one that exists (a regular file, or a link to one), else empty.
std::string default_settings_path();

// `settings_text`: the file's bytes as read and applied go there (read once: a pipe has no
// second reading, and a file may change between two).
Config resolve_config(std::string_view profile, const std::string& settings_path,
                      const PolicyFlags& flags, std::string* settings_text = nullptr);

// The presets by name: "default", "development", "ci", "read-only". Unknown → config_invalid
// listing the valid names.
Config profile_config(std::string_view name);
const std::vector<std::string_view>& profile_names();

std::optional<FallbackMode> fallback_mode_from_string(std::string_view s) noexcept;

}  // namespace paddock
