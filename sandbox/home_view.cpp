#include "sandbox/home_view.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <map>
#include <mutex>
#include <optional>

#include "sandbox/default_paths.hpp"

namespace paddock::sandbox {

using namespace paths;

namespace {

bool is_protected_or_holds_one(const std::string& dir, const std::vector<std::string>& homes) {
  for (const auto& h : homes) {
    if (within(h, dir)) return true;
  }
  return false;
}

}  // namespace

std::vector<Resolved> hidden_home_dirs(const std::vector<std::string>& homes) {
  std::vector<std::string> spelled = homes;
  spelled.emplace_back("/root");
  spelled.emplace_back("/home");
  std::vector<Resolved> out;
  for (const auto& s : spelled) {
    try {
      Resolved r = resolve_from("/", s);
      if (!r.exists || !r.is_dir || r.path == "/") continue;
      out.push_back(std::move(r));
    } catch (const Unresolvable&) {
      // A home we cannot resolve (a symlink loop) has nothing readable through it either.
    }
  }
  return out;
}

std::vector<Resolved> readable_home_paths(const std::vector<std::string>& homes) {
  std::vector<Resolved> out;
  for (const std::string& entry : home_readable_paths()) {
    std::vector<std::string> spelled;
    if (entry.starts_with("~/")) {
      for (const auto& h : homes) spelled.push_back(join(h, entry.substr(2)));
    } else {
      spelled.push_back(entry);
    }
    for (const auto& s : spelled) {
      try {
        Resolved r = resolve_from("/", s);
        if (r.exists && r.links.empty()) out.push_back(std::move(r));
      } catch (const Unresolvable&) {
      }
    }
  }
  return out;
}

std::string repository_top_between(const std::string& root, const std::string& hidden,
                                   const std::vector<std::string>& homes) {
  for (std::string dir(parent_of(root)); below(dir, hidden); dir = std::string(parent_of(dir))) {
    struct stat st;
    if (::lstat((dir + "/.git").c_str(), &st) != 0) continue;
    if (is_protected_or_holds_one(dir, homes)) return {};
    return dir;
  }
  return {};
}

namespace {

// The [user] name and email of one git config file's text. Hand-written because nothing in
// paddock's dependencies reads git's config syntax, and running `git config` for every command
// would cost a process start on the event loop; only these two keys of the plain [user]
// section are read, with git's quoting, escapes, comments and line continuations. Includes
// are not followed (an identity kept in an included file is not found: the command then
// reports no identity, it never sees more).
void read_user_section(std::string_view text, std::optional<std::string>& name,
                       std::optional<std::string>& email) {
  std::size_t i = 0;
  bool in_user = false;
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
      std::string section(text.substr(i + 1, close - i - 1));
      for (auto& ch : section) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      in_user = section == "user";  // `[user "x"]` and `[user.x]` are other sections
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
      if (in_user && key == "name") name = "";
      if (in_user && key == "email") email = "";
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
    if (!in_user) continue;
    if (key == "name") name = value;
    if (key == "email") email = value;
  }
}

std::optional<std::string> read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[8192];
  while (text.size() < (1u << 20)) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// A value as a git config value: quoted, with git's escapes; control characters dropped.
std::string quoted(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    }
  }
  return out + "\"";
}

struct Signature {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  long mtime_sec = 0, mtime_nsec = 0, ctime_sec = 0, ctime_nsec = 0;
  bool operator==(const Signature&) const = default;
};

Signature signature_of(const std::string& path) {
  struct stat st;
  Signature s;
  if (::stat(path.c_str(), &st) == 0) {
    s = {st.st_dev,          st.st_ino,         st.st_size,        st.st_mtim.tv_sec,
         st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  }
  return s;
}

}  // namespace

std::string git_identity_config(const std::string& home) {
  // git reads the XDG file first, then ~/.gitconfig: a later value wins.
  const std::string files[] = {home + "/.config/git/config", home + "/.gitconfig"};
  const std::pair<Signature, Signature> sig = {signature_of(files[0]), signature_of(files[1])};
  // Read once per home while the files stay the same: this runs for every command.
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::pair<Signature, Signature>, std::string>> cache;
  {
    const std::lock_guard lock(mutex);
    auto it = cache.find(home);
    if (it != cache.end() && it->second.first == sig) return it->second.second;
  }
  std::optional<std::string> name, email;
  for (const auto& f : files) {
    if (auto text = read_small_file(f)) read_user_section(*text, name, email);
  }
  std::string out;
  if (name || email) {
    out =
        "# paddock: the host's git identity only; the rest of the home's git config is hidden\n"
        "[user]\n";
    if (name) out += "\tname = " + quoted(*name) + "\n";
    if (email) out += "\temail = " + quoted(*email) + "\n";
  }
  const std::lock_guard lock(mutex);
  if (cache.size() >= 64) cache.clear();  // many homes (a test suite's): keep it bounded
  cache[home] = {sig, out};
  return out;
}

}  // namespace paddock::sandbox
