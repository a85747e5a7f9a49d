#include "config/json_fields.hpp"

#include <algorithm>
#include <cmath>

#include "config/durations.hpp"
#include "paddock/config.hpp"
#include "paddock/errors.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::configuration {
namespace {

// Edit distance, case-insensitive, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void check_ignored(const Ignored& ig, const json& v, const std::string& path) {
  switch (ig.kind) {
    case Kind::boolean:
      get_bool(v, path);
      return;
    case Kind::port:
      if (auto n = get_count(v, path); n < 1 || n > 65535) {
        fail(path, "expected a port 1-65535, got " + v.dump());
      }
      return;
    case Kind::depth:
      if (auto n = get_count(v, path); n < 1 || n > 10) {
        fail(path, "expected an integer 1-10, got " + v.dump());
      }
      return;
    case Kind::string:
      get_string(v, path);
      return;
    case Kind::string_list:
      get_string_list(v, path);
      return;
    case Kind::object:
      if (!v.is_object()) fail(path, "expected an object, " + got(v));
      return;
    case Kind::refuse:
      fail(path, ig.refuse);
    case Kind::refuse_if_set:
      if (v.is_boolean() && !v.get<bool>()) return;
      if ((v.is_array() || v.is_object()) && v.empty()) return;
      fail(path, ig.refuse);
  }
}

}  // namespace

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(errc::config_invalid, path + ": " + why);
}

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// "a string" / "an object": for "expected X, got Y".
std::string got(const json& v) { return std::string("got ") + v.type_name(); }

bool get_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "expected true or false, " + got(v));
  return v.get<bool>();
}

std::string get_string(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "expected a string, " + got(v));
  return v.get<std::string>();
}

// Paths: srt's schema requires non-empty strings; a NUL would cut the path short in the kernel.
std::vector<std::string> get_path_list(const json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "expected an array of strings, " + got(v));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string s = get_string(v[i], index(path, i));
    if (s.empty()) fail(index(path, i), "empty path");
    if (s.find('\0') != std::string::npos) fail(index(path, i), "path contains a NUL byte");
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> get_string_list(const json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "expected an array of strings, " + got(v));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string s = get_string(v[i], index(path, i));
    if (s.empty()) fail(index(path, i), "empty string");
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> get_path_entry_list(const json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "expected an array of strings, " + got(v));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = index(path, i);
    const json& e = v[i];
    if (e.is_object()) {
      const auto p = e.find("path");
      const auto lit = e.find("literal");
      if (e.size() != 2 || p == e.end() || lit == e.end() || !lit->is_boolean() ||
          !lit->get<bool>()) {
        fail(at, "expected a path, or {\"path\": \"<path>\", \"literal\": true}");
      }
      std::string s = get_string(*p, child(at, "path"));
      if (s.empty()) fail(child(at, "path"), "empty path");
      if (s.find('\0') != std::string::npos) fail(child(at, "path"), "path contains a NUL byte");
      out.push_back(sandbox::paths::escape_glob(s));
      continue;
    }
    if (!e.is_string()) {
      fail(at, "expected a string (or {\"path\": \"<path>\", \"literal\": true}), " + got(e));
    }
    std::string s = e.get<std::string>();
    if (s.empty()) fail(at, "empty path");
    if (s.find('\0') != std::string::npos) fail(at, "path contains a NUL byte");
    out.push_back(std::move(s));
  }
  return out;
}

// A non-negative whole number. `1e9` is accepted (JSON has one number type); `1.5` is not.
std::uint64_t get_count(const json& v, const std::string& path) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) fail(path, "expected an integer >= 0, got " + v.dump());
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d >= 0 && d <= 9007199254740992.0 && std::floor(d) == d) {
      return static_cast<std::uint64_t>(d);
    }
    fail(path, "expected an integer >= 0, got " + v.dump());
  }
  fail(path, "expected an integer >= 0, " + got(v));
}

// Seconds as a number, bounded as every duration is (durations.hpp), at most the hard cap.
std::chrono::milliseconds get_seconds(const json& v, const std::string& path) {
  if (!v.is_number()) fail(path, "expected a number of seconds, " + got(v));
  try {
    return duration_from_seconds(v.get<double>(), kHardTimeoutCap);
  } catch (const BadDuration& e) {
    fail(path, e.what());
  }
}

// Reads one JSON object: every key must be a Field or an Ignored one.
void read_section(const json& obj, const std::string& path, std::span<const Field> fields,
                  std::span<const Ignored> ignored) {
  if (!obj.is_object()) fail(path, "expected an object, " + got(obj));
  for (const auto& [key, value] : obj.items()) {
    const std::string where = child(path, key);
    auto f =
        std::find_if(fields.begin(), fields.end(), [&](const Field& x) { return x.key == key; });
    if (f != fields.end()) {
      f->apply(value, where);
      continue;
    }
    auto ig = std::find_if(ignored.begin(), ignored.end(),
                           [&](const Ignored& x) { return x.key == key; });
    if (ig != ignored.end()) {
      check_ignored(*ig, value, where);
      continue;
    }
    // Unknown: suggest the closest known key if exactly one is within 2 edits.
    std::string_view best;
    std::size_t best_d = 3;
    bool tie = false;
    auto consider = [&](std::string_view k) {
      std::size_t d = distance(key, k);
      if (d < best_d) {
        best = k;
        best_d = d;
        tie = false;
      } else if (d == best_d) {
        tie = true;
      }
    };
    for (const auto& x : fields) consider(x.key);
    for (const auto& x : ignored) consider(x.key);
    if (!best.empty() && !tie)
      fail(where, "unknown key (did you mean \"" + std::string(best) + "\"?)");
    std::string known;
    for (const auto& x : fields) known += (known.empty() ? "" : ", ") + std::string(x.key);
    fail(where, "unknown key (known here: " + known + ")");
  }
}

}  // namespace paddock::configuration
