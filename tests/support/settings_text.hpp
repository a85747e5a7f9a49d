// Settings documents given as JSON text, for the settings tests: applied on a base config,
// or the config_invalid message they produce.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "paddock/errors.hpp"
#include "paddock/settings.hpp"

namespace test {

inline paddock::Config apply_settings_json(const std::string& text,
                                           paddock::Config base = paddock::DefaultConfig()) {
  return paddock::apply_settings(nlohmann::json::parse(text), std::move(base));
}

// The config_invalid message of applying `text`, or "" if it applied.
inline std::string settings_error_of(const std::string& text) {
  try {
    apply_settings_json(text);
  } catch (const paddock::Error& e) {
    CHECK(e.code() == paddock::errc::config_invalid);
    return e.what();
  }
  return "";
}

}  // namespace test
