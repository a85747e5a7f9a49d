// One proxied request's outcome (paddock/network.hpp's hooks, ExecOptions::on_network): plain
// data, with no Asio in it, so the protocol and the command headers can name it.
#pragma once

#include <functional>
#include <string>

namespace paddock {

// One proxied request's outcome, for structured logs.
struct NetworkEvent {
  bool allowed = false;
  std::string protocol;  // "connect", "http", "socks5"
  std::string target;    // host:port as asked
  std::string address;   // the address dialled (allowed only)
  std::string reason;    // denied: why
  std::string process;   // the command (or the standalone proxy's client) that asked
};
using NetworkEventSink = std::function<void(const NetworkEvent&)>;

}  // namespace paddock
