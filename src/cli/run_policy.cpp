#include "cli/run_policy.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/terminal.hpp"
#include "paddock/errors.hpp"
#include "paddock/settings.hpp"

namespace paddock::cli {

void add_policy_options(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("--cwd", args.cwd, "Working directory of the command (default: the current one)");
  // One value per use, like every repeatable flag: a vector option would otherwise take
  // every following token, `--` and the command's own arguments included.
  cmd->add_option("--env", args.env, "Set KEY=VALUE in the command's environment (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--shell", args.shell_program,
                  "The shell that runs -c STRING (default: bash when the host has it, the "
                  "language the classifier reads; /bin/sh otherwise)")
      ->type_name("PATH");
  add_policy_flags(cmd, args);
}

void add_policy_flags(CLI::App* cmd, RunArgs& args) {
  // Policy. Values are checked by paddock, not CLI11, so errors read like settings errors.
  cmd->add_option("--profile", args.profile,
                  "Base policy: default, development, ci, read-only, or the strict opt-in agentary "
                  "(git topology and its deny-list refused) and agenvoy (argv[0] allow/deny "
                  "lists) (default: default)");
  cmd->add_option("--settings", args.settings,
                  "Settings file (srt's format plus paddock's sections), applied on the profile "
                  "(default: ~/.srt-settings.json when it exists, as srt)");
  // One value per occurrence: `--allow-write A PROGRAM` must not swallow PROGRAM.
  auto repeatable = [&](const char* flag, std::vector<std::string>& to, const char* help) {
    cmd->add_option(flag, to, help)->allow_extra_args(false);
  };
  PolicyFlags& p = args.policy;
  repeatable("--allow-write", p.allow_write, "Also writable (repeatable)");
  repeatable("--deny-write", p.deny_write,
             "Not writable, even inside a writable root; a missing path cannot be created "
             "(repeatable)");
  repeatable("--allow-read", p.allow_read,
             "Readable again inside a denied region or the hidden home (~: all of it)");
  repeatable("--deny-read", p.deny_read, "Not readable (repeatable)");
  repeatable("--allow-domain", p.allow_domains, "Reachable domain (filtered network; repeatable)");
  repeatable("--deny-domain", p.deny_domains, "Unreachable domain (repeatable)");
  cmd->add_option("--network", p.network,
                  "blocked, filtered or allowed (default: filtered; read-only profile: blocked)");
  cmd->add_option("--fallback", p.fallback,
                  "Where isolation cannot be set up: strict (refuse, the default) or warn (run "
                  "unsandboxed)");
  cmd->add_flag("--no-sandbox", p.no_sandbox, "Run on the host, unsandboxed (explicitly)");
  cmd->add_flag("--allow-write-home", p.allow_write_home,
                "The home directory may be writable (its start-up and credential files stay "
                "protected)");
}

std::optional<Config> run_config(const RunArgs& args, std::string* settings_text) {
  Config config;
  try {
    // As srt: with no --settings, ~/.srt-settings.json when there is one.
    const std::string settings = args.settings.empty() ? default_settings_path() : args.settings;
    if (args.settings.empty() && !settings.empty()) {
      spdlog::info("settings: {} (srt's default file; --settings FILE names another)", settings);
    }
    config = resolve_config(args.profile, settings, args.policy, settings_text);
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return std::nullopt;
  }
  if (!args.shell_program.empty()) {
    struct stat st {};
    if (args.shell_program[0] != '/' || ::stat(args.shell_program.c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode) || ::access(args.shell_program.c_str(), X_OK) != 0) {
      say("--shell " + args.shell_program +
          ": not an executable file given by its absolute path (see paddock run --help)");
      return std::nullopt;
    }
    try {
      validate_shell(args.shell_program, "--shell");
    } catch (const Error& e) {
      say(std::string(code_string(e.code())) + ": " + e.what());
      return std::nullopt;
    }
    config.shell = args.shell_program;
  }
  return config;
}

Command run_command_of(const RunArgs& args, const Config& config) {
  if (!args.shell.empty() && args.argv.empty()) return Command::shell_string(args.shell);
  if (!args.shell.empty()) {
    std::vector<std::string> argv = {config.shell, "-c", args.shell};
    argv.insert(argv.end(), args.argv.begin(), args.argv.end());
    return Command::exec(std::move(argv));
  }
  return Command::exec(args.argv);
}

void keep_file_size_limit_for_command(Config& config) {
  if (struct rlimit fsize; config.sandbox.enabled && ::getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
                           fsize.rlim_cur != RLIM_INFINITY) {
    auto& limit = config.sandbox.limits.file_size_bytes;
    if (limit == 0 || limit > fsize.rlim_cur) limit = fsize.rlim_cur;
    fsize.rlim_cur = fsize.rlim_max;
    ::setrlimit(RLIMIT_FSIZE, &fsize);
  }
}

bool run_options_of(const RunArgs& args, ExecOptions& options) {
  if (!args.cwd.empty()) options.cwd = args.cwd;
  for (const auto& kv : args.env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      say("--env " + kv + ": expected KEY=VALUE");
      return false;
    }
    options.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return true;
}

}  // namespace paddock::cli
