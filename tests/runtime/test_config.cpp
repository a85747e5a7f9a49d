// Config validation and the timeout environment overrides: clear errors, never a silent
// fallback, never above the hard cap.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "paddock/config.hpp"
#include "paddock/errors.hpp"
#include "support/harness.hpp"
#include "support/settings_text.hpp"

using namespace std::chrono_literals;

namespace {
struct EnvVar {
  EnvVar(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~EnvVar() { ::unsetenv(name); }
  const char* name;
};
}  // namespace

TEST_CASE("defaults: 10 minutes, capped at 60", "[config]") {
  auto c = paddock::DefaultConfig();
  CHECK(c.default_timeout == 10min);
  CHECK(c.max_timeout == 60min);
}

TEST_CASE("environment overrides apply, but never above the cap", "[config]") {
  {
    EnvVar d("PADDOCK_DEFAULT_TIMEOUT_SECONDS", "30");
    EnvVar m("PADDOCK_MAX_TIMEOUT_SECONDS", "120");
    auto c = paddock::DefaultConfig();
    CHECK(c.default_timeout == 30s);
    CHECK(c.max_timeout == 120s);
  }
  {
    EnvVar m("PADDOCK_MAX_TIMEOUT_SECONDS", "7200");
    CHECK_THROWS_WITH(paddock::DefaultConfig(),
                      Catch::Contains("'7200' exceeds the maximum of 3600 s"));
  }
  {
    EnvVar m("PADDOCK_MAX_TIMEOUT_SECONDS", "60");
    EnvVar d("PADDOCK_DEFAULT_TIMEOUT_SECONDS", "90");
    CHECK_THROWS_WITH(paddock::DefaultConfig(), Catch::Contains("PADDOCK_DEFAULT_TIMEOUT_SECONDS"));
  }
  {
    EnvVar d("PADDOCK_DEFAULT_TIMEOUT_SECONDS", "ten");
    CHECK_THROWS_WITH(paddock::DefaultConfig(), Catch::Contains("got 'ten'"));
  }
}

// One grammar for a length of time (config/durations.hpp): what `--timeout` takes, the
// environment takes, and the settings file's numbers are bounded the same way.
TEST_CASE("a duration reads the same in the environment as on the command line", "[config]") {
  const std::pair<const char*, std::chrono::milliseconds> good[] = {
      {"30", 30s}, {"0.5", 500ms}, {"90s", 90s}, {"2m", 120s}, {"1h", 3600s}, {"0.0001", 1ms}};
  for (const auto& [text, want] : good) {
    INFO(text);
    EnvVar d("PADDOCK_DEFAULT_TIMEOUT_SECONDS", text);
    CHECK(paddock::DefaultConfig().default_timeout == want);
  }
  const std::pair<const char*, const char*> bad[] = {
      {"0", "must be more than 0 seconds, got '0'"},
      {"-1", "must be more than 0 seconds, got '-1'"},
      {"1.5h", "'1.5h' exceeds the maximum of 3600 s"},
      {"1e3", "expected seconds (e.g. 30, 0.5, 90s, 2m, 1h), got '1e3'"},
      {"inf", "expected seconds"},
      {"nan", "expected seconds"},
      {"10 s", "expected seconds"},
      {"", "expected seconds"}};
  for (const auto& [text, why] : bad) {
    INFO(text);
    EnvVar d("PADDOCK_DEFAULT_TIMEOUT_SECONDS", text);
    CHECK_THROWS_WITH(
        paddock::DefaultConfig(),
        Catch::StartsWith("PADDOCK_DEFAULT_TIMEOUT_SECONDS: ") && Catch::Contains(why));
  }
  // The settings file's seconds are numbers, rounded and bounded alike.
  CHECK(test::apply_settings_json(R"({"timeouts": {"defaultSeconds": 0.0001}})").default_timeout ==
        1ms);
  CHECK(test::settings_error_of(R"({"timeouts": {"defaultSeconds": -1}})") ==
        "timeouts.defaultSeconds: must be more than 0 seconds, got -1 s");
  CHECK(test::settings_error_of(R"({"timeouts": {"maxSeconds": 3600.5}})") ==
        "timeouts.maxSeconds: 3600.5 s exceeds the maximum of 3600 s");
}

TEST_CASE("an invalid Config names the field", "[config]") {
  paddock::Config c;
  c.max_timeout = 2h;
  CHECK_THROWS_WITH(paddock::validate(c), Catch::StartsWith("max_timeout:"));
  c = {};
  c.default_timeout = 0ms;
  CHECK_THROWS_WITH(paddock::validate(c), Catch::StartsWith("default_timeout:"));
  c = {};
  c.shell = "sh";
  CHECK_THROWS_WITH(paddock::validate(c), Catch::StartsWith("shell:"));
}

TEST_CASE("a per-call timeout above the cap is refused, not clamped", "[config]") {
  test::Harness h;
  paddock::ExecOptions o;
  o.timeout = 61min;
  auto r = h.exec(test::argv({"/bin/true"}), o);
  CHECK(r.ec == paddock::errc::config_invalid);
  CHECK(r.result.error.find("exceeds the cap") != std::string::npos);
  o.timeout = 0ms;
  CHECK(h.exec(test::argv({"/bin/true"}), o).ec == paddock::errc::config_invalid);
}

TEST_CASE("error codes have their stable strings", "[config]") {
  CHECK(paddock::code_string(paddock::errc::timeout) == "E_TIMEOUT");
  CHECK(paddock::code_string(paddock::errc::spawn_failed) == "E_SPAWN_FAILED");
  CHECK(paddock::code_string(paddock::errc::config_invalid) == "E_CONFIG_INVALID");
  CHECK(paddock::code_string(paddock::errc::manager_closed) == "E_MANAGER_CLOSED");
  CHECK(paddock::code_string(paddock::errc::dependency_missing) == "E_DEPENDENCY_MISSING");
}
