// The names of paddock's public enums as the settings file, the CLI and the JSON results spell
// them: in the base library, so every layer (and the fuzz targets) can print and parse them.
#include <optional>
#include <string_view>

#include "paddock/exec_result.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock {

const char* to_string(Decision d) noexcept {
  switch (d) {
    case Decision::allow:
      return "allow";
    case Decision::sandboxed:
      return "sandboxed";
    case Decision::escalated:
      return "escalated";
    case Decision::forbidden:
      return "forbidden";
  }
  return "sandboxed";
}

const char* to_string(NetworkMode m) noexcept {
  switch (m) {
    case NetworkMode::blocked:
      return "blocked";
    case NetworkMode::filtered:
      return "filtered";
    case NetworkMode::allowed:
      return "allowed";
  }
  return "blocked";
}

const char* to_string(FallbackMode m) noexcept {
  switch (m) {
    case FallbackMode::strict:
      return "strict";
    case FallbackMode::warn:
      return "warn";
  }
  return "strict";
}

std::optional<NetworkMode> network_mode_from_string(std::string_view s) noexcept {
  if (s == "blocked") return NetworkMode::blocked;
  if (s == "filtered") return NetworkMode::filtered;
  if (s == "allowed") return NetworkMode::allowed;
  return std::nullopt;
}

}  // namespace paddock
