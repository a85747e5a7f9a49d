// `paddock serve --listen unix:PATH|tcp:HOST:PORT`: the daemon for agent farms (src/serve).
// One Manager for every client, one line of log per command, SIGTERM drains, SIGHUP reloads
// the settings (domain rules, filesystem rules, classifier).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <asio/signal_set.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/serve_token.hpp"
#include "cli/terminal.hpp"
#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"
#include "paddock/settings.hpp"
#include "serve/server.hpp"

namespace paddock::cli {
namespace {

struct ServeArgs {
  std::vector<std::string> listen;
  std::string http;
  std::string token_file;
  bool allow_remote = false;
  std::string socket_mode = "0600";
  std::string socket_group;
  std::vector<unsigned> allow_uids;
  std::vector<std::string> roots;
  double write_timeout_seconds = 300;
  std::vector<std::string> allow_groups;
  std::size_t max_commands = 1024;
  std::size_t max_per_connection = 256;
  double drain_seconds = 30;
  unsigned threads = 0;
  bool writable_roots = false;
  bool json_logs = false;
  std::string profile = "default";
  std::string settings;
};

// A group by name or number from /etc/group. Hand-written: this binary is static, and glibc's
// getgrnam() in a static binary loads the NSS modules at run time (it crashed in
// nss_systemd here); groups for a daemon's socket are local groups.
gid_t group_id(const std::string& name, const char* flag) {
  if (!name.empty() && name.size() < 10 &&
      name.find_first_not_of("0123456789") == std::string::npos) {
    return static_cast<gid_t>(std::stoul(name));
  }
  std::ifstream in("/etc/group");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string group, password, gid;
    if (std::getline(fields, group, ':') && std::getline(fields, password, ':') &&
        std::getline(fields, gid, ':') && group == name && !gid.empty() && gid.size() < 10 &&
        gid.find_first_not_of("0123456789") == std::string::npos) {
      return static_cast<gid_t>(std::stoul(gid));
    }
  }
  throw Error(errc::config_invalid, std::string(flag) + " " + name +
                                        ": no such group in /etc/group (a number works too)");
}

Config load(const ServeArgs& a) {
  Config c =
      resolve_config(a.profile, a.settings.empty() ? default_settings_path() : a.settings, {});
  // The token is the daemon's: never readable by a command it runs.
  if (!a.token_file.empty()) {
    char resolved[PATH_MAX];
    c.sandbox.filesystem.deny_read.push_back(
        ::realpath(a.token_file.c_str(), resolved) != nullptr ? resolved : a.token_file);
    validate(c);
  }
  return c;
}

// The token TCP clients present: a file's first line, or PADDOCK_SERVE_TOKEN.
std::optional<std::string> read_token(const ServeArgs& a) {
  auto token = serve_token(a.token_file);
  if (token && token->size() < 16) {
    throw Error(errc::config_invalid, (a.token_file.empty() ? std::string("PADDOCK_SERVE_TOKEN")
                                                            : "--token-file " + a.token_file) +
                                          ": the token must be at least 16 characters");
  }
  ::unsetenv("PADDOCK_SERVE_TOKEN");  // never passed on to a command
  return token;
}

bool json_logs = false;

// With --json, the fields themselves are the line (time and level added), so `jq .event`
// works; as text, "paddock[info]: event=... key=value ...".
void log_fields(const char* level, const nlohmann::json& fields) {
  const bool warn = std::strcmp(level, "warn") == 0;
  if (!spdlog::should_log(warn ? spdlog::level::warn : spdlog::level::info)) return;
  if (json_logs) {
    nlohmann::json line = fields;
    const auto now = std::chrono::system_clock::now();
    line["time"] = std::chrono::duration<double>(now.time_since_epoch()).count();
    line["level"] = level;
    std::fprintf(stderr, "%s\n",
                 line.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::string text;
  for (const auto& [key, value] : fields.items()) {
    text +=
        (text.empty() ? "" : " ") + key + "=" +
        (value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  }
  if (warn) {
    spdlog::warn("{}", text);
  } else {
    spdlog::info("{}", text);
  }
}

int serve(const ServeArgs& a) {
  json_logs = a.json_logs;
  // The daemon's log is its record: one line per command at info, unless PADDOCK_LOG or -v
  // say otherwise.
  if (std::getenv("PADDOCK_LOG") == nullptr && spdlog::get_level() > spdlog::level::info) {
    spdlog::set_level(spdlog::level::info);
  }
  try {
    serve::ServeOptions o;
    o.listen = a.listen;
    o.http = a.http;
    o.token = read_token(a);
    o.allow_remote = a.allow_remote;
    char* end = nullptr;
    const unsigned long mode = std::strtoul(a.socket_mode.c_str(), &end, 8);
    if (end == a.socket_mode.c_str() || *end != '\0' || mode > 0777 || (mode & 0007) != 0) {
      throw Error(errc::config_invalid,
                  "--socket-mode " + a.socket_mode +
                      ": expected octal like 0600 or 0660 (never open to others)");
    }
    o.socket_mode = static_cast<mode_t>(mode);
    if (!a.socket_group.empty()) {
      o.socket_group = group_id(a.socket_group, "--socket-group");
      o.allowed_gids.push_back(*o.socket_group);  // the group the socket is opened to may use it
    }
    for (const auto& name : a.allow_groups) {
      o.allowed_gids.push_back(group_id(name, "--allow-group"));
    }
    for (unsigned uid : a.allow_uids) o.allowed_uids.push_back(static_cast<uid_t>(uid));
    if (a.max_commands == 0 || a.max_per_connection == 0) {
      throw Error(errc::config_invalid, "--max-commands and --max-per-connection: at least 1");
    }
    o.limits.max_commands = a.max_commands;
    o.limits.max_per_connection = a.max_per_connection;
    if (!(a.drain_seconds >= 0 && a.drain_seconds <= 3600)) {
      throw Error(errc::config_invalid, "--drain-seconds: 0 to 3600");
    }
    o.drain_grace = std::chrono::milliseconds(static_cast<long>(a.drain_seconds * 1000));
    o.rules.allow_writable_roots = a.writable_roots;
    o.roots = a.roots;
    if (!(a.write_timeout_seconds >= 1 && a.write_timeout_seconds <= 86400)) {
      throw Error(errc::config_invalid, "--write-timeout: 1 to 86400 seconds");
    }
    o.limits.write_timeout =
        std::chrono::milliseconds(static_cast<long>(a.write_timeout_seconds * 1000));
    o.log = log_fields;

    Config config = load(a);
    const unsigned threads =
        a.threads != 0 ? a.threads : std::clamp(std::thread::hardware_concurrency(), 2u, 8u);
    Runtime runtime(RuntimeOptions{threads});
    Manager manager(runtime.executor(), config);
    serve::Server server(runtime.executor(), manager, o);
    for (const auto& e : server.endpoints()) spdlog::info("listening on {}", e);
    if (!server.http_endpoint().empty()) {
      spdlog::info("HTTP (healthz, readyz, metrics) on {}", server.http_endpoint());
    }
    // One line on stdout for whoever started us (a test, a supervisor): where to connect.
    std::string where;
    for (const auto& e : server.endpoints()) where += (where.empty() ? "" : " ") + e;
    std::printf("paddock serve: ready: %s%s%s\n", where.c_str(),
                server.http_endpoint().empty() ? "" : " http:", server.http_endpoint().c_str());
    std::fflush(stdout);

    std::promise<void> stopped;
    bool draining = false;
    asio::signal_set signals(runtime.executor(), SIGINT, SIGTERM, SIGHUP);
    std::function<void(const std::error_code&, int)> on_signal = [&](const std::error_code& ec,
                                                                     int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        try {
          manager.update_config(load(a));
          log_fields("info", {{"event", "reload"}, {"result", "ok"}});
        } catch (const Error& e) {
          log_fields("warn", {{"event", "reload"},
                              {"result",
                               "refused: the old settings stay (restart paddock serve "
                               "for what a reload cannot change)"},
                              {"error", e.what()}});
        }
      } else if (!draining) {
        draining = true;
        server.drain([&stopped] { stopped.set_value(); });
      } else {
        spdlog::warn("second signal: closing every connection now");
        server.close_all("the daemon was told twice to stop");
      }
      signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    stopped.get_future().wait();
    signals.cancel();
    manager.close();
    spdlog::info("stopped");
    return 0;
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
}

}  // namespace

std::function<int()> add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve", "Run the daemon: many clients, many commands, JSON lines over a socket");
  cmd->add_option("--listen", a->listen,
                  "unix:PATH (peer uid checked) or tcp:HOST:PORT (token required; loopback "
                  "unless --allow-remote); repeatable. Under systemd socket activation the "
                  "passed sockets are used too")
      ->allow_extra_args(false);
  cmd->add_option("--http", a->http,
                  "HOST:PORT for /healthz, /readyz (503 while draining), /metrics");
  cmd->add_option("--token-file", a->token_file,
                  "File whose first line is the token TCP clients send in hello (or "
                  "PADDOCK_SERVE_TOKEN)");
  cmd->add_flag("--allow-remote", a->allow_remote, "Allow a TCP listener beyond loopback");
  cmd->add_option("--socket-mode", a->socket_mode, "Unix socket mode (default 0600)");
  cmd->add_option("--socket-group", a->socket_group, "Unix socket group (with --socket-mode 0660)");
  cmd->add_option("--allow-uid", a->allow_uids,
                  "Unix peers allowed (repeatable; default: the daemon's own uid and root)")
      ->allow_extra_args(false);
  cmd->add_option("--allow-group", a->allow_groups,
                  "Unix peers in this group are allowed (repeatable; --socket-group adds its own)")
      ->allow_extra_args(false);
  cmd->add_option("--root", a->roots,
                  "Commands may run only under this directory (repeatable); needed for clients "
                  "with another uid than the daemon's, and for TCP clients")
      ->allow_extra_args(false);
  cmd->add_option("--write-timeout", a->write_timeout_seconds,
                  "A client that reads nothing this long is dropped, its commands killed (300)");
  cmd->add_option("--max-commands", a->max_commands, "Commands in flight, whole daemon (1024)");
  cmd->add_option("--max-per-connection", a->max_per_connection,
                  "Commands in flight per connection (256)");
  cmd->add_option("--drain-seconds", a->drain_seconds,
                  "After SIGTERM, how long running commands may finish (30)");
  cmd->add_option("--threads", a->threads, "Event-loop threads (default: cores, 2 to 8)");
  cmd->add_flag("--allow-request-writable-roots", a->writable_roots,
                "Let requests add writable roots (policy.allow_write); off, they may only narrow");
  cmd->add_flag("--json", a->json_logs, "Log as JSON lines on stderr");
  cmd->add_option("--profile", a->profile, "Base policy (default: default)");
  cmd->add_option("--settings", a->settings,
                  "Settings file (srt's format plus paddock's); SIGHUP re-reads it");
  return [a] { return serve(*a); };
}

}  // namespace paddock::cli
