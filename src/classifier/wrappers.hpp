// The programs that run another command (env, timeout, nice, sudo, xargs, flock, strace, ...):
// each one's options, so the classifier finds where the command it runs starts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/shell_syntax.hpp"

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

// getopt takes any unambiguous prefix of a long option (`env --spli=CMD` is --split-string,
// `su --comm CMD` is --command): the words of `program` (at words[start]) with each such
// abbreviation written out in full, or nullopt when there is none. Only programs whose long
// options change what runs are listed (wrappers, launchers, su, sudo, env, script, flock).
std::optional<std::vector<Word>> expand_long_options(const std::vector<Word>& words,
                                                     std::size_t start, const std::string& program);

}  // namespace paddock::classifier
