// paddock's command line: parses arguments with CLI11 and dispatches to a subcommand.
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/logging.hpp"
#include "cli/option_values.hpp"
#include "cli/terminal.hpp"
#include "paddock_commit.hpp"  // PADDOCK_COMMIT, written at build time (src/cli/version.cmake)

namespace {

// The CLI's own loop, and the library's (the CLI runs on epoll: src/cli/CMakeLists.txt).
constexpr const char* kBackend = PADDOCK_IO_URING ? "io_uring" : "epoll";
constexpr const char* kLibraryBackend = PADDOCK_LIBRARY_BACKEND;

// --help: what a user needs besides the flags (docs/cli.md, the exit-status contract).
constexpr const char* kFooter =
    "\nExit status (paddock run):\n"
    "  N        the command's own status\n"
    "  128+N    the command was killed by signal N\n"
    "  124      timed out (--timeout)\n"
    "  125      paddock itself failed: bad flag or settings, setup failure\n"
    "  126      found but not executable, or refused by policy\n"
    "  127      command not found\n"
    "The reason for 124-127 is one line on stderr, starting with \"paddock:\".\n"
    "\nEnvironment:\n"
    "  PADDOCK_LOG                      log level: trace, debug, info, warn (default), error, off\n"
    "                                   (-v info, -vv debug, -vvv trace; JSON lines with --json)\n"
    "  PADDOCK_CHANGE_STORE             where change sets wait (default "
    "~/.local/state/paddock/changes)\n"
    "  PADDOCK_DEFAULT_TIMEOUT_SECONDS  default --timeout (default 600)\n"
    "  PADDOCK_MAX_TIMEOUT_SECONDS      largest --timeout allowed (default and at most 3600)\n"
    "  PADDOCK_PROXY_CREDENTIAL         paddock proxy: USER:PASSWORD clients must present\n"
    "  PADDOCK_HELPER                   0: paddock run sets the sandbox up itself (--no-helper);\n"
    "                                   1 or unset: through your helper (the default)\n"
    "  PADDOCK_HELPER_IDLE_SECONDS      a helper exits after this long unused (default 600)\n"
    "\nDefaults (profile \"default\"): the working directory writable through a change set\n"
    "(applied when the command ends; what the host would run later, such as git hooks, is held\n"
    "back: see paddock changes), the rest of the host read-only, the homes hidden (toolchains\n"
    "and package caches shown read-only, git given only the settings of ~/.gitconfig that hold\n"
    "no secret; --allow-read PATH shows more), credentials unreadable, network filtered through "
    "paddock's proxy with no\n"
    "domain allowed, the host's /tmp and /var/tmp shown read-only below private writes (what\n"
    "the command writes there, outside its working directory, is discarded when it ends), the\n"
    "sandbox's own loopback usable; output streamed with no cap (--json: 1 MiB per stream\n"
    "kept). Completion: paddock completion bash|zsh|fish.\n";

// The subcommand a parse error belongs to, for the hint ("see paddock run --help").
std::string help_hint(const CLI::App& app) {
  std::string where = "paddock";
  for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
  return where + " --help";
}

bool any_json_flag(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* o = sub->get_option_no_throw("--json");
    if (o != nullptr && o->count() > 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // paddock's own output going to a file past `ulimit -f` must fail a write (EFBIG), not kill
  // paddock: a supervisor that dies is one that never applies, reports or cleans up. The
  // command gets the default disposition back before it runs (process/child_side.cpp).
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"paddock: run untrusted commands in a sandbox, supervised from one event loop",
               "paddock"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("paddock ") + PADDOCK_VERSION + " (commit " +
                                        PADDOCK_COMMIT + ", event backend " + kBackend +
                                        ", libpaddock " + kLibraryBackend + ")");
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity,
               "More of paddock's own diagnostics on stderr: -v info, -vv debug, -vvv trace");
  // -v is paddock's, wherever it is given before `--` (`paddock run -v -- ...`).
  app.fallthrough();
  // Only the subcommand named first is set up when argv[1] names one: building every
  // subcommand's options cost `paddock run` ~0.15 ms of its start. Anything else (--help, a
  // misspelt name, -v first, completion, which lists them all) sets up all of them.
  struct Subcommand {
    const char* name;
    std::function<int()> (*add)(CLI::App&);
  };
  static constexpr Subcommand kSubcommands[] = {
      {"run", paddock::cli::add_run_command},
      {"doctor", paddock::cli::add_doctor_command},
      {"proxy", paddock::cli::add_proxy_command},
      {"check", paddock::cli::add_check_command},
      {"serve", paddock::cli::add_serve_command},
      {"changes", paddock::cli::add_changes_command},
      {"session", paddock::cli::add_session_command},
      {"completion", paddock::cli::add_completion_command}};
  const std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
  bool named = false;
  for (const Subcommand& sub : kSubcommands) {
    named = named || (first == sub.name && first != "completion");
  }
  // A first word that names no subcommand: CLI11 would only say one is required.
  if (!first.empty() && first.front() != '-' && !named && first != "completion") {
    paddock::cli::say("unknown subcommand '" + std::string(first) + "' (see paddock --help)");
    return paddock::cli::kExitPaddockFailed;
  }
  std::vector<std::pair<std::string_view, std::function<int()>>> added;
  for (const Subcommand& sub : kSubcommands) {
    if (!named || first == sub.name) added.emplace_back(sub.name, sub.add(app));
  }
  app.footer(kFooter);
  if (!named || first == "run") app.get_subcommand("run")->footer(kFooter);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version: printed by CLI11, status 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // Anything else is a usage error: one line, paddock's prefix, 125 (exit-status contract).
    paddock::cli::say(std::string(e.what()) + " (see " + help_hint(app) + ")");
    return paddock::cli::kExitPaddockFailed;
  }
  try {
    paddock::cli::setup_logging(paddock::cli::log_level(std::getenv("PADDOCK_LOG"), verbosity),
                                any_json_flag(app));
  } catch (const paddock::cli::BadValue& e) {
    paddock::cli::say(std::string("PADDOCK_LOG: ") + e.what());
    return paddock::cli::kExitPaddockFailed;
  }
  spdlog::debug("paddock {} (commit {}, event backend {}, libpaddock {})", PADDOCK_VERSION,
                PADDOCK_COMMIT, kBackend, kLibraryBackend);
  for (auto& [name, command] : added) {
    if (app.got_subcommand(std::string(name))) return command();
  }
  return paddock::cli::kExitPaddockFailed;
}
