// UTF-8 validation and base64, which carry a command's bytes through JSON without loss.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "runtime/text_encoding.hpp"

using paddock::base64_decode;
using paddock::base64_encode;
using paddock::is_valid_utf8;

TEST_CASE("is_valid_utf8: well-formed text passes, every ill-formed class fails", "[encoding]") {
  for (const char* ok : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                         "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", "\xC2\x80"}) {
    INFO(ok);
    CHECK(is_valid_utf8(ok));
  }
  CHECK(is_valid_utf8(std::string("nul\0inside", 10)));
  for (const char* bad : {
           "\xFF", "\xFE",                      // never in UTF-8
           "\x80", "a\xBF",                     // a lone continuation byte
           "\xC0\xAF", "\xC1\xBF",              // overlong 2-byte forms of ASCII
           "\xE0\x80\xAF",                      // overlong 3-byte
           "\xF0\x80\x80\xAF",                  // overlong 4-byte
           "\xED\xA0\x80", "\xED\xBF\xBF",      // UTF-16 surrogates
           "\xF4\x90\x80\x80",                  // above U+10FFFF
           "\xF5\x80\x80\x80",                  // lead byte past F4
           "\xC3", "\xE2\x82", "\xF0\x9F\x98",  // cut at the end (a cap can do that)
           "\xE2\x28\xA1",                      // bad second byte
           "\xF0\x9F\x28\x80",                  // bad third byte
       }) {
    INFO(bad);
    CHECK_FALSE(is_valid_utf8(bad));
  }
}

TEST_CASE("base64: RFC 4648 vectors, and decode refuses other spellings", "[encoding]") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    CHECK(base64_encode(plain) == encoded);
    CHECK(base64_decode(encoded) == std::string(plain));
  }
  CHECK(base64_encode(std::string("\xFF\xFE\0ok", 5)) == "//4Ab2s=");
  for (const char* bad :
       {"Zg", "Zg=", "Z===", "Zm9v!A==", "Zg==Zm9v", "Zh==", "Zm9=", "====", "Zm 9v"}) {
    INFO(bad);
    CHECK_FALSE(base64_decode(bad).has_value());
  }
  // Every byte value, every length remainder: round trip.
  std::mt19937 rng(7);
  for (int len = 0; len < 70; ++len) {
    std::string bytes;
    for (int i = 0; i < len; ++i) bytes += static_cast<char>(rng() & 0xff);
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  }
}
