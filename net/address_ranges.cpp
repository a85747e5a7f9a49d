#include "net/address_ranges.hpp"

#include <algorithm>
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

namespace paddock::net {
namespace {

asio::ip::address unmapped(const asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return a;
}

// The first `prefix` bits of `a`, the rest zero.
asio::ip::address masked(const asio::ip::address& a, int prefix) {
  if (a.is_v4()) {
    const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
    return asio::ip::address_v4(a.to_v4().to_uint() & mask);
  }
  auto bytes = a.to_v6().to_bytes();
  for (int i = 0; i < 16; ++i) {
    const int keep = std::clamp(prefix - i * 8, 0, 8);
    bytes[i] &= static_cast<unsigned char>(keep == 0 ? 0 : 0xff << (8 - keep));
  }
  return asio::ip::address_v6(bytes);
}

}  // namespace

std::optional<asio::ip::address_v4> embedded_ipv4(const asio::ip::address_v6& a) noexcept {
  const auto b = a.to_bytes();
  const auto at = [&](int offset) { return asio::ip::address_v4(v4_at(b, offset)); };
  if (a.is_v4_mapped()) return at(12);
  if (zero(b, 0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) return at(12);
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
    if (zero(b, 4, 12)) return at(12);                // 64:ff9b::/96
    if (b[4] == 0x00 && b[5] == 0x01) return at(12);  // 64:ff9b:1::/48 (RFC 8215)
  }
  if (b[0] == 0x20 && b[1] == 0x02) return at(2);  // 6to4
  return std::nullopt;
}

bool AddressRange::contains(const asio::ip::address& a) const noexcept {
  const asio::ip::address u = unmapped(a);
  if (u.is_v4() == base.is_v4() && masked(u, prefix) == base) return true;
  if (u.is_v6() && base.is_v4()) {
    if (auto inner = embedded_ipv4(u.to_v6())) return masked(*inner, prefix) == base;
  }
  return false;
}

std::optional<AddressRange> parse_address_range(std::string_view text) {
  const auto slash = text.find('/');
  const std::string host(text.substr(0, slash));
  std::error_code ec;
  // No brackets and no zone: a range is written as srt writes it.
  if (host.find_first_of("[]%") != std::string::npos) return std::nullopt;
  asio::ip::address a = asio::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  // `::ffff:10.0.0.0/8` would mean ::/8 as IPv6 and 10/8 as IPv4: write the IPv4 range.
  if (a.is_v6() && a.to_v6().is_v4_mapped() && slash != std::string_view::npos) {
    return std::nullopt;
  }
  a = unmapped(a);
  const int bits = a.is_v4() ? 32 : 128;
  int prefix = bits;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3) return std::nullopt;
    prefix = 0;
    for (char ch : digits) {
      if (ch < '0' || ch > '9') return std::nullopt;
      prefix = prefix * 10 + (ch - '0');
    }
    if (prefix > bits) return std::nullopt;
  }
  return AddressRange{masked(a, prefix), prefix, std::string(text)};
}

}  // namespace paddock::net
