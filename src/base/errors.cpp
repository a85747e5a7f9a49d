#include "paddock/errors.hpp"

#include "paddock/exec_result.hpp"

namespace paddock {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "paddock"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::sandbox_violation:
        return "the sandbox refused an operation";
      case errc::forbidden_command:
        return "the command is forbidden by policy";
      case errc::escalated_command:
        return "the command needs approval";
      case errc::config_invalid:
        return "invalid configuration";
      case errc::unsupported_platform:
        return "isolation is not supported here";
      case errc::dependency_missing:
        return "a required kernel feature or program is missing";
      case errc::manager_closed:
        return "the manager is closed";
      case errc::proxy_start_failed:
        return "the network proxy could not start";
      case errc::timeout:
        return "the command timed out";
      case errc::spawn_failed:
        return "the command could not be started";
    }
    return "unknown paddock error";
  }
};

}  // namespace

const std::error_category& paddock_category() noexcept {
  static const category instance;
  return instance;
}

std::string_view code_string(const std::error_code& ec) noexcept {
  if (!ec) return "";
  if (ec.category() != paddock_category()) return "E_SYSTEM";
  switch (static_cast<errc>(ec.value())) {
    case errc::sandbox_violation:
      return "E_SANDBOX_VIOLATION";
    case errc::forbidden_command:
      return "E_FORBIDDEN_COMMAND";
    case errc::escalated_command:
      return "E_ESCALATED_COMMAND";
    case errc::config_invalid:
      return "E_CONFIG_INVALID";
    case errc::unsupported_platform:
      return "E_UNSUPPORTED_PLATFORM";
    case errc::dependency_missing:
      return "E_DEPENDENCY_MISSING";
    case errc::manager_closed:
      return "E_MANAGER_CLOSED";
    case errc::proxy_start_failed:
      return "E_PROXY_START_FAILED";
    case errc::timeout:
      return "E_TIMEOUT";
    case errc::spawn_failed:
      return "E_SPAWN_FAILED";
  }
  return "E_SYSTEM";
}

std::error_code error_code_from_string(std::string_view code) noexcept {
  for (int e = static_cast<int>(errc::sandbox_violation); e <= static_cast<int>(errc::spawn_failed);
       ++e) {
    const std::error_code ec = make_error_code(static_cast<errc>(e));
    if (code_string(ec) == code) return ec;
  }
  return {};
}

}  // namespace paddock
