// One client of the proxy, from its first byte to the end of its tunnel: sniffs SOCKS5 or
// HTTP, checks the credential, asks the rules (and the approval callback), resolves, dials
// exactly the address it checked, answers, then relays bytes. The protocol fronts live in
// serve_http.cpp and serve_socks5.cpp. A coroutine on a strand of its
// own; every wait is bounded by the connection's deadline (handshake, then idle), which a
// watchdog enforces by closing both sockets.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "net/domain_rules.hpp"
#include "net/host.hpp"

namespace paddock::proxy {

class Session;

// Awaited operations report errors as values: a closed client is routine, not exceptional.
inline constexpr auto nothrow = asio::experimental::as_tuple(asio::use_awaitable);

class ClientConnection : public std::enable_shared_from_this<ClientConnection> {
 public:
  ClientConnection(std::shared_ptr<Session> session, asio::ip::tcp::socket client);
  ~ClientConnection();

  void start();
  // Thread-safe: closes both sockets on the connection's strand.
  void close();

 private:
  using clock = std::chrono::steady_clock;
  enum class Outcome { connected, denied, failed };

  asio::awaitable<void> run();
  asio::awaitable<void> watchdog();
  asio::awaitable<void> serve_http();
  asio::awaitable<void> serve_socks5();
  // Reads more of the client's bytes into buffer_. False on EOF, error or close.
  asio::awaitable<bool> read_more();
  asio::awaitable<bool> write_client(std::string data);
  // The rules, the approval callback, the lookup and the dial. On `denied`, reason_ says why
  // (and the violation is recorded); on `failed`, why the dial did not happen.
  asio::awaitable<Outcome> authorize_and_connect(const net::Authority& target,
                                                 const std::string& protocol,
                                                 const std::string& raw);
  asio::awaitable<bool> ask_approval(const net::Authority& target);
  asio::awaitable<void> relay();  // both directions until both end
  asio::awaitable<void> pump(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to);
  asio::awaitable<bool> forward_body(std::uint64_t remaining);
  bool credential_ok(const std::string& presented) const;
  void bump_idle() { deadline_ = clock::now() + idle_timeout_; }
  void close_now();

  std::shared_ptr<Session> session_;
  asio::strand<asio::any_io_executor> strand_;
  asio::ip::tcp::socket client_;
  asio::ip::tcp::socket upstream_;
  asio::steady_timer watchdog_;
  clock::time_point deadline_;
  std::chrono::milliseconds idle_timeout_;
  std::string buffer_;  // the client's bytes not yet consumed (the handshake)
  std::string reason_;
  bool closed_ = false;
};

}  // namespace paddock::proxy
