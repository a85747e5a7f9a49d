// The classifier's rules: one table (rules.cpp), each rule a name, a decision, a reason for a
// person, the programs it is about and, where the program alone does not decide, a test on
// its arguments. The first matching rule decides one simple command; a script takes the
// strictest of its commands (classifier.cpp). The categories follow agentbox's classifier,
// Agentary's bash and git deny-lists and agenvoy's lists (the agent sandboxes paddock was
// compared with).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "classifier/effects.hpp"
#include "classifier/script_state.hpp"
#include "paddock/exec_result.hpp"

namespace paddock::classifier {

// A command's arguments as the rules test them (argv[1..], words after quote removal; a word
// only known at run time is given as its source text and flagged).
struct Args {
  std::string program;  // argv[0]'s basename
  std::vector<std::string> words;
  std::vector<bool> dynamic;
  // Where relative paths start and what `~` is (the script's state); null: not known.
  const PathContext* where = nullptr;

  // A short flag letter in any cluster (`-rf` has r and f) before `--`, or a long option
  // (`--recursive`, also `--recursive=...`).
  bool flag(char letter) const;
  bool option(std::string_view long_name) const;
  // Arguments that are not options (after `--`, everything).
  std::vector<std::string> positionals() const;
  // The first positional, skipping global options that take a value (`git -C dir push`).
  std::string subcommand(std::initializer_list<std::string_view> options_with_value = {}) const;
  bool contains(std::string_view word) const;
};

struct Rule {
  const char* name;
  Effect effect;  // the decision follows from it and the policy in force (effects.hpp)
  const char* reason;
  std::vector<std::string_view> programs;  // basenames; empty: any program
  bool (*match)(const Args&);              // null: the program alone matches
};

// The table, in order: hostile rules first, then the rest, then read-only ones.
const std::vector<Rule>& rules();

// The first rule of the table for these arguments, or null. Allow rules are only considered
// when `trusted_name` (argv[0] is a bare name or a standard system path, not `./cat`).
const Rule* match_rule(const Args& args, bool trusted_name);

// Paths whose writing through a redirect is forbidden (block devices, /etc, /boot, ...),
// resolved from every directory the command may run in.
const char* forbidden_redirect_target(std::string_view target, const PathContext* where = nullptr);
// A path a recursive delete must never reach (the root, a home, a system directory, an
// ancestor of the working directory, a glob at the root).
bool catastrophic_target(std::string_view raw, const PathContext* where = nullptr);
// -r, -R, --recursive (and its prefixes).
bool matchers_recursive(const Args& a);

}  // namespace paddock::classifier
