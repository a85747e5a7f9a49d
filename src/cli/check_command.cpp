// `paddock check [options] [--json] [--why] -- ARGV...` / `paddock check ... -c STRING`: what
// paddock run would decide with the same options, settings and profile, without running
// anything (DESIGN.md "CLI"). Exit 0 whatever the decision; 125 for a usage error.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/run_policy.hpp"
#include "cli/terminal.hpp"
#include "paddock/classifier.hpp"
#include "paddock/manager.hpp"

namespace paddock::cli {
namespace {

struct CheckArgs {
  RunArgs run;
  bool json = false;
  bool why = false;
};

int check(const CheckArgs& args) {
  const RunArgs& run = args.run;
  if (run.argv.empty() && run.shell.empty()) {
    say("check: give -- PROGRAM [ARGS...] or -c STRING");
    return kExitPaddockFailed;
  }
  std::optional<Config> config = run_config(run);
  if (!config) return kExitPaddockFailed;
  ExecOptions options;
  if (!run_options_of(run, options)) return kExitPaddockFailed;
  const Command command = run_command_of(run, *config);
  const ClassifyContext context = decision_context(*config, options);
  Classification c;
  if (!config->commands.classify) {
    c = {Decision::sandboxed, "classification-off", "the settings turn classification off", "", {}};
  } else {
    c = command.shell ? classify_script(*command.shell, config->commands.custom, context)
                      : classify_argv(command.argv, config->commands.custom, context);
  }
  const auto policy = std::string(config->sandbox.enabled ? "sandbox on" : "sandbox OFF") +
                      ", network " + to_string(config->sandbox.network.mode);
  if (args.json) {
    nlohmann::json j = {{"decision", to_string(c.decision)},
                        {"rule", c.rule},
                        {"reason", c.reason},
                        {"decided_by", c.decided_by},
                        {"policy", policy}};
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
  if (args.why) {
    std::printf("  decided by: %s\n  under: %s\n", terminal_safe(c.decided_by).c_str(),
                policy.c_str());
  }
  if (c.parts.size() > 1 || args.why) {
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
      "Classify a command without running it, exactly as paddock run would with the same "
      "options: allow, sandboxed, escalated or forbidden (exit 0 whatever the decision; 125 "
      "for a usage error)");
  cmd->add_option("-c", args->run.shell, "Classify STRING as a shell script");
  cmd->add_flag("--json", args->json,
                "One JSON object: decision, rule, reason, the part that decided, the verdict of "
                "every part");
  cmd->add_flag("--why", args->why, "Show which part of the script decided, under which policy");
  add_policy_options(cmd, args->run);
  cmd->add_option("argv", args->run.argv, "PROGRAM [ARGS...] after --");
  cmd->positionals_at_end(false);
  return [args] { return check(*args); };
}

}  // namespace paddock::cli
