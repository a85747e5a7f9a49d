// libFuzzer target for net/host (canonicalize_host, parse_authority) and net/domain_rules
// (parse_domain_pattern, DomainRules::decide / dialable). The domain filter is only as good
// as "one spelling per host": checked here are that a canonical host is canonical (stable
// when canonicalised again, nothing a resolver could read another way), that ports are
// 1-65535, and that a rule allows exactly what DomainPattern::matches says.
//
// Input: "pattern\nsubject" feeds the pattern to the rules and the subject to the host
// parsers; without a newline the whole input is both.
#include <idn2.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "net/address_ranges.hpp"
#include "net/domain_rules.hpp"
#include "net/host.hpp"
#include "paddock/errors.hpp"

using namespace paddock::net;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool same_host(const CanonicalHost& a, const CanonicalHost& b) {
  return a.kind == b.kind && a.text == b.text && (!a.is_ip() || a.address == b.address);
}

void check_canonical(const CanonicalHost& h) {
  FUZZ_CHECK(!h.text.empty());
  for (char c : h.text) {
    const auto u = static_cast<unsigned char>(c);
    // Printable ASCII, lower case, none of the characters URLs and resolvers cut hosts at.
    FUZZ_CHECK(u > 0x20 && u < 0x7f && !(c >= 'A' && c <= 'Z'));
    FUZZ_CHECK(std::string_view("%/\\@?#[] ").find(c) == std::string_view::npos);
  }
  switch (h.kind) {
    case HostKind::name: {
      FUZZ_CHECK(h.text.size() <= 253 && h.text.back() != '.');
      std::size_t start = 0;
      std::string_view last;
      while (start <= h.text.size()) {
        std::size_t end = std::min(h.text.find('.', start), h.text.size());
        std::string_view label = std::string_view(h.text).substr(start, end - start);
        FUZZ_CHECK(!label.empty() && label.size() <= 63);
        FUZZ_CHECK(std::all_of(label.begin(), label.end(), [](char c) {
          return is_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
        }));
        last = label;
        start = end + 1;
      }
      // A numeric last label is an IPv4 address or nothing, never a name.
      FUZZ_CHECK(!std::all_of(last.begin(), last.end(), is_digit));
      FUZZ_CHECK(!(last.size() >= 2 && last.substr(0, 2) == "0x" &&
                   std::all_of(last.begin() + 2, last.end(),
                               [](char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); })));
      break;
    }
    case HostKind::ipv4:
      FUZZ_CHECK(h.address.is_v4() && h.address.to_string() == h.text);
      FUZZ_CHECK(std::count(h.text.begin(), h.text.end(), '.') == 3);
      break;
    case HostKind::ipv6:
      // A v4-mapped address is the IPv4 address; a scope id would name a local interface.
      FUZZ_CHECK(h.address.is_v6() && !h.address.to_v6().is_v4_mapped());
      FUZZ_CHECK(h.address.to_v6().scope_id() == 0 && h.address.to_string() == h.text);
      FUZZ_CHECK(h.display() == "[" + h.text + "]");
      break;
  }
  // Canonical means stable: its own spelling (bracketed or not) canonicalises to itself.
  for (const std::string& again : {h.display(), h.text}) {
    std::string error;
    auto c = canonicalize_host(again, &error);
    FUZZ_CHECK(c && same_host(*c, h));
  }
}

// An IPv4 address reached through the name path (127.1, 0x7f.1, fullwidth digits) must be
// spelled entirely in inet_aton's syntax once IDNA has mapped it: inet_aton stops at
// whitespace and ignores the rest, so "127.0.0.1<junk>.5" must not become 127.0.0.1.
bool numeric_spelling(std::string_view raw) {
  std::string host(raw);
  if (!host.empty() && host.back() == '.') host.pop_back();
  auto non_ascii = [](char c) { return static_cast<unsigned char>(c) >= 0x80; };
  if (std::any_of(host.begin(), host.end(), non_ascii)) {
    char* out = nullptr;
    if (idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(host.c_str()),
                       reinterpret_cast<std::uint8_t**>(&out),
                       IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL) != IDN2_OK) {
      return false;
    }
    host = out;
    std::free(out);
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return is_digit(c) || c == '.' || c == 'x' || c == 'X' || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
  });
}

void check_host(std::string_view raw) {
  std::string error;
  auto h = canonicalize_host(raw, &error);
  if (!h) {
    FUZZ_CHECK(fuzz::one_line(error));
    return;
  }
  check_canonical(*h);
  if (h->kind == HostKind::ipv4 && raw.find(':') == std::string_view::npos && raw.front() != '[') {
    FUZZ_CHECK(numeric_spelling(raw));
  }
}

void check_authority(std::string_view raw) {
  for (std::uint16_t default_port : {std::uint16_t{0}, std::uint16_t{443}}) {
    std::string error;
    auto a = parse_authority(raw, default_port, &error);
    if (!a) {
      FUZZ_CHECK(fuzz::one_line(error));
      continue;
    }
    FUZZ_CHECK(a->port >= 1);  // a uint16_t: <= 65535 by type
    check_canonical(a->host);
    // Printed and parsed again, it is the same host and port (no default needed).
    auto b = parse_authority(to_string(*a), 0, &error);
    FUZZ_CHECK(b && same_host(b->host, a->host) && b->port == a->port);
  }
}

// The special-range addresses a name could resolve to (DNS rebinding), and one global one.
std::vector<asio::ip::address> sample_addresses(const Authority& a) {
  std::vector<asio::ip::address> out;
  for (const char* s : {"127.0.0.1", "10.1.2.3", "169.254.169.254", "93.184.216.34", "::1",
                        "::ffff:127.0.0.1", "fe80::1", "2606:4700::1111"}) {
    out.push_back(asio::ip::make_address(s));
  }
  if (a.host.is_ip()) out.push_back(a.host.address);
  return out;
}

void check_rules(const std::string& pattern_text, std::string_view subject) {
  DomainPattern p;
  try {
    p = parse_domain_pattern(pattern_text, "fuzz");
  } catch (const paddock::Error& e) {
    // Refused entries are config errors naming the field, never anything else.
    FUZZ_CHECK(e.code() == paddock::errc::config_invalid);
    FUZZ_CHECK(std::string_view(e.what()).substr(0, 6) == "fuzz: ");
    return;
  }
  FUZZ_CHECK(p.source == pattern_text);
  check_canonical(p.host);
  // A port restricts the entry exactly when one was written.
  std::string_view body = pattern_text;
  if (p.wildcard) body.remove_prefix(2);
  const bool port_written = body.front() == '[' ? body.find("]:") != std::string_view::npos
                                                : body.find(':') != std::string_view::npos;
  FUZZ_CHECK((p.port != 0) == port_written);

  const std::uint16_t some_port = p.port != 0 ? p.port : 8443;
  CanonicalHost sub;  // a strict subdomain of the pattern's host
  sub.kind = HostKind::name;
  sub.text = "a." + p.host.text;
  if (p.wildcard) {
    FUZZ_CHECK(pattern_text.substr(0, 2) == "*." && p.host.kind == HostKind::name &&
               p.host.text.find('.') != std::string::npos);
    FUZZ_CHECK(!p.matches(p.host, some_port));  // the base itself is not a subdomain
    FUZZ_CHECK(p.matches(sub, some_port));
  } else {
    FUZZ_CHECK(p.matches(p.host, some_port));
    FUZZ_CHECK(!p.matches(sub, some_port));
  }
  if (p.port != 0) FUZZ_CHECK(!p.matches(p.wildcard ? sub : p.host, p.port == 1 ? 2 : p.port - 1));

  std::string error;
  auto a = parse_authority(subject, 443, &error);
  if (!a) return;
  const bool match = p.matches(a->host, a->port);
  if (match && p.wildcard) {
    const std::string& t = a->host.text;
    FUZZ_CHECK(a->host.kind == HostKind::name && t.size() > p.host.text.size() + 1 &&
               t.substr(t.size() - p.host.text.size() - 1) == "." + p.host.text);
  }
  if (match && !p.wildcard) FUZZ_CHECK(same_host(a->host, p.host));
  if (match && p.port != 0) FUZZ_CHECK(a->port == p.port);

  // Allowed exactly when the entry matches; an unlisted IP literal is denied outright.
  const DomainRules allow({pattern_text}, {});
  const Decision d = allow.decide(a->host, a->port);
  FUZZ_CHECK((d.verdict == Verdict::allow) == match);
  if (match) {
    FUZZ_CHECK(d.matched != nullptr && d.matched->source == pattern_text);
  } else {
    FUZZ_CHECK(!d.reason.empty() && d.matched == nullptr);
    if (a->host.is_ip()) FUZZ_CHECK(d.verdict == Verdict::deny);
  }
  // Deny wins over allow; an empty allow list allows nothing.
  const DomainRules both({pattern_text}, {pattern_text});
  const Decision db = both.decide(a->host, a->port);
  FUZZ_CHECK(db.verdict != Verdict::allow && (!match || db.verdict == Verdict::deny));
  FUZZ_CHECK(DomainRules({}, {pattern_text}).decide(a->host, a->port).verdict == Verdict::deny);
  FUZZ_CHECK(DomainRules().decide(a->host, a->port).verdict == Verdict::deny);

  if (!match) return;
  // After the lookup: global addresses are dialled; a special-range one only when the
  // entry names it (the address itself, or `localhost` for loopback).
  const auto resolved = sample_addresses(*a);
  std::string why;
  const auto dial = allow.dialable(resolved, d.matched, a->port, &why);
  for (const auto& addr : resolved) {
    const bool dialled = std::find(dial.begin(), dial.end(), addr) != dial.end();
    const char* range = special_range(addr);
    if (range == nullptr) FUZZ_CHECK(dialled);
    if (range != nullptr && dialled) {
      const bool localhost = !p.wildcard && p.host.text == "localhost" && is_loopback_range(range);
      FUZZ_CHECK(localhost || (p.host.is_ip() && !p.wildcard));
    }
  }
  for (const auto& addr : dial) {
    FUZZ_CHECK(std::find(resolved.begin(), resolved.end(), addr) != resolved.end());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = in.find('\n');
  const std::string_view pattern = nl == std::string_view::npos ? in : in.substr(0, nl);
  const std::string_view subject = nl == std::string_view::npos ? in : in.substr(nl + 1);

  check_host(subject);
  check_authority(subject);
  if (nl != std::string_view::npos) check_host(pattern);
  check_rules(std::string(pattern), subject);
  return 0;
}
