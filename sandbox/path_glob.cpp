#include "sandbox/path_glob.hpp"

#include <fnmatch.h>

#include <vector>

namespace paddock::sandbox::paths {
namespace {
std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t end = s.find('/', i);
    if (end == std::string_view::npos) end = s.size();
    if (end > i) out.emplace_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}
}  // namespace

namespace {
bool escapable(char ch) { return ch == '*' || ch == '?' || ch == '[' || ch == '\\'; }
}  // namespace

bool is_glob(std::string_view component) {
  for (std::size_t i = 0; i < component.size(); ++i) {
    const char ch = component[i];
    if (ch == '\\' && i + 1 < component.size() && escapable(component[i + 1])) {
      ++i;
    } else if (ch == '*' || ch == '?' || ch == '[') {
      return true;
    }
  }
  return false;
}

std::string unescape_glob(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && escapable(text[i + 1])) ++i;
    out += text[i];
  }
  return out;
}

namespace {
// Pattern components from `p`, path components from `q`: the pattern used up with path left
// over is a match too (below a matched directory).
bool covers_from(const std::vector<std::string>& p, std::size_t i,
                 const std::vector<std::string>& q, std::size_t j) {
  if (i == p.size()) return true;
  if (p[i] == "**") {
    for (std::size_t k = j; k <= q.size(); ++k) {
      if (covers_from(p, i + 1, q, k)) return true;
    }
    return false;
  }
  if (j == q.size()) return false;
  const bool same = is_glob(p[i]) ? ::fnmatch(fnmatch_pattern(p[i]).c_str(), q[j].c_str(), 0) == 0
                                  : unescape_glob(p[i]) == q[j];
  return same && covers_from(p, i + 1, q, j + 1);
}
}  // namespace

namespace {
// Whether the first components of the pattern (from `i`) can match the path's (from `j`)
// with pattern left over: a match could lie below the path.
bool passes_from(const std::vector<std::string>& p, std::size_t i,
                 const std::vector<std::string>& q, std::size_t j) {
  if (j == q.size()) return i < p.size();
  if (i == p.size()) return false;
  if (p[i] == "**") return true;  // it takes the rest of the path and goes on below
  const bool same = is_glob(p[i]) ? ::fnmatch(fnmatch_pattern(p[i]).c_str(), q[j].c_str(), 0) == 0
                                  : unescape_glob(p[i]) == q[j];
  return same && passes_from(p, i + 1, q, j + 1);
}
}  // namespace

bool glob_passes_through(std::string_view pattern, std::string_view path) {
  return passes_from(split(pattern), 0, split(path), 0);
}

bool glob_covers(std::string_view pattern, std::string_view path) {
  return covers_from(split(pattern), 0, split(path), 0);
}

std::string fnmatch_pattern(std::string_view component) {
  std::string out;
  out.reserve(component.size());
  for (std::size_t i = 0; i < component.size(); ++i) {
    const char ch = component[i];
    if (ch != '\\') {
      out += ch;
    } else if (i + 1 < component.size() && escapable(component[i + 1])) {
      out += ch;
      out += component[++i];
    } else {
      out += "\\\\";
    }
  }
  return out;
}

std::string escape_glob(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char ch : name) {
    if (escapable(ch)) out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace paddock::sandbox::paths
