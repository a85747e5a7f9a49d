// Host canonicalisation: one spelling per host, so that the domain filter compares like with
// like. `127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1` and `::ffff:127.0.0.1` are all the
// IPv4 address 127.0.0.1; `Example.COM.` is `example.com`; `bücher.de` is `xn--bcher-kva.de`.
// Anything a resolver or an HTTP client could read two ways (zone ids, control characters,
// percent escapes, a numeric last label that is not a valid IPv4 address) is refused.
#pragma once

#include <asio/ip/address.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace paddock::net {

enum class HostKind { name, ipv4, ipv6 };

struct CanonicalHost {
  HostKind kind = HostKind::name;
  // name: lower-case A-labels, no trailing dot; ipv4: dotted quad; ipv6: RFC 5952 text
  // without brackets.
  std::string text;
  asio::ip::address address;  // ipv4 / ipv6 only

  bool is_ip() const noexcept { return kind != HostKind::name; }
  // For messages and `host:port` strings: IPv6 in brackets.
  std::string display() const { return kind == HostKind::ipv6 ? "[" + text + "]" : text; }
};

// Accepts a bare host, an IPv6 literal with or without brackets. On failure returns nullopt
// and sets *error to one line saying why.
std::optional<CanonicalHost> canonicalize_host(std::string_view raw, std::string* error);

struct Authority {
  CanonicalHost host;
  std::uint16_t port = 0;
};

// "host:port", "[v6]:port", or (with default_port != 0) a host without a port. A port is
// 1-65535, decimal digits only.
std::optional<Authority> parse_authority(std::string_view raw, std::uint16_t default_port,
                                         std::string* error);

// What a client sent, for messages, violations and JSON logs: printable ASCII, every other
// byte as \xNN (raw bytes would break JSON consumers and terminals).
std::string printable(std::string_view raw);

// "host:port" for messages and violations.
std::string to_string(const Authority& a);

}  // namespace paddock::net
