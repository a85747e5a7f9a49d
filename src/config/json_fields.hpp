// Reading paddock's settings JSON field by field: typed getters that fail with the field's
// path ("filesystem.allowWrite[2]: expected a string, got number"), and read_section(), which
// refuses unknown keys (with a "did you mean") and type-checks srt keys paddock does not use.
// Shared by the sections (settings_file.cpp, commands_section.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::configuration {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& why);
std::string child(const std::string& path, std::string_view key);
std::string index(const std::string& path, std::size_t i);
// "got a string" / "got an object": for "expected X, got Y".
std::string got(const json& v);

bool get_bool(const json& v, const std::string& path);
std::string get_string(const json& v, const std::string& path);
// Non-empty strings without NUL bytes.
std::vector<std::string> get_path_list(const json& v, const std::string& path);
// A filesystem list (srt's filesystemPathEntry): paths, a glob where one reads as one, or
// {"path": P, "literal": true}, which is never a glob (carried with its glob characters
// escaped, sandbox/path_resolution.hpp).
std::vector<std::string> get_path_entry_list(const json& v, const std::string& path);
// Non-empty strings.
std::vector<std::string> get_string_list(const json& v, const std::string& path);
// A non-negative whole number (`1e9` too; `1.5` is not).
std::uint64_t get_count(const json& v, const std::string& path);
// Seconds, fractions allowed, at least a millisecond, at most the hard timeout cap.
std::chrono::milliseconds get_seconds(const json& v, const std::string& path);

// A key paddock reads.
struct Field {
  std::string_view key;
  std::function<void(const json&, const std::string&)> apply;
};

// An srt key paddock accepts but does not use: its type is still checked, so a typo'd value
// is an error in paddock as it is in srt. `refuse` is set for keys whose being ignored would
// expose something the user meant to protect.
// `refuse_if_set` is refused unless its value is false, an empty array or an empty object
// (what srt does with the default).
enum class Kind { boolean, port, depth, string, string_list, object, refuse, refuse_if_set };
struct Ignored {
  std::string_view key;
  Kind kind;
  const char* refuse = nullptr;
};

// Reads one JSON object: every key must be a Field or an Ignored one.
void read_section(const json& obj, const std::string& path, std::span<const Field> fields,
                  std::span<const Ignored> ignored = {});

}  // namespace paddock::configuration
