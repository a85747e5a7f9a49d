// One grammar for a length of time, wherever a user gives one: `--timeout` and
// `--idle-timeout`, the PADDOCK_*_TIMEOUT_SECONDS variables, and the settings file's seconds
// (a JSON number). Seconds, fractions allowed, or with a unit (90s, 2m, 1h, 1d): a plain
// decimal number, no sign, exponent, inf or nan. More than 0 (a fraction of a millisecond
// rounds up, so a positive value never becomes 0) and at most the caller's maximum. And one
// rule for a default and a maximum timeout given together (apply_timeouts).
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "paddock/config.hpp"

namespace paddock::configuration {

// What was wrong and what was given; the caller names the field or flag.
struct BadDuration : std::invalid_argument {
  enum class Kind { malformed, not_positive, too_long };
  BadDuration(Kind k, const std::string& what) : std::invalid_argument(what), kind(k) {}
  Kind kind;
};

std::chrono::milliseconds parse_duration(std::string_view text, std::chrono::milliseconds max);
std::chrono::milliseconds duration_from_seconds(double seconds, std::chrono::milliseconds max);

// A source's default and maximum timeouts (the settings file, the environment), each maybe
// absent, onto `c`. A maximum below the default in force pulls it down, unless the source
// gives a default too; a given default above the maximum is config_invalid, named
// `default_name`, with `raise_hint` when the maximum is not the source's own.
void apply_timeouts(Config& c, std::optional<std::chrono::milliseconds> default_timeout,
                    std::optional<std::chrono::milliseconds> max_timeout,
                    const std::string& default_name, const std::string& raise_hint);

}  // namespace paddock::configuration
