#include "cli/serve_token.hpp"

#include <cstdlib>
#include <fstream>

#include "paddock/errors.hpp"

namespace paddock::cli {

std::optional<std::string> serve_token(const std::string& token_file) {
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::string token;
    if (!in || !std::getline(in, token)) {
      throw Error(errc::config_invalid, "--token-file " + token_file + ": cannot read it");
    }
    while (!token.empty() &&
           (token.back() == ' ' || token.back() == '\t' || token.back() == '\r')) {
      token.pop_back();
    }
    return token;
  }
  if (const char* env = std::getenv("PADDOCK_SERVE_TOKEN"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  return std::nullopt;
}

}  // namespace paddock::cli
