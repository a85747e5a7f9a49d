// `paddock check [options] [--json] [--why] -- ARGV...` / `paddock check ... -c STRING`: what
// paddock run would decide with the same options, settings and profile, without running
// anything (docs/cli.md). Exit 0 whatever the decision; 125 for a usage error.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/run_policy.hpp"
#include "cli/terminal.hpp"
#include "paddock/classifier.hpp"
#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "sandbox/path_policy.hpp"
#include "sandbox/working_directory.hpp"

namespace paddock::cli {
namespace {

struct CheckArgs {
  RunArgs run;
  bool json = false;
  bool why = false;
  // run's own options, taken and not used: here, where they live as long as the parser.
  std::string ignored;
  bool ignored_flag = false;
};

int check(const CheckArgs& args) {
  const RunArgs& run = args.run;
  if (run.argv.empty() && run.shell.empty()) {
    say("check: give -- PROGRAM [ARGS...] or a non-empty -c STRING (see paddock check --help)");
    return kExitPaddockFailed;
  }
  std::optional<Config> config = run_config(run);
  if (!config) return kExitPaddockFailed;
  ExecOptions options;
  if (!run_options_of(run, options)) return kExitPaddockFailed;
  try {
    // What run refuses before anything starts, check refuses too: a working directory that
    // does not exist, a writable root that may not be one (the home, a git directory).
    const auto dir = sandbox::resolve_working_directory(options.cwd.value_or(""));
    if (config->sandbox.enabled) {
      const char* home = std::getenv("HOME");
      sandbox::resolve_filesystem(config->sandbox.filesystem, dir.path,
                                  !config->sandbox.filesystem.home.empty()
                                      ? config->sandbox.filesystem.home
                                      : std::string(home != nullptr ? home : ""));
    }
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": cwd (" + options.cwd.value_or(".") +
        "): " + e.what());
    return kExitPaddockFailed;
  }
  const Command command = run_command_of(run, *config);
  const ClassifyContext context = decision_context(*config, options);
  Classification c;
  if (!config->commands.classify) {
    c = {Decision::sandboxed, "classification-off", "the settings turn classification off", "", {}};
  } else {
    c = command.shell ? classify_script(*command.shell, config->commands.custom, context)
                      : classify_argv(command.argv, config->commands.custom, context);
  }
  std::string policy =
      "profile " + run.profile + (run.settings.empty() ? "" : ", settings " + run.settings) +
      (config->sandbox.enabled ? ", sandbox on" : ", sandbox OFF (the host itself)") +
      (config->sandbox.enabled ? std::string(", network ") + to_string(config->sandbox.network.mode)
                               : std::string(", the host's network")) +
      (context.home_writable ? ", home writable" : "");
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
  // run's own options, accepted so one option list serves both commands; they change nothing
  // about the decision.
  // (They were kept in locals of this function once: parsing `check --timeout 5` wrote into
  // a freed string and crashed, found by the new-user trial helper-44's option sharing.)
  for (const char* option : {"--timeout", "--max-output", "--stdin", "--connect", "--token-file"})
    cmd->add_option(option, args->ignored, "As in paddock run; no effect on the decision")
        ->group("");
  for (const char* flag : {"--yes", "--helper", "--no-helper"}) {
    cmd->add_flag(flag, args->ignored_flag, "As in paddock run; no effect on the decision")
        ->group("");
  }
  add_policy_options(cmd, args->run);
  cmd->add_option("argv", args->run.argv, "PROGRAM [ARGS...] after --");
  cmd->positionals_at_end(false);
  return [args] { return check(*args); };
}

}  // namespace paddock::cli
