#include "support/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace test {

HttpServer::HttpServer(std::string root, std::uint16_t port) : root_(std::move(root)) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::listen(listener_, 128) != 0) {
    throw std::runtime_error(std::string("test http server: bind/listen failed: ") +
                             std::strerror(errno));
  }
  socklen_t len = sizeof(a);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
}

HttpServer::~HttpServer() {
  stop();
  ::close(listener_);
}

void HttpServer::start() {
  thread_ = std::thread([this] { run(); });
}

void HttpServer::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> HttpServer::requests() {
  std::lock_guard lock(mutex_);
  return requests_;
}

void HttpServer::run() {
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) serve(fd);
  }
}

void HttpServer::serve(int fd) {
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(head.substr(0, head.find("\r\n\r\n")));
  }
  std::string path = "/";
  auto sp1 = head.find(' ');
  auto sp2 = sp1 == std::string::npos ? sp1 : head.find(' ', sp1 + 1);
  if (sp2 != std::string::npos) path = head.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  std::string reply;
  std::ifstream in(
      path.find("..") == std::string::npos ? root_ + path : std::string("/nonexistent"),
      std::ios::binary);
  if (in && path.back() != '/') {
    std::stringstream body;
    body << in.rdbuf();
    std::string b = body.str();
    reply = "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(b.size()) +
            "\r\nContent-Type: application/octet-stream\r\n\r\n" + b;
  } else {
    reply = "HTTP/1.0 404 Not Found\r\nContent-Length: 10\r\n\r\nnot found\n";
  }
  std::size_t off = 0;
  while (off < reply.size()) {
    ssize_t n = ::send(fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace test
