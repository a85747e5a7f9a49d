#include "client/endpoint.hpp"

#include <sys/un.h>

#include "paddock/errors.hpp"

namespace paddock::client {

Endpoint parse_endpoint(const std::string& text, const std::string& what) {
  Endpoint e;
  auto bad = [&](const std::string& why) {
    throw Error(errc::config_invalid, what + " " + text + ": " + why);
  };
  if (text.rfind("unix:", 0) == 0) {
    e.unix_socket = true;
    e.path = text.substr(5);
    if (e.path.empty()) bad("no path after unix:");
    if (e.path.size() >= sizeof(sockaddr_un{}.sun_path)) bad("path too long for a unix socket");
    return e;
  }
  if (text.rfind("tcp:", 0) != 0) bad("expected unix:PATH or tcp:HOST:PORT");
  const std::string rest = text.substr(4);
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      bad("expected tcp:[IPV6]:PORT");
    }
    e.host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) bad("expected tcp:HOST:PORT");
    e.host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (e.host.find(':') != std::string::npos)
      bad("an IPv6 host goes in brackets: tcp:[HOST]:PORT");
  }
  if (e.host.empty()) bad("expected tcp:HOST:PORT, with a host");
  if (e.host == "localhost") e.host = "127.0.0.1";  // the name everyone types
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoul(port) > 65535) {
    bad("port must be 0-65535");
  }
  e.port = static_cast<unsigned short>(std::stoul(port));
  return e;
}

}  // namespace paddock::client
