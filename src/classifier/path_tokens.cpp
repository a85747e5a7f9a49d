// The path-like arguments of a command (paddock/classifier.hpp path_tokens), for the path
// guard: what the shell will hand a program as a path, and what it cannot know yet.
#include <string>
#include <vector>

#include "classifier/shell_syntax.hpp"
#include "paddock/classifier.hpp"

namespace paddock {
namespace {

using classifier::ParsedScript;
using classifier::Word;

void collect_path(const Word& word, std::vector<PathToken>& out) {
  const std::string& w = word.text;
  if (w.empty()) return;
  std::string value = w;
  if (const auto eq = w.find('='); eq != std::string::npos) {
    value = w.substr(eq + 1);  // KEY=/path, --opt=/path
  } else if (w.size() > 2 && w[0] == '-' && w[1] != '-' && (w[2] == '/' || w[2] == '.')) {
    value = w.substr(2);  // -o/path
  } else if (w[0] == '-') {
    return;  // a flag
  }
  if (value.starts_with("@")) value.erase(0, 1);        // curl -d @file
  if (value.starts_with("file://")) value.erase(0, 7);  // file:///etc/x
  if (value.empty()) return;
  const bool pathish = value[0] == '/' || value[0] == '~' || value.starts_with("./") ||
                       value.starts_with("../") || value == "." || value == ".." ||
                       value.find('/') != std::string::npos;
  // What the shell would compute (an expansion) or match (a glob) cannot be checked here.
  const bool unknown = (word.dynamic && (pathish || value[0] == '$')) ||
                       (pathish && value.find_first_of("*?[") != std::string::npos);
  out.push_back({w, value, !pathish, unknown});
}

void collect_paths(const std::vector<Word>& words, std::vector<PathToken>& out) {
  for (std::size_t i = 1; i < words.size(); ++i) collect_path(words[i], out);
}

}  // namespace

std::vector<PathToken> path_tokens(const std::string& script) {
  std::vector<PathToken> out;
  const ParsedScript parsed = classifier::parse_script(script);
  for (const auto& c : parsed.commands) {
    collect_paths(c.words, out);
    for (const auto& a : c.assignments) collect_path({a, false, false, {}}, out);  // X=/etc/x cmd
    for (const auto& r : c.redirects) {
      if (!r.target.text.empty() &&
          r.target.text.find_first_not_of("0123456789-") != std::string::npos) {
        collect_path({"=" + r.target.text, r.target.dynamic, false, {}}, out);
        out.back().token = r.target.text;
      }
    }
  }
  return out;
}

std::vector<PathToken> path_tokens(const std::vector<std::string>& argv) {
  std::vector<Word> words;
  for (const auto& a : argv) words.push_back({a, false, false, {}});
  std::vector<PathToken> out;
  collect_paths(words, out);
  return out;
}

}  // namespace paddock
