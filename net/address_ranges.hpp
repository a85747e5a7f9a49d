// Address ranges a proxy must not dial for a name unless the rule names them: a public name
// that resolves to 127.0.0.1 or 169.254.169.254 is the classic way through a domain
// allowlist (DNS rebinding, metadata theft, reaching the host's own services).
#pragma once

#include <asio/ip/address.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace paddock::net {

// The name of the special-purpose range `a` is in ("loopback", "private", "link-local",
// "cloud metadata", ...), or nullptr for an ordinary global address. IPv4-mapped, NAT64 and
// 6to4 IPv6 addresses are judged by the IPv4 address they carry.
const char* special_range(const asio::ip::address& a) noexcept;

inline bool is_loopback_range(const char* range) noexcept {
  return range != nullptr && range[0] == 'l' && range[1] == 'o';  // "loopback"
}

}  // namespace paddock::net

namespace paddock::net {

// The IPv4 address an IPv6 address carries and reaches: IPv4-mapped (::ffff:a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4
// (2002:AABB:CCDD::/48). A rule on the IPv4 address must hold for these spellings too.
std::optional<asio::ip::address_v4> embedded_ipv4(const asio::ip::address_v6& a) noexcept;

// A user's range (network.deniedResolvedAddresses): an IPv4/IPv6 literal or CIDR, written
// unbracketed ("10.0.0.0/8", "169.254.169.254", "fc00::/7").
struct AddressRange {
  asio::ip::address base;  // masked to the prefix
  int prefix = 0;          // bits
  std::string source;      // as written, for messages

  // An IPv6 address that carries an IPv4 one (embedded_ipv4) is in the range when either is.
  bool contains(const asio::ip::address& a) const noexcept;
};

// nullopt when `text` is not such a range (the caller names the field).
std::optional<AddressRange> parse_address_range(std::string_view text);

}  // namespace paddock::net
