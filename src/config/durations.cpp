#include "config/durations.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "paddock/errors.hpp"

namespace paddock::configuration {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// `ms` milliseconds (before rounding), shown to the user as `shown`.
std::chrono::milliseconds bounded(double ms, const std::string& shown,
                                  std::chrono::milliseconds max) {
  ms = std::ceil(ms);
  if (!(ms > 0)) {
    throw BadDuration(BadDuration::Kind::not_positive, "must be more than 0 seconds, got " + shown);
  }
  if (ms > static_cast<double>(max.count())) {
    throw BadDuration(BadDuration::Kind::too_long, shown + " exceeds the maximum of " +
                                                       std::to_string(max.count() / 1000) + " s");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text, std::chrono::milliseconds max) {
  // The longest prefix that is DIGITS[.DIGITS], and the rest (the unit).
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i > 0 && i < text.size() && text[i] == '.') {
    std::size_t j = i + 1;
    while (j < text.size() && is_digit(text[j])) ++j;
    if (j > i + 1) i = j;
  }
  const std::string_view number = text.substr(0, i), unit = text.substr(i);
  if (!text.empty() && text.front() == '-') {
    throw BadDuration(BadDuration::Kind::not_positive,
                      "must be more than 0 seconds, got " + quoted(text));
  }
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  }
  if (number.empty() || scale == 0) {
    throw BadDuration(BadDuration::Kind::malformed,
                      std::string("expected seconds (e.g. 30, 0.5, 90s, 2m, 1h") +
                          (max >= std::chrono::hours(24) ? ", 1d" : "") + "), got " + quoted(text));
  }
  double value = 0;
  std::from_chars(number.data(), number.data() + number.size(), value);
  return bounded(value * scale * 1000, quoted(text), max);
}

std::chrono::milliseconds duration_from_seconds(double seconds, std::chrono::milliseconds max) {
  std::string shown = std::to_string(seconds);
  // 7200.000000 -> 7200, 0.500000 -> 0.5: as the user wrote it, give or take the zeros
  shown.erase(shown.find_last_not_of('0') + 1);
  if (!shown.empty() && shown.back() == '.') shown.pop_back();
  if (!std::isfinite(seconds)) shown = "a number that is not finite";
  return bounded(seconds * 1000, shown + " s", max);
}

void apply_timeouts(Config& c, std::optional<std::chrono::milliseconds> default_timeout,
                    std::optional<std::chrono::milliseconds> max_timeout,
                    const std::string& default_name, const std::string& raise_hint) {
  if (max_timeout) {
    c.max_timeout = *max_timeout;
    if (!default_timeout && c.default_timeout > c.max_timeout) c.default_timeout = c.max_timeout;
  }
  if (!default_timeout) return;
  if (*default_timeout > c.max_timeout) {
    throw Error(errc::config_invalid,
                default_name + ": " + std::to_string(default_timeout->count()) +
                    " ms exceeds the maximum " + std::to_string(c.max_timeout.count()) + " ms" +
                    (max_timeout ? "" : " (" + raise_hint + ")"));
  }
  c.default_timeout = *default_timeout;
}

}  // namespace paddock::configuration
