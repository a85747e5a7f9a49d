// The proxy's protocol and filter, attacked from a raw socket and from a real curl: every
// bypass attempt is refused with the right answer and recorded as a violation, and what is
// allowed really reaches the host server.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "proxy/proxy_fixture.hpp"
#include "runtime/text_encoding.hpp"
#include "support/harness.hpp"

using namespace std::chrono_literals;

namespace {

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string get(const std::string& path = "/hello.txt") {
  return "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
}

void require_blocked(const std::string& reply) {
  INFO(reply);
  CHECK(reply.rfind("HTTP/1.1 403", 0) == 0);
  CHECK(has(reply, "X-Proxy-Error: blocked-by-allowlist"));
  CHECK(has(reply, "\r\n\r\nConnection blocked by network allowlist: paddock refused "));
  CHECK_FALSE(has(reply, "hello from the host"));
}

std::string socks_request(std::uint8_t cmd, std::uint8_t atyp, const std::string& addr,
                          std::uint16_t port) {
  std::string r{5, static_cast<char>(cmd), 0, static_cast<char>(atyp)};
  if (atyp == 3) r += static_cast<char>(addr.size());
  r += addr;
  r += static_cast<char>(port >> 8);
  r += static_cast<char>(port & 0xff);
  return r;
}

// Greeting offering username/password, then the credential, then `request`.
std::string socks_login(const std::string& credential) {
  auto colon = credential.find(':');
  std::string user = credential.substr(0, colon), pass = credential.substr(colon + 1);
  return std::string{5, 1, 2} + std::string{1, static_cast<char>(user.size())} + user +
         static_cast<char>(pass.size()) + pass;
}

std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return "POPEN-FAILED";
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  return out + "\n[exit " + std::to_string(WEXITSTATUS(status)) + "]";
}

}  // namespace

TEST_CASE("proxy: CONNECT to an allowed host tunnels bytes both ways", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string target = "localhost:" + std::to_string(f.server->port());
  auto reply = f.exchange(f.connect(target), get());
  INFO(reply);
  CHECK(reply.rfind("HTTP/1.1 200 Connection established\r\n\r\n", 0) == 0);
  CHECK(has(reply, "hello from the host"));
  CHECK(f.session->take_violations().empty());
}

TEST_CASE("proxy: no credential or a wrong one gets 407 and a violation", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string target = "localhost:" + std::to_string(f.server->port());
  auto none = f.exchange("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  CHECK(none.rfind("HTTP/1.1 407", 0) == 0);
  CHECK(has(none, "Proxy-Authenticate: Basic"));
  auto wrong = f.exchange("CONNECT " + target + " HTTP/1.1\r\nProxy-Authorization: Basic " +
                          paddock::base64_encode("paddock:guess") + "\r\n\r\n");
  CHECK(wrong.rfind("HTTP/1.1 407", 0) == 0);
  auto plain =
      f.exchange("GET http://" + target + "/hello.txt HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  CHECK(plain.rfind("HTTP/1.1 407", 0) == 0);
  // SOCKS5: a client that offers no username/password gets "no acceptable method".
  auto socks = f.exchange(std::string{5, 1, 0});
  CHECK(socks == std::string{5, char(0xff)});
  auto socks_wrong = f.exchange(socks_login("paddock:guess"));
  CHECK(socks_wrong == std::string{5, 2, 1, 1});
  auto v = f.session->take_violations();
  CHECK(v.size() == 5);
  for (const auto& x : v) CHECK(x.operation == "network");
  CHECK(f.server->requests().empty());  // nothing reached the server
}

TEST_CASE("proxy: unlisted and denied hosts get 403 blocked-by-allowlist", "[proxy]") {
  test::ProxyFixture f({"localhost", "*.example.test"}, {"bad.example.test"});
  f.resolver->table["bad.example.test"] = {"127.0.0.1"};
  require_blocked(f.exchange(f.connect("unlisted.test:443")));
  require_blocked(f.exchange(f.connect("bad.example.test:443")));
  require_blocked(f.exchange("GET http://unlisted.test/ HTTP/1.1\r\nHost: unlisted.test\r\n" +
                             f.auth_header() + "\r\n"));
  auto v = f.session->take_violations();
  REQUIRE(v.size() == 3);
  CHECK(v[0].path == "unlisted.test:443");
  CHECK(has(v[0].detail, "not in network.allowedDomains"));
  CHECK(has(v[1].detail, "deniedDomains"));
  CHECK(v[0].process == "proxy-test");
  CHECK(has(v[0].raw, "CONNECT unlisted.test:443"));
}

TEST_CASE("proxy: *.domain matches strict subdomains only, end to end", "[proxy]") {
  // The subdomain resolves to loopback, which the listed 127.0.0.1 lets us dial.
  test::ProxyFixture f({"*.example.test", "127.0.0.1"});
  for (const char* name :
       {"a.example.test", "example.test", "badexample.test", "a.b.example.test"}) {
    f.resolver->table[name] = {"127.0.0.1"};
  }
  const std::string port = ":" + std::to_string(f.server->port());
  CHECK(has(f.exchange(f.connect("a.example.test" + port), get()), "hello from the host"));
  CHECK(has(f.exchange(f.connect("a.b.example.test" + port), get()), "hello from the host"));
  require_blocked(f.exchange(f.connect("example.test" + port)));
  require_blocked(f.exchange(f.connect("badexample.test" + port)));
}

TEST_CASE("proxy: IP literals in every spelling, mapped forms and zone ids are refused",
          "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string port = ":" + std::to_string(f.server->port());
  for (const char* host :
       {"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "[::1]",
        "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]", "127.0.0.1."}) {
    INFO(host);
    require_blocked(f.exchange(f.connect(host + port)));
  }
  for (const char* host : {"[fe80::1%25lo]", "[fe80::1%lo]", "local%68ost", "[::1"}) {
    INFO(host);
    auto reply = f.exchange(f.connect(host + port));
    CHECK(reply.rfind("HTTP/1.1 400", 0) == 0);
  }
  CHECK(f.session->take_violations().size() == 15);
  CHECK(f.server->requests().empty());
}

TEST_CASE("proxy: a name resolving to loopback or metadata is not dialled unless named",
          "[proxy]") {
  test::ProxyFixture f({"rebind.test", "meta.test", "mixed.test"});
  f.resolver->table["rebind.test"] = {"127.0.0.1"};
  f.resolver->table["meta.test"] = {"169.254.169.254"};
  f.resolver->table["mixed.test"] = {"::ffff:127.0.0.1", "10.0.0.1"};
  const std::string port = ":" + std::to_string(f.server->port());
  auto reply = f.exchange(f.connect("rebind.test" + port));
  require_blocked(reply);
  CHECK(has(reply, "127.0.0.1 (loopback)"));
  require_blocked(f.exchange(f.connect("meta.test:80")));
  require_blocked(f.exchange(f.connect("mixed.test" + port)));
  CHECK(f.server->requests().empty());
}

TEST_CASE("proxy: a port the entry does not allow is refused", "[proxy]") {
  test::ProxyFixture f({"localhost:1"});
  auto reply = f.exchange(f.connect("localhost:" + std::to_string(f.server->port())));
  require_blocked(reply);
  CHECK(has(reply, "allows port 1 only"));
}

TEST_CASE("proxy: absolute-form http is filtered on the URL and rewritten", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string target = "localhost:" + std::to_string(f.server->port());
  auto reply = f.exchange("GET http://" + target + "/hello.txt?x=1 HTTP/1.1\r\nHost: " + target +
                          "\r\nProxy-Connection: keep-alive\r\n" + f.auth_header() +
                          "User-Agent: t\r\n\r\n");
  INFO(reply);
  CHECK(reply.rfind("HTTP/1.0 200", 0) == 0);
  CHECK(has(reply, "hello from the host"));
  auto seen = f.server->requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].rfind("GET /hello.txt?x=1 HTTP/1.1\r\n", 0) == 0);
  CHECK(has(seen[0], "Host: " + target));
  CHECK(has(seen[0], "Connection: close"));
  CHECK(has(seen[0], "User-Agent: t"));
  CHECK_FALSE(has(seen[0], "Proxy-"));  // the credential never leaves the proxy

  // The Host header naming another host than the URL: refused, not forwarded.
  auto mismatch = f.exchange("GET http://" + target + "/hello.txt HTTP/1.1\r\nHost: evil.test\r\n" +
                             f.auth_header() + "\r\n");
  CHECK(mismatch.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(has(mismatch, "does not match"));
  // https in absolute form, smuggling framing, bare LF, oversized heads.
  CHECK(f.exchange("GET https://" + target + "/ HTTP/1.1\r\n" + f.auth_header() + "\r\n")
            .rfind("HTTP/1.1 400", 0) == 0);
  CHECK(f.exchange("POST http://" + target +
                   "/ HTTP/1.1\r\nContent-Length: 3\r\n"
                   "Transfer-Encoding: chunked\r\n" +
                   f.auth_header() + "\r\nabc")
            .rfind("HTTP/1.1 400", 0) == 0);
  CHECK(f.exchange("GET http://" + target + "/ HTTP/1.1\nHost: x\n\n").rfind("HTTP/1.1 400", 0) ==
        0);
  CHECK(f.exchange("GET http://" + target + "/ HTTP/1.1\r\nX: " + std::string(20000, 'a') +
                   "\r\n\r\n")
            .rfind("HTTP/1.1 431", 0) == 0);
  CHECK(f.server->requests().size() == 1);
}

TEST_CASE("proxy: SOCKS5 connects by name, refuses bare IPs, BIND and UDP", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const auto port = f.server->port();
  const std::string ok{5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  const std::string login_ok = std::string{5, 2} + std::string{1, 0};
  auto reply =
      f.exchange(socks_login(f.credential) + socks_request(1, 3, "localhost", port), get());
  INFO(reply);
  CHECK(reply.rfind(login_ok + ok, 0) == 0);
  CHECK(has(reply, "hello from the host"));

  const std::string refused = login_ok + std::string{5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
  CHECK(f.exchange(socks_login(f.credential) +
                   socks_request(1, 1, std::string{127, 0, 0, 1}, port)) == refused);
  CHECK(f.exchange(socks_login(f.credential) +
                   socks_request(1, 4, std::string(15, '\0') + std::string{1}, port)) == refused);
  CHECK(f.exchange(socks_login(f.credential) + socks_request(1, 3, "127.0.0.1", port)) == refused);
  CHECK(f.exchange(socks_login(f.credential) + socks_request(1, 3, "evil.test", port)) == refused);
  const std::string unsupported = login_ok + std::string{5, 7, 0, 1, 0, 0, 0, 0, 0, 0};
  CHECK(f.exchange(socks_login(f.credential) + socks_request(2, 3, "localhost", port)) ==
        unsupported);
  CHECK(f.exchange(socks_login(f.credential) + socks_request(3, 3, "localhost", port)) ==
        unsupported);
  CHECK(f.session->take_violations().size() == 4);
}

TEST_CASE("proxy: a hot reload flips allow and deny for the next request", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string target = "localhost:" + std::to_string(f.server->port());
  CHECK(has(f.exchange(f.connect(target), get()), "hello from the host"));
  f.core->set_rules({"localhost"}, {"localhost"});
  require_blocked(f.exchange(f.connect(target)));
  f.core->set_rules({}, {});
  require_blocked(f.exchange(f.connect(target)));
  f.core->set_rules({"localhost"}, {});
  CHECK(has(f.exchange(f.connect(target), get()), "hello from the host"));
  // An invalid reload is refused and the rules stay as they were.
  CHECK_THROWS_AS(f.core->set_rules({"*"}, {}), paddock::Error);
  CHECK(has(f.exchange(f.connect(target), get()), "hello from the host"));
}

TEST_CASE("proxy: the approval callback decides unknown hosts, and silence denies", "[proxy]") {
  paddock::NetworkHooks hooks;
  hooks.limits.approval_timeout = 300ms;
  std::atomic<int> asked{0};
  hooks.approval = [&asked](const paddock::ApprovalRequest& req,
                            std::function<void(bool)> respond) {
    ++asked;
    if (req.host == "yes.test") {
      std::thread([respond] {  // answered later, from another thread
        std::this_thread::sleep_for(20ms);
        respond(true);
      })
          .detach();
    } else if (req.host == "no.test") {
      respond(false);
    }  // silent.test: never answered
  };
  test::ProxyFixture f({"127.0.0.1"}, {}, hooks);
  for (const char* n : {"yes.test", "no.test", "silent.test"}) f.resolver->table[n] = {"127.0.0.1"};
  const std::string port = ":" + std::to_string(f.server->port());
  CHECK(has(f.exchange(f.connect("yes.test" + port), get()), "hello from the host"));
  require_blocked(f.exchange(f.connect("no.test" + port)));
  auto start = std::chrono::steady_clock::now();
  require_blocked(f.exchange(f.connect("silent.test" + port)));
  CHECK(test::seconds_since(start) >= 0.25);
  CHECK(asked == 3);
  // Denied names and IP literals never reach the callback.
  f.exchange(f.connect("10.1.2.3" + port));
  CHECK(asked == 3);
}

TEST_CASE("proxy: a silent client is dropped at the handshake timeout", "[proxy]") {
  paddock::NetworkHooks hooks;
  hooks.limits.handshake_timeout = 300ms;
  hooks.limits.max_connections_per_session = 2;
  test::ProxyFixture f({"localhost"}, {}, hooks);
  int a = test::connect_loopback(f.port);
  int b = test::connect_loopback(f.port);
  std::this_thread::sleep_for(100ms);
  // Over the per-session budget: closed at once.
  int c = test::connect_loopback(f.port);
  auto start = std::chrono::steady_clock::now();
  CHECK(test::read_all(c, 2000).empty());
  CHECK(test::seconds_since(start) < 1.0);
  // The two silent ones are closed by the proxy after ~300 ms.
  CHECK(test::read_all(a, 3000).empty());
  CHECK(test::seconds_since(start) < 2.0);
  CHECK(test::read_all(b, 3000).empty());
  ::close(a);
  ::close(b);
  ::close(c);
  std::this_thread::sleep_for(100ms);
  CHECK(f.core->open_connections() == 0);
}

TEST_CASE("proxy: a real curl through it (absolute form, CONNECT, SOCKS5)", "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string url = "http://localhost:" + std::to_string(f.server->port()) + "/hello.txt";
  const std::string proxy = "paddock:s3cret@127.0.0.1:" + std::to_string(f.port);
  const std::string curl = "curl -sS --max-time 10 --noproxy '' ";
  CHECK(has(run(curl + "-x http://" + proxy + " " + url), "hello from the host\n\n[exit 0]"));
  CHECK(has(run(curl + "-p -x http://" + proxy + " " + url), "hello from the host\n\n[exit 0]"));
  CHECK(has(run(curl + "-x socks5h://" + proxy + " " + url), "hello from the host\n\n[exit 0]"));
  // socks5:// makes curl resolve locally and send a bare IP: refused.
  CHECK_FALSE(has(run(curl + "-x socks5://" + proxy + " " + url + " 2>&1"), "[exit 0]"));
  auto denied = run(curl + "-i -x http://" + proxy + " http://example.com/");
  CHECK(has(denied, "403"));
  CHECK(has(denied, "Connection blocked by network allowlist: paddock refused example.com:80"));
  CHECK(has(run(curl + "-x http://127.0.0.1:" + std::to_string(f.port) +
                " -o /dev/null -w '%{http_code}' " + url),
            "407"));
}

TEST_CASE("paddock proxy runs the filter on its own, with a credential and JSON logs",
          "[proxy][cli]") {
  test::ProxyFixture site({});  // only for its host server
  const std::string log = site.www + "/proxy.log";
  // Port 0 is not accepted (clients need a known port): pick one from the kernel first.
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  ::close(probe);
  const std::string url = "http://localhost:" + std::to_string(site.server->port()) + "/hello.txt";
  auto out =
      run(std::string(PADDOCK_BINARY) + " proxy --listen 127.0.0.1:" + port +
          " --allow-domain localhost --credential u:pw 2>" + log +
          " & pid=$!; "
          "for i in $(seq 100); do curl -s -o /dev/null --noproxy '' -x http://u:pw@127.0.0.1:" +
          port + " " + url +
          " && break; sleep 0.05; done; "
          "curl -sS --noproxy '' -x http://u:pw@127.0.0.1:" +
          port + " " + url +
          "; "
          "curl -s --noproxy '' -x http://u:pw@127.0.0.1:" +
          port +
          " http://127.1:1/ ; echo; "
          "curl -s -o /dev/null -w '%{http_code}\\n' --noproxy '' -x http://127.0.0.1:" +
          port + " " + url +
          "; "
          "kill -TERM $pid; wait $pid; echo proxy-exit=$?");
  INFO(out);
  CHECK(has(out, "hello from the host\n"));
  CHECK(has(out, "Connection blocked by network allowlist: paddock refused 127.0.0.1:1"));
  CHECK(has(out, "407\n"));
  CHECK(has(out, "proxy-exit=0"));
  auto logged = run("cat " + log);
  CHECK(has(logged, "\"event\":\"allow\""));
  CHECK(has(logged, "\"event\":\"deny\""));
  CHECK(has(logged, "no proxy credential"));
  // Bad arguments are paddock's failure (125), with the reason.
  CHECK(has(run(std::string(PADDOCK_BINARY) + " proxy --listen localhost:1 2>&1"), "[exit 125]"));
  CHECK(
      has(run(std::string(PADDOCK_BINARY) + " proxy --listen 127.0.0.1:1 --allow-domain '*' 2>&1"),
          "network.mode"));
}

// Found in review: the regressions below are its findings, each reproduced first.

TEST_CASE("proxy: naming Content-Length in Connection does not smuggle a second request",
          "[proxy]") {
  test::ProxyFixture f({"localhost"});
  const std::string target = "localhost:" + std::to_string(f.server->port());
  const std::string body = "GET /smuggled HTTP/1.1\r\nHost: internal.example\r\n\r\n";
  f.exchange("POST http://" + target + "/hello.txt HTTP/1.1\r\nHost: " + target +
             "\r\nConnection: Content-Length\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n" + f.auth_header() + "\r\n" + body);
  auto seen = f.server->requests();
  REQUIRE(seen.size() == 1);
  INFO(seen[0]);
  // The forwarded head carries the framing, so the body stays a body.
  CHECK(has(seen[0], "Content-Length: " + std::to_string(body.size())));
}

TEST_CASE("proxy: an approval may take longer than the handshake, silence is a violation",
          "[proxy]") {
  paddock::NetworkHooks hooks;
  hooks.limits.handshake_timeout = 200ms;
  hooks.limits.approval_timeout = 600ms;
  hooks.approval = [](const paddock::ApprovalRequest& req, std::function<void(bool)> respond) {
    if (req.host == "late.test") {
      std::thread([respond] {
        std::this_thread::sleep_for(400ms);  // past the handshake deadline, within approval's
        respond(true);
      }).detach();
    }
  };
  test::ProxyFixture f({"127.0.0.1"}, {}, hooks);
  for (const char* n : {"late.test", "never.test"}) f.resolver->table[n] = {"127.0.0.1"};
  const std::string port = ":" + std::to_string(f.server->port());
  CHECK(has(f.exchange(f.connect("late.test" + port), get(), 3000), "hello from the host"));
  require_blocked(f.exchange(f.connect("never.test" + port)));
  auto v = f.session->take_violations();
  REQUIRE(v.size() == 1);
  CHECK(has(v[0].detail, "approval refused or timed out"));
}

TEST_CASE("proxy: client bytes that are not ASCII are escaped, and the denial still answered",
          "[proxy]") {
  std::vector<paddock::NetworkEvent> events;
  std::mutex m;
  paddock::NetworkHooks hooks;
  hooks.on_event = [&](const paddock::NetworkEvent& e) {
    std::lock_guard lock(m);
    events.push_back(e);
    throw std::runtime_error("a sink that throws must not cost the client its answer");
  };
  test::ProxyFixture f({"localhost"}, {}, hooks);
  const std::string target = "localhost:" + std::to_string(f.server->port());
  auto reply = f.exchange("GET http://" + target + "/ HTTP/1.1\r\nHost: evil\xff.com\r\n" +
                          f.auth_header() + "\r\n");
  CHECK(reply.rfind("HTTP/1.1 400", 0) == 0);
  auto socks = f.exchange(socks_login(f.credential) + socks_request(1, 3, "\xff\x01", 80));
  CHECK(socks == std::string{5, 2, 1, 0} + std::string{5, 2, 0, 1, 0, 0, 0, 0, 0, 0});
  auto v = f.session->take_violations();
  REQUIRE(v.size() == 2);
  for (const auto& x : v) {
    for (unsigned char c : x.path + x.detail + x.raw) CHECK((c >= 0x20 && c < 0x7f));
  }
  CHECK(has(v[1].path, "\\xff\\x01"));
  std::lock_guard lock(m);
  CHECK(events.size() == 2);
}

TEST_CASE("proxy: an allowed name is not dialled at an address a deny entry lists", "[proxy]") {
  test::ProxyFixture f({"public.test", "127.0.0.1"}, {"127.0.0.1"});
  f.resolver->table["public.test"] = {"127.0.0.1"};
  auto reply = f.exchange(f.connect("public.test:" + std::to_string(f.server->port())));
  require_blocked(reply);
  CHECK(has(reply, "denied by network.deniedDomains entry '127.0.0.1'"));
}

TEST_CASE("proxy: one command cannot fill the shared resolver", "[proxy]") {
  paddock::NetworkHooks hooks;
  hooks.limits.max_lookups_per_session = 4;
  // Never answers: every lookup of it holds its slot.
  struct Silent : paddock::Resolver {
    std::vector<Done> held;
    std::mutex m;
    void resolve(const std::string&, Done done) override {
      std::lock_guard lock(m);
      held.push_back(std::move(done));
    }
  };
  auto silent = std::make_shared<Silent>();
  hooks.resolver = silent;
  test::ProxyFixture f({"*.slow.test"}, {}, hooks);
  std::vector<int> waiting;
  for (int i = 0; i < 4; ++i) {
    int fd = test::connect_loopback(f.port);
    test::send_all(fd, f.connect("x" + std::to_string(i) + ".slow.test:80"));
    waiting.push_back(fd);
  }
  std::this_thread::sleep_for(200ms);
  auto start = std::chrono::steady_clock::now();
  auto reply = f.exchange(f.connect("x9.slow.test:80"));
  CHECK(reply.rfind("HTTP/1.1 502", 0) == 0);
  CHECK(has(reply, "too many name lookups in flight"));
  CHECK(test::seconds_since(start) < 1.0);
  {
    std::lock_guard lock(silent->m);
    CHECK(silent->held.size() == 4);
    for (auto& d : silent->held) d(std::make_error_code(std::errc::timed_out), {});
  }
  for (int fd : waiting) ::close(fd);
}

TEST_CASE("proxy: a resolver that throws or drops its callback fails the request, not the budget",
          "[proxy]") {
  // An embedder's Resolver may throw, or lose a lookup without answering. Either way that
  // request fails (or waits) alone: its slot in the command's lookup budget comes back (one
  // slot here, so a leaked one refuses every later name) and the proxy keeps serving.
  struct Odd : paddock::Resolver {
    std::mutex m;
    int dropped = 0;
    void resolve(const std::string& host, Done done) override {
      if (host.starts_with("throw")) throw std::runtime_error("resolver exploded");
      if (host.starts_with("mute")) throw std::runtime_error("");
      if (host.starts_with("drop")) {
        Done gone = std::move(done);  // never called
        std::lock_guard lock(m);
        ++dropped;
        return;
      }
      done({}, {asio::ip::make_address("127.0.0.1")});
    }
  };
  auto odd = std::make_shared<Odd>();
  paddock::NetworkHooks hooks;
  hooks.limits.max_lookups_per_session = 1;
  hooks.resolver = odd;
  test::ProxyFixture f({"*.odd.test", "127.0.0.1"}, {}, hooks);
  const std::string port = std::to_string(f.server->port());
  for (const char* name : {"throw1.odd.test", "throw2.odd.test"}) {
    auto reply = f.exchange(f.connect(std::string(name) + ":" + port));
    CHECK(reply.rfind("HTTP/1.1 502", 0) == 0);
    CHECK(has(reply, "the resolver failed (resolver exploded)"));
  }
  auto mute = f.exchange(f.connect("mute.odd.test:" + port), "", 5000);  // says nothing
  CHECK(mute.rfind("HTTP/1.1 502", 0) == 0);
  CHECK(has(mute, "the resolver failed ()"));
  // A dropped lookup: its connection waits for an answer that never comes, its slot is free.
  int waiting = test::connect_loopback(f.port);
  test::send_all(waiting, f.connect("drop.odd.test:" + port));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    {
      std::lock_guard lock(odd->m);
      if (odd->dropped == 1) break;
    }
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(5ms);
  }
  CHECK(has(f.exchange(f.connect("ok.odd.test:" + port), get()), "hello from the host"));
  ::close(waiting);
}

TEST_CASE("proxy: a name's answer that comes after its loop is gone touches nothing",
          "[proxy][lifetime]") {
  // A resolver answers on a thread of its own, whenever it likes: here after the loop the
  // lookup waits on has been destroyed. The answer once held the lookup's timer, a strand and
  // the session, and posted into (then dropped them after) the dead context
  // (base/off_loop_work.hpp). Now it finds the context's gate closed and touches nothing.
  struct Held : paddock::Resolver {
    std::mutex m;
    std::vector<Done> held;
    void resolve(const std::string&, Done done) override {
      std::lock_guard lock(m);
      held.push_back(std::move(done));
    }
  };
  auto held = std::make_shared<Held>();
  paddock::NetworkHooks hooks;
  hooks.resolver = held;
  auto core = std::make_shared<paddock::proxy::ProxyCore>(std::vector<std::string>{"*.slow.test"},
                                                          std::vector<std::string>{}, hooks);
  const std::string credential = "paddock:s3cret";
  int client = -1;
  std::weak_ptr<paddock::proxy::Session> weak_session;
  {
    auto runtime = std::make_unique<paddock::Runtime>();
    auto session = std::make_shared<paddock::proxy::Session>(core, runtime->executor(),
                                                             "lifetime-test", credential);
    asio::ip::tcp::acceptor acceptor(runtime->executor(), {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = acceptor.local_endpoint().port();
    session->start(std::move(acceptor));
    client = test::connect_loopback(port);
    test::send_all(client,
                   "CONNECT a.slow.test:80 HTTP/1.1\r\nHost: a.slow.test:80\r\n"
                   "Proxy-Authorization: Basic " +
                       paddock::base64_encode(credential) + "\r\n\r\n");
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      {
        std::lock_guard lock(held->m);
        if (!held->held.empty()) break;
      }
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(5ms);
    }
    weak_session = session;
    session.reset();  // the connection still holds it: its loop is what goes now
    runtime.reset();
  }
  // The pending answer holds no session (its acceptor and strand belong to the dead context).
  CHECK(weak_session.expired());
  std::vector<paddock::Resolver::Done> answers;
  {
    std::lock_guard lock(held->m);
    answers.swap(held->held);
  }
  REQUIRE(answers.size() == 1);
  std::thread([&] {
    answers[0]({}, {asio::ip::make_address("127.0.0.1")});
    answers.clear();
  }).join();
  ::close(client);
}
