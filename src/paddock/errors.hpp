// Stable error codes of paddock (docs/design.md, "Contracts"). The enum is an std::error_code
// category so they travel through Asio completion handlers unchanged; code_string() gives the
// stable "E_..." string used in JSON and on the CLI.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace paddock {

enum class errc {
  sandbox_violation = 1,
  forbidden_command,
  escalated_command,
  config_invalid,
  unsupported_platform,
  dependency_missing,
  manager_closed,
  proxy_start_failed,
  timeout,
  spawn_failed,
};

const std::error_category& paddock_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), paddock_category()};
}

// "E_TIMEOUT" etc. for paddock codes; "E_SYSTEM" for anything else.
std::string_view code_string(const std::error_code& ec) noexcept;
// The other way: "E_TIMEOUT" -> errc::timeout; an empty code for a string that names none.
std::error_code error_code_from_string(std::string_view code) noexcept;

// Thrown by constructors and the blocking API: a code plus one line that says what and why.
// (Not std::system_error: its what() appends the category text to ours.)
class Error : public std::runtime_error {
 public:
  Error(errc code, const std::string& what) : Error(make_error_code(code), what) {}
  Error(std::error_code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  const std::error_code& code() const noexcept { return code_; }

 private:
  std::error_code code_;
};

}  // namespace paddock

template <>
struct std::is_error_code_enum<paddock::errc> : std::true_type {};
