// A plain blocking client of the serve protocol for the tests: a socket, JSON lines out, JSON
// lines in with a deadline (poll, never a fixed sleep).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace test {

class LineClient {
 public:
  static LineClient unix_socket(const std::string& path) {
    LineClient c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    c.connected_ = ::connect(c.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    return c;
  }
  static LineClient tcp(const std::string& host, unsigned short port) {
    LineClient c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    c.connected_ = ::connect(c.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    return c;
  }
  LineClient(LineClient&& o) noexcept
      : fd_(o.fd_),
        connected_(o.connected_),
        conn_key_(std::move(o.conn_key_)),
        last_errno_(o.last_errno_),
        buffer_(std::move(o.buffer_)) {
    o.fd_ = -1;
  }
  ~LineClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  int native_handle() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  void send_raw(const std::string& text) {
    std::size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = ::send(fd_, text.data() + off, text.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  void send(nlohmann::json j) {
    if (!conn_key_.empty()) j["conn_key"] = conn_key_;
    send_raw(j.dump() + "\n");
  }
  // A daemon with keyed lines (serve::RequestRules::keyed_lines, the helper's): our hello, and
  // the key its answer gives this connection, sent with every line from then on.
  void greet() {
    send({{"type", "hello"}, {"version", 1}});
    auto hello = next();
    REQUIRE(hello);
    REQUIRE(hello->contains("conn_key"));
    conn_key_ = (*hello)["conn_key"].get<std::string>();
  }
  // The line with descriptors attached to its first byte (SCM_RIGHTS), as a helper's client
  // sends its streams; false when sendmsg failed.
  bool send_with_fds(nlohmann::json j, const std::vector<int>& fds) {
    if (!conn_key_.empty()) j["conn_key"] = conn_key_;
    const std::string text = j.dump() + "\n";
    iovec iov{const_cast<char*>(text.data()), text.size()};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    m.msg_control = control.data();
    m.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    const ssize_t n = ::sendmsg(fd_, &m, MSG_NOSIGNAL);
    if (n > 0 && static_cast<std::size_t>(n) < text.size()) send_raw(text.substr(n));
    return n > 0;
  }

  // The next line, or nullopt at EOF or after `timeout`.
  std::optional<std::string> line(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string out = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return out;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        last_errno_ = n < 0 ? errno : 0;  // 0: the peer closed (EOF)
        return std::nullopt;
      }
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }
  // Why the last line() found no line: the recv errno, 0 for EOF; -1 while none failed.
  int last_errno() const { return last_errno_; }
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto l = line(timeout);
    if (!l) return std::nullopt;
    return nlohmann::json::parse(*l);
  }
  // Events until the one of `type` for `id` (inclusive); fails the test at the deadline.
  std::vector<nlohmann::json> until(const std::string& type, const nlohmann::json& id,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::vector<nlohmann::json> seen;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto e = next(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()));
      if (!e) break;
      seen.push_back(*e);
      if ((*e)["type"] == type && e->value("id", nlohmann::json()) == id) return seen;
    }
    FAIL("no " << type << " for id " << id.dump() << "; saw " << nlohmann::json(seen).dump());
    return seen;
  }
  // Events until one of `type` arrived for each of `ids`, in any order (concurrent commands
  // finish in no fixed order); fails the test at the deadline.
  std::vector<nlohmann::json> until_each(
      const std::string& type, std::vector<nlohmann::json> ids,
      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::vector<nlohmann::json> seen;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!ids.empty() && std::chrono::steady_clock::now() < deadline) {
      auto e = next(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()));
      if (!e) break;
      seen.push_back(*e);
      if ((*e)["type"] == type) std::erase(ids, e->value("id", nlohmann::json()));
    }
    if (!ids.empty()) {
      FAIL("no " << type << " for ids " << nlohmann::json(ids).dump() << "; saw "
                 << nlohmann::json(seen).dump());
    }
    return seen;
  }
  // True when the server closed the connection (EOF) within `timeout`.
  bool closed_by_server(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
    return false;
  }
  const std::string& pending() const { return buffer_; }

 private:
  explicit LineClient(int fd) : fd_(fd) {}
  int fd_;
  bool connected_ = false;
  std::string conn_key_;  // greet()
  int last_errno_ = -1;
  std::string buffer_;
};

}  // namespace test
