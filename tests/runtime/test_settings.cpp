// The settings file: srt's files load and mean what they mean in srt, paddock's sections map
// field by field, every mistake is an error naming the JSON path, and the layering is
// profile, then file, then flags.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "paddock/errors.hpp"
#include "paddock/settings.hpp"
#include "support/settings_text.hpp"

using namespace std::chrono_literals;
using nlohmann::json;
using paddock::Config;
using paddock::NetworkMode;
using Strings = std::vector<std::string>;

namespace {

// A settings file on disk, removed at the end of the test.
struct TempFile {
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path = (std::filesystem::temp_directory_path() /
            ("paddock-settings-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) +
             ".json"))
               .string();
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

Config apply(const std::string& text, Config base = paddock::DefaultConfig()) {
  return test::apply_settings_json(text, std::move(base));
}

std::string error_of(const std::string& text) { return test::settings_error_of(text); }

// srt's README example, as an srt user has it in ~/.srt-settings.json.
constexpr const char* kSrtExample = R"({
  "network": {
    "allowedDomains": ["github.com", "*.github.com", "lfs.github.com", "api.github.com",
                       "npmjs.org", "*.npmjs.org"],
    "deniedDomains": ["malicious.com"]
  },
  "filesystem": {
    "denyRead": ["~/.ssh"],
    "allowWrite": [".", "src/", "test/", "/tmp"],
    "denyWrite": [".env", "config/production.json"]
  }
})";

}  // namespace

TEST_CASE("an srt settings file loads and means what it means in srt", "[settings]") {
  // Listing domains means filtering in srt, and here.
  CHECK(paddock::apply_settings_text(kSrtExample, paddock::DefaultConfig()).sandbox.network.mode ==
        NetworkMode::filtered);

  // With the mode said explicitly, every srt field maps.
  json doc = json::parse(kSrtExample);
  doc["network"]["mode"] = "blocked";
  auto c = paddock::apply_settings(doc, paddock::DefaultConfig());
  const auto& sb = c.sandbox;
  CHECK(sb.network.mode == NetworkMode::blocked);
  CHECK(sb.network.allowed_domains.size() == 6);
  CHECK(sb.network.allowed_domains[1] == "*.github.com");
  CHECK(sb.network.denied_domains == Strings{"malicious.com"});
  CHECK(sb.filesystem.deny_read == Strings{"~/.ssh"});
  CHECK(sb.filesystem.allow_write == Strings{".", "src/", "test/", "/tmp"});
  CHECK(sb.filesystem.deny_write == Strings{".env", "config/production.json"});
  // srt denies writes outside allowWrite: the cwd is writable here only because "." is listed.
  CHECK_FALSE(sb.filesystem.allow_write_cwd);

  // srt's no-network file: an empty allow list is blocked mode.
  auto none = apply(R"({"network": {"allowedDomains": [], "deniedDomains": []},
                        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}})");
  CHECK(none.sandbox.network.mode == NetworkMode::blocked);
  CHECK(none.sandbox.filesystem.allow_write.empty());
  CHECK_FALSE(none.sandbox.filesystem.allow_write_cwd);
  // The sandbox's own loopback stays usable in blocked mode (srt's test servers), unless the
  // file says allowLocalBinding false.
  CHECK(none.sandbox.network.allow_local_binding);
  auto no_local = apply(R"({"network": {"allowedDomains": [], "allowLocalBinding": false}})");
  CHECK(no_local.sandbox.network.mode == NetworkMode::blocked);
  CHECK_FALSE(no_local.sandbox.network.allow_local_binding);
  for (const char* profile : {"default", "development", "ci", "read-only"}) {
    INFO(profile);
    CHECK(paddock::profile_config(profile).sandbox.network.allow_local_binding);
  }
}

TEST_CASE("paddock's own sections map field by field", "[settings]") {
  auto c = apply(R"({
    "network": {"mode": "allowed", "allowedDomains": ["example.com"]},
    "sandbox": {"enabled": false, "fallback": "warn", "hostname": "box-1.local",
                "privateTmp": false, "defaultDenies": false, "allowWriteCwd": false},
    "limits": {"processes": 100, "memoryBytes": 1e9, "openFiles": 256, "cpuSeconds": 30,
               "fileSizeBytes": 0},
    "env": {"allow": ["PATH", "LC_*"]},
    "timeouts": {"defaultSeconds": 1.5, "maxSeconds": 120},
    "output": {"maxBytes": 4096}
  })");
  const auto& sb = c.sandbox;
  CHECK(sb.network.mode == NetworkMode::allowed);  // said explicitly: not inferred
  CHECK_FALSE(sb.enabled);
  CHECK(sb.fallback == paddock::FallbackMode::warn);
  CHECK(sb.hostname == "box-1.local");
  CHECK_FALSE(sb.filesystem.private_tmp);
  CHECK_FALSE(sb.filesystem.default_denies);
  CHECK_FALSE(sb.filesystem.allow_write_cwd);
  CHECK(sb.limits.processes == 100);
  CHECK(sb.limits.memory_bytes == 1000000000);
  CHECK(sb.limits.open_files == 256);
  CHECK(sb.limits.cpu_seconds == 30);
  CHECK(sb.limits.file_size_bytes == 0);
  CHECK(c.env_allow == Strings{"PATH", "LC_*"});
  CHECK(c.default_timeout == 1500ms);
  CHECK(c.max_timeout == 120s);
  CHECK(c.max_output_bytes == 4096);

  // An empty document changes nothing.
  auto d = apply("{}");
  CHECK(d.sandbox.limits.processes == paddock::DefaultConfig().sandbox.limits.processes);
  CHECK(d.sandbox.filesystem.allow_write_cwd);
  // allowWriteCwd said explicitly wins over srt's allowWrite meaning.
  auto w =
      apply(R"({"filesystem": {"allowWrite": ["/data"]}, "sandbox": {"allowWriteCwd": true}})");
  CHECK(w.sandbox.filesystem.allow_write_cwd);
}

TEST_CASE("a wrong type or value is an error naming the JSON path", "[settings]") {
  CHECK(error_of(R"({"filesystem": {"denyRead": ["/a", "/b", 3]}})") ==
        "filesystem.denyRead[2]: expected a string (or {\"path\": \"<path>\", \"literal\": true}), "
        "got number");
  CHECK(error_of(R"({"filesystem": {"allowWrite": "/tmp"}})") ==
        "filesystem.allowWrite: expected an array of strings, got string");
  CHECK(error_of(R"({"filesystem": {"denyWrite": ["/a", ""]}})") ==
        "filesystem.denyWrite[1]: empty path");
  CHECK(error_of(R"({"filesystem": {"denyRead": ["/a\u0000b"]}})") ==
        "filesystem.denyRead[0]: path contains a NUL byte");
  CHECK(error_of(R"({"network": {"allowLocalBinding": 1}})") ==
        "network.allowLocalBinding: expected true or false, got number");
  CHECK(error_of(R"({"network": {"mode": "open"}})") ==
        R"(network.mode: expected "blocked", "filtered" or "allowed", got "open")");
  CHECK(error_of(R"({"network": []})") == "network: expected an object, got array");
  CHECK(error_of(R"({"sandbox": {"fallback": "loud"}})") ==
        R"(sandbox.fallback: expected "strict" or "warn", got "loud")");
  CHECK(error_of(R"({"limits": {"processes": -1}})") ==
        "limits.processes: expected an integer >= 0, got -1");
  CHECK(error_of(R"({"limits": {"openFiles": 1.5}})") ==
        "limits.openFiles: expected an integer >= 0, got 1.5");
  CHECK(error_of(R"({"limits": {"memoryBytes": null}})") ==
        "limits.memoryBytes: expected an integer >= 0, got null");
  CHECK(error_of(R"({"env": {"allow": ["A=B"]}})") ==
        "env.allow[0]: 'A=B' is not a variable name (or NAME* prefix)");
  CHECK(error_of(R"({"output": {"maxBytes": 0}})") ==
        "output.maxBytes: expected an integer > 0, got 0");
  CHECK(error_of(R"({"timeouts": {"maxSeconds": 7200}})") ==
        "timeouts.maxSeconds: 7200 s exceeds the maximum of 3600 s");
  CHECK(error_of(R"({"timeouts": {"defaultSeconds": 0}})") ==
        "timeouts.defaultSeconds: must be more than 0 seconds, got 0 s");
  CHECK_THAT(error_of(R"({"timeouts": {"defaultSeconds": 100, "maxSeconds": 50}})"),
             Catch::StartsWith("timeouts.defaultSeconds: 100000 ms exceeds the maximum 50000 ms"));
  CHECK(error_of("[1]") == "(top level): expected a JSON object, got array");
  // validate() runs at the end and names fields the settings way.
  CHECK_THAT(error_of(R"({"sandbox": {"hostname": "my host"}})"),
             Catch::StartsWith("sandbox.hostname: "));
  CHECK_THAT(error_of(R"({"limits": {"memoryBytes": 512}})"),
             Catch::StartsWith("limits.memoryBytes: 512 bytes is below 16 MiB"));
  CHECK_THAT(error_of(R"({"network": {"mode": "allowed", "deniedDomains": ["x.com"]}})"),
             Catch::StartsWith("network.deniedDomains: "));
  CHECK_THAT(error_of(R"({"network": {"mode": "blocked", "allowedDomains": ["https://x.com"]}})"),
             Catch::StartsWith("network.allowedDomains[0]: 'https://x.com' is a URL"));
}

TEST_CASE("an unknown key is an error naming it, with a suggestion when one is close",
          "[settings]") {
  CHECK(error_of(R"({"filesystem": {"denyReed": []}})") ==
        R"(filesystem.denyReed: unknown key (did you mean "denyRead"?))");
  CHECK(error_of(R"({"network": {"allowedDomain": []}})") ==
        R"(network.allowedDomain: unknown key (did you mean "allowedDomains"?))");
  CHECK(error_of(R"({"filesytem": {}})") ==
        R"(filesytem: unknown key (did you mean "filesystem"?))");
  CHECK(error_of(R"({"limits": {"memory": 1}})") ==
        "limits.memory: unknown key (known here: processes, memoryBytes, openFiles, cpuSeconds, "
        "fileSizeBytes)");
  CHECK_THAT(error_of(R"({"env": {"set": {"A": "1"}}})"),
             Catch::StartsWith("env.set: unknown key"));
  CHECK(error_of(R"({"commands": {"rule": []}})") ==
        R"(commands.rule: unknown key (did you mean "rules"?))");
}

TEST_CASE("the commands section: rules, overrides, program lists, each checked", "[settings]") {
  const paddock::Config c = paddock::apply_settings_text(R"({"commands": {
      "classify": true, "approvalTimeoutSeconds": 30,
      "rules": [{"match": "npm  test", "decision": "allow", "description": "ok"},
                {"match": ["git", "push"], "decision": "sandboxed"}],
      "overrides": {"process-kill": "sandboxed"},
      "allowPrograms": ["git", "npm"], "denyPrograms": ["curl"]}})",
                                                         paddock::DefaultConfig(), "test");
  CHECK(c.commands.approval_timeout == std::chrono::seconds(30));
  REQUIRE(c.commands.custom.rules.size() == 2);
  CHECK(c.commands.custom.rules[0].match == std::vector<std::string>{"npm", "test"});
  CHECK(c.commands.custom.rules[0].decision == paddock::Decision::allow);
  CHECK(c.commands.custom.rules[1].match == std::vector<std::string>{"git", "push"});
  CHECK(c.commands.custom.overrides.at("process-kill") == paddock::Decision::sandboxed);
  CHECK(c.commands.custom.deny_programs == std::vector<std::string>{"curl"});
  CHECK(error_of(R"({"commands": {"rules": [{"match": "npm test"}]}})") ==
        "commands.rules[0]: a rule needs \"decision\"");
  CHECK(error_of(R"({"commands": {"rules": [{"match": "", "decision": "allow"}]}})") ==
        "commands.rules[0].match: no words: name at least the program");
  CHECK_THAT(error_of(R"({"commands": {"rules": [{"match": "x", "decision": "ok"}]}})"),
             Catch::StartsWith("commands.rules[0].decision: expected \"allow\""));
  CHECK_THAT(error_of(R"({"commands": {"overrides": {"nope": "allow"}}})"),
             Catch::StartsWith("commands.overrides.nope: no built-in rule has this name"));
  CHECK_THAT(error_of(R"({"commands": {"overrides": {"unanalysable": "allow"}}})"),
             Catch::Contains("cannot be overridden"));
  CHECK_THAT(error_of(R"({"commands": {"classify": "yes"}})"),
             Catch::StartsWith("commands.classify: expected true or false"));
}

TEST_CASE("settings files: unreadable, not JSON, duplicate keys — with where", "[settings]") {
  auto load = [](const std::string& path) {
    return paddock::load_settings_file(path, paddock::DefaultConfig());
  };
  CHECK_THROWS_WITH(load("/no/such/settings.json"),
                    "settings file /no/such/settings.json: cannot open: No such file or directory");
  CHECK_THROWS_WITH(load("/tmp"), "settings file /tmp: is a directory");

  TempFile bad("{\n  \"network\": {\n    \"mode\": blocked\n  }\n}\n");
  CHECK_THROWS_WITH(load(bad.path), Catch::StartsWith("settings file " + bad.path +
                                                      ": invalid JSON at line 3, column"));
  TempFile empty("  \n");
  CHECK_THROWS_WITH(load(empty.path),
                    "settings file " + empty.path + ": empty (expected a JSON object)");
  TempFile dup(R"({"filesystem": {"denyRead": ["~/.ssh"], "denyRead": ["~/.aws"]}})");
  CHECK_THROWS_WITH(load(dup.path), Catch::StartsWith("settings file " + dup.path +
                                                      ": filesystem.denyRead: duplicate key"));
  TempFile dup_in_array(R"({"x": [1, {"a": 1}, {"a": 1, "a": 2}]})");
  CHECK_THROWS_WITH(load(dup_in_array.path), Catch::Contains(": x[2].a: duplicate key"));
  // Field errors from a file say which file.
  TempFile typo(R"({"filesystem": {"denyRead": [1]}})");
  CHECK_THROWS_WITH(load(typo.path),
                    "settings file " + typo.path +
                        ": filesystem.denyRead[0]: expected a string (or {\"path\": \"<path>\", "
                        "\"literal\": true}), got number");
  TempFile good(R"({"filesystem": {"denyRead": ["~/.aws"]}})");
  CHECK(load(good.path).sandbox.filesystem.deny_read == Strings{"~/.aws"});

  CHECK_THROWS_AS(load(bad.path), paddock::Error);
  try {
    load(bad.path);
  } catch (const paddock::Error& e) {
    CHECK(e.code() == paddock::errc::config_invalid);
  }
}

TEST_CASE("profiles: the presets by name", "[settings]") {
  CHECK(paddock::profile_names() == std::vector<std::string_view>{"default", "development", "ci",
                                                                  "read-only", "agentary",
                                                                  "agenvoy"});
  for (auto name : paddock::profile_names()) {
    CHECK_NOTHROW(paddock::validate(paddock::profile_config(name)));
  }
  auto def = paddock::profile_config("default");
  CHECK(def.sandbox.enabled);
  CHECK(def.sandbox.fallback == paddock::FallbackMode::strict);
  // Filtered with nothing allowed: no network, but every attempt is answered and reported.
  CHECK(def.sandbox.network.mode == NetworkMode::filtered);
  CHECK(def.sandbox.network.allowed_domains.empty());
  CHECK(def.sandbox.filesystem.default_denies);
  CHECK(def.sandbox.filesystem.allow_write_cwd);
  CHECK(def.sandbox.filesystem.private_tmp);
  CHECK(def.sandbox.limits.processes == 4096);
  CHECK(def.sandbox.limits.memory_bytes == 0);

  auto dev = paddock::profile_config("development");
  CHECK(dev.max_output_bytes == 8 * 1024 * 1024);
  CHECK(dev.sandbox.network.allow_local_binding);
  CHECK(dev.sandbox.fallback == paddock::FallbackMode::strict);

  auto ci = paddock::profile_config("ci");
  CHECK(std::find(ci.env_allow.begin(), ci.env_allow.end(), "GITHUB_SHA") != ci.env_allow.end());

  auto ro = paddock::profile_config("read-only");
  CHECK_FALSE(ro.sandbox.filesystem.allow_write_cwd);

  // The strict opt-in profiles: the seeds' word-based policies over the default one.
  const auto decide = [](const paddock::Config& c, const char* script) {
    return paddock::classify_script(script, c.commands.custom).decision;
  };
  const auto agentary = paddock::profile_config("agentary");
  CHECK(decide(agentary, "git checkout -b x") == paddock::Decision::forbidden);
  CHECK(decide(agentary, "sed -i s/a/b/ f") == paddock::Decision::escalated);
  CHECK(decide(agentary, "git commit -m x") == paddock::Decision::sandboxed);
  CHECK(decide(def, "git checkout -b x") == paddock::Decision::sandboxed);
  const auto agenvoy = paddock::profile_config("agenvoy");
  CHECK(decide(agenvoy, "perl -e 1") == paddock::Decision::escalated);
  CHECK(decide(agenvoy, "ssh host id") == paddock::Decision::forbidden);
  CHECK(decide(agenvoy, "make test") == paddock::Decision::sandboxed);
  CHECK(ro.sandbox.filesystem.allow_write.empty());
  CHECK(ro.sandbox.network.mode == NetworkMode::blocked);

  CHECK_THROWS_WITH(paddock::profile_config("readonly"),
                    "profile: unknown profile 'readonly' (valid: default, development, ci, "
                    "read-only, agentary, agenvoy)");
}

TEST_CASE("layering: profile, then the settings file, then flags", "[settings]") {
  TempFile file(R"({"filesystem": {"allowWrite": ["/data"], "denyRead": ["~/.aws"]},
                    "sandbox": {"allowWriteCwd": true, "hostname": "from-file"}})");
  paddock::PolicyFlags flags;
  flags.allow_write = {"/cache"};
  flags.deny_read = {"~/.gnupg"};
  flags.deny_write = {"/data/keep"};
  flags.allow_read = {"~/.aws/config"};
  flags.deny_domains = {"evil.example.com"};
  flags.fallback = "warn";

  // read-only makes nothing writable; the file (on top) makes /data and the cwd writable; the
  // flags append /cache. Lists from the file replace the profile's, flags append to them.
  auto c = paddock::resolve_config("read-only", file.path, flags);
  CHECK(c.sandbox.filesystem.allow_write == Strings{"/data", "/cache"});
  CHECK(c.sandbox.filesystem.allow_write_cwd);
  CHECK(c.sandbox.filesystem.deny_read == Strings{"~/.aws", "~/.gnupg"});
  CHECK(c.sandbox.filesystem.deny_write == Strings{"/data/keep"});
  CHECK(c.sandbox.filesystem.allow_read == Strings{"~/.aws/config"});
  CHECK(c.sandbox.network.denied_domains == Strings{"evil.example.com"});
  CHECK(c.sandbox.hostname == "from-file");
  CHECK(c.sandbox.fallback == paddock::FallbackMode::warn);
  CHECK(c.sandbox.enabled);

  // Without a file: the profile plus the flags.
  paddock::PolicyFlags off;
  off.no_sandbox = true;
  off.network = "allowed";
  auto d = paddock::resolve_config("development", "", off);
  CHECK_FALSE(d.sandbox.enabled);
  CHECK(d.sandbox.network.mode == NetworkMode::allowed);
  CHECK(d.max_output_bytes == 8 * 1024 * 1024);

  // Flag values are checked here, naming the flag.
  paddock::PolicyFlags bad;
  bad.network = "open";
  CHECK_THROWS_WITH(paddock::resolve_config("default", "", bad),
                    "--network: expected blocked, filtered or allowed, got 'open'");
  bad = {};
  bad.fallback = "maybe";
  CHECK_THROWS_WITH(paddock::resolve_config("default", "", bad),
                    "--fallback: expected strict or warn, got 'maybe'");
  bad = {};
  bad.allow_write = {""};
  CHECK_THROWS_WITH(paddock::resolve_config("default", "", bad), "--allow-write: empty value");
  // Allowing a domain asks for filtering (srt's meaning), also from the read-only profile.
  paddock::PolicyFlags allow;
  allow.allow_domains = {"github.com"};
  CHECK(paddock::resolve_config("read-only", "", allow).sandbox.network.mode ==
        NetworkMode::filtered);
  bad = {};
  bad.allow_domains = {"*.com"};
  CHECK_THROWS_WITH(paddock::resolve_config("default", "", bad),
                    Catch::Contains("network.allowedDomains[0]: '*.com' wildcards a top-level"));
  CHECK_THROWS_WITH(paddock::resolve_config("nope", "", {}), Catch::StartsWith("profile: "));
}

TEST_CASE("validate() checks the sandbox policy", "[settings]") {
  auto bad = [](auto mutate) {
    Config c = paddock::DefaultConfig();
    mutate(c);
    try {
      paddock::validate(c);
    } catch (const paddock::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(bad([](Config&) {}).empty());
  CHECK_THAT(bad([](Config& c) { c.sandbox.hostname = ""; }),
             Catch::StartsWith("sandbox.hostname"));
  CHECK_THAT(bad([](Config& c) { c.sandbox.hostname = std::string(65, 'a'); }),
             Catch::StartsWith("sandbox.hostname"));
  CHECK_THAT(bad([](Config& c) { c.sandbox.hostname = "a_b"; }),
             Catch::StartsWith("sandbox.hostname"));
  CHECK_THAT(bad([](Config& c) { c.sandbox.hostname = "-a"; }),
             Catch::StartsWith("sandbox.hostname"));
  CHECK(bad([](Config& c) { c.sandbox.hostname = std::string(64, 'a'); }).empty());
  CHECK(bad([](Config& c) {
          c.sandbox.filesystem.allow_write = {"/a", ""};
        }) == "filesystem.allowWrite[1]: empty path");
  CHECK(bad([](Config& c) { c.sandbox.network.allow_unix_sockets = {""}; }) ==
        "network.allowUnixSockets[0]: empty path");
  CHECK_THAT(bad([](Config& c) {
               c.sandbox.network.allowed_domains = {"ok.com", "a b"};
             }),
             Catch::StartsWith("network.allowedDomains[1]: "));
  CHECK_THAT(bad([](Config& c) { c.sandbox.network.denied_domains = {"fe80::1%eth0"}; }),
             Catch::StartsWith("network.deniedDomains[0]: "));
  CHECK_THAT(bad([](Config& c) { c.sandbox.limits.open_files = 3; }),
             Catch::StartsWith("limits.openFiles"));
  CHECK_THAT(bad([](Config& c) { c.sandbox.limits.processes = 1ull << 40; }),
             Catch::StartsWith("limits.processes"));
  CHECK(bad([](Config& c) { c.sandbox.limits = {}; }).empty());  // 0 = no limit
  CHECK(bad([](Config& c) { c.sandbox.filesystem.home = "home/me"; }) ==
        "filesystem.home: 'home/me' must be an absolute path");
  CHECK(bad([](Config& c) { c.sandbox.filesystem.home = "/home/me"; }).empty());
}

TEST_CASE("network and fallback modes have their strings", "[settings]") {
  for (auto m : {NetworkMode::blocked, NetworkMode::filtered, NetworkMode::allowed}) {
    CHECK(paddock::network_mode_from_string(paddock::to_string(m)) == m);
  }
  CHECK_FALSE(paddock::network_mode_from_string("Blocked").has_value());
  for (auto m : {paddock::FallbackMode::strict, paddock::FallbackMode::warn}) {
    CHECK(paddock::fallback_mode_from_string(paddock::to_string(m)) == m);
  }
}

TEST_CASE("sandbox.allowWriteHome: off by default, on only when said, type-checked", "[settings]") {
  CHECK_FALSE(paddock::DefaultConfig().sandbox.filesystem.allow_write_home);
  for (auto name : paddock::profile_names()) {
    CHECK_FALSE(paddock::profile_config(name).sandbox.filesystem.allow_write_home);
  }
  CHECK(apply(R"({"sandbox": {"allowWriteHome": true}})").sandbox.filesystem.allow_write_home);
  CHECK_FALSE(
      apply(R"({"sandbox": {"allowWriteHome": false}})").sandbox.filesystem.allow_write_home);
  CHECK(error_of(R"({"sandbox": {"allowWriteHome": "yes"}})") ==
        "sandbox.allowWriteHome: expected true or false, got string");
  CHECK(error_of(R"({"sandbox": {"allowWriteHomes": true}})") ==
        R"(sandbox.allowWriteHomes: unknown key (did you mean "allowWriteHome"?))");
  // srt has no such key: in its filesystem section it is unknown, not silently ignored.
  CHECK_THAT(error_of(R"({"filesystem": {"allowWriteHome": true}})"),
             Catch::StartsWith("filesystem.allowWriteHome: unknown key"));
  // The flag turns it on; its absence never turns the file's setting off.
  paddock::PolicyFlags flags;
  flags.allow_write_home = true;
  CHECK(paddock::resolve_config("default", "", flags).sandbox.filesystem.allow_write_home);
  TempFile file(R"({"sandbox": {"allowWriteHome": true}})");
  CHECK(paddock::resolve_config("default", file.path, {}).sandbox.filesystem.allow_write_home);
}
