// `paddock session start|run|stop|list`: one sandbox kept across commands from the shell
// (paddock/session.hpp). `start` leaves a small daemon of the user's own behind: a Manager
// holding the session, reached on a unix socket under $XDG_RUNTIME_DIR/paddock/sessions (0700;
// peers must be this uid, as for `paddock serve`). `run` is `paddock run --connect` naming the
// session; `stop` closes it (its last writes applied) and the daemon exits. The daemon also
// ends on its own when the session does: idle for --idle-timeout, or its sandbox killed.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/unique_fd.hpp"
#include "cli/commands.hpp"
#include "cli/option_values.hpp"
#include "cli/run_args.hpp"
#include "cli/run_policy.hpp"
#include "cli/terminal.hpp"
#include "cli/user_daemon.hpp"
#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "paddock/result_json.hpp"
#include "paddock/runtime.hpp"
#include "paddock/settings.hpp"
#include "serve/connection.hpp"
#include "serve/server.hpp"

namespace paddock::cli {
namespace {

struct SessionArgs {
  std::string name = "default";
  RunArgs start;  // its policy (profile, settings, flags) and --cwd, fixed for all its commands
  std::chrono::milliseconds idle{std::chrono::hours(1)};
  RunArgs run;
  // --worktree-of REPO: the session runs on a new worktree of REPO on a new --branch.
  WorktreeOptions worktree;
  std::string on_stop = "keep";
};

void check_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 && name.front() != '.' &&
                  name.find_first_not_of(
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789._-") == std::string::npos;
  if (!ok) {
    throw Error(errc::config_invalid,
                "session name " + name + ": 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'");
  }
}

// $XDG_RUNTIME_DIR/paddock/sessions, else /tmp/paddock-UID/sessions.
std::string sessions_dir() { return user_runtime_dir("sessions"); }

// What `list` and `run` show of a running session: <name>.json beside its socket, written
// by its daemon (which alone unlinks it, holding the name's lock).
std::string info_path(const std::string& socket) { return name_of_socket(socket) + ".json"; }

nlohmann::json read_info(const std::string& socket) {
  std::ifstream in(info_path(socket));
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string socket_of(const std::string& name) {
  check_name(name);
  return socket_path(sessions_dir(), name + ".sock");
}

// The daemon's life, in the child `start` forked (no thread exists before it). Says "ok" or
// why not on `ready`, then serves until the session ends.
int hold(const SessionArgs& a, const Config& config, const std::string& path,
         const std::string& cwd, int ready) {
  auto tell = [ready](const std::string& line) { tell_ready(ready, line); };
  try {
    Runtime runtime(RuntimeOptions{2});
    Manager manager(runtime.executor(), config);
    SessionOptions options;
    if (!a.worktree.repository.empty()) {
      options.worktree = a.worktree;
    } else {
      options.cwd = cwd;
    }
    options.idle_timeout = a.idle;
    auto session = manager.open_session(options);
    serve::ServeOptions o;
    o.listen = {"unix:" + path};
    // Never from inside a sandbox, wherever one can see this socket (a command allowed unix
    // sockets would otherwise run commands in this session; hostile review of the helper).
    o.peer_namespaces = {"user", "mnt"};
    // Its clients are paddock's CLI, one process each: no other process's bytes (a relay
    // copying a command's output onto a connection handed to it) are a client's lines.
    o.rules.one_writer = true;
    o.socket_activation = false;
    o.drain_grace = std::chrono::seconds(0);
    serve::Server server(runtime.executor(), manager, o);
    // Stopped by a client: its answer is on the way; the daemon goes once that client (and
    // any other) has gone, or after a few seconds.
    std::atomic<bool> stopped{false};
    auto stopped_at = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(server.shared()->mutex);
      server.shared()->named_sessions[a.name] = session;
      server.shared()->on_named_session_closed = [&](const std::string&, const SessionSummary&) {
        stopped_at = std::chrono::steady_clock::now();
        stopped = true;
      };
    }
    {
      const std::string info = info_path(path), part = info + ".part";
      std::ofstream(part) << nlohmann::json{{"pid", session->pid()},
                                            {"cwd", session->cwd()},
                                            {"idle_timeout_s",
                                             static_cast<double>(a.idle.count()) / 1000.0},
                                            {"started", static_cast<long long>(::time(nullptr))}}
                                 .dump()
                          << "\n";
      ::rename(part.c_str(), info.c_str());
    }
    tell("ok " + std::to_string(session->pid()) + " " + session->cwd());
    ::close(ready);
    // Ended without a `stop`: idle past its timeout, or its sandbox killed.
    std::chrono::steady_clock::time_point ended_at{};
    run_until_ended(runtime.executor(), [&]() -> std::optional<std::chrono::milliseconds> {
      if (stopped) {
        if (server.connection_count() == 0 ||
            std::chrono::steady_clock::now() - stopped_at > std::chrono::seconds(5)) {
          return std::nullopt;
        }
      } else if (session->ended()) {
        // Ended, and no `stop` said so yet: a stop's close ends the session before its answer
        // is sent (ending now would cut that client off), so a little grace first.
        if (ended_at == std::chrono::steady_clock::time_point{}) {
          ended_at = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - ended_at > std::chrono::seconds(2)) {
          return std::nullopt;
        }
      }
      return std::chrono::milliseconds(stopped ? 20 : 200);
    });
    server.close_all("the session ended");
    session->close();  // idempotent: a `stop` closed it already
    {
      std::lock_guard lock(server.shared()->mutex);
      server.shared()->named_sessions.clear();
    }
    ::unlink(path.c_str());
    ::unlink(info_path(path).c_str());
    manager.close();
    // Its lock last, once all is done: the name is free again (user_daemon.hpp).
    remove_name(name_of_socket(path));
    return 0;
  } catch (const std::exception& e) {
    tell(std::string("error ") + e.what());
    remove_name(name_of_socket(path));
    return kExitPaddockFailed;
  }
}

int start(const SessionArgs& a) {
  try {
    const std::string path = socket_of(a.name);
    // Resolved here, so a bad settings file or flag is said on the caller's terminal.
    const auto config = run_config(a.start);
    if (!config) return kExitPaddockFailed;
    // The daemon holds <name>.lock for its whole life: two starts of one name never both
    // bind, and the socket is unlinked (at the end, or stale here) only by its lock's holder.
    // Busy with nothing answering: a daemon starting or just stopping, or another start's
    // sweep holding it for a moment (hostile review helper-45): asked again for a while.
    UniqueFd lock;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
      lock = take_name_lock(name_of_socket(path));
      if (lock.get() < 0 && errno != EWOULDBLOCK) {
        throw Error(errc::config_invalid, path + ": its lock: " + std::strerror(errno));
      }
      if (lock.get() >= 0 || answers(path) || std::chrono::steady_clock::now() > deadline) break;
      ::usleep(5 * 1000);
    }
    if (lock.get() < 0 || answers(path)) {
      throw Error(errc::config_invalid, "session " + a.name + " is running already (" + path +
                                            "; paddock session stop " + a.name + ")");
    }
    ::unlink(path.c_str());             // a stale socket of a daemon that died
    remove_dead_names(sessions_dir());  // and what others killed before they could left
    std::string cwd = a.start.cwd;
    if (!a.worktree.repository.empty()) {
      if (!cwd.empty()) throw Error(errc::config_invalid, "--cwd: a worktree session runs in it");
      if (a.worktree.branch.empty()) {
        throw Error(errc::config_invalid, "--worktree-of: give the new branch with --branch");
      }
    } else if (!a.worktree.branch.empty() || a.worktree.base != WorktreeOptions{}.base ||
               !a.worktree.path.empty() || a.on_stop != "keep") {
      // Never ignored: a session started elsewhere than asked is worse than none.
      throw Error(errc::config_invalid,
                  "--branch, --base, --worktree-path and --on-stop: only with --worktree-of");
    }
    if (cwd.empty()) cwd = std::filesystem::current_path().string();
    const DaemonStart started =
        start_daemon(lock.get(), [&](int ready) { return hold(a, *config, path, cwd, ready); });
    const std::string& line = started.line;
    if (line.rfind("ok ", 0) != 0) {
      int status = 0;
      ::waitpid(started.pid, &status, 0);
      const std::string why = line.rfind("error ", 0) == 0 ? line.substr(6) : line;
      say("session " + a.name + ": not started: " +
          (why.empty() ? std::string("its daemon died") : why.substr(0, why.find('\n'))));
      return kExitPaddockFailed;
    }
    const auto space = line.find(' ', 3);
    say("session " + a.name + " started in " + line.substr(space + 1, line.find('\n') - space - 1) +
        " (its sandbox: pid " + line.substr(3, space - 3) + "); paddock session run " + a.name +
        " -- COMMAND; paddock session stop " + a.name);
    return 0;
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
}

int run_in(SessionArgs a) {
  try {
    const std::string path = socket_of(a.name);
    a.run.connect = "unix:" + path;
    a.run.session = a.name;
    if (!answers(path)) {
      throw Error(errc::config_invalid, "no session " + a.name +
                                            " is running (paddock session "
                                            "start " +
                                            a.name + ")");
    }
    // Its commands run where it was started, whatever the caller's directory: said, once a
    // caller elsewhere could take `ls` for their own directory's.
    const std::string cwd = read_info(path).value("cwd", "");
    std::error_code ec;
    if (!cwd.empty() && !std::filesystem::equivalent(cwd, std::filesystem::current_path(), ec)) {
      say("note: session " + a.name + " runs its commands in " + cwd + ", not here");
    }
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
  return run_connected(a.run);
}

int stop(const SessionArgs& a) {
  try {
    const std::string path = socket_of(a.name);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size());
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw Error(errc::config_invalid, "no session " + a.name + " is running");
    }
    const std::string request =
        nlohmann::json{{"type", "session_close"}, {"id", a.name}}.dump() + "\n";
    if (::write(fd.get(), request.data(), request.size()) < 0) {
      throw Error(errc::spawn_failed, std::string("write: ") + std::strerror(errno));
    }
    std::string text;
    char buf[4096];
    for (;;) {
      const auto nl = text.find('\n');
      if (nl != std::string::npos) {
        const auto event = nlohmann::json::parse(text.substr(0, nl), nullptr, false);
        text.erase(0, nl + 1);
        if (event.is_discarded()) continue;
        if (event.value("type", "") == "error") {
          throw Error(errc::config_invalid, event.value("message", "refused"));
        }
        if (event.value("type", "") != "session_closed") continue;
        // Back only once the daemon has gone (its socket with it): a `start` of the same name
        // right after must not find it still there.
        fd.reset();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (answers(path) && std::chrono::steady_clock::now() < deadline) {
          ::usleep(10 * 1000);
        }
        // And its name freed: the lock goes last, once all is done (helper-45).
        while (name_held(name_of_socket(path)) && std::chrono::steady_clock::now() < deadline) {
          ::usleep(2 * 1000);
        }
        ExecResult r = result_from_json(event);
        say("session " + a.name + " stopped: " + std::to_string(r.changes.added) + " added, " +
            std::to_string(r.changes.modified) + " modified, " + std::to_string(r.changes.deleted) +
            " deleted since its last command");
        for (const auto& h : r.changes.held) say("held back: " + h.path + ": " + h.reason);
        // Never silent, as a run's (new-user trial helper-46: stop said "1 added" of a write
        // that was not applied).
        if (!r.changes.pending.empty()) {
          say("its changes were NOT applied: " + r.changes.pending + "; they wait in change set " +
              r.changes.id + " (`paddock changes show " + r.changes.id +
              "`, then `paddock changes apply` or `discard`)");
        }
        if (const auto w = event.find("worktree"); w != event.end() && w->is_object()) {
          say("branch " + w->value("branch", "") + " at " + w->value("head", "").substr(0, 12) +
              "; worktree " + w->value("result", ""));
        }
        for (const auto& v : r.violations) {
          if (v.operation != "file-write" || v.raw.rfind("change held back", 0) != 0) {
            say("violation: " + v.operation + " " + v.path + ": " + v.detail);
          }
        }
        if (event.contains("error")) {
          say(event.value("error", ""));
          return kExitRefused;
        }
        return 0;
      }
      const ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n <= 0) throw Error(errc::spawn_failed, "the session's daemon went away");
      text.append(buf, static_cast<std::size_t>(n));
    }
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
}

int list() {
  try {
    const std::string dir = sessions_dir();
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string file = e.path().filename();
      if (file.size() <= 5 || file.substr(file.size() - 5) != ".sock") continue;
      if (!answers(e.path())) continue;
      const auto info = read_info(e.path());
      const std::time_t started = info.value("started", 0LL);
      char when[32] = "?";
      if (started > 0)
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&started));
      std::printf("%-16s %s  started %s, ends after %gs idle  %s\n",
                  file.substr(0, file.size() - 5).c_str(), info.value("cwd", "?").c_str(), when,
                  info.value("idle_timeout_s", 0.0),
                  ("(sandbox pid " + std::to_string(info.value("pid", 0)) + ")").c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    say(e.what());
    return kExitPaddockFailed;
  }
}

}  // namespace

std::function<int()> add_session_command(CLI::App& app) {
  auto a = std::make_shared<SessionArgs>();
  auto* cmd = app.add_subcommand(
      "session", "Keep one sandbox across commands: background processes, /tmp and state live on");
  cmd->require_subcommand(1);
  auto* start_cmd = cmd->add_subcommand(
      "start", "Start a session in the current directory (or --cwd) and return at once");
  start_cmd->add_option("name", a->name, "Its name (default: default)");
  start_cmd->add_option("--cwd", a->start.cwd, "Where its commands run (default: here)");
  start_cmd
      ->add_option_function<std::string>(
          "--idle-timeout",
          [a](const std::string& v) {
            a->idle = parse_flag(
                [](std::string_view t) { return parse_duration(t, std::chrono::hours(24 * 7)); },
                "--idle-timeout", v);
          },
          "End it after this long with no command: SECONDS or with a unit (90s, 30m, 2h, 1d); "
          "at most 7 days (default 1h)")
      ->type_name("DURATION");
  add_policy_flags(start_cmd, a->start);
  start_cmd->add_option("--worktree-of", a->worktree.repository,
                        "Run on a new git worktree of this repository (its top), made by paddock "
                        "on a new --branch; the session may only commit on that branch");
  start_cmd->add_option("--branch", a->worktree.branch, "With --worktree-of: the new branch");
  start_cmd->add_option("--base", a->worktree.base,
                        "With --worktree-of: where the branch starts (default HEAD)");
  start_cmd->add_option("--worktree-path", a->worktree.path,
                        "With --worktree-of: where the worktree goes (default REPO.worktrees/"
                        "BRANCH)");
  start_cmd
      ->add_option_function<std::string>(
          "--on-stop",
          [a](const std::string& v) {
            a->on_stop = v;
            a->worktree.on_close = v == "remove"    ? WorktreeOptions::OnClose::remove
                                   : v == "discard" ? WorktreeOptions::OnClose::discard
                                                    : WorktreeOptions::OnClose::keep;
          },
          "With --worktree-of: keep (the worktree and branch), remove (the worktree; the "
          "branch stays) or discard (both) when the session stops (default keep)")
      ->check(CLI::IsMember({"keep", "remove", "discard"}));
  auto* run_cmd = cmd->add_subcommand("run", "Run a command in a session");
  run_cmd->add_option("name", a->name, "The session's name")->required();
  run_cmd->add_option("-c", a->run.shell, "Run STRING through the session's shell");
  run_cmd->add_option_function<std::string>(
      "--timeout",
      [a](const std::string& v) { a->run.timeout = parse_flag(parse_timeout, "--timeout", v); },
      "Time limit: SECONDS or with a unit (90s, 2m)");
  run_cmd->add_option_function<std::string>(
      "--max-output",
      [a](const std::string& v) {
        a->run.max_output = parse_flag(parse_byte_count, "--max-output", v);
      },
      "Cap per stream: BYTES (65536, 64K, 1M), as paddock run");
  run_cmd
      ->add_option("--env", a->run.env, "Set KEY=VALUE in the command's environment (repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_flag("--json", a->run.json, "Print one JSON result object");
  run_cmd->add_option("--stdin", a->run.stdin_mode, "auto, inherit or none (as paddock run)");
  run_cmd->add_option("argv", a->run.argv, "PROGRAM [ARGS...] after --");
  run_cmd->positionals_at_end(false);
  auto* stop_cmd = cmd->add_subcommand(
      "stop", "End a session: its processes are killed, its last writes applied");
  stop_cmd->add_option("name", a->name, "Its name (default: default)");
  auto* list_cmd = cmd->add_subcommand("list", "The sessions running for this user");
  return [a, start_cmd, run_cmd, stop_cmd, list_cmd] {
    if (start_cmd->parsed()) return start(*a);
    if (run_cmd->parsed()) return run_in(*a);
    if (stop_cmd->parsed()) return stop(*a);
    if (list_cmd->parsed()) return list();
    return kExitPaddockFailed;
  };
}

}  // namespace paddock::cli
