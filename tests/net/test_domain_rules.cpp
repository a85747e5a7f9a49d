// The allowlist's semantics (srt's): deny wins, empty allows nothing, strict-subdomain
// wildcards, per-entry ports, IP literals only when listed, special ranges only when named.
#include <catch2/catch.hpp>

#include "net/domain_rules.hpp"
#include "paddock/errors.hpp"

using paddock::net::DomainRules;
using paddock::net::Verdict;

namespace {
Verdict verdict(const DomainRules& rules, const std::string& host, std::uint16_t port = 443) {
  std::string error;
  auto h = paddock::net::canonicalize_host(host, &error);
  REQUIRE(h);
  return rules.decide(*h, port).verdict;
}
}  // namespace

TEST_CASE("an empty allow list allows nothing", "[net][rules]") {
  DomainRules rules({}, {});
  CHECK(verdict(rules, "example.com") == Verdict::deny);
  CHECK(verdict(rules, "localhost") == Verdict::deny);
}

TEST_CASE("exact names, strict-subdomain wildcards, and deny wins", "[net][rules]") {
  DomainRules rules({"example.com", "*.github.com", "Api.Example.ORG."}, {"evil.github.com"});
  CHECK(verdict(rules, "example.com") == Verdict::allow);
  CHECK(verdict(rules, "EXAMPLE.com.") == Verdict::allow);
  CHECK(verdict(rules, "www.example.com") == Verdict::unknown);  // exact entry: not subdomains
  CHECK(verdict(rules, "api.github.com") == Verdict::allow);
  CHECK(verdict(rules, "a.b.github.com") == Verdict::allow);
  CHECK(verdict(rules, "github.com") == Verdict::unknown);     // *. is strict
  CHECK(verdict(rules, "badgithub.com") == Verdict::unknown);  // not a suffix match
  CHECK(verdict(rules, "evil.github.com") == Verdict::deny);   // deny wins over the wildcard
  CHECK(verdict(rules, "api.example.org") == Verdict::allow);
  CHECK(verdict(rules, "github.com.evil.com") == Verdict::unknown);
}

TEST_CASE("an entry's port restricts it to that port", "[net][rules]") {
  DomainRules rules({"example.com:443", "*.example.net:8443", "[::1]:8080"}, {});
  CHECK(verdict(rules, "example.com", 443) == Verdict::allow);
  CHECK(verdict(rules, "example.com", 80) == Verdict::deny);
  CHECK(verdict(rules, "a.example.net", 8443) == Verdict::allow);
  CHECK(verdict(rules, "a.example.net", 443) == Verdict::deny);
  CHECK(verdict(rules, "::1", 8080) == Verdict::allow);
  CHECK(verdict(rules, "::1", 8081) == Verdict::deny);
}

TEST_CASE("IP literals are allowed only when that address is listed, in any spelling",
          "[net][rules]") {
  DomainRules rules({"localhost", "10.0.0.5"}, {});
  for (const char* s : {"127.0.0.1", "127.1", "2130706433", "0x7f.1", "::1", "::ffff:127.0.0.1",
                        "10.0.0.6", "169.254.169.254"}) {
    INFO(s);
    CHECK(verdict(rules, s) == Verdict::deny);  // never "unknown": no approval prompt for IPs
  }
  CHECK(verdict(rules, "10.0.0.5") == Verdict::allow);
  CHECK(verdict(rules, "10.5") == Verdict::allow);  // same address, other spelling
  CHECK(verdict(rules, "::ffff:10.0.0.5") == Verdict::allow);
}

TEST_CASE("resolved addresses in special ranges are dialled only when the entry names them",
          "[net][rules]") {
  using asio::ip::make_address;
  DomainRules rules({"localhost", "example.com", "*.corp.example", "10.1.2.3"}, {});
  std::string error, why;
  auto host = [&](const char* h) { return *paddock::net::canonicalize_host(h, &error); };

  auto d = rules.decide(host("example.com"), 443);
  REQUIRE(d.verdict == Verdict::allow);
  // DNS rebinding: a public name that answers with loopback or the metadata address.
  auto ok = rules.dialable({make_address("127.0.0.1")}, d.matched, 443, &why);
  CHECK(ok.empty());
  CHECK(why.find("loopback") != std::string::npos);
  ok = rules.dialable({make_address("169.254.169.254")}, d.matched, 443, &why);
  CHECK(ok.empty());
  CHECK(why.find("metadata") != std::string::npos);
  ok = rules.dialable({make_address("::ffff:127.0.0.1")}, d.matched, 443, &why);
  CHECK(ok.empty());
  // Mixed answers: only the global ones are dialled.
  ok = rules.dialable({make_address("10.9.9.9"), make_address("93.184.216.34")}, d.matched, 443,
                      &why);
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].to_string() == "93.184.216.34");

  d = rules.decide(host("localhost"), 8080);
  REQUIRE(d.verdict == Verdict::allow);
  ok = rules.dialable({make_address("127.0.0.1"), make_address("::1")}, d.matched, 8080, &why);
  CHECK(ok.size() == 2);  // `localhost` names loopback
  ok = rules.dialable({make_address("10.0.0.1")}, d.matched, 8080, &why);
  CHECK(ok.empty());  // but nothing else

  d = rules.decide(host("db.corp.example"), 5432);
  REQUIRE(d.verdict == Verdict::allow);
  CHECK(rules.dialable({make_address("10.1.2.3")}, d.matched, 5432, &why).size() == 1);  // listed
  CHECK(rules.dialable({make_address("10.1.2.4")}, d.matched, 5432, &why).empty());
}

TEST_CASE("bad entries are refused naming the field", "[net][rules]") {
  auto message = [](std::vector<std::string> allowed) {
    try {
      DomainRules r(allowed, {});
    } catch (const paddock::Error& e) {
      CHECK(e.code() == paddock::errc::config_invalid);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message({"ok.com", "*"}).find("network.allowedDomains[1]") != std::string::npos);
  CHECK(message({"*"}).find("network.mode") != std::string::npos);
  CHECK(message({"a.*.com"}) != "accepted");
  CHECK(message({"*.com"}) != "accepted");  // a whole TLD
  CHECK(message({"*.127.0.0.1"}) != "accepted");
  CHECK(message({"example.com:99999"}) != "accepted");
  CHECK(message({"fe80::1%eth0"}) != "accepted");
  CHECK(message({"exa mple.com"}) != "accepted");
  CHECK(message({"::1:80"}) != "accepted");
  CHECK(message({"example.com", "[::1]:80",
                 "*.b\xC3\xBC"
                 "cher.de",
                 "127.0.0.1"}) == "accepted");
}

TEST_CASE("deny lists take srt's bare '*' and '*:port', allow lists never", "[net][rules]") {
  DomainRules all({"example.com", "127.0.0.1"}, {"*"});
  CHECK(verdict(all, "example.com") == Verdict::deny);
  CHECK(verdict(all, "127.0.0.1") == Verdict::deny);
  DomainRules ssh({"example.com", "*.example.org"}, {"*:22"});
  CHECK(verdict(ssh, "example.com", 22) == Verdict::deny);
  CHECK(verdict(ssh, "a.example.org", 22) == Verdict::deny);
  CHECK(verdict(ssh, "example.com", 443) == Verdict::allow);
  CHECK(verdict(ssh, "unlisted.test", 443) == Verdict::unknown);  // still only a deny entry
  for (const char* bad : {"*:", "*:0", "*:99999", "*:ssh", "**", "*x"}) {
    INFO(bad);
    CHECK_THROWS_AS(DomainRules({}, {bad}), paddock::Error);
  }
  try {
    DomainRules({"*:443"}, {});
    FAIL("accepted");
  } catch (const paddock::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("network.allowedDomains[0]") &&
                             Catch::Contains("every host") && Catch::Contains("network.mode"));
  }
  // The deny entry's message no longer talks about allowing.
  try {
    DomainRules({}, {"a*b.com"});
    FAIL("accepted");
  } catch (const paddock::Error& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("network.deniedDomains[0]") && Catch::Contains("bare * or *:port"));
  }
}

TEST_CASE("deniedDomainReasons and strictAllowlist", "[net][rules]") {
  paddock::net::RuleOptions o;
  o.denied_domain_reasons = {{"github.com:22", "SSH pushes are blocked; use an https remote"},
                             {"never-matches.test", "unused"}};
  o.strict = true;
  DomainRules rules({"github.com"}, {"github.com:22"}, o);
  std::string error;
  auto h = *paddock::net::canonicalize_host("github.com", &error);
  auto d = rules.decide(h, 22);
  CHECK(d.verdict == Verdict::deny);
  CHECK(d.reason ==
        "denied by network.deniedDomains entry 'github.com:22': SSH pushes are blocked; use an "
        "https remote");
  CHECK(rules.decide(h, 443).verdict == Verdict::allow);
  // Strict: a host listed nowhere is denied, never left to an approval prompt.
  auto other = *paddock::net::canonicalize_host("other.test", &error);
  d = rules.decide(other, 443);
  CHECK(d.verdict == Verdict::deny);
  CHECK_THAT(d.reason, Catch::Contains("strictAllowlist"));
  CHECK(verdict(DomainRules({"github.com"}, {}), "other.test") == Verdict::unknown);
}

TEST_CASE(
    "deniedResolvedAddresses: a name never reaches those ranges unless the address is "
    "listed",
    "[net][rules]") {
  using asio::ip::make_address;
  paddock::net::RuleOptions o;
  o.denied_resolved_addresses = {"93.184.0.0/16", "2001:db8::/32", "198.51.100.7"};
  DomainRules rules({"example.com", "93.184.216.99"}, {}, o);
  std::string error, why;
  auto d = rules.decide(*paddock::net::canonicalize_host("example.com", &error), 443);
  REQUIRE(d.verdict == Verdict::allow);
  auto ok = rules.dialable({make_address("93.184.216.34")}, d.matched, 443, &why);
  CHECK(ok.empty());
  CHECK_THAT(why, Catch::Contains("deniedResolvedAddresses entry '93.184.0.0/16'"));
  CHECK(rules.dialable({make_address("::ffff:93.184.1.1")}, d.matched, 443, &why).empty());
  CHECK(rules.dialable({make_address("2001:db8::5")}, d.matched, 443, &why).empty());
  CHECK(rules.dialable({make_address("198.51.100.7")}, d.matched, 443, &why).empty());
  CHECK(rules.dialable({make_address("198.51.100.8")}, d.matched, 443, &why).size() == 1);
  // Listed itself: allowed, as in srt.
  CHECK(rules.dialable({make_address("93.184.216.99")}, d.matched, 443, &why).size() == 1);
  // Mixed answers keep the rest.
  ok = rules.dialable({make_address("93.184.1.1"), make_address("203.0.114.9")}, d.matched, 443,
                      &why);
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].to_string() == "203.0.114.9");

  for (const char* bad : {"10.0.0.0/33", "[::1]", "::1/129", "example.com", "10.0.0/8", "",
                          "1.2.3.4/", "fe80::1%eth0"}) {
    INFO(bad);
    paddock::net::RuleOptions b;
    b.denied_resolved_addresses = {bad};
    CHECK_THROWS_WITH(DomainRules({}, {}, b),
                      Catch::StartsWith("network.deniedResolvedAddresses[0]"));
  }
}

TEST_CASE("a call's deny-only layer allows the rest, special ranges included", "[net][rules]") {
  using asio::ip::make_address;
  paddock::net::RuleOptions o;
  o.allow_every_host = true;
  o.strict = true;
  o.denied_field = "policy.denied_domains";
  DomainRules call({}, {"bad.test", "*:25"}, o);
  CHECK(verdict(call, "localhost", 8080) == Verdict::allow);
  CHECK(verdict(call, "bad.test") == Verdict::deny);
  CHECK(verdict(call, "good.test", 25) == Verdict::deny);
  std::string why;
  auto d = call.decide(*paddock::net::canonicalize_host("localhost", &why), 8080);
  // The Manager's layer already decided which special addresses a name may reach.
  CHECK(call.dialable({make_address("127.0.0.1")}, d.matched, 8080, &why).size() == 1);
}

TEST_CASE("review: denied IPv4 addresses and ranges hold in their NAT64 and 6to4 spellings",
          "[net][rules]") {
  using asio::ip::make_address;
  paddock::net::RuleOptions o;
  o.denied_resolved_addresses = {"8.8.8.0/24", "203.0.113.7"};
  DomainRules rules({"*.evil.test"}, {"9.9.9.9"}, o);
  std::string error, why;
  auto d = rules.decide(*paddock::net::canonicalize_host("a.evil.test", &error), 443);
  REQUIRE(d.verdict == Verdict::allow);
  for (const char* a : {"8.8.8.8", "::ffff:8.8.8.8", "64:ff9b::808:808", "64:ff9b:1::808:808",
                        "2002:808:808::1", "::ffff:0:808:808", "64:ff9b::cb00:7107", "9.9.9.9",
                        "64:ff9b::909:909", "2002:909:909::1"}) {
    INFO(a);
    CHECK(rules.dialable({make_address(a)}, d.matched, 443, &why).empty());
  }
  CHECK(rules.dialable({make_address("2002:909:90a::1")}, d.matched, 443, &why).size() == 1);
  // A mapped form with a prefix would mean two different ranges: refused.
  paddock::net::RuleOptions b;
  b.denied_resolved_addresses = {"::ffff:10.0.0.0/8"};
  CHECK_THROWS_AS(DomainRules({}, {}, b), paddock::Error);
}
