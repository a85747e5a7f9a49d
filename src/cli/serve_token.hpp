// The token of `paddock serve`'s TCP listeners, as the daemon and `paddock run --connect` both
// read it: the first line of --token-file (trailing blanks dropped), else PADDOCK_SERVE_TOKEN.
#pragma once

#include <optional>
#include <string>

namespace paddock::cli {

// Throws paddock::Error(config_invalid) naming the file when it cannot be read.
std::optional<std::string> serve_token(const std::string& token_file);

}  // namespace paddock::cli
