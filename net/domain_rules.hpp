// The network allowlist with srt's semantics (network.allowedDomains / deniedDomains):
//   - deny wins; an empty allow list allows nothing;
//   - `example.com` is that host only, `*.example.com` its strict subdomains only (not
//     `example.com`, not `badexample.com`); `host:port` restricts an entry to one port;
//   - IP literals (any spelling) are reached only when an entry lists that address, and a
//     name is never dialled at an address a deny entry lists;
//   - a name's resolved addresses in special ranges (loopback, private, link-local,
//     metadata, ...) are dialled only when an entry names them: `localhost` for loopback,
//     or the address itself.
// Immutable once built: hot reload swaps the whole object (see proxy/ProxyCore).
#pragma once

#include <asio/ip/address.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "net/host.hpp"

namespace paddock::net {

struct DomainPattern {
  std::string source;  // as written, for messages
  bool wildcard = false;
  CanonicalHost host;      // for a wildcard: the base name after `*.`
  std::uint16_t port = 0;  // 0: any port

  bool matches(const CanonicalHost& h, std::uint16_t p) const;
};

// Parses one entry; throws paddock::Error(config_invalid) "<field>: <why>".
DomainPattern parse_domain_pattern(const std::string& text, const std::string& field);

enum class Verdict { allow, deny, unknown };

struct Decision {
  Verdict verdict = Verdict::deny;
  std::string reason;                      // deny/unknown: why, one line
  const DomainPattern* matched = nullptr;  // allow: the entry that allowed it
};

class DomainRules {
 public:
  DomainRules() = default;
  // Throws Error(config_invalid) naming the bad entry (network.allowedDomains[2]: ...).
  DomainRules(const std::vector<std::string>& allowed, const std::vector<std::string>& denied);

  // The host alone (before any DNS lookup). `unknown`: listed nowhere — denied unless an
  // approval callback says otherwise.
  Decision decide(const CanonicalHost& host, std::uint16_t port) const;

  // After the lookup of a name allowed by `matched`: the addresses that may be dialled, in
  // the resolver's order. When none remains, *why says what was refused.
  std::vector<asio::ip::address> dialable(const std::vector<asio::ip::address>& resolved,
                                          const DomainPattern* matched, std::uint16_t port,
                                          std::string* why) const;

  bool empty() const noexcept { return allowed_.empty(); }

 private:
  bool address_listed(const asio::ip::address& a, std::uint16_t port) const;
  const DomainPattern* address_denied(const asio::ip::address& a, std::uint16_t port) const;

  std::vector<DomainPattern> allowed_, denied_;
};

}  // namespace paddock::net
