// paddock's subcommands; each registers its options on the CLI11 app and returns the process
// exit status when it runs (docs/cli.md, the exit-status contract).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace paddock::cli {

// Exit statuses paddock itself uses (everything else is the command's own).
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitPaddockFailed = 125;
inline constexpr int kExitRefused = 126;
inline constexpr int kExitNotFound = 127;

// Each returns the action to run if its subcommand was chosen.
std::function<int()> add_run_command(CLI::App& app);
std::function<int()> add_doctor_command(CLI::App& app);
std::function<int()> add_proxy_command(CLI::App& app);
std::function<int()> add_check_command(CLI::App& app);
std::function<int()> add_serve_command(CLI::App& app);
std::function<int()> add_changes_command(CLI::App& app);
std::function<int()> add_session_command(CLI::App& app);
// `completion` reads every other subcommand from `app`: add it after them.
std::function<int()> add_completion_command(CLI::App& app);

}  // namespace paddock::cli
