// The serve protocol (docs/serve-protocol.md): JSON lines over a
// unix or TCP socket. This file is the pure half — one client line to a typed request, one
// event to one line — testable and fuzzable without a socket (tests/fuzz/fuzz_serve_request).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "paddock/command.hpp"
#include "paddock/exec_result.hpp"
#include "paddock/session.hpp"

namespace paddock::serve {

inline constexpr int kProtocolVersion = 1;

enum class MessageType {
  hello,
  exec,
  write,
  close_stdin,
  close_output,  // the client will read no more of a stream: its writer gets EPIPE/SIGPIPE
  signal,
  cancel,
  approve,
  approve_session,
  deny,
  ping,
  auth,           // a TCP client's proof (client/mutual_auth.hpp), after the daemon's challenge
  session_open,   // a sandbox for many commands (paddock/session.hpp): `id` names the session
  session_close,  // ends it: its processes killed, its last writes applied
};

struct ExecRequest {
  Command command;
  std::optional<std::string> cwd;
  std::map<std::string, std::string> env;
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::size_t> max_output_bytes;
  std::optional<std::string> stdin_data;  // bytes given whole
  bool stdin_stream = false;              // "stdin": "stream": `write` chunks, `close_stdin`
  CallPolicy policy;
  // "parent_env": the environment the command's is drawn from (ExecOptions::parent_env); a
  // `paddock run` helper's only (RequestRules::parent_env).
  std::optional<std::vector<std::string>> parent_env;
  // "given": the standard streams ("stdin", "stdout", "stderr") the command gets as the
  // descriptors that came with this line (SCM_RIGHTS), in that order: the caller's own, as a
  // run in its process would pass them; a `paddock run` helper's only
  // (RequestRules::given_descriptors).
  // Each as its standard number: 0 stdin, 1 stdout, 2 stderr.
  std::vector<int> given;
  // "network_events": true: each proxied request's outcome as a `network` event while the
  // command runs (the CLI's -v lines through a helper), beside the exit's violations.
  bool network_events = false;
  // "session": the id of a session this connection opened (as a key: Request::key's form).
  std::optional<std::string> session;
  std::optional<std::chrono::milliseconds> idle_timeout;  // session_open only
  std::optional<WorktreeOptions> worktree;                // session_open only, instead of cwd
};

struct Request {
  MessageType type = MessageType::ping;
  nlohmann::json id;  // as the client wrote it (a string or an integer); null when absent
  std::string key;    // the id as a map key (a string id and a number never collide)
  // hello (a TCP client: its nonce; `token` only to say it is never sent) and auth
  int version = 0;
  std::optional<std::string> token;
  std::optional<std::string> nonce;
  std::optional<std::string> proof;
  // exec
  ExecRequest exec;
  // write: the bytes, decoded
  std::string data;
  // signal
  int signal = 0;
  // close_output
  OutputStream stream = OutputStream::stdout_stream;
  // "conn_key", on any line: the key the daemon's hello gave this connection
  // (RequestRules::keyed_lines).
  std::optional<std::string> conn_key;
};

// What a request may ask for beyond narrowing the daemon's policy.
struct RequestRules {
  // policy.allow_write adds writable roots: only when the daemon's operator allows it.
  bool allow_writable_roots = false;
  // "parent_env" is taken: a helper of one user's `paddock run` (cli/run_helper.cpp), whose
  // clients are that user alone and could run the command in their own process anyway.
  bool parent_env = false;
  // "given" is taken, and descriptors with a line (SCM_RIGHTS): the same helper's, whose
  // client gives the command its own standard streams as a run in its process would.
  bool given_descriptors = false;
  // Every line after the hello carries "conn_key", the key the hello's answer gave this
  // connection alone. Whoever only writes into the connection (a command given it as its
  // stdout, or whose output a copier writes there) never read that answer, so its lines are
  // not the client's (hostile review helper-48). The helper's: its one client is paddock's.
  bool keyed_lines = false;
  // Every segment on a connection comes from the process that wrote its first one (same pid
  // and start time): no other process's bytes, a copier's included, become the client's
  // lines. For daemons whose only client is paddock's CLI, one process per connection (the
  // helper, sessions); `paddock serve`'s clients may share a connection between processes.
  bool one_writer = false;
  std::size_t max_argv_bytes = 1024 * 1024;
};

// An answer to a line that could not be used: `code` is one of the stable E_* strings.
struct ProtocolError {
  nlohmann::json id;  // null when the line did not name one
  std::string code;
  std::string message;
};

// One line (without its newline). Never throws.
std::variant<Request, ProtocolError> parse_request(std::string_view line,
                                                   const RequestRules& rules = {});

// "TERM", "SIGTERM" or 15 -> 15; 0 when it names no signal.
int signal_number(const nlohmann::json& value);

// Events, each one line ending in '\n' (ASCII: every non-ASCII character escaped, so a
// command's bytes never reach a terminal raw).
std::string hello_event(const nlohmann::json& capabilities);
// The daemon's answer to a TCP client's hello: its nonce and its proof (client/mutual_auth.hpp).
std::string challenge_event(const std::string& nonce, const std::string& proof);
std::string started_event(const nlohmann::json& id, const StartInfo& info);
// The bytes as text when they are valid UTF-8, else base64 with "encoding": "base64".
std::string output_event(const nlohmann::json& id, OutputStream stream, std::uint64_t seq,
                         std::string_view bytes);
std::string approval_event(const nlohmann::json& id, const CommandApprovalRequest& request);
// A proxied request of the command decided (exec's "network_events": true): `network`
// {id, allowed, protocol, target, process, address (allowed) | reason (refused)}.
std::string network_event(const nlohmann::json& id, const NetworkEvent& e);
// The ExecResult's JSON fields at top level (paddock/result_json.hpp), without the output
// (it was streamed), plus "cancelled" when the client cancelled it.
std::string exit_event(const nlohmann::json& id, const ExecResult& result, std::error_code ec,
                       bool cancelled);
// `request`: the type of the client message it answers ("signal", "write", ...) when it is
// about that message only and ends nothing; absent on a command's one final outcome (and on
// an exec that was refused before it started).
std::string error_event(const nlohmann::json& id, std::string_view code, std::string_view message,
                        std::string_view request = {});
std::string pong_event(const nlohmann::json& id);
std::string session_opened_event(const nlohmann::json& id, pid_t pid, const std::string& cwd);
std::string session_closed_event(const nlohmann::json& id, const SessionSummary& summary);

}  // namespace paddock::serve
