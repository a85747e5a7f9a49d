#include "paddock/config.hpp"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>

#include "paddock/errors.hpp"

namespace paddock {
namespace {

std::string ms(std::chrono::milliseconds v) { return std::to_string(v.count()) + " ms"; }

// A whole number of seconds, > 0, from the environment; nullopt when unset.
std::optional<std::chrono::milliseconds> seconds_from_env(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  std::string_view text(raw);
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
    throw Error(errc::config_invalid, std::string(name) +
                                          ": expected a whole number of seconds "
                                          "greater than 0, got '" +
                                          std::string(text) + "'");
  }
  if (value > kHardTimeoutCap.count() / 1000) {
    throw Error(errc::config_invalid, std::string(name) + ": " + std::string(text) +
                                          " s exceeds the hard cap of " +
                                          std::to_string(kHardTimeoutCap.count() / 1000) + " s");
  }
  return std::chrono::seconds(value);
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
  if (c.exit_drain.count() < 0) bad("exit_drain", "must not be negative");
  if (c.shell.empty() || c.shell.front() != '/') bad("shell", "must be an absolute path");
  for (const auto& name : c.env_allow) {
    if (name.empty() || name.find('=') != std::string::npos) {
      bad("env_allow", "entry '" + name + "' is not a variable name (or NAME* prefix)");
    }
  }
}

Config apply_environment_overrides(Config c) {
  if (auto max = seconds_from_env("PADDOCK_MAX_TIMEOUT_SECONDS")) {
    c.max_timeout = *max;
    if (c.default_timeout > c.max_timeout) c.default_timeout = c.max_timeout;
  }
  if (auto def = seconds_from_env("PADDOCK_DEFAULT_TIMEOUT_SECONDS")) {
    if (*def > c.max_timeout) {
      throw Error(errc::config_invalid, "PADDOCK_DEFAULT_TIMEOUT_SECONDS: " + ms(*def) +
                                            " exceeds the maximum " + ms(c.max_timeout));
    }
    c.default_timeout = *def;
  }
  return c;
}

Config DefaultConfig() { return apply_environment_overrides(Config{}); }

Config DevelopmentConfig() {
  Config c = DefaultConfig();
  c.max_output_bytes = 8 * 1024 * 1024;  // a developer reads whole build logs
  return c;
}

Config CIConfig() {
  Config c = DefaultConfig();
  // CI metadata a build script reads; named one by one so GITHUB_TOKEN & co. stay out.
  for (const char* name : {"GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_SHA", "GITHUB_REF",
                           "RUNNER_OS", "RUNNER_TEMP", "GITLAB_CI", "CI_COMMIT_SHA"}) {
    c.env_allow.emplace_back(name);
  }
  return c;
}

}  // namespace paddock
