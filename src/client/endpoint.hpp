// A daemon's address as users write it: "unix:PATH" or "tcp:HOST:PORT", an IPv6 host in
// brackets. One grammar for `paddock serve --listen` and `--http`, `paddock run --connect`
// and ServeClient::async_connect (where a host may also be a name, resolved when connecting).
#pragma once

#include <string>

namespace paddock::client {

struct Endpoint {
  bool unix_socket = false;
  std::string path;  // unix
  std::string host;  // tcp: as written, brackets removed; "localhost" is 127.0.0.1
  unsigned short port = 0;
};

// Throws Error(config_invalid) "<what> <text>: <why>"; `what` names the option or field.
Endpoint parse_endpoint(const std::string& text, const std::string& what);

}  // namespace paddock::client
