// libFuzzer target for proxy/socks5: the greeting, the username/password message and the
// request, each parsed from the front of the input, then the three in sequence as the
// connection reads them (client_connection.cpp). Checks that a parser never claims bytes it
// was not given, that a complete message is exactly its own length (shorter is incomplete,
// more does not change it), and that the fields are the bytes the client sent.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "proxy/socks5.hpp"

using namespace paddock::proxy::socks5;

namespace {

std::uint8_t at(std::string_view in, std::size_t i) { return static_cast<std::uint8_t>(in[i]); }

// Every strict prefix of a complete message asks for more bytes (the connection parses again
// after each read, so an early verdict would act on half a message), and the message alone
// parses the same as with bytes after it.
template <typename Parse>
void check_prefixes(std::string_view msg, Parse parse) {
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, msg.size() / 2, msg.size() - 1}) {
    if (cut >= msg.size()) continue;
    std::size_t used = 12345;
    FUZZ_CHECK(parse(msg.substr(0, cut), &used) == Status::incomplete);
    FUZZ_CHECK(used == 12345);  // consumed is only written on complete
  }
  std::size_t used = 0;
  FUZZ_CHECK(parse(msg, &used) == Status::complete && used == msg.size());
}

std::size_t check_greeting(std::string_view in, Greeting& g) {
  std::size_t used = 0;
  std::string error;
  const Status s = parse_greeting(in, g, &used, &error);
  if (s == Status::invalid) FUZZ_CHECK(fuzz::one_line(error));
  if (s != Status::complete) return 0;
  FUZZ_CHECK(used >= 3 && used <= in.size() && used == 2u + at(in, 1) && at(in, 0) == kVersion);
  const std::string_view methods = in.substr(2, used - 2);
  FUZZ_CHECK(g.offers_none == (methods.find(char(kMethodNone)) != std::string_view::npos));
  FUZZ_CHECK(g.offers_userpass == (methods.find(char(kMethodUserPass)) != std::string_view::npos));
  check_prefixes(in.substr(0, used), [](std::string_view p, std::size_t* u) {
    Greeting x;
    return parse_greeting(p, x, u, nullptr);
  });
  return used;
}

std::size_t check_userpass(std::string_view in) {
  UserPass up;
  std::size_t used = 0;
  std::string error;
  const Status s = parse_userpass(in, up, &used, &error);
  if (s == Status::invalid) FUZZ_CHECK(fuzz::one_line(error));
  if (s != Status::complete) return 0;
  FUZZ_CHECK(used >= 3 && used <= in.size() && at(in, 0) == 1);
  FUZZ_CHECK(up.user.size() == at(in, 1) && up.user == in.substr(2, up.user.size()));
  FUZZ_CHECK(at(in, 2 + up.user.size()) == up.password.size());
  FUZZ_CHECK(up.password == in.substr(3 + up.user.size(), up.password.size()));
  FUZZ_CHECK(used == 3 + up.user.size() + up.password.size());
  check_prefixes(in.substr(0, used), [](std::string_view p, std::size_t* u) {
    UserPass x;
    return parse_userpass(p, x, u, nullptr);
  });
  return used;
}

std::size_t check_request(std::string_view in) {
  Request req;
  std::size_t used = 0;
  std::string error;
  const Status s = parse_request(in, req, &used, &error);
  if (s == Status::invalid) FUZZ_CHECK(fuzz::one_line(error));
  if (s != Status::complete) return 0;
  FUZZ_CHECK(used <= in.size() && at(in, 0) == kVersion && at(in, 2) == 0);
  FUZZ_CHECK(req.command == at(in, 1));
  FUZZ_CHECK(at(in, 3) == static_cast<std::uint8_t>(req.address_type));
  switch (req.address_type) {
    case AddressType::ipv4:
    case AddressType::ipv6: {
      // The text form converts back to exactly the address bytes sent.
      const bool v4 = req.address_type == AddressType::ipv4;
      const std::size_t len = v4 ? 4 : 16;
      FUZZ_CHECK(used == 4 + len + 2);
      unsigned char bytes[16] = {};
      FUZZ_CHECK(::inet_pton(v4 ? AF_INET : AF_INET6, req.host.c_str(), bytes) == 1);
      FUZZ_CHECK(in.substr(4, len) == std::string_view(reinterpret_cast<char*>(bytes), len));
      break;
    }
    case AddressType::domain:
      // The name as sent, any bytes, length-prefixed: canonicalize_host judges it later.
      FUZZ_CHECK(!req.host.empty() && req.host.size() == at(in, 4));
      FUZZ_CHECK(req.host == in.substr(5, req.host.size()));
      FUZZ_CHECK(used == 5 + req.host.size() + 2);
      break;
    default:
      FUZZ_CHECK(false && "unknown address type accepted");
  }
  FUZZ_CHECK(req.port == ((at(in, used - 2) << 8) | at(in, used - 1)));  // network order
  check_prefixes(in.substr(0, used), [](std::string_view p, std::size_t* u) {
    Request x;
    return parse_request(p, x, u, nullptr);
  });
  return used;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  // Each message on its own, from the front of the input.
  Greeting g;
  check_greeting(in, g);
  check_userpass(in);
  check_request(in);

  // The conversation: greeting, credentials when offered, request; each parser sees only
  // what the one before left over.
  std::string_view rest = in;
  if (std::size_t used = check_greeting(rest, g)) {
    rest.remove_prefix(used);
    if (g.offers_userpass) {
      std::size_t n = check_userpass(rest);
      rest.remove_prefix(n);
      if (n != 0) check_request(rest);
    } else {
      check_request(rest);
    }
  }

  // Replies: fixed ten bytes, the code in the second, an unspecified IPv4 bound address.
  for (unsigned code = 0; code <= 8; ++code) {
    const std::string reply = make_reply(static_cast<Reply>(code));
    FUZZ_CHECK(reply.size() == 10 && at(reply, 0) == kVersion && at(reply, 1) == code &&
               at(reply, 2) == 0 && at(reply, 3) == 1);
    FUZZ_CHECK(reply.substr(4) == std::string(6, '\0'));
  }
  if (size > 0) FUZZ_CHECK(at(make_reply(static_cast<Reply>(data[0])), 1) == data[0]);
  return 0;
}
