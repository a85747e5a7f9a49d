#include "cli/option_values.hpp"

#include <charconv>
#include <cstdint>
#include <string>

#include "config/durations.hpp"
#include "paddock/config.hpp"

namespace paddock::cli {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The longest prefix that is DIGITS, and the rest (the unit).
std::pair<std::string_view, std::string_view> split_number(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  return {text.substr(0, i), text.substr(i)};
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

std::chrono::milliseconds parse_timeout(std::string_view text) {
  return parse_duration(text, kHardTimeoutCap);
}

std::chrono::milliseconds parse_duration(std::string_view text, std::chrono::milliseconds max) {
  try {
    return configuration::parse_duration(text, max);
  } catch (const configuration::BadDuration& e) {
    throw BadValue(std::string(e.what()) + (e.kind == configuration::BadDuration::Kind::not_positive
                                                ? " (leave the flag out for its default)"
                                                : ""));
  }
}

std::size_t parse_byte_count(std::string_view text) {
  auto [number, unit] = split_number(text);
  if (!text.empty() && text.front() == '-') {
    throw BadValue("must be at least 1 byte, got " + quoted(text) +
                   " (leave --max-output out for no cap on streamed output)");
  }
  std::size_t scale = 0;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "k" || unit == "KiB") {
    scale = std::size_t{1} << 10;
  } else if (unit == "M" || unit == "MiB") {
    scale = std::size_t{1} << 20;
  } else if (unit == "G" || unit == "GiB") {
    scale = std::size_t{1} << 30;
  }
  if (number.empty() || scale == 0) {
    throw BadValue("expected a number of bytes (e.g. 65536, 64K, 1M, 2G), got " + quoted(text));
  }
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const bool too_big = ec == std::errc::result_out_of_range || value > kMaxOutputLimit / scale;
  if (too_big) {
    throw BadValue(quoted(text) + " exceeds the maximum of 1 TiB");
  }
  if (value == 0) {
    throw BadValue("must be at least 1 byte, got " + quoted(text));
  }
  return static_cast<std::size_t>(value * scale);
}

}  // namespace paddock::cli
