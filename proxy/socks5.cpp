#include "proxy/socks5.hpp"

#include <arpa/inet.h>

namespace paddock::proxy::socks5 {
namespace {

std::uint8_t byte(std::string_view in, std::size_t i) { return static_cast<std::uint8_t>(in[i]); }

Status invalid(std::string* error, const char* why) {
  if (error != nullptr) *error = why;
  return Status::invalid;
}

}  // namespace

Status parse_greeting(std::string_view in, Greeting& out, std::size_t* consumed,
                      std::string* error) {
  if (in.size() < 2) return Status::incomplete;
  if (byte(in, 0) != kVersion) return invalid(error, "not SOCKS version 5");
  const std::size_t n = byte(in, 1);
  if (n == 0) return invalid(error, "no authentication methods offered");
  if (in.size() < 2 + n) return Status::incomplete;
  out = {};
  for (std::size_t i = 0; i < n; ++i) {
    if (byte(in, 2 + i) == kMethodNone) out.offers_none = true;
    if (byte(in, 2 + i) == kMethodUserPass) out.offers_userpass = true;
  }
  *consumed = 2 + n;
  return Status::complete;
}

Status parse_userpass(std::string_view in, UserPass& out, std::size_t* consumed,
                      std::string* error) {
  if (in.size() < 2) return Status::incomplete;
  if (byte(in, 0) != 1) return invalid(error, "unknown username/password sub-negotiation version");
  const std::size_t ulen = byte(in, 1);
  if (in.size() < 2 + ulen + 1) return Status::incomplete;
  const std::size_t plen = byte(in, 2 + ulen);
  if (in.size() < 3 + ulen + plen) return Status::incomplete;
  out.user.assign(in.substr(2, ulen));
  out.password.assign(in.substr(3 + ulen, plen));
  *consumed = 3 + ulen + plen;
  return Status::complete;
}

Status parse_request(std::string_view in, Request& out, std::size_t* consumed, std::string* error) {
  if (in.size() < 5) return Status::incomplete;
  if (byte(in, 0) != kVersion) return invalid(error, "not SOCKS version 5");
  if (byte(in, 2) != 0) return invalid(error, "reserved byte is not zero");
  out = {};
  out.command = byte(in, 1);
  std::size_t addr_len = 0, addr_at = 4;
  switch (byte(in, 3)) {
    case 1:
      out.address_type = AddressType::ipv4;
      addr_len = 4;
      break;
    case 4:
      out.address_type = AddressType::ipv6;
      addr_len = 16;
      break;
    case 3:
      out.address_type = AddressType::domain;
      addr_len = byte(in, 4);
      addr_at = 5;
      if (addr_len == 0) return invalid(error, "empty domain name");
      break;
    default:
      return invalid(error, "unknown address type");
  }
  if (in.size() < addr_at + addr_len + 2) return Status::incomplete;
  const char* raw = in.data() + addr_at;
  if (out.address_type == AddressType::domain) {
    out.host.assign(raw, addr_len);
  } else {
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(out.address_type == AddressType::ipv4 ? AF_INET : AF_INET6, raw, text,
                sizeof(text));
    out.host = text;
  }
  out.port = static_cast<std::uint16_t>((byte(in, addr_at + addr_len) << 8) |
                                        byte(in, addr_at + addr_len + 1));
  *consumed = addr_at + addr_len + 2;
  return Status::complete;
}

std::string make_reply(Reply code) {
  return std::string{char(kVersion), static_cast<char>(code), 0, 1, 0, 0, 0, 0, 0, 0};
}

}  // namespace paddock::proxy::socks5
