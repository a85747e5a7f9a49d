// srt 0.0.83's settings keys, every one: honoured with srt's meaning, accepted because it has
// no effect on Linux or in paddock (type-checked all the same), or refused with an error that
// names the key and says why — never silently dropped where it changes security or where
// traffic goes. The list follows srt's published schema (dist/sandbox/sandbox-config.js of
// @anthropic-ai/sandbox-runtime 0.0.83).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "paddock/errors.hpp"
#include "paddock/settings.hpp"
#include "support/settings_text.hpp"

using nlohmann::json;
using paddock::Config;
using Strings = std::vector<std::string>;

namespace {

Config apply(const std::string& text) { return test::apply_settings_json(text); }

std::string error_of(const std::string& text) { return test::settings_error_of(text); }

}  // namespace

TEST_CASE("srt keys without effect here are accepted and type-checked", "[settings][srt]") {
  auto c = apply(R"({
    "$schema": "https://example.com/srt.json",
    "network": {"allowedDomains": [], "deniedDomains": [], "allowLocalBinding": true,
                "allowAllUnixSockets": false, "allowMachLookup": ["com.apple.x"],
                "allowPlaintextHeaderSet": false, "ambiguousRequestTarget": "refuse",
                "stripResponseHeaders": [], "refuseOpaqueTunnels": false,
                "requireHostMatch": false},
    "filesystem": {"denyRead": [], "allowRead": ["~/.ssh/known_hosts"], "allowWrite": ["."],
                   "denyWrite": [], "allowGitConfig": false, "disabled": false},
    "ignoreViolations": {"*": ["/usr/bin"]},
    "enableWeakerNestedSandbox": false,
    "enableWeakerNetworkIsolation": true,
    "allowNestedUserNamespaces": false,
    "allowAppleEvents": true,
    "ripgrep": {"command": "rg"},
    "mandatoryDenySearchDepth": 3,
    "allowPty": true,
    "seccomp": {"applyPath": "/usr/lib/srt/apply-seccomp"},
    "bwrapPath": "/usr/bin/bwrap",
    "socatPath": "/usr/bin/socat",
    "javaAgentJarPath": "/opt/srt/agent.jar",
    "windows": {"backend": "mxc"},
    "git": {"safeDirectories": ["/work/repo"]}
  })");
  CHECK(c.sandbox.filesystem.allow_read == Strings{"~/.ssh/known_hosts"});

  CHECK(error_of(R"({"mandatoryDenySearchDepth": 11})") ==
        "mandatoryDenySearchDepth: expected an integer 1-10, got 11");
  CHECK(error_of(R"({"allowPty": "yes"})") == "allowPty: expected true or false, got string");
  CHECK(error_of(R"({"ripgrep": "rg"})") == "ripgrep: expected an object, got string");
  CHECK(error_of(R"({"javaAgentJarPath": 3})") ==
        "javaAgentJarPath: expected a string, got number");
  CHECK(error_of(R"({"network": {"allowMachLookup": "x"}})") ==
        "network.allowMachLookup: expected an array of strings, got string");
}

TEST_CASE("srt keys that change the network are honoured", "[settings][srt]") {
  auto c = apply(R"({"network": {
    "allowedDomains": ["github.com", "api.example.com:443", "[::1]:8080"],
    "deniedDomains": ["*:22", "evil.example.com"],
    "deniedDomainReasons": {"*:22": "SSH is blocked here; use https"},
    "deniedResolvedAddresses": ["10.0.0.0/8", "fd00::/8", "192.0.2.1"],
    "strictAllowlist": true}})");
  const auto& n = c.sandbox.network;
  CHECK(n.mode == paddock::NetworkMode::filtered);
  CHECK(n.denied_domains == Strings{"*:22", "evil.example.com"});
  CHECK(n.denied_domain_reasons.at("*:22") == "SSH is blocked here; use https");
  CHECK(n.denied_resolved_addresses == Strings{"10.0.0.0/8", "fd00::/8", "192.0.2.1"});
  CHECK(n.strict_allowlist);
  CHECK(apply(R"({"network": {"allowedDomains": ["a.com"], "deniedDomains": ["*"]}})")
            .sandbox.network.denied_domains == Strings{"*"});

  CHECK(error_of(R"({"network": {"allowedDomains": ["*"]}})")
            .starts_with("network.allowedDomains[0]: '*' would allow every host"));
  CHECK(error_of(R"({"network": {"allowedDomains": ["a.com"],
                                 "deniedResolvedAddresses": ["10.0.0.0/40"]}})")
            .starts_with("network.deniedResolvedAddresses[0]: '10.0.0.0/40' is not"));
  CHECK(error_of(R"({"network": {"deniedDomainReasons": {"a.com": ""}}})") ==
        "network.deniedDomainReasons.a.com: empty reason");
  CHECK(error_of(R"({"network": {"deniedDomainReasons": ["a"]}})") ==
        "network.deniedDomainReasons: expected an object (deniedDomains entry -> reason), got "
        "array");
  CHECK(error_of(R"({"network": {"strictAllowlist": 1}})") ==
        "network.strictAllowlist: expected true or false, got number");
  // An unfiltered network cannot honour address denials: refused, not ignored.
  CHECK(error_of(R"({"network": {"mode": "allowed",
                                 "deniedResolvedAddresses": ["10.0.0.0/8"]}})")
            .starts_with("network.deniedResolvedAddresses: network.mode allowed does not filter"));
}

TEST_CASE("srt keys paddock cannot honour are refused, naming the key and why", "[settings][srt]") {
  const std::pair<const char*, const char*> refused[] = {
      {R"({"network": {"httpProxyPort": 8080}})", "network.httpProxyPort: paddock filters"},
      {R"({"network": {"socksProxyPort": 1080}})", "network.socksProxyPort: paddock filters"},
      {R"({"network": {"parentProxy": {"http": "http://proxy.corp:3128"}}})",
       "network.parentProxy: an upstream (corporate) proxy is not supported"},
      {R"({"network": {"mitmProxy": {"socketPath": "/tmp/m.sock", "domains": ["a.com"]}}})",
       "network.mitmProxy: routing domains through a MITM proxy is not supported"},
      {R"({"network": {"tlsTerminate": {}}})",
       "network.tlsTerminate: paddock's proxy does not terminate TLS"},
      {R"({"network": {"filterRequest": "x"}})", "network.filterRequest: a per-request callback"},
      {R"({"network": {"stripResponseHeaders": ["set-cookie"]}})",
       "network.stripResponseHeaders: paddock's proxy passes responses through unchanged"},
      {R"({"network": {"refuseOpaqueTunnels": true}})",
       "network.refuseOpaqueTunnels: refusing every CONNECT/SOCKS tunnel"},
      {R"({"network": {"requireHostMatch": true}})",
       "network.requireHostMatch: paddock's proxy checks"},
      {R"({"network": {"allowUnixSockets": ["/var/run/docker.sock"]}})",
       "network.allowUnixSockets: paddock cannot allow single unix sockets on Linux"},
      {R"({"filesystem": {"allowGitConfig": true}})",
       "filesystem.allowGitConfig: paddock keeps every git config read-only"},
      {R"({"filesystem": {"disabled": true}})",
       "filesystem.disabled: dropping every filesystem rule is not a settings-file switch"},
      {R"({"allowNestedUserNamespaces": true})",
       "allowNestedUserNamespaces: paddock's seccomp filter denies new namespaces"},
      {R"({"credentials": {"files": [{"path": "~/.npmrc", "mode": "mask"}]}})",
       "credentials.files[0].mode: mode \"mask\" needs the proxy to terminate TLS"},
      {R"({"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask"}]}})",
       "credentials.envVars[0].mode: mode \"mask\" needs the proxy to terminate TLS"},
      {R"({"credentials": {"awsPairs": [{"accessKeyIdVar": "A", "secretAccessKeyVar": "B"}]}})",
       "credentials.awsPairs: AWS pairs link masked variables"},
  };
  for (const auto& [text, message] : refused) {
    INFO(text);
    CHECK_THAT(error_of(text), Catch::StartsWith(message));
  }
  // Every unix socket is still a choice paddock can honour.
  auto all = apply(R"({"network": {"allowUnixSockets": ["/run/a.sock"],
                                   "allowAllUnixSockets": true}})");
  CHECK(all.sandbox.network.allow_all_unix_sockets);
}

TEST_CASE("srt credentials with mode deny: files unreadable, variables not passed",
          "[settings][srt]") {
  auto c = apply(R"J({
    "filesystem": {"denyRead": ["~/.aws"]},
    "credentials": {
      "files": [{"path": "~/.config/gh/hosts.yml", "mode": "deny"},
                {"path": "/etc/app/token", "mode": "deny", "extract": "token: (\\S+)"}],
      "envVars": [{"name": "GITHUB_TOKEN", "mode": "deny"}, {"name": "NPM_TOKEN", "mode": "deny",
                   "injectHosts": ["registry.npmjs.org"]}],
      "allowPlaintextInject": false,
      "sigv4": {"streaming": "deny"}
    }})J");
  CHECK(c.sandbox.filesystem.deny_read ==
        Strings{"~/.aws", "~/.config/gh/hosts.yml", "/etc/app/token"});
  CHECK(c.env_deny == Strings{"GITHUB_TOKEN", "NPM_TOKEN"});
  // The order of the sections does not matter.
  auto later = apply(R"({"credentials": {"files": [{"path": "/a", "mode": "deny"}]},
                         "filesystem": {"denyRead": ["/b"]}})");
  CHECK(later.sandbox.filesystem.deny_read == Strings{"/b", "/a"});

  CHECK(error_of(R"({"credentials": {"files": [{"path": "/a"}]}})") ==
        "credentials.files[0]: missing \"mode\" (\"deny\" or \"mask\")");
  CHECK(error_of(R"({"credentials": {"files": [{"mode": "deny"}]}})") ==
        "credentials.files[0]: missing \"path\"");
  CHECK(error_of(R"({"credentials": {"envVars": [{"name": "A-B", "mode": "deny"}]}})") ==
        "credentials.envVars[0].name: 'A-B' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
  CHECK(error_of(R"({"credentials": {"envVars": [{"name": "A", "mode": "hide"}]}})") ==
        "credentials.envVars[0].mode: expected \"deny\" or \"mask\", got \"hide\"");
  CHECK_THAT(error_of(R"({"credentials": {"injectHosts": ["a.com"]}})"),
             Catch::StartsWith("credentials.injectHosts: unknown key"));
}

TEST_CASE("srt's {\"path\", \"literal\": true} entries are never globs", "[settings][srt]") {
  auto c = apply(R"({"filesystem": {
    "allowWrite": ["app/[id]", {"path": "app/[id]", "literal": true},
                   {"path": "a*b?\\c", "literal": true}],
    "denyRead": [{"path": "/srv/[x]", "literal": true}],
    "allowRead": [{"path": "~/notes", "literal": true}],
    "denyWrite": [{"path": "*.lock", "literal": true}]}})");
  const auto& fs = c.sandbox.filesystem;
  CHECK(fs.allow_write == Strings{"app/[id]", "app/\\[id]", "a\\*b\\?\\\\c"});
  CHECK(fs.deny_read == Strings{"/srv/\\[x]"});
  CHECK(fs.allow_read == Strings{"~/notes"});
  CHECK(fs.deny_write == Strings{"\\*.lock"});

  for (const char* bad : {R"({"filesystem": {"allowWrite": [{"path": "/a"}]}})",
                          R"({"filesystem": {"allowWrite": [{"path": "/a", "literal": false}]}})",
                          R"({"filesystem": {"allowWrite": [{"path": "/a", "literal": true,
                                                             "x": 1}]}})",
                          R"({"filesystem": {"allowWrite": [{"literal": true, "p": "/a"}]}})"}) {
    INFO(bad);
    CHECK(error_of(bad) ==
          "filesystem.allowWrite[0]: expected a path, or {\"path\": \"<path>\", \"literal\": "
          "true}");
  }
  CHECK(error_of(R"({"filesystem": {"denyRead": [{"path": "", "literal": true}]}})") ==
        "filesystem.denyRead[0].path: empty path");
}
