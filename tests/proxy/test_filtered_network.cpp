// Filtered network mode end to end: real clients (curl, git) inside a real sandbox, a real
// server on the host, the proxy's listener inside the sandbox's network namespace. Each
// bypass attempt fails and the host server sees nothing it should not.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/harness.hpp"
#include "support/http_server.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

paddock::Config filtered(std::vector<std::string> allowed, std::vector<std::string> denied = {}) {
  paddock::Config c = test::unclassified();
  c.sandbox.network.mode = paddock::NetworkMode::filtered;
  c.sandbox.network.allowed_domains = std::move(allowed);
  c.sandbox.network.denied_domains = std::move(denied);
  return c;
}

struct HostSite {
  HostSite() {
    root = fs::path(std::getenv("PADDOCK_TEST_SCRATCH") ? std::getenv("PADDOCK_TEST_SCRATCH")
                                                        : TEST_SCRATCH_DIR) /
           ("site-" + std::to_string(::getpid()));
    fs::create_directories(root);
    std::ofstream(root / "hello.txt") << "hello from the host\n";
    server = std::make_unique<test::HttpServer>(root.string());
    server->start();
    url = "http://localhost:" + std::to_string(server->port());
  }
  ~HostSite() {
    server.reset();
    fs::remove_all(root);
  }
  fs::path root;
  std::unique_ptr<test::HttpServer> server;
  std::string url;
};

paddock::ExecResult run(test::Harness& h, const std::string& script, const std::string& cwd = "") {
  paddock::ExecOptions o;
  o.timeout = 30s;
  if (!cwd.empty()) o.cwd = cwd;
  auto r = h.exec(test::sh(script), o);
  INFO(script << "\n--- stdout:\n"
              << r.result.stdout_data << "--- stderr:\n"
              << r.result.stderr_data << r.result.error);
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  return r.result;
}

const std::string curl = "curl -sS --max-time 10 ";

}  // namespace

TEST_CASE("filtered: an allowed host server is reached through the proxy", "[network]") {
  HostSite site;
  test::Harness h(filtered({"localhost"}));
  // --noproxy '': localhost is in NO_PROXY (the sandbox's own loopback); this asks for the host's.
  auto r = run(h, curl + "--noproxy '' " + site.url + "/hello.txt && " + curl + "-p --noproxy '' " +
                      site.url + "/hello.txt");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == "hello from the host\nhello from the host\n");
  CHECK(r.violations.empty());
  CHECK(site.server->requests().size() == 2);
}

TEST_CASE("filtered: a server started inside the sandbox is reached on its own loopback",
          "[network]") {
  HostSite site;
  // The shell inside starts the server: a copy next to the site, since a build tree under
  // /tmp (private in the sandbox) is not visible there.
  const std::string server = site.root.string() + "/http-server";
  std::filesystem::copy_file(HTTP_SERVER_BINARY, server,
                             std::filesystem::copy_options::overwrite_existing);
  test::Harness h(filtered({}));
  // Same port number as the host's server: the sandbox's loopback is its own.
  const std::string port = std::to_string(site.server->port());
  auto r = run(h, server + " " + site.root.string() + " " + port +
                      " 5 > /dev/null & for i in $(seq 100); do " + curl +
                      "http://localhost:" + port + "/hello.txt && break; sleep 0.05; done");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == "hello from the host\n");
  CHECK(site.server->requests().empty());  // not the host's server
  CHECK(r.violations.empty());
}

TEST_CASE("filtered: denied and unlisted hosts get the 403 message and a violation", "[network]") {
  test::Harness h(filtered({"*.allowed.test"}, {"bad.allowed.test"}));
  auto r = run(h, curl + "-i http://unlisted.test/; " + curl + "https://bad.allowed.test/ 2>&1");
  CHECK(has(r.stdout_data, "403"));
  CHECK(has(r.stdout_data, "X-Proxy-Error: blocked-by-allowlist"));
  // srt's exact sentence first (tools around srt look for it), then paddock's detail.
  CHECK(has(r.stdout_data,
            "Connection blocked by network allowlist: paddock refused unlisted.test:80: "));
  CHECK(has(r.stdout_data, "CONNECT tunnel failed, response 403"));
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].operation == "network");
  CHECK(r.violations[0].path == "unlisted.test:80");
  CHECK(r.violations[1].path == "bad.allowed.test:443");
  CHECK(has(r.violations[1].detail, "deniedDomains"));
  CHECK(has(r.violations[0].process, "sh"));  // /bin/bash or /bin/sh
}

TEST_CASE("filtered: bypasses fail (direct TCP, UDP, DNS, IP literals, no credential)",
          "[network]") {
  HostSite site;
  test::Harness h(filtered({"localhost"}));
  const std::string port = std::to_string(site.server->port());
  const std::string hostport = "127.0.0.1:" + port;
  auto r = run(h,
               // 1. direct TCP to the host's server, without the proxy
               curl + "--noproxy '*' http://" + hostport + "/hello.txt; echo direct=$?; " +
                   // 2. the proxy asked for IP literals in other spellings
                   curl + "--noproxy '' http://127.1:" + port +
                   "/hello.txt -o /dev/null -w '%{http_code} '; " + curl +
                   "--noproxy '' http://2130706433:" + port +
                   "/hello.txt -o /dev/null -w '%{http_code} '; " + curl +
                   "--noproxy '' -g 'http://[::ffff:127.0.0.1]:" + port +
                   "/hello.txt' -o /dev/null -w '%{http_code} '; " + curl +
                   "--noproxy '' -x \"$ALL_PROXY\" http://127.0.0.1:" + port +
                   "/hello.txt; echo socksip=$?; " +
                   // 3. the proxy without the credential, and with a wrong one
                   curl + "--noproxy '' -x http://127.0.0.1:3128 http://localhost:" + port +
                   "/hello.txt -o /dev/null -w '%{http_code} '; " + curl +
                   "--noproxy '' -x http://paddock:wrong@127.0.0.1:3128 http://localhost:" + port +
                   "/hello.txt -o /dev/null -w '%{http_code}\\n'; " +
                   // 4. DNS and UDP: no resolver, no route
                   "getent hosts example.com; echo dns=$?; " + ATTACK_BINARY +
                   " tcp 8.8.8.8 53; echo tcp=$?; " +
                   // 5. taking the proxy's port to impersonate it: it is bound (by our listener)
                   "python3 -c \"import socket; s=socket.socket(); "
                   "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                   "s.bind(('127.0.0.1', 3128))\" 2>/dev/null; echo bind3128=$?");
  CHECK(has(r.stdout_data, "direct=7"));  // connection refused: nothing listens in the sandbox
  CHECK(has(r.stdout_data, "403 403 403 "));
  CHECK(has(r.stdout_data, "socksip=97"));  // curl's "SOCKS5 connect refused"
  CHECK(has(r.stdout_data, "407 407\n"));
  CHECK(has(r.stdout_data, "dns=2"));
  CHECK_FALSE(has(r.stdout_data, "tcp=0"));
  CHECK(has(r.stdout_data, "bind3128=1"));
  CHECK_FALSE(has(r.stdout_data, "hello from the host"));
  CHECK(r.violations.size() == 6);
  CHECK(site.server->requests().empty());
}

TEST_CASE("filtered: git clones over http from an allowed host server", "[network]") {
  HostSite site;
  // A bare repository served by the dumb HTTP protocol (static files).
  const std::string repo = (site.root / "repo.git").string();
  const std::string work = (site.root / "work").string();
  REQUIRE(std::system(("git init -q " + work + " && cd " + work +
                       " && echo content > file.txt && git add file.txt && "
                       "git -c user.email=t@t -c user.name=t commit -qm one && "
                       "git clone -q --bare " +
                       work + " " + repo + " && git -C " + repo + " update-server-info")
                          .c_str()) == 0);
  fs::path ws = site.root / "ws";
  fs::create_directories(ws);
  ::chown(ws.c_str(), ::geteuid(), ::getegid());
  test::Harness h(filtered({"localhost"}));
  auto r = run(
      h, "NO_PROXY= no_proxy= git clone -q " + site.url + "/repo.git clone && cat clone/file.txt",
      ws.string());
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == "content\n");
  CHECK(fs::exists(ws / "clone" / ".git"));
  bool via_proxy_rewrite = false;
  for (const auto& req : site.server->requests()) {
    if (has(req, "GET /repo.git/info/refs")) via_proxy_rewrite = has(req, "Connection: close");
  }
  CHECK(via_proxy_rewrite);  // the proxy's rewrite, not a direct request
}

TEST_CASE("filtered: update_config flips allow and deny for the next command", "[network]") {
  HostSite site;
  auto cfg = filtered({});
  test::Harness h(cfg);
  const std::string cmd = curl + "--noproxy '' " + site.url + "/hello.txt";
  CHECK(run(h, cmd).violations.size() == 1);
  cfg.sandbox.network.allowed_domains = {"localhost"};
  h.manager.update_config(cfg);
  CHECK(h.manager.config().sandbox.network.allowed_domains.size() == 1);
  auto r = run(h, cmd);
  CHECK(r.stdout_data == "hello from the host\n");
  CHECK(r.violations.empty());
  cfg.sandbox.network.denied_domains = {"localhost"};
  h.manager.update_config(cfg);
  CHECK(run(h, cmd).violations.size() == 1);
  // Only the domain lists may change on a running Manager.
  auto other = cfg;
  other.max_output_bytes = 5;
  CHECK_THROWS_AS(h.manager.update_config(other), paddock::Error);
  auto bad = cfg;
  bad.sandbox.network.allowed_domains = {"*"};
  CHECK_THROWS_AS(h.manager.update_config(bad), paddock::Error);
}

TEST_CASE("filtered: srt's '*:port', deniedDomainReasons and deniedResolvedAddresses, end to end",
          "[network]") {
  HostSite site;
  const std::string port = std::to_string(site.server->port());
  const std::string cmd = curl + "--noproxy '' -i " + site.url + "/hello.txt";
  {
    auto cfg = filtered({"localhost"}, {"*:" + port});
    cfg.sandbox.network.denied_domain_reasons = {{"*:" + port, "this port is off limits"}};
    test::Harness h(cfg);
    auto r = run(h, cmd);
    CHECK(has(r.stdout_data, "403"));
    CHECK(has(r.stdout_data, "this port is off limits"));
    REQUIRE(r.violations.size() == 1);
    CHECK(has(r.violations[0].detail, "deniedDomains entry '*:" + port + "': this port is off"));
    CHECK(site.server->requests().empty());
  }
  {
    auto cfg = filtered({"localhost"}, {"*"});
    test::Harness h(cfg);
    CHECK(run(h, cmd).violations.size() == 1);
    CHECK(site.server->requests().empty());
  }
  {
    // `localhost` names loopback, but the user's ranges take it away again.
    auto cfg = filtered({"localhost"});
    cfg.sandbox.network.denied_resolved_addresses = {"127.0.0.0/8", "::1"};
    test::Harness h(cfg);
    auto r = run(h, cmd);
    REQUIRE(r.violations.size() == 1);
    CHECK(has(r.violations[0].detail, "deniedResolvedAddresses"));
    CHECK(site.server->requests().empty());
    // An unrelated range leaves it alone.
    cfg.sandbox.network.denied_resolved_addresses = {"10.0.0.0/8"};
    h.manager.update_config(cfg);
    r = run(h, cmd);
    CHECK(r.violations.empty());
    CHECK(has(r.stdout_data, "hello from the host"));
    CHECK(site.server->requests().size() == 1);
  }
}

TEST_CASE("filtered: a call's own domain lists narrow the Manager's, never widen them",
          "[network][call-policy]") {
  HostSite site;
  const std::string port = std::to_string(site.server->port());
  test::Harness h(filtered({"localhost", "*.allowed.test"}));
  const std::string cmd = curl + "--noproxy '' " + site.url + "/hello.txt";
  auto with = [&](paddock::CallPolicy policy) {
    paddock::ExecOptions o;
    o.timeout = 30s;
    o.policy = std::move(policy);
    auto r = h.exec(test::sh(cmd), o);
    INFO(r.result.error << r.result.stderr_data);
    REQUIRE_FALSE(r.ec);
    return r.result;
  };
  paddock::CallPolicy only_other;
  only_other.allowed_domains = std::vector<std::string>{"*.allowed.test"};
  auto r = with(only_other);
  REQUIRE(r.violations.size() == 1);
  CHECK(has(r.violations[0].detail, "policy.allowed_domains"));

  paddock::CallPolicy deny_port;
  deny_port.denied_domains = {"localhost:" + port};
  r = with(deny_port);
  REQUIRE(r.violations.size() == 1);
  CHECK(has(r.violations[0].detail, "policy.denied_domains entry 'localhost:" + port + "'"));

  paddock::CallPolicy none;
  none.allowed_domains = std::vector<std::string>{};
  CHECK(with(none).violations.size() == 1);
  CHECK(site.server->requests().empty());

  // Listing localhost for the call: reached (the Manager allows it too).
  paddock::CallPolicy same;
  same.allowed_domains = std::vector<std::string>{"localhost"};
  r = with(same);
  CHECK(r.violations.empty());
  CHECK(r.stdout_data == "hello from the host\n");
  CHECK(site.server->requests().size() == 1);
  // Deny-only: the rest of what the Manager allows stays reachable, loopback included.
  paddock::CallPolicy deny_other;
  deny_other.denied_domains = {"*.allowed.test", "*:22"};
  r = with(deny_other);
  CHECK(r.violations.empty());
  CHECK(site.server->requests().size() == 2);

  // A host the Manager does not allow stays denied whatever the call lists.
  test::Harness narrow(filtered({"*.allowed.test"}));
  paddock::ExecOptions o;
  o.timeout = 30s;
  o.policy.allowed_domains = std::vector<std::string>{"localhost"};
  auto widened = narrow.exec(test::sh(cmd), o);
  REQUIRE_FALSE(widened.ec);
  REQUIRE(widened.result.violations.size() == 1);
  CHECK(has(widened.result.violations[0].detail, "network.allowedDomains"));
  CHECK(site.server->requests().size() == 2);

  // Bad lists are refused before anything runs, naming the field.
  o.policy.allowed_domains = std::vector<std::string>{"*"};
  auto bad = narrow.exec(test::sh("true"), o);
  CHECK(bad.ec == paddock::errc::config_invalid);
  CHECK(has(bad.result.error, "policy.allowed_domains[0]"));
  o.policy.allowed_domains.reset();
  o.policy.denied_domains = {"exa mple.com"};
  bad = narrow.exec(test::sh("true"), o);
  CHECK(has(bad.result.error, "policy.denied_domains[0]"));
  o.policy.denied_domains = {"*:22"};
  o.policy.network = paddock::NetworkMode::blocked;
  bad = narrow.exec(test::sh("true"), o);
  CHECK(has(bad.result.error, "policy.denied_domains: domain lists apply to the filtered network"));
}
