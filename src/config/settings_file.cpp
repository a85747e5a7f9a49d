// The settings file loader: srt's fields plus paddock's own sections (see settings.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "config/commands_section.hpp"
#include "config/durations.hpp"
#include "config/json_fields.hpp"
#include "paddock/errors.hpp"
#include "paddock/settings.hpp"

namespace paddock {
namespace {

using namespace configuration;  // json_fields.hpp: the typed getters and read_section

constexpr std::size_t kMaxSettingsBytes = 4 * 1024 * 1024;

// Records the first duplicated key while nlohmann parses: JSON allows duplicates and the
// library keeps the last one, which would silently drop the first list.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        element();
        frames_.push_back({event == json::parse_event_t::array_start, {}, {}, -1});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        if (frames_.empty()) break;
        auto key = parsed.get<std::string>();
        Frame& top = frames_.back();
        if (!top.keys.insert(key).second && duplicate_.empty()) duplicate_ = path_to(key);
        top.key = std::move(key);
        break;
      }
      case json::parse_event_t::value:
        element();
        break;
    }
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool array;
    std::set<std::string> keys;
    std::string key;  // the current member (objects)
    long index;       // the current element (arrays)
  };
  void element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string path_to(const std::string& key) const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      path = f.array ? index(path, static_cast<std::size_t>(f.index)) : child(path, f.key);
    }
    return child(path, key);
  }
  std::vector<Frame> frames_;
  std::string duplicate_;
};

// "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..." →
// "invalid JSON at line 3, column 5: syntax error ...".
std::string parse_error_text(const json::parse_error& e) {
  std::string_view what = e.what();
  if (auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
  constexpr std::string_view kPrefix = "parse error";
  if (what.substr(0, kPrefix.size()) == kPrefix) what.remove_prefix(kPrefix.size());
  return "invalid JSON" + std::string(what);
}

// srt's credentials section. mode "deny" is honoured (a file joins denyRead, a variable is
// never passed from the supervisor's environment); mode "mask" substitutes a real secret for
// a sentinel in TLS traffic the proxy decrypts, which paddock's proxy does not do: refused,
// since ignoring it would hand the command the real secret.
void read_credentials(const json& v, const std::string& path, std::vector<std::string>& files,
                      std::vector<std::string>& variables) {
  static constexpr const char* kMask =
      "mode \"mask\" needs the proxy to terminate TLS and put the real secret back into "
      "requests, which paddock's proxy does not do; use mode \"deny\"";
  auto mode_of = [&](const json& entry, const std::string& at) {
    const auto m = entry.find("mode");
    if (m == entry.end()) fail(at, "missing \"mode\" (\"deny\" or \"mask\")");
    const std::string mode = get_string(*m, child(at, "mode"));
    if (mode == "mask") fail(child(at, "mode"), kMask);
    if (mode != "deny") fail(child(at, "mode"), "expected \"deny\" or \"mask\", got " + m->dump());
  };
  // Keys that only shape masking: srt accepts and ignores them with mode deny.
  static constexpr Ignored kMaskOnly[] = {
      {"extract", Kind::string},         {"onExtractNoMatch", Kind::string},
      {"decode", Kind::string},          {"maskClaims", Kind::string_list},
      {"maskDuplicates", Kind::boolean}, {"injectHosts", Kind::string_list},
  };
  // The entries of `files` or `envVars`: each one's `key` (checked by `check`) and its mode.
  auto entries = [&](const json& arr, const std::string& at, std::string_view key,
                     const std::function<void(const std::string&, const std::string&)>& check,
                     std::vector<std::string>& out) {
    if (!arr.is_array()) fail(at, "expected an array, " + got(arr));
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string where = index(at, i);
      std::string value;
      const Field entry[] = {
          {key,
           [&](const json& x, const std::string& p) {
             value = get_string(x, p);
             check(value, p);
           }},
          {"mode", [](const json&, const std::string&) {}},  // mode_of() reads it
      };
      read_section(arr[i], where, entry, kMaskOnly);
      mode_of(arr[i], where);
      if (value.empty()) fail(where, "missing \"" + std::string(key) + "\"");
      out.push_back(std::move(value));
    }
  };
  const Field fields[] = {
      {"files",
       [&](const json& arr, const std::string& at) {
         entries(
             arr, at, "path",
             [](const std::string& file, const std::string& p) {
               if (file.empty()) fail(p, "empty path");
               if (file.find('\0') != std::string::npos) fail(p, "path contains a NUL byte");
             },
             files);
       }},
      {"envVars",
       [&](const json& arr, const std::string& at) {
         entries(
             arr, at, "name",
             [](const std::string& name, const std::string& p) {
               const bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
                               std::all_of(name.begin(), name.end(), [](char ch) {
                                 return ch == '_' || (ch >= 'A' && ch <= 'Z') ||
                                        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                               });
               if (!ok) fail(p, "'" + name + "' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
             },
             variables);
       }},
  };
  static constexpr Ignored kCredentialIgnored[] = {
      {"allowPlaintextInject", Kind::boolean},  // masking only
      {"awsPairs", Kind::refuse_if_set,
       "AWS pairs link masked variables, and paddock does not mask (see mode \"mask\")"},
      {"sigv4", Kind::object},  // policies for re-signing masked AWS credentials
  };
  read_section(v, path, fields, kCredentialIgnored);
}

}  // namespace

Config apply_settings(const json& doc, Config c) {
  if (!doc.is_object()) fail("(top level)", "expected a JSON object, " + got(doc));
  SandboxPolicy& sb = c.sandbox;
  bool have_mode = false, have_allowed_domains = false;
  bool have_allow_write = false, have_write_cwd = false;
  // credentials (mode deny): files join filesystem.denyRead, variables env.deny, after both
  // sections are read (in whichever order the file has them).
  std::vector<std::string> credential_files, credential_variables;
  std::optional<std::chrono::milliseconds> default_timeout, max_timeout;

  const Field network[] = {
      {"mode",
       [&](const json& v, const std::string& p) {
         auto mode = network_mode_from_string(get_string(v, p));
         if (!mode) fail(p, "expected \"blocked\", \"filtered\" or \"allowed\", got " + v.dump());
         sb.network.mode = *mode;
         have_mode = true;
       }},
      {"allowedDomains",
       [&](const json& v, const std::string& p) {
         sb.network.allowed_domains = get_string_list(v, p);
         have_allowed_domains = true;
       }},
      {"deniedDomains",
       [&](const json& v, const std::string& p) {
         sb.network.denied_domains = get_string_list(v, p);
       }},
      {"allowUnixSockets",
       [&](const json& v, const std::string& p) {
         sb.network.allow_unix_sockets = get_path_list(v, p);
       }},
      {"allowAllUnixSockets",
       [&](const json& v, const std::string& p) {
         sb.network.allow_all_unix_sockets = get_bool(v, p);
       }},
      {"allowLocalBinding",
       [&](const json& v, const std::string& p) {
         sb.network.allow_local_binding = get_bool(v, p);
       }},
      {"deniedResolvedAddresses",
       [&](const json& v, const std::string& p) {
         sb.network.denied_resolved_addresses = get_string_list(v, p);
       }},
      {"deniedDomainReasons",
       [&](const json& v, const std::string& p) {
         if (!v.is_object())
           fail(p, "expected an object (deniedDomains entry -> reason), " + got(v));
         std::map<std::string, std::string> reasons;
         for (const auto& [entry, reason] : v.items()) {
           std::string text = get_string(reason, child(p, entry));
           if (text.empty()) fail(child(p, entry), "empty reason");
           reasons.emplace(entry, std::move(text));
         }
         sb.network.denied_domain_reasons = std::move(reasons);
       }},
      {"strictAllowlist",
       [&](const json& v, const std::string& p) { sb.network.strict_allowlist = get_bool(v, p); }},
  };
  // Where traffic goes is paddock's proxy's job: a key that would send it elsewhere, or change
  // what the proxy does to it, is refused rather than silently dropped.
  static constexpr const char* kOwnProxy =
      "paddock filters through its own proxy inside each sandbox's network namespace and "
      "cannot hand the traffic to another proxy; remove the key (paddock's proxy enforces "
      "allowedDomains/deniedDomains itself)";
  static constexpr Ignored kNetworkIgnored[] = {
      {"allowMachLookup", Kind::string_list},  // macOS only
      {"allowAllDomains", Kind::boolean},
      {"httpProxyPort", Kind::refuse, kOwnProxy},
      {"socksProxyPort", Kind::refuse, kOwnProxy},
      {"parentProxy", Kind::refuse,
       "an upstream (corporate) proxy is not supported: paddock's proxy connects to the "
       "allowed hosts directly; remove the key, or run where direct connections work"},
      {"mitmProxy", Kind::refuse,
       "routing domains through a MITM proxy is not supported: paddock's proxy connects to the "
       "allowed hosts directly; remove the key"},
      {"tlsTerminate", Kind::refuse,
       "paddock's proxy does not terminate TLS: HTTPS stays an opaque tunnel to an allowed "
       "host; remove the key"},
      {"filterRequest", Kind::refuse,
       "a per-request callback cannot come from a settings file (srt takes a function from "
       "library code); remove the key"},
      {"stripResponseHeaders", Kind::refuse_if_set,
       "paddock's proxy passes responses through unchanged and cannot strip headers; remove "
       "the key"},
      {"refuseOpaqueTunnels", Kind::refuse_if_set,
       "refusing every CONNECT/SOCKS tunnel needs TLS termination to serve HTTPS at all, which "
       "paddock's proxy does not do; remove the key"},
      {"requireHostMatch", Kind::refuse_if_set,
       "paddock's proxy checks an absolute-form request's Host header but does not read a "
       "tunnel's TLS server name, so it cannot promise this; remove the key"},
      // Read only while filterRequest is set, which a file cannot set.
      {"allowPlaintextHeaderSet", Kind::boolean},
      {"ambiguousRequestTarget", Kind::string},
  };

  const Field filesystem[] = {
      {"denyRead",
       [&](const json& v, const std::string& p) {
         sb.filesystem.deny_read = get_path_entry_list(v, p);
       }},
      {"allowRead",
       [&](const json& v, const std::string& p) {
         sb.filesystem.allow_read = get_path_entry_list(v, p);
       }},
      {"allowWrite",
       [&](const json& v, const std::string& p) {
         sb.filesystem.allow_write = get_path_entry_list(v, p);
         have_allow_write = true;
       }},
      {"denyWrite",
       [&](const json& v, const std::string& p) {
         sb.filesystem.deny_write = get_path_entry_list(v, p);
       }},
  };
  static constexpr Ignored kFilesystemIgnored[] = {
      {"allowGitConfig", Kind::refuse_if_set,
       "paddock keeps every git config read-only inside the sandbox: core.fsmonitor, "
       "core.hooksPath, aliases and filters in it run on the host the next time its git runs "
       "there; change remotes from the host"},
      {"disabled", Kind::refuse_if_set,
       "dropping every filesystem rule is not a settings-file switch in paddock; use "
       "`paddock run --no-sandbox` (or sandbox.enabled: false) to run unsandboxed knowingly"},
  };

  const Field sandbox[] = {
      {"enabled", [&](const json& v, const std::string& p) { sb.enabled = get_bool(v, p); }},
      {"fallback",
       [&](const json& v, const std::string& p) {
         auto mode = fallback_mode_from_string(get_string(v, p));
         if (!mode) fail(p, "expected \"strict\" or \"warn\", got " + v.dump());
         sb.fallback = *mode;
       }},
      {"hostname", [&](const json& v, const std::string& p) { sb.hostname = get_string(v, p); }},
      // Off: the homes are readable except the credential list (srt's behaviour).
      {"hideHome",
       [&](const json& v, const std::string& p) { sb.filesystem.hide_home = get_bool(v, p); }},
      {"privateTmp",
       [&](const json& v, const std::string& p) { sb.filesystem.private_tmp = get_bool(v, p); }},
      {"defaultDenies",
       [&](const json& v, const std::string& p) { sb.filesystem.default_denies = get_bool(v, p); }},
      {"allowWriteCwd",
       [&](const json& v, const std::string& p) {
         sb.filesystem.allow_write_cwd = get_bool(v, p);
         have_write_cwd = true;
       }},
      {"allowWriteHome",
       [&](const json& v, const std::string& p) {
         sb.filesystem.allow_write_home = get_bool(v, p);
       }},
      // Off: commands write the workspace directly, audited after the fact (fail open); for
      // file systems overlayfs cannot layer (sandbox/change_set.hpp).
      {"changeSets",
       [&](const json& v, const std::string& p) { sb.filesystem.change_sets = get_bool(v, p); }},
      {"changeStore",
       [&](const json& v, const std::string& p) {
         std::string dir = get_string(v, p);
         if (dir.empty() || dir.front() != '/')
           fail(p, "must be an absolute path, got " + v.dump());
         sb.filesystem.change_store = std::move(dir);
       }},
  };

  const Field limits[] = {
      {"processes",
       [&](const json& v, const std::string& p) { sb.limits.processes = get_count(v, p); }},
      {"memoryBytes",
       [&](const json& v, const std::string& p) { sb.limits.memory_bytes = get_count(v, p); }},
      {"openFiles",
       [&](const json& v, const std::string& p) { sb.limits.open_files = get_count(v, p); }},
      {"cpuSeconds",
       [&](const json& v, const std::string& p) { sb.limits.cpu_seconds = get_count(v, p); }},
      {"fileSizeBytes",
       [&](const json& v, const std::string& p) { sb.limits.file_size_bytes = get_count(v, p); }},
  };

  const Field env[] = {
      {"allow",
       [&](const json& v, const std::string& p) {
         auto names = get_string_list(v, p);
         for (std::size_t i = 0; i < names.size(); ++i) {
           if (names[i].find('=') != std::string::npos) {
             fail(index(p, i), "'" + names[i] + "' is not a variable name (or NAME* prefix)");
           }
         }
         c.env_allow = std::move(names);
       }},
  };

  const Field timeouts[] = {
      {"defaultSeconds",
       [&](const json& v, const std::string& p) { default_timeout = get_seconds(v, p); }},
      {"maxSeconds", [&](const json& v, const std::string& p) { max_timeout = get_seconds(v, p); }},
  };

  const Field output[] = {
      {"maxBytes",
       [&](const json& v, const std::string& p) {
         auto n = get_count(v, p);
         if (n == 0) fail(p, "expected an integer > 0, got 0");
         c.max_output_bytes = static_cast<std::size_t>(n);
       }},
  };

  const Field top[] = {
      {"network",
       [&](const json& v, const std::string& p) { read_section(v, p, network, kNetworkIgnored); }},
      {"filesystem",
       [&](const json& v, const std::string& p) {
         read_section(v, p, filesystem, kFilesystemIgnored);
       }},
      {"sandbox", [&](const json& v, const std::string& p) { read_section(v, p, sandbox); }},
      {"limits", [&](const json& v, const std::string& p) { read_section(v, p, limits); }},
      {"env", [&](const json& v, const std::string& p) { read_section(v, p, env); }},
      {"timeouts", [&](const json& v, const std::string& p) { read_section(v, p, timeouts); }},
      {"output", [&](const json& v, const std::string& p) { read_section(v, p, output); }},
      {"commands",
       [&](const json& v, const std::string& p) { read_commands_section(v, p, c.commands); }},
      {"credentials",
       [&](const json& v, const std::string& p) {
         read_credentials(v, p, credential_files, credential_variables);
       }},
  };
  // srt keys with no effect on Linux or in paddock; each is type-checked all the same.
  static constexpr Ignored kTopIgnored[] = {
      {"$schema", Kind::string},
      {"ignoreViolations", Kind::object},  // which violations srt reports: reporting only
      // Stays the stronger sandbox: paddock never weakens itself for a nested container.
      {"enableWeakerNestedSandbox", Kind::boolean},
      {"enableWeakerNetworkIsolation", Kind::boolean},  // macOS only
      {"allowAppleEvents", Kind::boolean},              // macOS only
      {"allowPty", Kind::boolean},                      // macOS only
      {"ripgrep", Kind::object},                        // srt's scan tool: paddock has its own
      // paddock looks for protected files at every depth, not to a depth.
      {"mandatoryDenySearchDepth", Kind::depth},
      {"seccomp", Kind::object},           // srt's helper binaries
      {"bwrapPath", Kind::string},         // ditto
      {"socatPath", Kind::string},         // ditto
      {"javaAgentJarPath", Kind::string},  // ditto
      {"windows", Kind::object},           // Windows only
      // safe.directory for repositories owned by another uid inside srt's sandbox; paddock's
      // sandbox keeps the caller's uid, so git's ownership check already passes.
      {"git", Kind::object},
      {"allowNestedUserNamespaces", Kind::refuse_if_set,
       "paddock's seccomp filter denies new namespaces inside the sandbox (unshare, setns, "
       "clone(CLONE_NEWUSER)): a nested user namespace reopens the kernel surface the sandbox "
       "closes; not supported"},
  };
  read_section(doc, "", top, kTopIgnored);

  auto& deny_read = sb.filesystem.deny_read;
  deny_read.insert(deny_read.end(), credential_files.begin(), credential_files.end());
  c.env_deny.insert(c.env_deny.end(), credential_variables.begin(), credential_variables.end());

  // srt's meanings where paddock's own key is absent (settings.hpp).
  bool mode_inferred = false;
  if (have_allowed_domains && !have_mode) {
    sb.network.mode =
        sb.network.allowed_domains.empty() ? NetworkMode::blocked : NetworkMode::filtered;
    mode_inferred = sb.network.mode == NetworkMode::filtered;
  }
  if (have_allow_write && !have_write_cwd) sb.filesystem.allow_write_cwd = false;

  configuration::apply_timeouts(c, default_timeout, max_timeout, "timeouts.defaultSeconds",
                                "raise timeouts.maxSeconds");

  try {
    validate(c);
  } catch (const Error& e) {
    if (mode_inferred && std::string_view(e.what()).starts_with("network.mode:")) {
      fail("network.allowedDomains",
           std::string("domains are listed and network.mode is not, so the mode is filtered "
                       "(srt's meaning); ") +
               e.what());
    }
    throw;
  }
  return c;
}

Config apply_settings_text(std::string_view text, Config base, std::string_view origin) {
  const std::string prefix = std::string(origin) + ": ";
  if (std::all_of(text.begin(), text.end(),
                  [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; })) {
    throw Error(errc::config_invalid, prefix + "empty (expected a JSON object)");
  }
  DuplicateKeyFinder duplicates;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    throw Error(errc::config_invalid, prefix + parse_error_text(e));
  }
  if (!duplicates.duplicate().empty()) {
    throw Error(errc::config_invalid,
                prefix + duplicates.duplicate() +
                    ": duplicate key (JSON keeps only the last one; merge them)");
  }
  try {
    return apply_settings(doc, std::move(base));
  } catch (const Error& e) {
    throw Error(e.code(), prefix + e.what());
  }
}

std::string read_settings_file(const std::string& path) {
  const std::string origin = "settings file " + path;
  auto os_fail = [&](const std::string& what) {
    throw Error(errc::config_invalid, origin + ": " + what + ": " + std::strerror(errno));
  };
  // Not std::ifstream: it does not say why, and a pipe (`--settings <(...)`) must work too.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) os_fail("cannot open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) os_fail("cannot stat");
  if (S_ISDIR(st.st_mode)) throw Error(errc::config_invalid, origin + ": is a directory");
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      os_fail("cannot read");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxSettingsBytes) {
      throw Error(errc::config_invalid, origin + ": larger than 4 MiB; not a settings file?");
    }
  }
  return text;
}

Config load_settings_file(const std::string& path, Config base) {
  return apply_settings_text(read_settings_file(path), std::move(base), "settings file " + path);
}

namespace {

void append(std::vector<std::string>& to, const std::vector<std::string>& from, const char* flag) {
  for (const auto& v : from) {
    if (v.empty()) fail(flag, "empty value");
    if (v.find('\0') != std::string::npos) fail(flag, "value contains a NUL byte");
    to.push_back(v);
  }
}

}  // namespace

Config apply_policy_flags(Config c, const PolicyFlags& flags) {
  auto& fs = c.sandbox.filesystem;
  auto& net = c.sandbox.network;
  append(fs.allow_write, flags.allow_write, "--allow-write");
  append(fs.deny_write, flags.deny_write, "--deny-write");
  append(fs.allow_read, flags.allow_read, "--allow-read");
  append(fs.deny_read, flags.deny_read, "--deny-read");
  append(net.allowed_domains, flags.allow_domains, "--allow-domain");
  append(net.denied_domains, flags.deny_domains, "--deny-domain");
  bool mode_inferred = false;
  if (!flags.network.empty()) {
    auto mode = network_mode_from_string(flags.network);
    if (!mode)
      fail("--network", "expected blocked, filtered or allowed, got '" + flags.network + "'");
    net.mode = *mode;
  } else if (!flags.allow_domains.empty() && net.mode == NetworkMode::blocked) {
    // Allowing a domain means filtering, not a list that blocked mode would ignore.
    net.mode = NetworkMode::filtered;
    mode_inferred = true;
  }
  if (!flags.fallback.empty()) {
    auto mode = fallback_mode_from_string(flags.fallback);
    if (!mode) fail("--fallback", "expected strict or warn, got '" + flags.fallback + "'");
    c.sandbox.fallback = *mode;
  }
  if (flags.no_sandbox) c.sandbox.enabled = false;
  if (flags.allow_write_home) fs.allow_write_home = true;
  try {
    validate(c);
  } catch (const Error& e) {
    if (mode_inferred && std::string_view(e.what()).starts_with("network.mode:")) {
      fail("--allow-domain", std::string("implies --network filtered; ") + e.what());
    }
    throw;
  }
  return c;
}

std::string default_settings_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') return {};
  std::string path = std::string(home) + "/.srt-settings.json";
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? path : std::string();
}

Config resolve_config(std::string_view profile, const std::string& settings_path,
                      const PolicyFlags& flags, std::string* settings_text) {
  Config c = profile_config(profile);
  if (!settings_path.empty()) {
    std::string text = read_settings_file(settings_path);
    c = apply_settings_text(text, std::move(c), "settings file " + settings_path);
    if (settings_text != nullptr) *settings_text = std::move(text);
  }
  return apply_policy_flags(std::move(c), flags);
}

const std::vector<std::string_view>& profile_names() {
  static const std::vector<std::string_view> names = {"default",   "development", "ci",
                                                      "read-only", "agentary",    "agenvoy"};
  return names;
}

Config profile_config(std::string_view name) {
  if (name == "default") return DefaultConfig();
  if (name == "development") return DevelopmentConfig();
  if (name == "ci") return CIConfig();
  if (name == "read-only") return ReadOnlyConfig();
  if (name == "agentary") return AgentaryConfig();
  if (name == "agenvoy") return AgenvoyConfig();
  std::string valid;
  for (auto n : profile_names()) valid += (valid.empty() ? "" : ", ") + std::string(n);
  throw Error(errc::config_invalid,
              "profile: unknown profile '" + std::string(name) + "' (valid: " + valid + ")");
}

std::optional<FallbackMode> fallback_mode_from_string(std::string_view s) noexcept {
  if (s == "strict") return FallbackMode::strict;
  if (s == "warn") return FallbackMode::warn;
  return std::nullopt;
}

}  // namespace paddock
