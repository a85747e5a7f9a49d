// `paddock check [--json] -- ARGV...` / `paddock check [--json] -c STRING`: what paddock run
// would decide, without running anything (DESIGN.md "CLI"). Exit 0 whatever the decision;
// 125 for a usage error.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "paddock/classifier.hpp"

namespace paddock::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> argv;
  std::string shell;
  bool json = false;
};

int check(const CheckArgs& args) {
  if (args.argv.empty() == args.shell.empty()) {
    say("check: give -- PROGRAM [ARGS...] or -c STRING (one of them)");
    return kExitPaddockFailed;
  }
  const Classification c =
      args.shell.empty() ? classify_argv(args.argv) : classify_script(args.shell);
  if (args.json) {
    nlohmann::json j = {
        {"decision", to_string(c.decision)}, {"rule", c.rule}, {"reason", c.reason}};
    auto& parts = j["parts"] = nlohmann::json::array();
    for (const auto& p : c.parts) {
      parts.push_back({{"command", p.command},
                       {"decision", to_string(p.decision)},
                       {"rule", p.rule},
                       {"reason", p.reason}});
    }
    // Invalid UTF-8 in a command is replaced, not thrown on: this is a report, not data.
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("%s (%s): %s\n", to_string(c.decision), c.rule.c_str(),
              terminal_safe(c.reason).c_str());
  if (c.parts.size() > 1) {
    for (const auto& p : c.parts) {
      std::printf("  %-10s %-30s %s\n", to_string(p.decision), p.rule.c_str(),
                  terminal_safe(p.command).c_str());
    }
  }
  return 0;
}

}  // namespace

std::function<int()> add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand(
      "check",
      "Classify a command without running it: allow, sandboxed, escalated or forbidden "
      "(exit 0 whatever the decision; 125 for a usage error)");
  cmd->add_option("-c", args->shell, "Classify STRING as a shell script");
  cmd->add_flag("--json", args->json,
                "One JSON object: decision, rule, reason and the verdict of every part");
  cmd->add_option("argv", args->argv, "PROGRAM [ARGS...] after --");
  cmd->positionals_at_end(false);
  return [args] { return check(*args); };
}

}  // namespace paddock::cli
