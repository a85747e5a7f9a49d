// Deciding before running, by effect under the policy in force: every command is classified
// from its parsed form (never from a joined string) into one of four decisions, by named
// rules with a reason each:
//   allow       reads or prints: no approval needed (still sandboxed)
//   sandboxed   changes only what the sandbox contains (the workspace, /tmp, its own processes
//               and network namespace): runs unattended
//   escalated   needs approval: effects the sandbox does not contain under this policy (git
//               push and publishing through an allowed domain, credential tools, root; any
//               change at all with the sandbox off or the network open), or what the analysis
//               cannot see through
//   forbidden   never runs: destroys or compromises beyond recovery, or plainly hostile
//               (recursive delete of / or a home, disk wipes, reverse shells, fork bombs, code
//               fetched from the network into a shell, kernel modules, ...)
// A script's decision is the strictest of its parts. The classifier sees through what bash
// sees through: variables and assignments, `cd`, arithmetic, paths (`~`, `..`, /proc/self/root),
// code given to awk, sed, make, find, xargs, interpreters. What it cannot see through (a command
// name known only at run time, a parse error, input past the bounds below) is escalated, naming
// why. The rules live in one table (src/classifier/rules.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "paddock/exec_result.hpp"
#include "paddock/sandbox_policy.hpp"

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
  std::string decided_by;             // the part of the script whose verdict this is
  std::vector<ClassifiedPart> parts;  // every simple command, in script order
};

// What a command would run under: the same command is decided by what it can do there.
// Manager and `paddock check` build it from the Config and the call (decision_context()).
struct ClassifyContext {
  bool sandboxed = true;                        // false: it runs on the host
  NetworkMode network = NetworkMode::filtered;  // the sandbox's network
  std::string cwd;             // absolute; empty: not known (relative paths are judged as such)
  std::string home;            // absolute; empty: $HOME
  bool home_writable = false;  // the home is a writable root (--allow-write-home)
  bool host_sockets = false;   // the host's unix sockets may be connected to (systemd, dbus)
  std::vector<std::string> allow_read;  // re-exposed inside denied regions (credentials)
  // The call's own variables (ExecOptions::env): known values, and prefixes of what runs.
  std::map<std::string, std::string> env;
  // Whether the sandbox's filtered network lets a connection to host:port through (the
  // proxy's rules; an approval may still be asked). Null: every host may be reached. A
  // remote effect whose hosts are all named and none is reached stays in the sandbox.
  std::function<bool(const std::string& host, std::uint16_t port)> reaches;
};

// A user rule: matched on each parsed simple command (after wrappers are unwrapped), never on
// the script's text, so a rule for `npm test` cannot allow `npm test; rm -rf ~`.
struct CommandRule {
  // The words the command starts with; argv[0] is compared by its basename; "*" is any one
  // word. {"npm", "test"} matches `npm test`, `/usr/bin/npm test --watch`.
  std::vector<std::string> match;
  Decision decision = Decision::sandboxed;
  std::string description;
  bool operator==(const CommandRule&) const = default;
};

// The settings file's `commands` section (Config::commands.custom).
struct CommandRules {
  // First match wins; it decides the command's own classification, weaker or stricter than
  // the built-in one, except that it never lifts a built-in `forbidden` (only an override
  // naming that rule does) and never what a nested script or wrapper decided.
  std::vector<CommandRule> rules;
  // A built-in rule's decision, by the rule's name ("process-kill": sandboxed). The rules
  // that mean "could not be analysed" (unanalysable, analysis-bound, dynamic-command,
  // dynamic-script, script-from-pipe) cannot be overridden.
  std::map<std::string, Decision> overrides;
  // argv[0] basenames. allow_programs non-empty: any other program is escalated
  // ("not-allowed-program"); deny_programs: forbidden ("denied-program").
  std::vector<std::string> allow_programs;
  std::vector<std::string> deny_programs;
  // Only ever stricter than the built-in rules: overrides and user rules that would lower a
  // decision are ignored. Set for a call's own rules (ExecOptions::policy.commands), which add
  // to the Manager's and never widen them.
  bool stricter_only = false;
  bool operator==(const CommandRules&) const = default;
};

// argv, classified structurally (argv[0] is the program; nothing is re-tokenised).
Classification classify_argv(const std::vector<std::string>& argv, const CommandRules& rules = {},
                             const ClassifyContext& context = {});
// A shell script (what `bash -c SCRIPT` would run), parsed with tree-sitter's bash grammar.
Classification classify_script(const std::string& script, const CommandRules& rules = {},
                               const ClassifyContext& context = {});

// The path-like arguments of every simple command (the program names excluded): words that
// start with `/`, `./`, `../` or `~`, or contain a `/`; the value of `KEY=/path` and
// `--opt=/path`; bare words (the caller checks whether they name a symlink). Static words
// only; what a command would compute at run time is not a path the guard can check.
struct PathToken {
  std::string token;     // the argument as written
  std::string path;      // the path part of it
  bool bare = false;     // a plain word with no `/`: a path only if it names a symlink
  bool unknown = false;  // an expansion or a glob: where it lands is known only at run time
};
std::vector<PathToken> path_tokens(const std::string& script);
std::vector<PathToken> path_tokens(const std::vector<std::string>& argv);

// Every rule name the classifier can answer with (the table's and the structural ones).
std::vector<std::string> classifier_rule_names();
// Throws Error(config_invalid) naming `where` and the bad entry: an empty match, an unknown
// or unoverridable rule name.
void validate(const CommandRules& rules, const std::string& where);

// A variable that makes programs run something else (LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND,
// PAGER, NODE_OPTIONS, ...): setting one is `environment-injection` (escalated), in a prefix
// assignment and in ExecOptions::env alike.
bool injects_code(std::string_view name);

}  // namespace paddock
