// Hand-written because nothing in paddock's dependencies reads git's config syntax, and
// running `git config` for every command would cost a process start on the event loop.
#include "sandbox/git_config_syntax.hpp"

#include <cctype>

namespace paddock::sandbox {

void read_git_config(
    std::string_view text,
    const std::function<void(const std::string& key, const std::string& value)>& on_setting,
    const std::function<void(const std::string& path, bool conditional)>& on_include) {
  // git skips a UTF-8 byte order mark at the start of a file.
  std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::string section;        // lower case; empty in a section with a subsection (not read)
  bool in_includeif = false;  // `[includeIf "..."]`: its path is an include, condition aside
  auto at_end = [&] { return i >= text.size(); };
  auto skip_line = [&] {
    while (!at_end() && text[i] != '\n') ++i;
  };
  while (!at_end()) {
    const char c = text[i];
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#' || c == ';') {
      skip_line();
      continue;
    }
    if (c == '[') {
      // The header ends at the first `]` outside a quoted subsection (`[url "https://x]"]`).
      std::size_t close = i + 1;
      for (bool q = false; close < text.size() && (q || text[close] != ']'); ++close) {
        if (text[close] == '\\' && q) {
          ++close;
        } else if (text[close] == '"') {
          q = !q;
        } else if (text[close] == '\n') {
          return;  // git refuses the file: so do we
        }
      }
      if (close >= text.size()) return;
      section = text.substr(i + 1, close - i - 1);
      for (auto& ch : section) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      in_includeif =
          section.size() > 9 && section.starts_with("includeif") &&
          (section[9] == ' ' || section[9] == '\t' || section[9] == '"' || section[9] == '.');
      // `[user "x"]` and `[user.x]` are other sections, with subsections: none is carried.
      if (section.find_first_of(" \t\".") != std::string::npos) section.clear();
      i = close + 1;
      continue;  // a variable may follow on the same line
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      skip_line();  // not a variable line: git would refuse the file; read nothing more of it
      return;
    }
    std::string key;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-')) {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      ++i;
    }
    while (!at_end() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (at_end() || text[i] != '=') {  // `key` alone: git reads it as an empty value
      if (!section.empty()) on_setting(section + "." + key, "");
      skip_line();
      continue;
    }
    ++i;
    std::string value;
    std::size_t kept = 0;  // value's length up to its last character that is not trailing space
    bool quoted = false;
    bool started = false;
    while (!at_end()) {
      char v = text[i++];
      if (v == '\n' && !quoted) break;
      if (v == '\n') return;  // a newline inside quotes: git refuses the file
      if (!quoted && (v == '#' || v == ';')) {
        skip_line();
        break;
      }
      if (v == '"') {
        quoted = !quoted;
        started = true;
        kept = value.size();
        continue;
      }
      if (v == '\\') {
        if (at_end()) return;
        const char e = text[i++];
        if (e == '\n') continue;  // a continuation line
        if (e == '\r' && !at_end() && text[i] == '\n') {
          ++i;
          continue;
        }
        switch (e) {
          case 'n':
            v = '\n';
            break;
          case 't':
            v = '\t';
            break;
          case 'b':
            v = '\b';
            break;
          case '"':
            v = '"';
            break;
          case '\\':
            v = '\\';
            break;
          default:
            return;  // git refuses an unknown escape
        }
        value += v;
        started = true;
        kept = value.size();
        continue;
      }
      if ((v == ' ' || v == '\t' || v == '\r') && !quoted) {
        if (started) value += v;
        continue;
      }
      value += v;
      started = true;
      kept = value.size();
    }
    value.resize(kept);
    if (section == "include" && key == "path") {
      on_include(value, false);  // read where it stands: what follows it wins over what it sets
    } else if (in_includeif && key == "path") {
      on_include(value, true);
    } else if (!section.empty()) {
      on_setting(section + "." + key, value);
    }
  }
}

}  // namespace paddock::sandbox
