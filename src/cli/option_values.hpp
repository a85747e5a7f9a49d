// Values of paddock's own flags, parsed strictly: a value that does not mean what it says is
// an error naming the flag, never a silent default (`--timeout nan` once ran with the default,
// `--max-output -1` wrapped around to "unlimited", `--max-output 0` meant the default).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace paddock::cli {

// The message says what was expected and what was given; the caller adds the flag's name.
struct BadValue : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// "30", "0.5", "90s", "2m", "1h": a plain decimal number of seconds (no sign, exponent, inf or
// nan), optionally with a unit. More than 0 and at most kHardTimeoutCap (3600 s); a fraction
// of a millisecond rounds up, so a positive value never becomes 0.
std::chrono::milliseconds parse_timeout(std::string_view text);
// The same grammar (and "1d"), more than 0 and at most `max`.
std::chrono::milliseconds parse_duration(std::string_view text, std::chrono::milliseconds max);

// "65536", "64K", "64KiB", "1M", "1MiB", "2G": bytes, units binary (K = 1024). At least 1 and
// at most kMaxOutputLimit.
std::size_t parse_byte_count(std::string_view text);

// 1 TiB: far beyond any memory a --json result can hold, and beyond what a cap on streamed
// output is for; anything larger is a typo, not a wish.
inline constexpr std::size_t kMaxOutputLimit = std::size_t{1} << 40;

// A flag's value through its parser; a bad one is a CLI11 usage error naming the flag.
template <typename Parse>
auto parse_flag(Parse parse, const char* flag, const std::string& value) {
  try {
    return parse(value);
  } catch (const BadValue& e) {
    throw CLI::ValidationError(flag, e.what());
  }
}

}  // namespace paddock::cli
