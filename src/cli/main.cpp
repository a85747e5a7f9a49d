// paddock's command line: parses arguments with CLI11 and dispatches to a subcommand.
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug for more

  CLI::App app{"paddock: run untrusted commands in a sandbox, supervised from one event loop"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PADDOCK_VERSION);
  auto run = paddock::cli::add_run_command(app);
  auto doctor = paddock::cli::add_doctor_command(app);
  auto proxy = paddock::cli::add_proxy_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // Usage errors are paddock's failure, not the command's (exit-status contract).
    return rc == 0 ? 0 : paddock::cli::kExitPaddockFailed;
  }
  if (app.got_subcommand("run")) return run();
  if (app.got_subcommand("doctor")) return doctor();
  if (app.got_subcommand("proxy")) return proxy();
  return paddock::cli::kExitPaddockFailed;
}
