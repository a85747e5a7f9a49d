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

// $'...': the escapes bash decodes (`$'\x72m'` is `rm`).
std::string decode_ansi_c(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 2) == "$'" && s.back() == '\'') s = s.substr(2, s.size() - 3);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[++i];
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
      case 'e':
      case 'E':
        out += '\x1b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < s.size() && hex_value(s[i + 1]) >= 0) {
          v = v * 16 + hex_value(s[++i]);
          ++n;
        }
        if (n == 0)
          out += "\\x";
        else
          out += static_cast<char>(v);
        break;
      }
      case 'u':
      case 'U': {  // code points: kept as UTF-8 only for ASCII (what a command name would use)
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
        if (i + 1 < s.size()) out += static_cast<char>(s[++i] & 0x1f);
        break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (n < 3 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7') {
            v = v * 8 + (s[++i] - '0');
            ++n;
          }
          out += static_cast<char>(v);
        } else {
          out += e;  // \\ \' \" \? and unknown escapes
        }
    }
  }
  return out;
}

}  // namespace paddock::classifier
