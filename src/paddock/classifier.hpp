// Deciding before running: every command is classified from its parsed form (never from a
// joined string) into one of four decisions, by named rules with a reason each:
//   allow       everyday read-only or build work: no approval needed (still sandboxed)
//   sandboxed   the default: runs in the sandbox
//   escalated   needs approval (sudo, credentials, pushes, installs, kills, eval, ...)
//   forbidden   never runs (recursive delete of / or ~, disk wipes, reverse shells,
//               pipe-to-shell, fork bombs, kernel modules, ...)
// A script's decision is the strictest of its parts. What the classifier cannot see through
// (a command name that is not a literal, a parse error, input past the bounds below) is never
// `allow`: it is escalated, naming why. The rules live in one table (src/classifier/rules.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "paddock/exec_result.hpp"

namespace paddock {

// The bounds of the analysis; past any of them the decision is `escalated`.
inline constexpr std::size_t kClassifierMaxScriptBytes = 64 * 1024;
inline constexpr int kClassifierMaxDepth = 8;  // nested `sh -c`, wrappers, heredocs into shells
inline constexpr std::size_t kClassifierMaxCommands = 4096;  // simple commands in one script

// The verdict on one simple command (one part of a script).
struct ClassifiedPart {
  std::string command;  // the command as the classifier read it (words joined by spaces)
  Decision decision = Decision::sandboxed;
  std::string rule;    // the rule's name; "default" when no rule matched
  std::string reason;  // why, for a person
};

struct Classification {
  Decision decision = Decision::sandboxed;
  std::string rule;
  std::string reason;
  std::vector<ClassifiedPart> parts;  // every simple command, in script order
};

// argv, classified structurally (argv[0] is the program; nothing is re-tokenised).
Classification classify_argv(const std::vector<std::string>& argv);
// A shell script (what `sh -c SCRIPT` would run), parsed with tree-sitter's bash grammar.
Classification classify_script(const std::string& script);

}  // namespace paddock
