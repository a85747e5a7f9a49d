#include "classifier/bash_stops.hpp"

#include <algorithm>
#include <array>

namespace paddock::classifier {
namespace {

// Words bash gives a meaning at the start of a command: the scan does not follow what they
// open (a compound command, a function, a test), so it claims nothing after one.
bool reserved(std::string_view w) {
  static constexpr std::array<std::string_view, 23> kWords = {
      "!",    "if",   "then",  "else",   "elif", "fi",       "do",   "done",
      "case", "esac", "while", "until",  "for",  "select",   "in",   "{",
      "}",    "[[",   "]]",    "coproc", "time", "function", "alias"};
  return std::find(kWords.begin(), kWords.end(), w) != kWords.end();
}

bool assignment(std::string_view w) {
  const auto eq = w.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

}  // namespace

std::optional<std::string> bash_rejects_command_at(std::string_view s, std::size_t start) {
  // Aliases (expand_aliases) and extended globs (extglob) change how bash reads what follows:
  // a script that may turn either on is not judged here.
  if (s.find("shopt") != std::string_view::npos || s.find("alias") != std::string_view::npos)
    return std::nullopt;
  // The current simple command: its words, assignments and redirections so far, and
  // whether the first was a plain word (`name (` may be a function definition).
  std::size_t tokens = 0;
  bool in_word = false, plain_first = false, target = false;
  std::string word;  // the current word's unquoted text, while it may be the first one
  // A line starting with `&&`, `||` or `|` (agents write `PY\n&& git add ...` after a
  // heredoc): "syntax error near unexpected token".
  {
    std::size_t i = start;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (s.substr(i).starts_with("&&") || s.substr(i).starts_with("||") ||
        (s.substr(i).starts_with("|") && start > 0))
      return "a line starting with " + std::string(s.substr(i, s[i + 1] == s[i] ? 2 : 1)) +
             ": bash's \"syntax error near unexpected token\"";
  }
  const auto end_word = [&]() -> bool {  // false: a reserved word, the scan gives up
    if (!in_word) return true;
    in_word = false;
    if (tokens == 0 && !target) {
      if (reserved(word)) return false;
      plain_first = !assignment(word);
    }
    target = false;
    ++tokens;
    word.clear();
    return true;
  };
  const auto new_command = [&] {
    tokens = 0;
    plain_first = false;
  };
  for (std::size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (c) {
      case '\n':
        return std::nullopt;  // a complete command: bash runs it
      case ' ':
      case '\t':
        if (!end_word()) return std::nullopt;
        break;
      case '#':
        if (!in_word) return std::nullopt;  // a comment to the end of the line
        word += c;
        break;
      case '\\':
        if (next == '\n' || next == '\0') return std::nullopt;
        in_word = true;
        word += next;
        ++i;
        break;
      case '\'': {
        const auto close = s.find('\'', i + 1);
        if (close == std::string_view::npos)
          return "a ' that nothing closes: bash reaches the end looking for it";
        in_word = true;
        word += "'";  // quoted: never a reserved word or an assignment's name
        i = close;
        break;
      }
      case '"': {
        if (s.find('"', i + 1) == std::string_view::npos)
          return "a \" that nothing closes: bash reaches the end looking for it";
        std::size_t j = i + 1;
        for (; j < s.size() && s[j] != '"'; ++j) {
          if (s[j] == '\\') {
            ++j;
          } else if (s[j] == '`' || (s[j] == '$' && j + 1 < s.size() &&
                                     (s[j + 1] == '(' || s[j + 1] == '{' || s[j + 1] == '['))) {
            return std::nullopt;  // a substitution: its own quoting
          }
        }
        in_word = true;
        word += "\"";
        i = j;
        break;
      }
      case '`':
        return std::nullopt;
      case '$':
        if (next == '(' || next == '{' || next == '[' || next == '\'' || next == '"')
          return std::nullopt;
        in_word = true;
        word += c;
        break;
      case '(': {
        // Part of a word: an extended glob (@( ... )), an array (a=( ... )), an expansion;
        // the scan makes no claim about those.
        const char before = i > start ? s[i - 1] : '\0';
        if (in_word && std::string_view("?*+@!=$<>").find(before) != std::string_view::npos)
          return std::nullopt;
        if (!end_word()) return std::nullopt;
        if (tokens == 0 || (tokens == 1 && plain_first))
          return std::nullopt;  // a subshell, or perhaps a function definition
        return "`(` after the words of a command: bash's \"syntax error near unexpected token "
               "`('\"";
      }
      case ')':
        return std::nullopt;
      case ';':
        if (next == ';' || next == '&') return std::nullopt;  // a case item's end
        if (!end_word()) return std::nullopt;
        new_command();
        break;
      case '&':
      case '|':
        if (!end_word()) return std::nullopt;
        if (c == '&' && next == '>') {  // &> and &>>: a redirect
          target = true;
          i += (i + 2 < s.size() && s[i + 2] == '>') ? 2 : 1;
          break;
        }
        if (next == c || (c == '|' && next == '&')) ++i;
        new_command();
        break;
      case '<':
      case '>': {
        if (next == '(') return std::nullopt;  // a process substitution
        // An fd number glued to the operator (2>) is not a word.
        if (in_word && !word.empty() &&
            std::all_of(word.begin(), word.end(), [](char d) { return d >= '0' && d <= '9'; })) {
          in_word = false;
          word.clear();
        }
        if (!end_word()) return std::nullopt;
        if (tokens == 0) plain_first = false;
        while (i + 1 < s.size() &&
               std::string_view("<>&|-").find(s[i + 1]) != std::string_view::npos)
          ++i;
        target = true;
        break;
      }
      default:
        in_word = true;
        word += c;
    }
  }
  return std::nullopt;
}

}  // namespace paddock::classifier
