// The network allowlist with srt's semantics (network.allowedDomains / deniedDomains):
//   - deny wins; an empty allow list allows nothing;
//   - `example.com` is that host only, `*.example.com` its strict subdomains only (not
//     `example.com`, not `badexample.com`); `host:port` restricts an entry to one port;
//   - IP literals (any spelling) are reached only when an entry lists that address, and a
//     name is never dialled at an address a deny entry lists;
//   - a name's resolved addresses in special ranges (loopback, private, link-local,
//     metadata, ...) are dialled only when an entry names them: `localhost` for loopback,
//     or the address itself; so are addresses in the user's network.deniedResolvedAddresses;
//   - in the deny list, `*` is every host and `*:22` every host on port 22;
//   - network.deniedDomainReasons gives a deny entry the reason its denials carry;
//   - strictAllowlist: a host listed nowhere is denied, never left to an approval prompt.
// Immutable once built: hot reload swaps the whole object (see proxy/ProxyCore).
#pragma once

#include <asio/ip/address.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "net/address_ranges.hpp"
#include "net/host.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock::net {

struct DomainPattern {
  std::string source;  // as written, for messages
  bool wildcard = false;
  bool any_host = false;   // `*` (deny lists only): every host
  CanonicalHost host;      // for a wildcard: the base name after `*.`
  std::uint16_t port = 0;  // 0: any port

  bool matches(const CanonicalHost& h, std::uint16_t p) const;
};

// Parses one entry; throws paddock::Error(config_invalid) "<field>: <why>". `deny_entry`: a
// bare `*` / `*:port` is accepted (deny-all), as srt accepts it in deniedDomains only.
DomainPattern parse_domain_pattern(const std::string& text, const std::string& field,
                                   bool deny_entry = false);

// What srt's network section adds to the two lists.
struct RuleOptions {
  std::vector<std::string> denied_resolved_addresses;        // IP literals or CIDRs
  std::map<std::string, std::string> denied_domain_reasons;  // deny entry -> reason
  bool strict = false;                                       // strictAllowlist
  // An empty allow list allows every host (the rest still applies): a call's layer that only
  // adds denials.
  bool allow_every_host = false;
  // Field names for messages (a call's own lists are "policy.allowed_domains").
  std::string allowed_field = "network.allowedDomains";
  std::string denied_field = "network.deniedDomains";
};

enum class Verdict { allow, deny, unknown };

struct Decision {
  Verdict verdict = Verdict::deny;
  std::string reason;                      // deny/unknown: why, one line
  const DomainPattern* matched = nullptr;  // allow: the entry that allowed it
};

// The options a Manager's (or `paddock proxy`'s) network policy sets.
RuleOptions rule_options(const NetworkPolicy& policy);

class DomainRules {
 public:
  DomainRules() = default;
  // Throws Error(config_invalid) naming the bad entry (network.allowedDomains[2]: ...).
  DomainRules(const std::vector<std::string>& allowed, const std::vector<std::string>& denied,
              RuleOptions options = {});

  // The host alone (before any DNS lookup). `unknown`: listed nowhere — denied unless an
  // approval callback says otherwise (never `unknown` under strictAllowlist).
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
  std::string denied_by(const DomainPattern& p) const;

  std::vector<DomainPattern> allowed_, denied_;
  std::vector<AddressRange> denied_ranges_;
  std::map<std::string, std::string> reasons_;
  bool strict_ = false;
  bool allow_every_host_ = false;
  std::string allowed_field_ = "network.allowedDomains";
  std::string denied_field_ = "network.deniedDomains";
};

}  // namespace paddock::net
