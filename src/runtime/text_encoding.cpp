#include "runtime/text_encoding.hpp"

#include <array>
#include <cstdint>

namespace paddock {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_decode_table() {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i)
    t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  return t;
}
constexpr auto kDecode = make_decode_table();

bool in(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

}  // namespace

bool is_valid_utf8(std::string_view bytes) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The second byte's range depends on the first: that is what rules out overlong forms
    // (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..).
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (in(c, 0xc2, 0xdf)) {
      len = 2;
    } else if (c == 0xe0) {
      len = 3, lo = 0xa0;
    } else if (in(c, 0xe1, 0xec) || in(c, 0xee, 0xef)) {
      len = 3;
    } else if (c == 0xed) {
      len = 3, hi = 0x9f;
    } else if (c == 0xf0) {
      len = 4, lo = 0x90;
    } else if (in(c, 0xf1, 0xf3)) {
      len = 4;
    } else if (c == 0xf4) {
      len = 4, hi = 0x8f;
    } else {
      return false;  // 80..C1 (continuation or overlong lead), F5..FF
    }
    if (n - i < len || !in(p[i + 1], lo, hi)) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if (!in(p[i + k], 0x80, 0xbf)) return false;
    }
    i += len;
  }
  return true;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = std::uint32_t{p[i]} << 16 | std::uint32_t{p[i + 1]} << 8 | p[i + 2];
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63],
            kAlphabet[v & 63]};
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{p[i]} << 16;
    if (rest == 2) v |= std::uint32_t{p[i + 1]} << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (last && k >= 4 - pad) {
        v <<= 6;
        continue;
      }
      const int d = kDecode[c];
      if (d < 0) return std::nullopt;  // '=' before the end is not in the table either
      v = v << 6 | static_cast<std::uint32_t>(d);
    }
    // Bits the padding leaves unused must be zero: one spelling per byte string.
    if (last && pad == 2 && (v & 0xffff) != 0) return std::nullopt;
    if (last && pad == 1 && (v & 0xff) != 0) return std::nullopt;
    out += static_cast<char>(v >> 16);
    if (!last || pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (!last || pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

}  // namespace paddock
