// libFuzzer target for the classifier (src/classifier): any input, as a script and as argv
// (split at NUL bytes), must classify without crashing, within libFuzzer's per-input time
// limit, and consistently: the decision is the strictest of the parts, and input past the
// size bound is never `allow`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "check.hpp"
#include "paddock/classifier.hpp"

namespace {

void consistent(const paddock::Classification& c) {
  FUZZ_CHECK(!c.rule.empty());
  FUZZ_CHECK(c.parts.size() <= paddock::kClassifierMaxCommands);
  for (const auto& p : c.parts) {
    FUZZ_CHECK(static_cast<int>(p.decision) <= static_cast<int>(c.decision));
    FUZZ_CHECK(!p.rule.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const paddock::Classification script = paddock::classify_script(input);
  consistent(script);
  if (size > paddock::kClassifierMaxScriptBytes) {
    FUZZ_CHECK(script.decision != paddock::Decision::allow);
  }
  std::vector<std::string> argv;
  std::string word;
  for (char ch : input) {
    if (ch == '\0') {
      argv.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  argv.push_back(word);
  consistent(paddock::classify_argv(argv));
  return 0;
}
