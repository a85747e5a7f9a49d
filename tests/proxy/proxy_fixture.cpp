#include "proxy/proxy_fixture.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "runtime/text_encoding.hpp"
#include "support/harness.hpp"

namespace test {

void MapResolver::resolve(const std::string& host, Done done) {
  auto it = table.find(host);
  if (it == table.end()) return done(std::make_error_code(std::errc::host_unreachable), {});
  std::vector<asio::ip::address> out;
  for (const auto& a : it->second) out.push_back(asio::ip::make_address(a));
  done({}, std::move(out));
}

ProxyFixture::ProxyFixture(std::vector<std::string> allowed, std::vector<std::string> denied,
                           paddock::NetworkHooks hooks) {
  resolver = std::make_shared<MapResolver>();
  resolver->table["localhost"] = {"127.0.0.1"};
  if (!hooks.resolver) hooks.resolver = resolver;
  core = std::make_shared<paddock::proxy::ProxyCore>(allowed, denied, std::move(hooks));
  auto ex = shared_runtime().executor();
  session = std::make_shared<paddock::proxy::Session>(core, ex, "proxy-test", credential);
  asio::ip::tcp::acceptor acceptor(ex, {asio::ip::make_address("127.0.0.1"), 0});
  port = acceptor.local_endpoint().port();
  session->start(std::move(acceptor));

  // The unprivileged run's scratch directory is its own (TEST_SCRATCH_DIR is root's).
  const char* scratch = std::getenv("PADDOCK_TEST_SCRATCH");
  www = std::string(scratch ? scratch : TEST_SCRATCH_DIR) + "/www-" + std::to_string(::getpid());
  std::filesystem::create_directories(www);
  std::ofstream(www + "/hello.txt") << "hello from the host\n";
  server = std::make_unique<HttpServer>(www);
  server->start();
}

ProxyFixture::~ProxyFixture() {
  session->close();
  server.reset();
  std::filesystem::remove_all(www);
}

std::string ProxyFixture::auth_header() const {
  return "Proxy-Authorization: Basic " + paddock::base64_encode(credential) + "\r\n";
}

std::string ProxyFixture::connect(const std::string& target) const {
  return "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth_header() + "\r\n";
}

int connect_loopback(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd, int wait_ms) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string ProxyFixture::exchange(const std::string& request, const std::string& then,
                                   int wait_ms) {
  int fd = connect_loopback(port);
  if (fd < 0) return "CONNECT-FAILED";
  send_all(fd, request);
  std::string out;
  if (!then.empty()) {
    out = read_all(fd, 300);  // the proxy's reply (200 / SOCKS success) comes first
    send_all(fd, then);
  }
  out += read_all(fd, wait_ms);
  ::close(fd);
  return out;
}

}  // namespace test
