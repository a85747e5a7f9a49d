#include "net/address_ranges.hpp"

#include <cstdint>

namespace paddock::net {
namespace {

struct V4Range {
  std::uint32_t base;
  int prefix;
  const char* name;
};

// IANA's special-purpose registry, the parts that reach something other than the internet.
// Order matters only where ranges nest (metadata inside link-local).
constexpr V4Range kV4[] = {
    {0xA9FEA9FE, 32, "cloud metadata"},             // 169.254.169.254
    {0xA83F8110, 32, "cloud metadata"},             // 168.63.129.16 (Azure's WireServer)
    {0x00000000, 8, "this network"},                // 0.0.0.0/8
    {0x0A000000, 8, "private"},                     // 10/8
    {0x64400000, 10, "shared address space"},       // 100.64/10 (CGNAT; Alibaba's metadata)
    {0x7F000000, 8, "loopback"},                    // 127/8
    {0xA9FE0000, 16, "link-local"},                 // 169.254/16
    {0xAC100000, 12, "private"},                    // 172.16/12
    {0xC0000000, 24, "IETF protocol assignments"},  // 192.0.0/24
    {0xC0586300, 24, "6to4 relay anycast"},         // 192.88.99/24
    {0xC0A80000, 16, "private"},                    // 192.168/16
    {0xC6120000, 15, "benchmarking"},               // 198.18/15
    {0xE0000000, 4, "multicast"},                   // 224/4
    {0xF0000000, 4, "reserved"},                    // 240/4, broadcast included
};

const char* v4_range(std::uint32_t ip) noexcept {
  for (const auto& r : kV4) {
    std::uint32_t mask = r.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - r.prefix);
    if ((ip & mask) == r.base) return r.name;
  }
  return nullptr;
}

std::uint32_t v4_at(const asio::ip::address_v6::bytes_type& b, int offset) noexcept {
  return (std::uint32_t{b[offset]} << 24) | (std::uint32_t{b[offset + 1]} << 16) |
         (std::uint32_t{b[offset + 2]} << 8) | std::uint32_t{b[offset + 3]};
}

bool zero(const asio::ip::address_v6::bytes_type& b, int from, int to) noexcept {
  for (int i = from; i < to; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

const char* v6_range(const asio::ip::address_v6& a) noexcept {
  const auto b = a.to_bytes();
  if (a.is_unspecified()) return "this network";
  if (a.is_loopback()) return "loopback";
  if (a.is_v4_mapped()) return v4_range(v4_at(b, 12));
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(b, 4, 12)) {
    return v4_range(v4_at(b, 12));
  }
  // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) also carries an IPv4 address in its last 32 bits.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0x00 &&
      b[5] == 0x01) {
    const char* inner = v4_range(v4_at(b, 12));
    return inner != nullptr ? inner : "local-use NAT64";
  }
  if (zero(b, 0, 12)) return "reserved";  // ::/96, IPv4-compatible (deprecated)
  // Teredo (2001::/32) tunnels to an obfuscated IPv4 address: not dialled for a name.
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) return "Teredo";
  // ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765) is IPv4 in disguise.
  if (zero(b, 0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) {
    return v4_range(v4_at(b, 12)) != nullptr ? v4_range(v4_at(b, 12)) : "IPv4-translated";
  }
  if (b[0] == 0x20 && b[1] == 0x02) {  // 6to4 2002::/16 carries an IPv4 address
    const char* inner = v4_range(v4_at(b, 2));
    if (inner != nullptr) return inner;
  }
  if ((b[0] & 0xfe) == 0xfc) return "private";                     // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local";  // fec0::/10
  if (b[0] == 0xff) return "multicast";
  return nullptr;
}

}  // namespace

const char* special_range(const asio::ip::address& a) noexcept {
  if (a.is_v4()) return v4_range(a.to_v4().to_uint());
  return v6_range(a.to_v6());
}

}  // namespace paddock::net
