#include "classifier/shell_words.hpp"

#include <cstring>

namespace paddock::classifier {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// Inside double quotes a backslash escapes only $ ` " \ and a newline.
std::string unescape_double_quoted(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && std::strchr("$`\"\\\n", s[i + 1]) != nullptr) {
      if (s[i + 1] != '\n') out += s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Outside quotes a backslash escapes any character (`r\m` is `rm`).
std::string unescape_bare(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      if (s[i + 1] != '\n') out += s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::optional<std::string> decode_escapes(std::string_view s, Escapes dialect) {
  const bool ansi_c = dialect == Escapes::ansi_c;
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    const auto octal = [&](int value, int digits) {  // up to `digits` more octal digits
      for (int n = 0; n < digits && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++n)
        value = value * 8 + (s[++i] - '0');
      out += static_cast<char>(value);
    };
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'e':
      case 'E':
        out += '\x1b';
        break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < s.size() && hex_value(s[i + 1]) >= 0) {
          v = v * 16 + hex_value(s[++i]);
          ++n;
        }
        if (n > 0) {
          out += static_cast<char>(v);
        } else if (ansi_c) {
          out += "\\x";
        } else {
          return std::nullopt;
        }
        break;
      }
      case 'u':
      case 'U': {  // code points: kept as UTF-8 only for ASCII (what a command name would use)
        if (!ansi_c) return std::nullopt;
        int v = 0, n = 0;
        const int max = e == 'u' ? 4 : 8;
        while (n < max && i + 1 < s.size() && hex_value(s[i + 1]) >= 0) {
          v = v * 16 + hex_value(s[++i]);
          ++n;
        }
        out += v > 0 && v < 128 ? static_cast<char>(v) : '?';
        break;
      }
      case 'c':
        if (!ansi_c) return std::nullopt;  // echo/printf: stop printing (not modelled)
        if (i + 1 < s.size()) out += static_cast<char>(s[++i] & 0x1f);
        break;
      case '\\':
      case '"':
      case '\'':
        out += e;
        break;
      default:
        if (e == '0' && dialect != Escapes::ansi_c) {
          octal(0, 3);  // echo -e and printf: \0NNN
        } else if (e >= '0' && e <= '7' && dialect != Escapes::echo) {
          octal(e - '0', 2);  // $'\NNN', printf's \NNN
        } else if (ansi_c) {
          out += e;  // \? and unknown escapes
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

std::string decode_ansi_c(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 2) == "$'" && s.back() == '\'') s = s.substr(2, s.size() - 3);
  return decode_escapes(s, Escapes::ansi_c).value_or(std::string(s));
}

}  // namespace paddock::classifier
