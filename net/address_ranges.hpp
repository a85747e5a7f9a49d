// Address ranges a proxy must not dial for a name unless the rule names them: a public name
// that resolves to 127.0.0.1 or 169.254.169.254 is the classic way through a domain
// allowlist (DNS rebinding, metadata theft, reaching the host's own services).
#pragma once

#include <asio/ip/address.hpp>

namespace paddock::net {

// The name of the special-purpose range `a` is in ("loopback", "private", "link-local",
// "cloud metadata", ...), or nullptr for an ordinary global address. IPv4-mapped, NAT64 and
// 6to4 IPv6 addresses are judged by the IPv4 address they carry.
const char* special_range(const asio::ip::address& a) noexcept;

inline bool is_loopback_range(const char* range) noexcept {
  return range != nullptr && range[0] == 'l' && range[1] == 'o';  // "loopback"
}

}  // namespace paddock::net
