// The programs that run another command (env, timeout, nice, sudo, xargs, flock, strace, ...):
// each one's options, so the classifier finds where the command it runs starts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::classifier {

// A program that runs another command: its options (with a value, or flags), how many
// positionals of its own come before the command, whether KEY=VALUE words are skipped, and
// the rule it raises itself.
struct WrapperSpec {
  std::vector<std::string_view> values;
  std::vector<std::string_view> flags;
  int positionals = 0;
  bool assignments = false;
  const char* escalates = nullptr;
  const char* why = "";
};

// Its spec, or null when `name` (a basename) is not a wrapper of this table.
const WrapperSpec* wrapper_spec(const std::string& name);

}  // namespace paddock::classifier
