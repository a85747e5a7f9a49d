// An in-process proxy (ProxyCore + Session on 127.0.0.1:any) with a fake resolver, a host HTTP
// server behind it, and a raw-socket client: for the proxy's protocol tests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "paddock/network.hpp"
#include "proxy/proxy_core.hpp"
#include "proxy/session.hpp"
#include "support/http_server.hpp"

namespace test {

// Answers from a fixed table (what a hostile DNS server would say); unknown names fail.
class MapResolver : public paddock::Resolver {
 public:
  std::map<std::string, std::vector<std::string>> table;
  void resolve(const std::string& host, Done done) override;
};

struct ProxyFixture {
  explicit ProxyFixture(std::vector<std::string> allowed, std::vector<std::string> denied = {},
                        paddock::NetworkHooks hooks = {});
  ~ProxyFixture();

  // Sends `request` to the proxy and returns everything it answers until it closes (or
  // `wait_ms` of silence). `then` is sent after the first reply (e.g. the tunnelled request).
  std::string exchange(const std::string& request, const std::string& then = "",
                       int wait_ms = 3000);
  std::string auth_header() const;                       // "Proxy-Authorization: Basic ...\r\n"
  std::string connect(const std::string& target) const;  // a CONNECT head with the credential

  std::shared_ptr<MapResolver> resolver;
  std::shared_ptr<paddock::proxy::ProxyCore> core;
  std::shared_ptr<paddock::proxy::Session> session;
  std::string credential = "paddock:s3cret";
  std::uint16_t port = 0;  // the proxy's
  std::string www;         // the host server's root (files: hello.txt)
  std::unique_ptr<HttpServer> server;
};

// A blocking client socket connected to 127.0.0.1:port.
int connect_loopback(std::uint16_t port);
// Reads until EOF or `wait_ms` without data.
std::string read_all(int fd, int wait_ms);
void send_all(int fd, const std::string& data);

}  // namespace test
