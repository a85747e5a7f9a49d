// The SOCKS5 side of a client: greeting, username/password, CONNECT (see client_connection.hpp).
#include <asio/write.hpp>

#include "proxy/client_connection.hpp"
#include "proxy/session.hpp"
#include "proxy/socks5.hpp"

namespace paddock::proxy {

asio::awaitable<void> ClientConnection::serve_socks5() {
  std::size_t used = 0;
  std::string error;
  socks5::Greeting greeting;
  socks5::Status st;
  while ((st = socks5::parse_greeting(buffer_, greeting, &used, &error)) ==
         socks5::Status::incomplete) {
    if (!co_await read_more()) co_return;
  }
  if (st == socks5::Status::invalid) co_return;
  buffer_.erase(0, used);

  if (session_->credential()) {
    if (!greeting.offers_userpass) {
      session_->deny("socks5", "", "no proxy credential (SOCKS5 username/password not offered)",
                     "SOCKS5 greeting");
      {
        std::string reply = std::string{char(socks5::kVersion), char(socks5::kNoAcceptableMethod)};
        co_await write_client(std::move(reply));
      }
      co_return;
    }
    std::string choose_userpass{char(socks5::kVersion), char(socks5::kMethodUserPass)};
    if (!co_await write_client(std::move(choose_userpass))) co_return;
    socks5::UserPass up;
    while ((st = socks5::parse_userpass(buffer_, up, &used, &error)) ==
           socks5::Status::incomplete) {
      if (!co_await read_more()) co_return;
    }
    if (st == socks5::Status::invalid) co_return;
    buffer_.erase(0, used);
    const bool ok = credential_ok(up.user + ":" + up.password);
    {
      std::string reply = std::string{1, char(ok ? 0 : 1)};
      co_await write_client(std::move(reply));
    }
    if (!ok) {
      session_->deny("socks5", "", "wrong proxy credential", "SOCKS5 username/password");
      co_return;
    }
  } else {
    const char method =
        greeting.offers_none ? char(socks5::kMethodNone) : char(socks5::kNoAcceptableMethod);
    std::string choice{char(socks5::kVersion), method};
    if (!co_await write_client(std::move(choice)) || !greeting.offers_none) co_return;
  }

  socks5::Request req;
  while ((st = socks5::parse_request(buffer_, req, &used, &error)) == socks5::Status::incomplete) {
    if (!co_await read_more()) co_return;
  }
  if (st == socks5::Status::invalid) {
    {
      std::string reply = socks5::make_reply(socks5::Reply::general_failure);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  buffer_.erase(0, used);
  if (req.command != static_cast<std::uint8_t>(socks5::Command::connect)) {
    // BIND and UDP ASSOCIATE would open paths the filter cannot see (inbound, datagrams).
    {
      std::string reply = socks5::make_reply(socks5::Reply::command_not_supported);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  const std::string raw = "SOCKS5 CONNECT " + req.host + ":" + std::to_string(req.port);
  auto host = net::canonicalize_host(req.host, &error);
  if (!host || req.port == 0) {
    session_->deny("socks5", req.host + ":" + std::to_string(req.port),
                   host ? std::string("port 0") : error, raw);
    {
      std::string reply = socks5::make_reply(socks5::Reply::not_allowed_by_ruleset);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  net::Authority target{std::move(*host), req.port};
  const std::string protocol = "socks5";
  switch (co_await authorize_and_connect(target, protocol, raw)) {
    case Outcome::denied: {
      std::string reply = socks5::make_reply(socks5::Reply::not_allowed_by_ruleset);
      co_await write_client(std::move(reply));
    }
      co_return;
    case Outcome::failed:
      if (!closed_) co_await write_client(socks5::make_reply(socks5::Reply::host_unreachable));
      co_return;
    case Outcome::connected:
      break;
  }
  std::string succeeded = socks5::make_reply(socks5::Reply::succeeded);
  if (!co_await write_client(std::move(succeeded))) co_return;
  if (!buffer_.empty()) {
    auto [ec, n] = co_await asio::async_write(upstream_, asio::buffer(buffer_), nothrow);
    if (ec) co_return;
  }
  std::string().swap(buffer_);
  deadline_ = clock::now() + idle_timeout_;
  co_await relay();
}

}  // namespace paddock::proxy
