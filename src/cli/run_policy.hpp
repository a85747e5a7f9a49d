// What `paddock run` and `paddock check` share, so check decides exactly as run would: the
// policy options (profile, settings, flags, --cwd, --env, --shell), the Config they resolve to
// (with srt's ~/.srt-settings.json when no --settings is given), and the Command and options
// built from them.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "cli/run_args.hpp"
#include "paddock/command.hpp"
#include "paddock/config.hpp"

namespace paddock::cli {

void add_policy_options(CLI::App* cmd, RunArgs& args);
// Only the policy's (--profile, --settings, --allow-write, --network, ...): a session's
// (`paddock session start`), fixed for all its commands.
void add_policy_flags(CLI::App* cmd, RunArgs& args);
// The Config, or nullopt after saying why on stderr. `settings_text`: the settings file's
// bytes it was made from (empty without one).
std::optional<Config> run_config(const RunArgs& args, std::string* settings_text = nullptr);
// -c STRING alone is a shell string; with words after it, `SHELL -c STRING NAME ARGS...`.
Command run_command_of(const RunArgs& args, const Config& config);
// `ulimit -f` is meant for the command: the sandbox gets it as its own RLIMIT_FSIZE, and
// paddock raises its own soft limit so its output file and its change set's state can still
// be written (past the limit a write fails with EFBIG: SIGXFSZ is ignored, main.cpp).
void keep_file_size_limit_for_command(Config& config);
// --cwd and --env into options; false after saying why.
bool run_options_of(const RunArgs& args, ExecOptions& options);

}  // namespace paddock::cli
