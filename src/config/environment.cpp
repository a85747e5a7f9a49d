#include "config/environment.hpp"

#include <algorithm>

#include "paddock/errors.hpp"

namespace paddock::configuration {
namespace {

bool allowed(const std::vector<std::string>& allow, std::string_view name) {
  return std::any_of(allow.begin(), allow.end(), [&](const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '*') {
      return name.substr(0, pattern.size() - 1) ==
             std::string_view(pattern).substr(0, pattern.size() - 1);
    }
    return name == pattern;
  });
}

// The default when neither the supervisor nor the caller provides PATH: a command must still
// find the basics, and an empty PATH would make execvp-style lookups search the cwd.
constexpr const char* kDefaultPath = "PATH=/usr/local/bin:/usr/bin:/bin";

}  // namespace

std::vector<std::string> build_child_environment(const std::vector<std::string>& allow,
                                                 const std::map<std::string, std::string>& set,
                                                 const char* const* parent,
                                                 const std::vector<std::string>& deny) {
  for (const auto& [key, value] : set) {
    if (key.empty() || key.find_first_of("=") != std::string::npos ||
        key.find('\0') != std::string::npos || value.find('\0') != std::string::npos) {
      throw Error(errc::config_invalid,
                  "env: invalid variable name or value for '" + key +
                      "' (a name is non-empty and has no '=' or NUL; values have no NUL)");
    }
  }
  std::vector<std::string> env;
  for (const char* const* p = parent; p != nullptr && *p != nullptr; ++p) {
    std::string_view entry(*p);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (set.count(std::string(name)) != 0 || !allowed(allow, name) ||
        std::find(deny.begin(), deny.end(), name) != deny.end()) {
      continue;
    }
    env.emplace_back(entry);
  }
  for (const auto& [key, value] : set) env.push_back(key + "=" + value);
  if (find_variable(env, "PATH") == nullptr) env.emplace_back(kDefaultPath);
  return env;
}

const char* find_variable(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env) {
    if (entry.size() > name.size() && entry[name.size()] == '=' &&
        std::string_view(entry).substr(0, name.size()) == name) {
      return entry.c_str() + name.size() + 1;
    }
  }
  return nullptr;
}

}  // namespace paddock::configuration
