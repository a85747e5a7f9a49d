// `paddock run --connect unix:PATH|tcp:HOST:PORT ...`: the same run through a daemon
// (`paddock serve`): the command's output streamed, stdin forwarded, signals passed on, the
// same exit statuses and --json object as a local run. One command per connection, so a
// plain poll(2) loop is all it needs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/unique_fd.hpp"
#include "cli/approval_prompt.hpp"
#include "cli/commands.hpp"
#include "cli/logging.hpp"
#include "cli/run_args.hpp"
#include "cli/run_streams.hpp"
#include "cli/serve_token.hpp"
#include "cli/terminal.hpp"
#include "client/mutual_auth.hpp"
#include "paddock/errors.hpp"
#include "paddock/settings.hpp"
#include "process/given_fd.hpp"
#include "runtime/text_encoding.hpp"
#include "serve/server.hpp"

extern char** environ;

namespace paddock::cli {
namespace {

using nlohmann::json;

int signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const unsigned char s = static_cast<unsigned char>(sig);
  (void)!::write(signal_pipe[1], &s, 1);
}

int connect_to(const std::string& where) {
  const serve::Endpoint e = serve::parse_endpoint(where, "--connect");
  if (e.unix_socket) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, e.path.c_str(), e.path.size());
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
    return fd.release();
  }
  const bool v6 = e.host.find(':') != std::string::npos;
  UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(e.port);
    ::inet_pton(AF_INET6, e.host.c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(e.port);
    ::inet_pton(AF_INET, e.host.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return -1;
  return fd.release();
}

// What the daemon decides cannot be chosen per request: refused, not silently dropped.
std::optional<std::string> local_only_flag(const RunArgs& a) {
  const PolicyFlags& p = a.policy;
  if (!a.settings.empty()) return "--settings";
  if (a.profile != "default") return "--profile";
  if (p.no_sandbox) return "--no-sandbox";
  if (!p.fallback.empty()) return "--fallback";
  if (!p.allow_read.empty()) return "--allow-read";
  if (p.allow_write_home) return "--allow-write-home";
  return std::nullopt;
}

json exec_request(const RunArgs& a, bool stream_stdin, const HelperTarget* helper,
                  const HelperStreams* given) {
  json req = {{"type", "exec"}, {"id", 1}};
  if (given != nullptr && !given->names.empty()) req["given"] = given->names;
  if (!a.shell.empty() && a.argv.empty()) {
    req["shell"] = a.shell;
  } else if (!a.shell.empty()) {
    json argv = {helper ? helper->shell : "/bin/sh", "-c", a.shell};
    for (const auto& w : a.argv) argv.push_back(w);
    req["argv"] = argv;
  } else {
    req["argv"] = a.argv;
  }
  // The daemon's own cwd means nothing to the caller: theirs, made absolute. A session's
  // commands run in the session's.
  if (!a.session.empty()) {
    req["session"] = a.session;
  } else {
    std::string cwd = a.cwd;
    if (cwd.empty() || cwd.front() != '/') {
      char here[4096];
      if (::getcwd(here, sizeof here) != nullptr)
        cwd = cwd.empty() ? here : std::string(here) + "/" + cwd;
    }
    req["cwd"] = cwd;
  }
  json env = json::object();
  for (const auto& kv : a.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(errc::config_invalid, "--env " + kv + ": expected KEY=VALUE");
    }
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // The caller's locale and terminal go along (PATH and HOME are the daemon's: a PATH from the
  // request would choose which programs run, and is refused as environment injection). Not
  // to a helper: our whole environment goes there (parent_env, below) in its own order, which
  // these, set on top, would move to its end (new-user trial: LANG after PATH).
  if (helper == nullptr) {
    for (const char* name : {"LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR", "CI"}) {
      if (const char* v = std::getenv(name); v != nullptr && !env.contains(name)) env[name] = v;
    }
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const auto eq = entry.find('=');
      if (entry.starts_with("LC_") && eq != std::string_view::npos &&
          !env.contains(std::string(entry.substr(0, eq)))) {
        env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
      }
    }
  }
  if (!env.empty()) req["env"] = env;
  if (a.timeout) req["timeout_ms"] = a.timeout->count();
  if (a.max_output) {
    req["max_output_bytes"] = *a.max_output;
  } else if (helper && a.json) {
    req["max_output_bytes"] = helper->json_cap;  // a local --json run's cap, the policy's
  }
  if (stream_stdin) req["stdin"] = "stream";
  // -v: the proxy's decisions as they happen, as a run in process logs them. A helper is this
  // very binary; a daemon (--connect) may be older, and refuses a field it does not know.
  if (helper && spdlog::should_log(spdlog::level::info)) req["network_events"] = true;
  if (helper) {
    // The command's environment is drawn from ours, as in our own process; the policy is
    // the helper's already (the same flags, settings and profile made it).
    json parent = json::array();
    for (char** e = environ; *e != nullptr; ++e) parent.push_back(*e);
    req["parent_env"] = std::move(parent);
    return req;
  }
  json policy = json::object();
  const PolicyFlags& p = a.policy;
  if (!p.allow_write.empty()) policy["allow_write"] = p.allow_write;
  if (!p.deny_read.empty()) policy["deny_read"] = p.deny_read;
  if (!p.deny_write.empty()) policy["deny_write"] = p.deny_write;
  if (!p.network.empty()) policy["network"] = p.network;
  if (!p.allow_domains.empty()) policy["allowed_domains"] = p.allow_domains;
  if (!p.deny_domains.empty()) policy["denied_domains"] = p.deny_domains;
  if (!policy.empty()) req["policy"] = policy;
  return req;
}

int status_of_error(const json& e) {
  const std::string code = e.value("code", "");
  const int exit_code = e.value("exit_code", -1);
  if (code == "E_SPAWN_FAILED" && (exit_code == kExitNotFound || exit_code == kExitRefused)) {
    return exit_code;
  }
  if (code == "E_FORBIDDEN_COMMAND" || code == "E_ESCALATED_COMMAND" ||
      code == "E_SANDBOX_VIOLATION") {
    return kExitRefused;
  }
  return kExitPaddockFailed;
}

}  // namespace

int run_connected(const RunArgs& a, const HelperTarget* helper) {
  // Through the helper, run() looked already.
  if (helper == nullptr && a_stream_reaches_a_daemon()) return kExitPaddockFailed;
  try {
    if (auto flag = helper ? std::nullopt : local_only_flag(a)) {
      throw Error(errc::config_invalid,
                  *flag +
                      " cannot go with --connect: the daemon's policy applies, and a request "
                      "can only narrow it (--deny-read, --deny-write, --network, "
                      "--allow-domain, --deny-domain)");
    }
    if (a.shell.empty() && a.argv.empty()) {
      throw Error(errc::config_invalid, "nothing to run: give -- PROGRAM [ARGS...] or -c STRING");
    }
    if (a.stdin_mode != "auto" && a.stdin_mode != "inherit" && a.stdin_mode != "none") {
      throw Error(errc::config_invalid,
                  "--stdin " + a.stdin_mode + ": expected auto, inherit or none");
    }
    // A helper is given our streams themselves, as a run in our process gives them
    // (run_streams.hpp); a daemon gets what the command writes as events.
    std::optional<HelperStreams> given;
    if (helper != nullptr && !(given = helper_streams(a))) return kExitPaddockFailed;
    const auto kind = process::classify_given_fd(STDIN_FILENO);
    const bool stream_stdin =
        !helper &&
        (a.stdin_mode == "inherit" ||
         (a.stdin_mode == "auto" && kind != process::GivenFdKind::terminal &&
          kind != process::GivenFdKind::invalid && kind != process::GivenFdKind::dev_null));
    if (const std::string mine = default_settings_path(); !mine.empty() && !helper) {
      say("warning: " + mine +
          " is not applied with --connect: the daemon's policy decides (flags may narrow it)");
    }
    const auto token = helper ? std::nullopt : serve_token(a.token_file);
    UniqueFd sock(helper ? ::fcntl(helper->socket, F_DUPFD_CLOEXEC, 3) : connect_to(a.connect));
    if (sock.get() < 0) {
      throw Error(errc::spawn_failed, "--connect " + a.connect + ": " + std::strerror(errno));
    }
    json hello = {{"type", "hello"}, {"version", 1}};
    // With a token (TCP), it is never sent: the daemon proves it holds it first, then we do
    // (client/mutual_auth.hpp); the command goes out with our proof.
    const std::string client_nonce = token ? client::random_nonce() : std::string();
    if (token) hello["nonce"] = client_nonce;
    json exec = exec_request(a, stream_stdin, helper, given ? &*given : nullptr);
    if (helper) exec["conn_key"] = helper->conn_key;
    std::string exec_line = exec.dump() + "\n";
    const std::optional<std::size_t> json_cap =
        helper && a.json && !a.max_output ? std::optional(helper->json_cap) : std::nullopt;
    // Everything to the daemon goes through `out`, written when the socket takes it: never a
    // blocking write inside the loop (a full socket must not stop us reading the daemon's
    // events or our signals).
    std::string out = helper ? std::string() : hello.dump() + "\n";
    if (given && !given->fds.empty()) {
      // The descriptors go with the line's first bytes; our own pipe ends go once sent (the
      // command holds them now: its end is our copy's EOF).
      const ssize_t sent = send_with_descriptors(sock.get(), exec_line, given->fds);
      if (sent < 0) {
        throw Error(errc::spawn_failed,
                    "sending the command to the helper: " + std::string(std::strerror(errno)));
      }
      exec_line.erase(0, static_cast<std::size_t>(sent));
      given->ours.clear();
    }
    if (!token) out += std::exchange(exec_line, std::string());
    ::fcntl(sock.get(), F_SETFL, ::fcntl(sock.get(), F_GETFL) | O_NONBLOCK);
    auto send = [&out, helper](json m) {
      if (helper) m["conn_key"] = helper->conn_key;
      out += m.dump() + "\n";
    };
    constexpr std::size_t kOutHigh = 1 << 20;  // stdin is not read while this much waits

    if (::pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw Error(errc::spawn_failed, "pipe");
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    auto approver = approval_for_cli(a.yes);

    std::string input;
    bool stdin_open = stream_stdin, signalled = false, piped = false, heard = false;
    bool started = false;  // the command runs (its "started" came)
    // With a token: nothing of ours (stdin, signals) goes out and nothing the peer says is
    // believed until it has proven it holds the token and our proof is on its way.
    bool authed = !token;
    std::string kept_out, kept_err;
    json result;
    int status = kExitPaddockFailed;
    // The command's output into our pipes (HelperStreams::copies), copied as it comes.
    auto copy_fd = [&given](std::size_t i) {
      return given && i < given->copies.size() ? given->copies[i].from.get() : -1;
    };
    auto copy_some = [&given](std::size_t i) {
      auto& c = given->copies[i];
      char chunk[65536];
      const ssize_t n = ::read(c.from.get(), chunk, sizeof chunk);
      if (n > 0) {
        c.to.write(std::string_view(chunk, static_cast<std::size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        c.from.reset();
      }
    };
    bool done = false;
    while (!done) {
      pollfd fds[5] = {
          {sock.get(), static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0},
          {signal_pipe[0], POLLIN, 0},
          {stdin_open && authed && out.size() < kOutHigh ? STDIN_FILENO : -1, POLLIN, 0},
          {copy_fd(0), POLLIN, 0},
          {copy_fd(1), POLLIN, 0}};
      if (::poll(fds, 5, -1) < 0) {
        if (errno == EINTR) continue;
        throw Error(errc::spawn_failed, std::string("poll: ") + std::strerror(errno));
      }
      if ((fds[0].revents & POLLOUT) && !out.empty()) {
        const ssize_t n = ::send(sock.get(), out.data(), out.size(), MSG_NOSIGNAL);
        if (n > 0) out.erase(0, static_cast<std::size_t>(n));
      }
      if (fds[1].revents & POLLIN) {
        unsigned char sig = 0;
        while (::read(signal_pipe[0], &sig, 1) == 1) {
          if (!authed) {  // nothing was started: end here, as the signal would have
            status = 128 + sig;
            done = true;
            break;
          }
          // The first is passed on (the command decides, as locally); a second cancels.
          json m = signalled
                       ? json{{"type", "cancel"}, {"id", 1}}
                       : json{{"type", "signal"}, {"id", 1}, {"signal", static_cast<int>(sig)}};
          signalled = true;
          send(m);
        }
      }
      if (stdin_open && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[65536];
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n > 0) {
          json w = {{"type", "write"},
                    {"id", 1},
                    {"data", base64_encode(std::string_view(buf, static_cast<std::size_t>(n)))},
                    {"encoding", "base64"}};
          send(w);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          stdin_open = false;
          send({{"type", "close_stdin"}, {"id", 1}});
        }
      }
      for (std::size_t i = 0; i < 2; ++i) {
        if (fds[3 + i].revents & (POLLIN | POLLHUP | POLLERR)) copy_some(i);
      }
      if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t n = ::read(sock.get(), buf, sizeof buf);
      if (n <= 0) {
        const std::string who = helper ? "helper" : "daemon";
        // Once the command started, its writes wait in its change set (`paddock changes`):
        // the connection went, not the start (new-user trial helper-44).
        say(started ? "E_SYSTEM: the " + who +
                          " went away while the command ran; what the command wrote waits in "
                          "its change set (paddock changes list)"
            : heard || helper
                ? "E_SPAWN_FAILED: the " + who + " closed the connection before the command started"
                : "E_CONFIG_INVALID: the daemon closed the connection at once: this user (uid " +
                      std::to_string(::getuid()) +
                      ") is probably not allowed there (paddock serve --allow-uid / "
                      "--allow-group)");
        return kExitPaddockFailed;
      }
      heard = true;
      input.append(buf, static_cast<std::size_t>(n));
      for (auto nl = input.find('\n'); nl != std::string::npos && !done; nl = input.find('\n')) {
        const json e = json::parse(input.substr(0, nl), nullptr, false);
        input.erase(0, nl + 1);
        if (e.is_discarded()) continue;
        const std::string type = e.value("type", "");
        if (!authed && type != "challenge" && type != "error") continue;  // not believed
        if (type == "challenge" && token && !exec_line.empty()) {
          const std::string nonce = e.value("nonce", "");
          if (!client::well_formed_nonce(nonce) ||
              !client::same_secret(
                  e.value("proof", ""),
                  client::auth_proof(*token, client::AuthRole::daemon, client_nonce, nonce))) {
            throw Error(errc::config_invalid,
                        "--connect " + a.connect +
                            ": the daemon's proof does not match this token (a wrong token, or "
                            "something other than the daemon listening there); nothing was sent");
          }
          send(json{{"type", "auth"},
                    {"proof",
                     client::auth_proof(*token, client::AuthRole::client, client_nonce, nonce)}});
          out += std::exchange(exec_line, std::string());
          authed = true;
        } else if (type == "stdout" || type == "stderr") {
          std::string data = e.value("data", "");
          if (e.value("encoding", "") == "base64") data = base64_decode(data).value_or("");
          if (a.json) {
            (type == "stdout" ? kept_out : kept_err) += data;
          } else if (!write_all(type == "stdout" ? STDOUT_FILENO : STDERR_FILENO, data) &&
                     errno == EPIPE && !piped) {
            // Our reader went away (`... | head -1`): the daemon closes its end of that pipe,
            // so the command's next write fails with EPIPE/SIGPIPE as it would locally.
            piped = true;
            send({{"type", "close_output"}, {"id", 1}, {"stream", type}});
          }
        } else if (type == "network") {
          NetworkEvent net;
          net.allowed = e.value("allowed", false);
          net.protocol = e.value("protocol", "");
          net.target = e.value("target", "");
          net.address = e.value("address", "");
          net.reason = e.value("reason", "");
          net.process = e.value("process", "");
          log_network_event(net);
        } else if (type == "started") {
          started = true;
          if (helper) {
            spdlog::info("started: pid {} (through the helper)", e.value("pid", 0));
          } else {
            spdlog::info("started through {}: pid {}", a.connect, e.value("pid", 0));
          }
        } else if (type == "approval_request") {
          Approval answer = Approval::deny;
          if (approver) {
            CommandApprovalRequest r{e.value("command", ""), e.value("rule", ""),
                                     e.value("reason", "")};
            approver(r, [&answer](Approval x) { answer = x; });
          }
          const char* t = answer == Approval::approve           ? "approve"
                          : answer == Approval::approve_session ? "approve_session"
                                                                : "deny";
          send({{"type", t}, {"id", 1}});
        } else if (type == "exit" && e.value("id", json()) == 1) {
          result = e;
          done = true;
        } else if (type == "error") {
          if (!e.contains("id")) {  // about a line of ours: paddock's fault, said plainly
            const std::string message = e.value("message", "");
            say(e.value("code", "E_CONFIG_INVALID") + ": " +
                (message.starts_with("authentication required")
                     ? std::string(token ? "the daemon refused the token"
                                         : "the daemon wants a token") +
                           ": give it with --token-file FILE or PADDOCK_SERVE_TOKEN"
                     : message));
            return kExitPaddockFailed;
          }
          if (e.value("id", json()) == 1 && !e.contains("request")) {  // its final outcome
            result = e;
            done = true;
          }
        }
      }
    }
    // What the command wrote last is still in our pipes: all of it before our own lines. Its
    // processes died with the sandbox, so the ends come at once; one held past a quiet
    // moment (nothing more within kLastOutput), or still writing kLastOutputTotal after the
    // exit, is not waited for (said at -v).
    constexpr int kLastOutput = 500;  // ms
    constexpr auto kLastOutputTotal = std::chrono::seconds(2);
    const auto last_until = std::chrono::steady_clock::now() + kLastOutputTotal;
    for (;;) {
      pollfd last[2] = {{copy_fd(0), POLLIN, 0}, {copy_fd(1), POLLIN, 0}};
      if (last[0].fd < 0 && last[1].fd < 0) break;
      if (std::chrono::steady_clock::now() > last_until) {
        spdlog::info("output still written {} s after the exit: not waited for",
                     kLastOutputTotal.count());
        break;
      }
      const int ready = ::poll(last, 2, kLastOutput);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      for (std::size_t i = 0; i < 2; ++i) {
        if (last[i].revents & (POLLIN | POLLHUP | POLLERR)) copy_some(i);
      }
    }
    if (result["type"] == "error") {
      if (result.value("code", "") == "E_ESCALATED_COMMAND" && !approver) {
        result["message"] =
            unasked_approval_text(result.value("rule", ""), result.value("reason", ""));
        say("E_ESCALATED_COMMAND: " + result.value("message", ""));
      } else {
        say(result.value("code", "") + ": " + result.value("message", ""));
      }
      status = status_of_error(result);
      if (a.json) {  // the shape of a local run's result that never ran
        json local = {{"exit_code", result.value("exit_code", -1)},
                      {"signal", 0},
                      {"timed_out", false},
                      {"stdout", ""},
                      {"stderr", ""},
                      {"truncated", false},
                      {"stdout_bytes_total", 0},
                      {"stderr_bytes_total", 0},
                      {"duration_ms", 0},
                      {"sandboxed", false},
                      {"decision", result.value("decision", "sandboxed")},
                      {"violations", json::array()},
                      {"error_code", result.value("code", "")},
                      {"error", result.value("message", "")}};
        if (result.contains("rule")) local["rule"] = result["rule"];
        if (result.contains("reason")) local["reason"] = result["reason"];
        write_all(STDOUT_FILENO, local.dump(-1, ' ', true) + "\n");
      }
      return status;
    }
    for (const auto& v : result.value("violations", json::array())) {
      if (!a.json) {
        say("violation: " + v.value("operation", "") + " " + v.value("path", "") + ": " +
            v.value("detail", ""));
      }
    }
    // A change set that did not reach the workspace whole is never silent, --json or not.
    if (const auto c = result.find("changes"); c != result.end() && c->contains("pending")) {
      const std::string why = c->value("pending", "");
      const std::string id = c->value("id", "");
      say(!a.session.empty()
              ? "the command's changes were NOT applied yet: " + why +
                    "; they stay in the session's sandbox, tried again at each command's end "
                    "and at `paddock session stop " +
                    a.session + "`"
              : "the command's changes were NOT applied: " + why + "; they wait in change set " +
                    id + " (`paddock changes show " + id +
                    "`, then `paddock changes apply` or `discard`)");
    }
    const std::string code = result.value("error_code", "");
    status = result.value("exit_code", kExitPaddockFailed);
    spdlog::info("finished: exit {}, signal {}, {} ms, stdout {} bytes, stderr {} bytes{}", status,
                 result.value("signal", 0), result.value("duration_ms", 0),
                 result.value("stdout_bytes_total", std::uint64_t{0}),
                 result.value("stderr_bytes_total", std::uint64_t{0}),
                 code.empty() ? "" : ", " + code);
    if (code == "E_TIMEOUT") {
      say(result.value("error", "timed out") +
          (result.value("sandboxed", false) ? "; the command and everything it started were killed"
                                            : "; the command and its process group were killed"));
      status = kExitTimedOut;
    } else if (result.value("cancelled", false)) {
      say("interrupted; the command was stopped");
    } else if (!code.empty()) {
      say(code + ": " + result.value("error", ""));
      // As a local run: a program not found or not runnable keeps its shell status.
      if (code != "E_SPAWN_FAILED" || (status != kExitNotFound && status != kExitRefused)) {
        status = kExitPaddockFailed;
      }
    }
    if (const auto cap = a.max_output ? a.max_output : json_cap;
        result.value("truncated", false) && cap) {
      for (const char* name : {"stdout", "stderr"}) {
        const auto total = result.value(std::string(name) + "_bytes_total", std::uint64_t{0});
        if (total > *cap) {
          say(std::string("output cut: ") + name + ": the first " + std::to_string(*cap) + " of " +
              std::to_string(total) + " bytes " + (a.json ? "kept in the JSON result" : "shown") +
              " (--max-output " + std::to_string(*cap) + ")");
        }
      }
    }
    if (a.json) {
      result.erase("type");
      result.erase("id");
      for (auto [name, bytes] : {std::pair{"stdout", &kept_out}, std::pair{"stderr", &kept_err}}) {
        if (is_valid_utf8(*bytes)) {
          result[name] = *bytes;
        } else {
          result[name] = base64_encode(*bytes);
          result[std::string(name) + "_encoding"] = "base64";
        }
      }
      write_all(STDOUT_FILENO, result.dump(-1, ' ', true) + "\n");
    }
    return status;
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
}

}  // namespace paddock::cli
