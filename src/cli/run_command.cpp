// `paddock run [options] -- PROGRAM [ARGS...]` and `paddock run [options] -c 'STRING'`.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "base/unique_fd.hpp"
#include "cli/approval_prompt.hpp"
#include "cli/commands.hpp"
#include "cli/logging.hpp"
#include "cli/option_values.hpp"
#include "cli/run_args.hpp"
#include "cli/run_helper.hpp"
#include "cli/run_policy.hpp"
#include "cli/run_streams.hpp"
#include "cli/terminal.hpp"
#include "paddock/manager.hpp"
#include "paddock/result_json.hpp"
#include "paddock/runtime.hpp"
#include "paddock/settings.hpp"
#include "process/given_fd.hpp"

namespace paddock::cli {
namespace {

int exit_status(const std::error_code& ec, const ExecResult& r) {
  if (!ec) return r.exit_code;
  if (ec == errc::timeout) return kExitTimedOut;
  if (ec == errc::spawn_failed && (r.exit_code == kExitNotFound || r.exit_code == kExitRefused)) {
    return r.exit_code;
  }
  if (ec == errc::forbidden_command || ec == errc::escalated_command ||
      ec == errc::sandbox_violation) {
    return kExitRefused;
  }
  if (ec == asio::error::operation_aborted && r.exit_code >= 0) return r.exit_code;
  return kExitPaddockFailed;
}

// Each request the filtering proxy decided, as a log line (refusals are also violations).
NetworkHooks log_network_events() {
  NetworkHooks hooks;
  hooks.on_event = log_network_event;
  return hooks;
}

// A cap cut a stream: never silently (the bytes past it are gone).
void say_truncated(const ExecResult& r, std::size_t cap, bool json) {
  const char* verb = json ? "kept" : "shown";
  const std::string where = json ? " in the JSON result" : "";
  for (auto [name, total] :
       {std::pair{"stdout", r.stdout_bytes_total}, std::pair{"stderr", r.stderr_bytes_total}}) {
    if (total <= cap) continue;
    say(std::string("output cut: ") + name + ": the first " + std::to_string(cap) + " of " +
        std::to_string(total) + " bytes " + verb + where + " (--max-output " + std::to_string(cap) +
        ")");
  }
}

int run(const RunArgs& args) {
  if (a_stream_reaches_a_daemon()) return kExitPaddockFailed;
  std::string settings_text;  // what the Config was made from (a helper's key: run_helper.hpp)
  std::optional<Config> resolved = run_config(args, &settings_text);
  if (!resolved) return kExitPaddockFailed;
  if (args.shell.empty() && args.argv.empty()) {
    say("nothing to run: give -- PROGRAM [ARGS...] or -c STRING");
    return kExitPaddockFailed;
  }
  if (!valid_stdin_mode(args)) return kExitPaddockFailed;
  spdlog::debug("policy: profile {}{}{}, sandbox {}, network {}, fallback {}", args.profile,
                args.settings.empty() ? "" : ", settings ", args.settings,
                resolved->sandbox.enabled ? "on" : "off", to_string(resolved->sandbox.network.mode),
                to_string(resolved->sandbox.fallback));
  if (spdlog::should_log(spdlog::level::debug)) {
    std::string shown = args.shell.empty() ? "" : resolved->shell + " -c " + args.shell;
    for (const auto& a : args.argv) shown += (shown.empty() ? "" : " ") + a;
    spdlog::debug("command: {}", shown);
  }
  // Through this user's helper (run_helper.hpp): the same Config, kept with its sandboxes made
  // ahead between runs.
  const auto through_helper = helper_wanted(args, *resolved);
  if (!through_helper) return kExitPaddockFailed;
  if (*through_helper) {
    if (auto status = run_through_helper(args, *resolved, settings_text)) return *status;
  }
  Config config = std::move(*resolved);
  config.reuse_network_namespaces = false;  // one command per process: nothing to reuse
  config.warm_sandboxes = 0;                // nor a sandbox made ahead for a next command
  keep_file_size_limit_for_command(config);
  Command command = run_command_of(args, config);
  ExecOptions options;
  if (!run_options_of(args, options)) return kExitPaddockFailed;
  // The leader's pid (paddock-init's, when sandboxed), for passing signals on; read on the
  // loop's one thread only, before the result is in (so the leader is not reaped yet and the
  // pid cannot name anyone else).
  int leader = 0;
  options.on_started = [&leader](int pid) {
    leader = pid;
    spdlog::info("started: pid {}", pid);
  };
  options.approve = approval_for_cli(args.yes);
  const bool options_had_approver = static_cast<bool>(options.approve);
  options.timeout = args.timeout;
  options.max_output_bytes = args.max_output;
  UniqueFd relayed_stdin;  // closed once the command has its copy (below)
  if (!choose_streams(args, options, relayed_stdin)) return kExitPaddockFailed;
  if (!args.json) {
    // Streamed to the user, kept nowhere: no memory to bound, so no cap but --max-output.
    options.keep_output = false;
    if (!args.max_output) options.max_output_bytes = kUncappedOutput;
    // Our reader went away (`paddock run --max-output 1K -- yes | head -1`): the command gets
    // the SIGPIPE it would have had writing there itself, once, instead of running on into
    // a pipe nobody reads. (A pipe or file without --max-output is the command's own: above.)
    options.on_output = [&leader, out = OutputCopy(STDOUT_FILENO), err = OutputCopy(STDERR_FILENO),
                         piped = false](OutputStream s, std::string_view chunk) mutable {
      OutputCopy& to = s == OutputStream::stdout_stream ? out : err;
      if (to.write(chunk) || piped || leader <= 0) return;
      piped = true;
      spdlog::info("our {} is a closed pipe: SIGPIPE to the command",
                   to.to() == STDOUT_FILENO ? "stdout" : "stderr");
      ::kill(-leader, SIGPIPE);
    };
  }

  // An unusable io_uring surfaces as Error(E_DEPENDENCY_MISSING) from the Manager, in one line.
  asio::io_context io(1);
  std::error_code result_ec;
  ExecResult result;
  std::size_t cap = 0;
  try {
    Manager manager(io.get_executor(), config, log_network_events());
    cap = options.max_output_bytes.value_or(manager.config().max_output_bytes);
    // Ctrl-C / SIGTERM / SIGHUP go to the command's process group, as a terminal or
    // timeout(1) passes them on: the command decides (Ctrl-C usually ends it: exit 130). A
    // second one ends it the way a timeout does (TERM, grace, KILL).
    asio::cancellation_signal cancel;
    asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
    bool finished = false, passed_on = false;
    std::function<void(const std::error_code&, int)> on_signal;
    on_signal = [&](const std::error_code& ec, int sig) {
      if (ec || finished) return;
      if (!passed_on && leader > 0) {
        passed_on = true;
        spdlog::info("passing signal {} on to the command", sig);
        ::kill(-leader, sig);
      } else {
        cancel.emit(asio::cancellation_type::terminal);
      }
      signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    manager.async_exec(
        std::move(command), std::move(options),
        asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec, ExecResult r) {
          result_ec = ec;
          result = std::move(r);
          finished = true;
          signals.cancel();
        }));
    relayed_stdin.reset();  // the command has its copy: ours must go, so the relay sees EPIPE
    io.run();
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }

  // The sandbox was asked for and the command ran without it (fallback warn): never quietly.
  // (A failed start reports sandboxed=false too, but nothing of the command ran.)
  bool ran = result.pid != 0 && (!result_ec || result_ec == errc::timeout ||
                                 result_ec == asio::error::operation_aborted);
  if (ran && !result.sandboxed && config.sandbox.enabled) {
    const std::string reason = result.unsandboxed_reason.empty()
                                   ? "the sandbox was not applied on this host"
                                   : result.unsandboxed_reason;
    say("warning: ran UNSANDBOXED: " + reason);
  }
  // What the sandbox refused, one line each (with --json they are in the object).
  if (!args.json) {
    for (const auto& v : result.violations) {
      say("violation: " + v.operation + " " + v.path + ": " + v.detail);
    }
  }
  // A change set that did not reach the workspace whole is never silent, --json or not.
  if (!result.changes.pending.empty()) {
    say("the command's changes were NOT applied: " + result.changes.pending +
        "; they wait in change set " + result.changes.id + " (`paddock changes show " +
        result.changes.id + "`, then `paddock changes apply` or `discard`)");
  } else if (!result.changes.held.empty() && args.json) {
    say(std::to_string(result.changes.held.size()) + " change(s) held back in change set " +
        result.changes.id + " (`paddock changes show " + result.changes.id + "`)");
  }
  // The reason for 124/125/126/127 goes to stderr in one line, with or without --json.
  if (result_ec == errc::timeout) {
    say(result.error + (result.sandboxed ? "; the command and everything it started were killed"
                                         : "; the command and its process group were killed"));
  } else if (result_ec == asio::error::operation_aborted) {
    say("interrupted; the command was stopped");
  } else if (result_ec == errc::escalated_command && !options_had_approver) {
    // The library's words name its callback; the user's are what to do.
    result.error = unasked_approval_text(result.rule, result.reason);
    say(std::string(code_string(result_ec)) + ": " + result.error);
  } else if (result_ec) {
    say(std::string(code_string(result_ec)) + ": " +
        (result.error.empty() ? result_ec.message() : result.error));
  }
  spdlog::info("finished: exit {}, signal {}, {} ms, stdout {} bytes, stderr {} bytes{}",
               result.exit_code, result.signal, result.duration.count(), result.stdout_bytes_total,
               result.stderr_bytes_total,
               result_ec ? ", " + std::string(code_string(result_ec)) : std::string());
  if (result.truncated) say_truncated(result, cap, args.json);
  if (args.json) write_all(STDOUT_FILENO, to_json_line(result, result_ec) + "\n");
  return exit_status(result_ec, result);
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "Run a command (argv directly, or -c STRING via the shell)");
  cmd->add_option("-c", args->shell,
                  "Run STRING through the configured shell, explicitly; words after it (or after "
                  "--) are $0, $1, ... as with sh -c");
  // Parsed by paddock: CLI11's numbers took nan, inf and -1 (wrapped to "unlimited").
  cmd->add_option_function<std::string>(
         "--timeout",
         [args](const std::string& v) {
           args->timeout = parse_flag(parse_timeout, "--timeout", v);
         },
         "Time limit: SECONDS (0.5, 30) or with a unit (90s, 2m, 1h); more than 0, at most 1h "
         "(default 600 s, or timeouts.defaultSeconds / PADDOCK_DEFAULT_TIMEOUT_SECONDS)")
      ->type_name("SECONDS");
  cmd->add_option_function<std::string>(
         "--max-output",
         [args](const std::string& v) {
           args->max_output = parse_flag(parse_byte_count, "--max-output", v);
         },
         "Cap per stream: BYTES (65536, 64K, 1M; at least 1, at most 1 TiB). Default: no cap "
         "when streaming (nothing is kept); with --json 1 MiB (development profile 8 MiB, "
         "output.maxBytes)")
      ->type_name("BYTES");
  cmd->add_flag("--json", args->json, "Print one JSON result object instead of streaming output");
  cmd->add_flag("--yes", args->yes,
                "Approve the command if the classifier escalates it (sudo, git push, uploads, "
                "credential tools, anything with the sandbox off, ...); without it a terminal is "
                "asked, and with no terminal it is refused (126). Forbidden commands never run");
  cmd->add_option("--stdin", args->stdin_mode,
                  "The command's stdin: auto (paddock's own stdin unless it is a terminal; "
                  "then /dev/null), inherit (always), none (/dev/null)")
      ->type_name("auto|inherit|none");
  add_policy_options(cmd, *args);
  auto* helper = cmd->add_flag(
      "--helper", args->helper,
      "Run through this user's helper, which keeps the sandbox ready between runs (the "
      "default: started on first use, exits after 10 idle minutes), even with PADDOCK_HELPER=0");
  cmd->add_flag("--no-helper", args->no_helper,
                "Set the sandbox up in this process instead of in your helper (also "
                "PADDOCK_HELPER=0)")
      ->excludes(helper);
  cmd->add_option("--connect", args->connect,
                  "Run through a daemon (paddock serve) at unix:PATH or tcp:HOST:PORT: same "
                  "output and exit status; its policy applies (flags may only narrow it)");
  cmd->add_option("--token-file", args->token_file,
                  "With --connect tcp:...: the daemon's token (or PADDOCK_SERVE_TOKEN)");
  cmd->add_option("argv", args->argv, "PROGRAM [ARGS...] after --");
  cmd->positionals_at_end(false);
  return [args] { return args->connect.empty() ? run(*args) : run_connected(*args); };
}

}  // namespace paddock::cli
