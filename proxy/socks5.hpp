// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929): the three client
// messages, parsed from the front of a buffer. Pure and allocation-bounded, so it can be
// fuzzed alone; the connection (client_connection.cpp) drives the exchange.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace paddock::proxy::socks5 {

inline constexpr std::uint8_t kVersion = 5;
inline constexpr std::uint8_t kMethodNone = 0x00;
inline constexpr std::uint8_t kMethodUserPass = 0x02;
inline constexpr std::uint8_t kNoAcceptableMethod = 0xff;

enum class Command : std::uint8_t { connect = 1, bind = 2, udp_associate = 3 };
enum class AddressType : std::uint8_t { ipv4 = 1, domain = 3, ipv6 = 4 };

// Reply codes (RFC 1928 section 6).
enum class Reply : std::uint8_t {
  succeeded = 0,
  general_failure = 1,
  not_allowed_by_ruleset = 2,
  network_unreachable = 3,
  host_unreachable = 4,
  connection_refused = 5,
  ttl_expired = 6,
  command_not_supported = 7,
  address_type_not_supported = 8,
};

enum class Status { complete, incomplete, invalid };

struct Greeting {
  bool offers_none = false;
  bool offers_userpass = false;
};

struct UserPass {
  std::string user, password;
};

struct Request {
  std::uint8_t command = 0;  // raw: the caller refuses what it does not support
  AddressType address_type = AddressType::ipv4;
  std::string host;  // dotted IPv4, IPv6 text, or the domain bytes as sent (unvalidated)
  std::uint16_t port = 0;
};

// Each sets *consumed on complete, and *error on invalid.
Status parse_greeting(std::string_view in, Greeting& out, std::size_t* consumed,
                      std::string* error);
Status parse_userpass(std::string_view in, UserPass& out, std::size_t* consumed,
                      std::string* error);
Status parse_request(std::string_view in, Request& out, std::size_t* consumed, std::string* error);

// A reply with the unspecified IPv4 address as the bound address (the sandbox has no use
// for the proxy host's addresses).
std::string make_reply(Reply code);

}  // namespace paddock::proxy::socks5
