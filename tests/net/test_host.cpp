// Host canonicalisation and address ranges: every spelling of an address is the same
// address, and what cannot be read one way only is refused.
#include <catch2/catch.hpp>

#include "net/address_ranges.hpp"
#include "net/host.hpp"

using paddock::net::canonicalize_host;
using paddock::net::HostKind;

namespace {
std::string canon(const std::string& raw) {
  std::string error;
  auto h = canonicalize_host(raw, &error);
  return h ? h->text : "ERROR: " + error;
}
HostKind kind(const std::string& raw) {
  std::string error;
  auto h = canonicalize_host(raw, &error);
  REQUIRE(h);
  return h->kind;
}
bool refused(const std::string& raw) {
  std::string error;
  bool bad = !canonicalize_host(raw, &error);
  if (bad) CHECK_FALSE(error.empty());
  return bad;
}
}  // namespace

TEST_CASE("names are lower-cased, lose one trailing dot, and IDNs become A-labels", "[net]") {
  CHECK(canon("Example.COM") == "example.com");
  CHECK(canon("example.com.") == "example.com");
  CHECK(canon("b\xC3\xBC"
              "cher.de") == "xn--bcher-kva.de");  // bücher.de
  CHECK(canon("XN--BCHER-KVA.de") == "xn--bcher-kva.de");
  CHECK(canon("localhost") == "localhost");
  CHECK(canon("_srv.example.com") == "_srv.example.com");
  CHECK(kind("example.com") == HostKind::name);
}

TEST_CASE("every spelling of 127.0.0.1 is the IPv4 address 127.0.0.1", "[net]") {
  for (const char* s : {"127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1",
                        "0177.0.0.1", "0177.1", "127.0.0.1.", "[::ffff:127.0.0.1]",
                        "::ffff:127.0.0.1", "::ffff:7f00:1", "[::FFFF:7F00:0001]"}) {
    INFO(s);
    CHECK(canon(s) == "127.0.0.1");
    CHECK(kind(s) == HostKind::ipv4);
  }
  CHECK(canon("[::1]") == "::1");
  CHECK(canon("0:0:0:0:0:0:0:1") == "::1");
  CHECK(kind("[::1]") == HostKind::ipv6);
}

TEST_CASE("ambiguous hosts are refused: zone ids, control characters, bad numerics", "[net]") {
  for (const char* s : {"",
                        ".",
                        "fe80::1%eth0",
                        "[fe80::1%25eth0]",
                        "exa mple.com",
                        "example.com\r",
                        "a\nb",
                        "a\x7f"
                        "b",
                        "1.2.3.4.5",
                        "256.0.0.1",
                        "0x100000000",
                        "a..b",
                        "-",
                        "[::1",
                        "::1]",
                        "[1.2.3.4]",
                        "ex%61mple.com",
                        "user@example.com",
                        "example.com/path",
                        "example.com\\x",
                        "a[b]",
                        "12345678901234567890"}) {
    INFO(s);
    CHECK(refused(s));
  }
  CHECK(refused(std::string(300, 'a')));
  CHECK(refused(std::string(64, 'a') + ".com"));  // a label over 63
  CHECK(refused(std::string("exa\0mple.com", 12)));
}

TEST_CASE("authorities: ports are 1-65535 and IPv6 needs brackets for one", "[net]") {
  std::string error;
  auto a = paddock::net::parse_authority("Example.com:443", 0, &error);
  REQUIRE(a);
  CHECK(a->host.text == "example.com");
  CHECK(a->port == 443);
  CHECK(paddock::net::to_string(*a) == "example.com:443");
  a = paddock::net::parse_authority("[::1]:8080", 0, &error);
  REQUIRE(a);
  CHECK(paddock::net::to_string(*a) == "[::1]:8080");
  a = paddock::net::parse_authority("example.com", 80, &error);
  REQUIRE(a);
  CHECK(a->port == 80);
  for (const char* s : {"example.com", "example.com:0", "example.com:65536", "example.com:+80",
                        "example.com:8o", "::1:80", "[::1]80", "example.com: 80", ":80"}) {
    INFO(s);
    CHECK_FALSE(paddock::net::parse_authority(s, 0, &error));
  }
}

TEST_CASE("special address ranges are named, IPv4 inside IPv6 included", "[net]") {
  using asio::ip::make_address;
  auto range = [](const char* a) {
    const char* r = paddock::net::special_range(make_address(a));
    return std::string(r ? r : "global");
  };
  CHECK(range("127.0.0.1") == "loopback");
  CHECK(range("127.255.1.2") == "loopback");
  CHECK(range("::1") == "loopback");
  CHECK(range("::ffff:127.0.0.1") == "loopback");
  CHECK(range("64:ff9b::7f00:1") == "loopback");  // NAT64
  CHECK(range("2002:7f00:1::") == "loopback");    // 6to4
  CHECK(range("10.1.2.3") == "private");
  CHECK(range("172.16.0.1") == "private");
  CHECK(range("172.31.255.255") == "private");
  CHECK(range("192.168.1.1") == "private");
  CHECK(range("fd00::1") == "private");
  CHECK(range("169.254.169.254") == "cloud metadata");
  CHECK(range("169.254.1.1") == "link-local");
  CHECK(range("fe80::1") == "link-local");
  CHECK(range("100.100.100.200") == "shared address space");
  CHECK(range("0.0.0.0") == "this network");
  CHECK(range("::") == "this network");
  CHECK(range("224.0.0.1") == "multicast");
  CHECK(range("255.255.255.255") == "reserved");
  CHECK(range("::127.0.0.1") == "reserved");
  CHECK(range("8.8.8.8") == "global");
  CHECK(range("172.32.0.1") == "global");
  CHECK(range("2606:4700::1111") == "global");
}

TEST_CASE("review: more ranges that carry or reach special addresses", "[net]") {
  auto range = [](const char* a) {
    const char* r = paddock::net::special_range(asio::ip::make_address(a));
    return std::string(r ? r : "global");
  };
  CHECK(range("168.63.129.16") == "cloud metadata");
  CHECK(range("192.88.99.1") == "6to4 relay anycast");
  CHECK(range("64:ff9b:1::7f00:1") == "loopback");
  CHECK(range("64:ff9b:1::808:808") == "local-use NAT64");
  CHECK(range("2001:0:4136:e378:8000:63bf:3fff:fdd2") == "Teredo");
  CHECK(range("::ffff:0:7f00:1") == "loopback");
  CHECK(range("2001:db8::1") == "global");  // (documentation range: unroutable, not special)
}
