#include "cli/terminal.hpp"

#include <unistd.h>

#include <cstdio>

namespace paddock::cli {

std::string terminal_safe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
      escape(c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      escape(c);
      escape(static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void say(const std::string& line) {
  static const bool tty = ::isatty(STDERR_FILENO) == 1;
  // SGR reset, G0/G1 back to ASCII and G0 selected (a command can leave the line-drawing set
  // active, turning letters into box glyphs).
  std::fprintf(stderr, "%spaddock: %s\n", tty ? "\033[0m\033(B\033)B\017" : "",
               terminal_safe(line).c_str());
}

}  // namespace paddock::cli
