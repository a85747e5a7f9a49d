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
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "paddock/errors.hpp"
#include "paddock/settings.hpp"
#include "settings/commands_section.hpp"
#include "settings/json_fields.hpp"

namespace paddock {
namespace {

using namespace settings;  // json_fields.hpp: the typed getters and read_section

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

}  // namespace

Config apply_settings(const json& doc, Config c) {
  if (!doc.is_object()) fail("(top level)", "expected a JSON object, " + got(doc));
  SandboxPolicy& sb = c.sandbox;
  bool have_mode = false, have_allowed_domains = false;
  bool have_allow_write = false, have_write_cwd = false;
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
  };
  static constexpr Ignored kNetworkIgnored[] = {
      {"httpProxyPort", Kind::port},          {"socksProxyPort", Kind::port},
      {"allowMachLookup", Kind::string_list}, {"deniedDomainReasons", Kind::object},
      {"strictAllowlist", Kind::boolean},     {"allowAllDomains", Kind::boolean},
      {"parentProxy", Kind::object},          {"mitmProxy", Kind::object},
  };

  const Field filesystem[] = {
      {"denyRead",
       [&](const json& v, const std::string& p) { sb.filesystem.deny_read = get_path_list(v, p); }},
      {"allowRead", [&](const json& v,
                        const std::string& p) { sb.filesystem.allow_read = get_path_list(v, p); }},
      {"allowWrite",
       [&](const json& v, const std::string& p) {
         sb.filesystem.allow_write = get_path_list(v, p);
         have_allow_write = true;
       }},
      {"denyWrite", [&](const json& v,
                        const std::string& p) { sb.filesystem.deny_write = get_path_list(v, p); }},
  };
  static constexpr Ignored kFilesystemIgnored[] = {
      {"allowGitConfig", Kind::boolean},
      {"disabled", Kind::boolean},
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
  };
  static constexpr Ignored kTopIgnored[] = {
      {"$schema", Kind::string},
      {"ignoreViolations", Kind::object},
      {"enableWeakerNestedSandbox", Kind::boolean},
      {"enableWeakerNetworkIsolation", Kind::boolean},
      {"allowAppleEvents", Kind::boolean},
      {"allowPty", Kind::boolean},
      {"ripgrep", Kind::object},
      {"mandatoryDenySearchDepth", Kind::depth},
      {"seccomp", Kind::object},
      {"bwrapPath", Kind::string},
      {"socatPath", Kind::string},
      {"git", Kind::object},
      {"windows", Kind::object},
      {"credentials", Kind::refuse,
       "srt's credential masking is not supported by paddock, and ignoring it would expose what "
       "it protects; use filesystem.denyRead for files and env.allow for variables"},
  };
  read_section(doc, "", top, kTopIgnored);

  // srt's meanings where paddock's own key is absent (settings.hpp).
  bool mode_inferred = false;
  if (have_allowed_domains && !have_mode) {
    sb.network.mode =
        sb.network.allowed_domains.empty() ? NetworkMode::blocked : NetworkMode::filtered;
    mode_inferred = sb.network.mode == NetworkMode::filtered;
  }
  if (have_allow_write && !have_write_cwd) sb.filesystem.allow_write_cwd = false;

  if (max_timeout) {
    c.max_timeout = *max_timeout;
    // As PADDOCK_MAX_TIMEOUT_SECONDS: a lower cap pulls the inherited default down with it.
    if (!default_timeout && c.default_timeout > c.max_timeout) c.default_timeout = c.max_timeout;
  }
  if (default_timeout) {
    if (*default_timeout > c.max_timeout) {
      fail("timeouts.defaultSeconds", std::to_string(default_timeout->count()) +
                                          " ms exceeds the maximum " +
                                          std::to_string(c.max_timeout.count()) + " ms" +
                                          (max_timeout ? "" : " (raise timeouts.maxSeconds)"));
    }
    c.default_timeout = *default_timeout;
  }

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

Config load_settings_file(const std::string& path, Config base) {
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
  return apply_settings_text(text, std::move(base), origin);
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
                      const PolicyFlags& flags) {
  Config c = profile_config(profile);
  if (!settings_path.empty()) c = load_settings_file(settings_path, std::move(c));
  return apply_policy_flags(std::move(c), flags);
}

const std::vector<std::string_view>& profile_names() {
  static const std::vector<std::string_view> names = {"default", "development", "ci", "read-only"};
  return names;
}

Config profile_config(std::string_view name) {
  if (name == "default") return DefaultConfig();
  if (name == "development") return DevelopmentConfig();
  if (name == "ci") return CIConfig();
  if (name == "read-only") return ReadOnlyConfig();
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
