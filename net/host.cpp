#include "net/host.hpp"

#include <arpa/inet.h>
#include <idn2.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace paddock::net {
namespace {

bool fail(std::string* error, std::string why) {
  if (error != nullptr) *error = std::move(why);
  return false;
}

std::string quoted(std::string_view raw) {
  return "'" + printable(raw.substr(0, 80)) + (raw.size() > 80 ? "...'" : "'");
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

// WHATWG URL's rule: a host whose last label is a number is an IPv4 address or invalid, never
// a name (no top-level domain is numeric). Catches `1.2.3.4.5`, `127.0.0.0x1g`, `0x7f`.
bool last_label_numeric(std::string_view host) {
  auto dot = host.rfind('.');
  std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  if (std::all_of(last.begin(), last.end(), is_digit)) return true;
  return last.size() >= 2 && last[0] == '0' && last[1] == 'x' &&
         std::all_of(last.begin() + 2, last.end(), is_hex);
}

// inet_aton's grammar (decimal, octal with a leading 0, hex with 0x; 1 to 4 parts) is the one
// resolvers and curl accept, so it is the one an attacker spells 127.0.0.1 in. glibc's
// inet_aton stops at whitespace and ignores the rest, and IDNA maps U+00A0 and U+3000 to a
// space after our whitespace check: accept only inet_aton's own characters (lower-cased).
std::optional<CanonicalHost> parse_ipv4(const std::string& host) {
  auto aton_char = [](char c) { return is_hex(c) || c == 'x' || c == '.'; };
  if (!std::all_of(host.begin(), host.end(), aton_char)) return std::nullopt;
  in_addr a{};
  if (::inet_aton(host.c_str(), &a) == 0) return std::nullopt;
  CanonicalHost out;
  out.kind = HostKind::ipv4;
  out.address = asio::ip::address_v4(ntohl(a.s_addr));
  out.text = out.address.to_string();
  return out;
}

CanonicalHost from_ipv6(const asio::ip::address_v6& v6) {
  CanonicalHost out;
  if (v6.is_v4_mapped()) {  // ::ffff:a.b.c.d is the IPv4 address a.b.c.d on a dual-stack socket
    out.kind = HostKind::ipv4;
    out.address = asio::ip::make_address_v4(asio::ip::v4_mapped, v6);
  } else {
    out.kind = HostKind::ipv6;
    out.address = v6;
  }
  out.text = out.address.to_string();
  return out;
}

std::optional<CanonicalHost> parse_ipv6(std::string_view text, std::string* error) {
  std::string s(text);
  in6_addr a{};
  if (::inet_pton(AF_INET6, s.c_str(), &a) != 1) {
    fail(error, quoted(text) + " is not a valid IPv6 address");
    return std::nullopt;
  }
  asio::ip::address_v6::bytes_type bytes;
  std::copy(a.s6_addr, a.s6_addr + 16, bytes.begin());
  return from_ipv6(asio::ip::address_v6(bytes));
}

bool valid_name(const std::string& name, std::string* error) {
  if (name.size() > 253) return fail(error, "host name longer than 253 characters");
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    std::size_t len = end - start;
    if (len == 0) return fail(error, quoted(name) + " has an empty label");
    if (len > 63) return fail(error, quoted(name) + " has a label longer than 63 characters");
    if (name[start] == '-' || name[end - 1] == '-') {
      return fail(error, quoted(name) + " has a label that starts or ends with '-'");
    }
    for (std::size_t i = start; i < end; ++i) {
      char c = name[i];
      if (!(is_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_')) {
        return fail(error,
                    quoted(name) + ": '" + std::string(1, c) + "' is not allowed in a host name");
      }
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

std::optional<CanonicalHost> canonicalize_host(std::string_view raw, std::string* error) {
  if (raw.empty()) {
    fail(error, "empty host");
    return std::nullopt;
  }
  if (raw.size() > 1024) {
    fail(error, "host longer than 1024 bytes");
    return std::nullopt;
  }
  for (unsigned char ch : raw) {
    // A zone id (`fe80::1%eth0`) names an interface of the proxy's host, and `%` is also how
    // a URL smuggles bytes past a filter; the rest are separators an HTTP client or a
    // resolver could cut the host at.
    if (ch <= 0x20 || ch == 0x7f || ch == '%' || ch == '/' || ch == '\\' || ch == '@' ||
        ch == '?' || ch == '#') {
      fail(error, quoted(raw) +
                      ": control character, whitespace, zone id or URL delimiter in "
                      "the host");
      return std::nullopt;
    }
  }
  if (raw.front() == '[') {
    if (raw.back() != ']' || raw.size() < 3) {
      fail(error, quoted(raw) + ": unbalanced brackets");
      return std::nullopt;
    }
    return parse_ipv6(raw.substr(1, raw.size() - 2), error);
  }
  if (raw.find(':') != std::string_view::npos) return parse_ipv6(raw, error);
  if (raw.find('[') != std::string_view::npos || raw.find(']') != std::string_view::npos) {
    fail(error, quoted(raw) + ": brackets outside an IPv6 literal");
    return std::nullopt;
  }

  std::string host(raw);
  if (host.back() == '.') host.pop_back();  // `example.com.` is `example.com`
  if (host.empty()) {
    fail(error, "empty host");
    return std::nullopt;
  }
  const bool ascii = std::all_of(host.begin(), host.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    std::transform(host.begin(), host.end(), host.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  } else {
    // IDN: the A-label form is what DNS sees, so it is what patterns are compared in.
    char* out = nullptr;
    int rc = idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(host.c_str()),
                            reinterpret_cast<std::uint8_t**>(&out),
                            IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
      fail(error, quoted(raw) + ": not a valid internationalised name (" + idn2_strerror(rc) + ")");
      return std::nullopt;
    }
    host = out;
    std::free(out);
    std::transform(host.begin(), host.end(), host.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  }
  if (last_label_numeric(host)) {
    if (auto v4 = parse_ipv4(host)) return v4;
    fail(error, quoted(raw) + " looks like an IPv4 address but is not a valid one");
    return std::nullopt;
  }
  if (!valid_name(host, error)) return std::nullopt;
  CanonicalHost out;
  out.kind = HostKind::name;
  out.text = std::move(host);
  return out;
}

std::optional<Authority> parse_authority(std::string_view raw, std::uint16_t default_port,
                                         std::string* error) {
  std::string_view host = raw, port_text;
  bool have_port = false;
  if (!raw.empty() && raw.front() == '[') {
    auto close = raw.find(']');
    if (close == std::string_view::npos) {
      fail(error, quoted(raw) + ": unbalanced brackets");
      return std::nullopt;
    }
    host = raw.substr(0, close + 1);
    if (close + 1 < raw.size()) {
      if (raw[close + 1] != ':') {
        fail(error, quoted(raw) + ": expected ':' and a port after ']'");
        return std::nullopt;
      }
      port_text = raw.substr(close + 2);
      have_port = true;
    }
  } else {
    auto colon = raw.rfind(':');
    if (colon != std::string_view::npos) {
      if (raw.find(':') != colon) {
        fail(error, quoted(raw) + ": an IPv6 address with a port needs brackets ([::1]:80)");
        return std::nullopt;
      }
      host = raw.substr(0, colon);
      port_text = raw.substr(colon + 1);
      have_port = true;
    }
  }
  Authority out;
  if (have_port) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (port_text.empty() || port_text.size() > 5 || ec != std::errc() ||
        end != port_text.data() + port_text.size() || value == 0 || value > 65535 ||
        !std::all_of(port_text.begin(), port_text.end(), is_digit)) {
      fail(error, quoted(raw) + ": the port must be a number from 1 to 65535");
      return std::nullopt;
    }
    out.port = static_cast<std::uint16_t>(value);
  } else if (default_port != 0) {
    out.port = default_port;
  } else {
    fail(error, quoted(raw) + ": a port is required (host:port)");
    return std::nullopt;
  }
  auto h = canonicalize_host(host, error);
  if (!h) return std::nullopt;
  out.host = std::move(*h);
  return out;
}

std::string printable(std::string_view raw) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size());
  for (unsigned char ch : raw) {
    if (ch < 0x20 || ch >= 0x7f) {
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string to_string(const Authority& a) {
  return a.host.display() + ":" + std::to_string(a.port);
}

}  // namespace paddock::net
