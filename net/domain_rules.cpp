#include "net/domain_rules.hpp"

#include <optional>

#include "net/address_ranges.hpp"
#include "paddock/errors.hpp"

namespace paddock::net {

bool DomainPattern::matches(const CanonicalHost& h, std::uint16_t p) const {
  if (port != 0 && port != p) return false;
  if (any_host) return true;
  if (!wildcard) return h.kind == host.kind && h.text == host.text;
  // Strict subdomains: `a.example.com` and `a.b.example.com`, never `example.com` itself or
  // `badexample.com` (the dot before the base is required).
  return h.kind == HostKind::name && h.text.size() > host.text.size() + 1 &&
         h.text.compare(h.text.size() - host.text.size(), host.text.size(), host.text) == 0 &&
         h.text[h.text.size() - host.text.size() - 1] == '.';
}

DomainPattern parse_domain_pattern(const std::string& text, const std::string& field,
                                   bool deny_entry) {
  auto bad = [&](const std::string& why) {
    throw Error(errc::config_invalid, field + ": '" + text + "' " + why);
  };
  DomainPattern out;
  out.source = text;
  std::string_view body = text;
  if (body == "*" || body.starts_with("*:")) {
    if (!deny_entry) {
      bad("would allow every host: too broad for an allow list (use network.mode "
          "\"allowed\" to leave the network unfiltered)");
    }
    out.any_host = true;
    if (body == "*") return out;
    auto authority = parse_authority("any" + std::string(body.substr(1)), 1, nullptr);
    if (!authority || body.size() == 2) bad("is not '*' or '*:port' with a port 1-65535");
    out.port = authority->port;
    return out;
  }
  if (body.substr(0, 2) == "*.") {
    out.wildcard = true;
    body.remove_prefix(2);
  } else if (body.find('*') != std::string_view::npos) {
    bad("has a wildcard that is not a leading '*.' (only *.example.com is supported" +
        std::string(deny_entry ? ", and a bare * or *:port in deny lists" : "") + ")");
  }
  if (body.find('*') != std::string_view::npos) bad("has more than one wildcard");
  std::string error;
  auto authority = parse_authority(body, /*default_port=*/1, &error);
  if (!authority) bad("is not a host pattern: " + error);
  // parse_authority filled port 1 when none was written; tell the two apart.
  const bool has_port = body.size() > 0 && body.back() != ']' &&
                        body.rfind(':') != std::string_view::npos &&
                        (body.front() == '[' || body.find(':') == body.rfind(':'));
  out.port = has_port ? authority->port : 0;
  out.host = std::move(authority->host);
  if (out.wildcard && out.host.is_ip()) bad("puts a wildcard on an IP address");
  if (out.wildcard && out.host.text.find('.') == std::string::npos) {
    bad("wildcards a top-level domain; name at least two labels (*.example.com)");
  }
  return out;
}

RuleOptions rule_options(const NetworkPolicy& policy) {
  RuleOptions o;
  o.denied_resolved_addresses = policy.denied_resolved_addresses;
  o.denied_domain_reasons = policy.denied_domain_reasons;
  o.strict = policy.strict_allowlist;
  return o;
}

DomainRules::DomainRules(const std::vector<std::string>& allowed,
                         const std::vector<std::string>& denied, RuleOptions options)
    : reasons_(std::move(options.denied_domain_reasons)),
      strict_(options.strict),
      allow_every_host_(options.allow_every_host),
      allowed_field_(std::move(options.allowed_field)),
      denied_field_(std::move(options.denied_field)) {
  auto at = [](const std::string& field, std::size_t i) {
    return field + "[" + std::to_string(i) + "]";
  };
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    allowed_.push_back(parse_domain_pattern(allowed[i], at(allowed_field_, i)));
  }
  for (std::size_t i = 0; i < denied.size(); ++i) {
    denied_.push_back(parse_domain_pattern(denied[i], at(denied_field_, i), /*deny_entry=*/true));
  }
  const auto& ranges = options.denied_resolved_addresses;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    auto range = parse_address_range(ranges[i]);
    if (!range) {
      throw Error(errc::config_invalid,
                  at("network.deniedResolvedAddresses", i) + ": '" + ranges[i] +
                      "' is not an IP address or CIDR range (e.g. 10.0.0.0/8, fc00::/7; IPv6 "
                      "unbracketed)");
    }
    denied_ranges_.push_back(std::move(*range));
  }
}

std::string DomainRules::denied_by(const DomainPattern& p) const {
  std::string out = "denied by " + denied_field_ + " entry '" + p.source + "'";
  if (auto r = reasons_.find(p.source); r != reasons_.end()) out += ": " + r->second;
  return out;
}

Decision DomainRules::decide(const CanonicalHost& host, std::uint16_t port) const {
  Decision d;
  for (const auto& p : denied_) {
    if (p.matches(host, port)) {
      d.reason = denied_by(p);
      return d;
    }
  }
  if (allowed_.empty() && allow_every_host_) {
    d.verdict = Verdict::allow;
    return d;
  }
  if (allowed_.empty()) {
    d.reason = "no domain is allowed (" + allowed_field_ + " is empty)";
    return d;
  }
  const DomainPattern* port_mismatch = nullptr;
  for (const auto& p : allowed_) {
    if (p.matches(host, port)) {
      d.verdict = Verdict::allow;
      d.matched = &p;
      return d;
    }
    if (p.port != 0 && p.matches(host, p.port)) port_mismatch = &p;
  }
  if (host.is_ip()) {
    d.reason = "IP address " + host.text + " is not listed in " + allowed_field_;
    return d;  // literals are never left to an approval prompt
  }
  if (port_mismatch != nullptr) {
    d.reason = "port " + std::to_string(port) + " is not allowed: the entry '" +
               port_mismatch->source + "' allows port " + std::to_string(port_mismatch->port) +
               " only";
    return d;
  }
  if (strict_) {
    d.reason = "not in " + allowed_field_ + " (strictAllowlist: no approval is asked)";
    return d;
  }
  d.verdict = Verdict::unknown;
  d.reason = "not in " + allowed_field_;
  return d;
}

namespace {
CanonicalHost host_of(const asio::ip::address& a) {
  CanonicalHost h;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    h.kind = HostKind::ipv4;
    h.address = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  } else {
    h.kind = a.is_v4() ? HostKind::ipv4 : HostKind::ipv6;
    h.address = a;
  }
  h.text = h.address.to_string();
  return h;
}
}  // namespace

const DomainPattern* DomainRules::address_denied(const asio::ip::address& a,
                                                 std::uint16_t port) const {
  const CanonicalHost h = host_of(a);
  // A denied IPv4 address is denied in its NAT64 / 6to4 spellings too (embedded_ipv4).
  std::optional<CanonicalHost> inner;
  if (h.kind == HostKind::ipv6) {
    if (auto v4 = embedded_ipv4(h.address.to_v6())) inner = host_of(asio::ip::address(*v4));
  }
  for (const auto& p : denied_) {
    if (p.matches(h, port) || (inner && p.matches(*inner, port))) return &p;
  }
  return nullptr;
}

bool DomainRules::address_listed(const asio::ip::address& a, std::uint16_t port) const {
  const CanonicalHost h = host_of(a);
  for (const auto& p : allowed_) {
    if (p.matches(h, port)) return true;
  }
  return false;
}

std::vector<asio::ip::address> DomainRules::dialable(const std::vector<asio::ip::address>& resolved,
                                                     const DomainPattern* matched,
                                                     std::uint16_t port, std::string* why) const {
  std::vector<asio::ip::address> out;
  std::string refused;
  const bool names_localhost =
      matched != nullptr && !matched->wildcard && matched->host.text == "localhost";
  for (const auto& a : resolved) {
    const char* range = special_range(a);
    const AddressRange* denied_range = nullptr;
    for (const auto& r : denied_ranges_) {
      if (r.contains(a)) {
        denied_range = &r;
        break;
      }
    }
    if (const DomainPattern* denied = address_denied(a, port)) {  // deny wins, for addresses too
      if (refused.empty()) refused = "resolves to " + a.to_string() + ", " + denied_by(*denied);
    } else if (denied_range != nullptr && !address_listed(a, port)) {
      // srt: a name may reach such an address only when the address itself is allowed.
      if (refused.empty()) {
        refused = "resolves to " + a.to_string() + ", in network.deniedResolvedAddresses entry '" +
                  denied_range->source + "'";
      }
    } else if (range == nullptr || (names_localhost && is_loopback_range(range)) ||
               (allow_every_host_ && allowed_.empty()) || address_listed(a, port)) {
      out.push_back(a);
    } else if (refused.empty()) {
      refused = "resolves to " + a.to_string() + " (" + range + "), which " +
                (matched ? "the entry '" + matched->source + "' does not name"
                         : std::string("no allow entry names"));
    }
  }
  if (out.empty() && why != nullptr) {
    *why = resolved.empty() ? "the name did not resolve to any address" : refused;
  }
  return out;
}

}  // namespace paddock::net
