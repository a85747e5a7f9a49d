#include "serve/protocol.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <string_view>

#include "paddock/result_json.hpp"
#include "runtime/text_encoding.hpp"

namespace paddock::serve {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxIdBytes = 128;
constexpr int kMaxNesting = 8;

// Thrown inside the parser only; parse_request turns it into a ProtocolError.
struct Bad {
  std::string message;
};

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw Bad{field + ": " + why};
}

const char* kind(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

std::string get_string(const json& v, const std::string& field) {
  if (!v.is_string()) bad(field, std::string("expected a string, got ") + kind(v));
  std::string s = v.get<std::string>();
  if (s.find('\0') != std::string::npos) bad(field, "contains a NUL byte");
  return s;
}

std::vector<std::string> get_strings(const json& v, const std::string& field) {
  if (!v.is_array()) bad(field, std::string("expected an array of strings, got ") + kind(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    out.push_back(get_string(v[i], field + "[" + std::to_string(i) + "]"));
  }
  return out;
}

// A client's value in a message: short, and never by dump() of what may be deeply nested.
std::string shown(const json& v) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.size() > 64) s = s.substr(0, 64) + "...";
    return json(s).dump(-1, ' ', true, json::error_handler_t::replace);
  }
  if (v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
  return kind(v);
}

// 1 to `max` (JSON numbers past 2^53 are not exact, and durations must not wrap).
std::uint64_t get_positive(const json& v, const std::string& field,
                           std::uint64_t max = std::uint64_t{1} << 53) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 || v.get<std::uint64_t>() > max) {
    bad(field, "expected an integer from 1 to " + std::to_string(max) + ", got " + shown(v));
  }
  return v.get<std::uint64_t>();
}

// Every key of `obj` must be one of `known`.
void only(const json& obj, std::initializer_list<std::string_view> known, const std::string& in) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (auto k : known) ok = ok || key == k;
    if (!ok) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      bad(in.empty() ? key : in + "." + key, "unknown field (known: " + list + ")");
    }
  }
}

// Bytes from `data` and its optional "encoding" ("base64"; absent: the string's UTF-8).
std::string decode(const json& msg, const char* data_field, const char* encoding_field) {
  std::string text = get_string(msg.at(data_field), data_field);
  if (!msg.contains(encoding_field)) return text;
  const std::string encoding = get_string(msg.at(encoding_field), encoding_field);
  if (encoding == "utf-8") return text;
  if (encoding != "base64") bad(encoding_field, "expected \"base64\" or \"utf-8\"");
  auto bytes = base64_decode(text);
  if (!bytes) bad(data_field, "is not canonical padded base64");
  return *bytes;
}

void read_policy(const json& p, const RequestRules& rules, CallPolicy& out) {
  if (!p.is_object()) bad("policy", std::string("expected an object, got ") + kind(p));
  only(p,
       {"allow_write", "deny_read", "deny_write", "network", "allowed_domains", "denied_domains",
        "shell"},
       "policy");
  if (p.contains("allow_write")) {
    out.allow_write = get_strings(p["allow_write"], "policy.allow_write");
    if (!out.allow_write.empty() && !rules.allow_writable_roots) {
      bad("policy.allow_write",
          "this daemon does not let requests add writable roots (paddock serve "
          "--allow-request-writable-roots)");
    }
  }
  if (p.contains("deny_read")) out.deny_read = get_strings(p["deny_read"], "policy.deny_read");
  if (p.contains("deny_write")) out.deny_write = get_strings(p["deny_write"], "policy.deny_write");
  if (p.contains("network")) {
    auto mode = network_mode_from_string(get_string(p["network"], "policy.network"));
    if (!mode) bad("policy.network", "expected \"blocked\", \"filtered\" or \"allowed\"");
    out.network = *mode;
  }
  if (p.contains("allowed_domains")) {
    out.allowed_domains = get_strings(p["allowed_domains"], "policy.allowed_domains");
  }
  if (p.contains("denied_domains")) {
    out.denied_domains = get_strings(p["denied_domains"], "policy.denied_domains");
  }
  if (p.contains("shell")) out.shell = get_string(p["shell"], "policy.shell");
}

// An id's map key ("s:" + a string, "n:" + an integer), as parse_request makes Request::key.
std::optional<std::string> id_key(const json& id) {
  if (id.is_string() && !id.get<std::string>().empty() &&
      id.get<std::string>().size() <= kMaxIdBytes) {
    return "s:" + id.get<std::string>();
  }
  if (id.is_number_integer()) return "n:" + id.dump();
  return std::nullopt;
}

// A session on a worktree paddock makes (WorktreeOptions).
WorktreeOptions read_worktree(const json& w) {
  if (!w.is_object()) bad("worktree", std::string("expected an object, got ") + kind(w));
  only(w, {"repository", "branch", "base", "path", "on_close"}, "worktree");
  WorktreeOptions out;
  for (const char* required : {"repository", "branch"}) {
    if (!w.contains(required)) bad(std::string("worktree.") + required, "required");
  }
  out.repository = get_string(w["repository"], "worktree.repository");
  out.branch = get_string(w["branch"], "worktree.branch");
  if (w.contains("base")) out.base = get_string(w["base"], "worktree.base");
  if (w.contains("path")) out.path = get_string(w["path"], "worktree.path");
  if (w.contains("on_close")) {
    const std::string on = get_string(w["on_close"], "worktree.on_close");
    if (on == "keep") {
      out.on_close = WorktreeOptions::OnClose::keep;
    } else if (on == "remove") {
      out.on_close = WorktreeOptions::OnClose::remove;
    } else if (on == "discard") {
      out.on_close = WorktreeOptions::OnClose::discard;
    } else {
      bad("worktree.on_close", "expected keep, remove or discard, got " + shown(w["on_close"]));
    }
  }
  return out;
}

void read_session_open(const json& msg, const RequestRules& rules, ExecRequest& out) {
  only(msg, {"type", "id", "cwd", "policy", "idle_timeout_ms", "worktree"}, "");
  if (msg.contains("cwd")) out.cwd = get_string(msg["cwd"], "cwd");
  if (msg.contains("worktree")) {
    if (msg.contains("cwd")) bad("worktree", "give cwd or worktree, not both");
    out.worktree = read_worktree(msg["worktree"]);
  }
  if (msg.contains("policy")) read_policy(msg["policy"], rules, out.policy);
  if (msg.contains("idle_timeout_ms")) {
    out.idle_timeout = std::chrono::milliseconds(
        get_positive(msg["idle_timeout_ms"], "idle_timeout_ms", std::uint64_t{1} << 40));
  }
}

void read_exec(const json& msg, const RequestRules& rules, ExecRequest& out) {
  only(msg,
       {"type", "id", "argv", "shell", "cwd", "env", "timeout_ms", "max_output_bytes", "stdin",
        "stdin_encoding", "policy", "tty", "session", "parent_env", "network_events", "given"},
       "");
  if (msg.contains("session")) {
    out.session = id_key(msg["session"]);
    if (!out.session) {
      bad("session", "expected a session's id (a non-empty string or an integer), got " +
                         shown(msg["session"]));
    }
  }
  const bool has_argv = msg.contains("argv"), has_shell = msg.contains("shell");
  if (has_argv == has_shell) bad("argv", "give exactly one of argv (an array) or shell (a string)");
  if (has_argv) {
    auto argv = get_strings(msg["argv"], "argv");
    if (argv.empty() || argv[0].empty()) bad("argv", "needs a program name first");
    std::size_t bytes = 0;
    for (const auto& a : argv) bytes += a.size() + 1;
    if (bytes > rules.max_argv_bytes)
      bad("argv", "larger than " + std::to_string(rules.max_argv_bytes) + " bytes");
    out.command = Command::exec(std::move(argv));
  } else {
    std::string script = get_string(msg["shell"], "shell");
    if (script.size() > rules.max_argv_bytes)
      bad("shell", "larger than " + std::to_string(rules.max_argv_bytes) + " bytes");
    out.command = Command::shell_string(std::move(script));
  }
  if (msg.contains("cwd")) out.cwd = get_string(msg["cwd"], "cwd");
  if (msg.contains("env")) {
    const json& env = msg["env"];
    if (!env.is_object()) bad("env", std::string("expected an object, got ") + kind(env));
    for (const auto& [k, v] : env.items()) {
      if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
        bad("env", "'" + k + "' is not a variable name");
      }
      out.env[k] = get_string(v, "env." + k);
    }
  }
  if (msg.contains("timeout_ms")) {
    out.timeout = std::chrono::milliseconds(
        get_positive(msg["timeout_ms"], "timeout_ms", std::uint64_t{1} << 40));
  }
  if (msg.contains("max_output_bytes")) {
    out.max_output_bytes = get_positive(msg["max_output_bytes"], "max_output_bytes");
  }
  if (msg.contains("stdin")) {
    const json& s = msg["stdin"];
    if (s.is_string() && s.get<std::string>() == "stream" && !msg.contains("stdin_encoding")) {
      out.stdin_stream = true;  // the literal bytes "stream": give them as base64
    } else {
      out.stdin_data = decode(msg, "stdin", "stdin_encoding");
    }
  } else if (msg.contains("stdin_encoding")) {
    bad("stdin_encoding", "given without stdin");
  }
  if (msg.contains("policy")) read_policy(msg["policy"], rules, out.policy);
  if (msg.contains("parent_env")) {
    if (!rules.parent_env) {
      bad("parent_env", "only a paddock run helper takes its caller's environment");
    }
    out.parent_env = get_strings(msg["parent_env"], "parent_env");
    for (const auto& entry : *out.parent_env) {
      if (entry.find('=') == std::string::npos || entry.front() == '=' ||
          entry.find('\0') != std::string::npos) {
        bad("parent_env", "'" + entry + "' is not KEY=VALUE");
      }
    }
  }
  if (msg.contains("given")) {
    if (!rules.given_descriptors) {
      bad("given", "only a paddock run helper takes its caller's descriptors");
    }
    for (const auto& name : get_strings(msg["given"], "given")) {
      const int fd = name == "stdin" ? 0 : name == "stdout" ? 1 : name == "stderr" ? 2 : -1;
      if (fd < 0) bad("given", "'" + name + "' is not stdin, stdout or stderr");
      if (std::find(out.given.begin(), out.given.end(), fd) != out.given.end()) {
        bad("given", "'" + name + "' named twice");
      }
      out.given.push_back(fd);
    }
    if (std::find(out.given.begin(), out.given.end(), 0) != out.given.end() &&
        msg.contains("stdin")) {
      bad("given", "stdin given as a descriptor and as \"stdin\" at once");
    }
  }
  if (msg.contains("network_events")) {
    if (!msg["network_events"].is_boolean()) {
      bad("network_events",
          std::string("expected true or false, got ") + kind(msg["network_events"]));
    }
    out.network_events = msg["network_events"].get<bool>();
  }
  if (msg.contains("tty") && !(msg["tty"].is_boolean() && !msg["tty"].get<bool>())) {
    bad("tty", "terminals (PTYs) are not supported; output is streamed as bytes");
  }
}

std::optional<MessageType> type_of(std::string_view t) {
  static const std::pair<std::string_view, MessageType> kTypes[] = {
      {"hello", MessageType::hello},
      {"exec", MessageType::exec},
      {"write", MessageType::write},
      {"close_stdin", MessageType::close_stdin},
      {"close_output", MessageType::close_output},
      {"signal", MessageType::signal},
      {"cancel", MessageType::cancel},
      {"approve", MessageType::approve},
      {"approve_session", MessageType::approve_session},
      {"deny", MessageType::deny},
      {"ping", MessageType::ping},
      {"auth", MessageType::auth},
      {"session_open", MessageType::session_open},
      {"session_close", MessageType::session_close},
  };
  for (const auto& [name, type] : kTypes) {
    if (t == name) return type;
  }
  return std::nullopt;
}

std::string line(const json& j) {
  // ensure_ascii (as the CLI's --json): lossless for a reader, safe for a terminal.
  return j.dump(-1, ' ', true, json::error_handler_t::strict) + "\n";
}

}  // namespace

int signal_number(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto n = v.get<std::uint64_t>();
    return n >= 1 && n <= 64 ? static_cast<int>(n) : 0;
  }
  if (!v.is_string()) return 0;
  std::string name = v.get<std::string>();
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  static const std::pair<const char*, int> kNames[] = {
      {"HUP", SIGHUP},    {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
      {"USR1", SIGUSR1},  {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},
      {"TERM", SIGTERM},  {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
      {"WINCH", SIGWINCH}};
  for (const auto& [n, s] : kNames) {
    if (name == n) return s;
  }
  return 0;
}

std::variant<Request, ProtocolError> parse_request(std::string_view text,
                                                   const RequestRules& rules) {
  // Nesting is bounded while parsing: a request is a flat object with small arrays, and a
  // deep one would make any recursive walk of it (dump, destruction) overflow the stack.
  bool too_deep = false;
  json msg = json::parse(
      text.begin(), text.end(),
      [&too_deep](int depth, json::parse_event_t, json&) {
        if (depth > kMaxNesting) too_deep = true;
        return !too_deep;
      },
      /*allow_exceptions=*/false);
  if (too_deep) {
    return ProtocolError{nullptr, "E_CONFIG_INVALID",
                         "nested deeper than " + std::to_string(kMaxNesting) + " levels"};
  }
  if (msg.is_discarded()) return ProtocolError{nullptr, "E_CONFIG_INVALID", "not a JSON line"};
  if (!msg.is_object()) {
    return ProtocolError{nullptr, "E_CONFIG_INVALID", "expected a JSON object per line"};
  }
  Request r;
  if (msg.contains("conn_key")) {  // any message's; the connection checks it (keyed_lines)
    if (!msg["conn_key"].is_string()) {
      return ProtocolError{nullptr, "E_CONFIG_INVALID", "conn_key: expected a string"};
    }
    r.conn_key = msg["conn_key"].get<std::string>();
    msg.erase("conn_key");
  }
  // The id first, so an error about anything else can name it.
  if (msg.contains("id")) {
    const json& id = msg["id"];
    if (auto key = id_key(id)) {
      r.id = id;
      r.key = *key;
    } else {
      return ProtocolError{nullptr, "E_CONFIG_INVALID",
                           "id: expected a non-empty string (at most 128 bytes) or an integer"};
    }
  }
  try {
    std::optional<MessageType> type;
    if (msg.contains("type")) {
      type = type_of(get_string(msg["type"], "type"));
      if (!type) bad("type", "unknown message type " + shown(msg["type"]));
    } else if (msg.contains("argv") || msg.contains("shell")) {
      type = MessageType::exec;  // docs/serve-protocol.md: a line with argv/shell and no type is an
                                 // exec
    } else {
      bad("type", "missing");
    }
    r.type = *type;
    const bool needs_id =
        r.type != MessageType::hello && r.type != MessageType::ping && r.type != MessageType::auth;
    if (needs_id && r.key.empty()) bad("id", "missing");
    switch (r.type) {
      case MessageType::hello:
        only(msg, {"type", "version", "token", "nonce"}, "");
        if (msg.contains("version")) {
          if (!msg["version"].is_number_unsigned() || msg["version"].get<std::uint64_t>() > 1000) {
            bad("version", "expected a small integer");
          }
          r.version = static_cast<int>(msg["version"].get<std::uint64_t>());
          if (r.version != kProtocolVersion) {
            bad("version", "this server speaks version " + std::to_string(kProtocolVersion));
          }
        }
        if (msg.contains("token")) r.token = get_string(msg["token"], "token");
        if (msg.contains("nonce")) r.nonce = get_string(msg["nonce"], "nonce");
        break;
      case MessageType::auth:
        only(msg, {"type", "proof"}, "");
        if (!msg.contains("proof")) bad("proof", "missing");
        r.proof = get_string(msg["proof"], "proof");
        break;
      case MessageType::exec:
        read_exec(msg, rules, r.exec);
        break;
      case MessageType::session_open:
        read_session_open(msg, rules, r.exec);
        break;
      case MessageType::write:
        only(msg, {"type", "id", "data", "encoding"}, "");
        if (!msg.contains("data")) bad("data", "missing");
        r.data = decode(msg, "data", "encoding");
        break;
      case MessageType::signal:
        only(msg, {"type", "id", "signal"}, "");
        if (!msg.contains("signal")) bad("signal", "missing");
        r.signal = signal_number(msg["signal"]);
        if (r.signal == 0) bad("signal", "unknown signal " + shown(msg["signal"]));
        break;
      case MessageType::close_output: {
        only(msg, {"type", "id", "stream"}, "");
        const std::string stream =
            msg.contains("stream") ? get_string(msg["stream"], "stream") : "stdout";
        if (stream != "stdout" && stream != "stderr") bad("stream", "expected stdout or stderr");
        r.stream = stream == "stdout" ? OutputStream::stdout_stream : OutputStream::stderr_stream;
        break;
      }
      case MessageType::ping:
        only(msg, {"type", "id"}, "");
        break;
      default:  // close_stdin, cancel, approve, approve_session, deny, session_close
        only(msg, {"type", "id"}, "");
        break;
    }
  } catch (const Bad& e) {
    return ProtocolError{r.id, "E_CONFIG_INVALID", e.message};
  } catch (const json::exception& e) {
    return ProtocolError{r.id, "E_CONFIG_INVALID", e.what()};
  }
  return r;
}

std::string hello_event(const nlohmann::json& capabilities) {
  json j = {{"type", "hello"}, {"version", kProtocolVersion}};
  for (const auto& [k, v] : capabilities.items()) j[k] = v;
  return line(j);
}

std::string started_event(const nlohmann::json& id, const StartInfo& info) {
  json j = {{"type", "started"},
            {"id", id},
            {"pid", info.pid},
            {"decision", to_string(info.decision)},
            {"rule", info.rule},
            {"reason", info.reason},
            {"sandboxed", info.sandboxed}};
  return line(j);
}

std::string output_event(const nlohmann::json& id, OutputStream stream, std::uint64_t seq,
                         std::string_view bytes) {
  json j = {{"type", stream == OutputStream::stdout_stream ? "stdout" : "stderr"},
            {"id", id},
            {"seq", seq}};
  if (is_valid_utf8(bytes)) {
    j["data"] = std::string(bytes);
  } else {
    j["data"] = base64_encode(bytes);
    j["encoding"] = "base64";
  }
  return line(j);
}

std::string approval_event(const nlohmann::json& id, const CommandApprovalRequest& request) {
  json j = {{"type", "approval_request"},
            {"id", id},
            {"command", request.command},
            {"rule", request.rule},
            {"reason", request.reason}};
  // A command's text need not be UTF-8: replaced for display, the decision is on the id.
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

std::string network_event(const nlohmann::json& id, const NetworkEvent& e) {
  json j = {{"type", "network"},      {"id", id},           {"allowed", e.allowed},
            {"protocol", e.protocol}, {"target", e.target}, {"process", e.process}};
  if (e.allowed) {
    j["address"] = e.address;
  } else {
    j["reason"] = e.reason;
  }
  // A host name as the command asked for it need not be UTF-8.
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

std::string exit_event(const nlohmann::json& id, const ExecResult& result, std::error_code ec,
                       bool cancelled) {
  json j = to_json(result, ec);
  // Streamed as stdout/stderr events: the exit carries the totals, not the bytes again.
  for (const char* gone : {"stdout", "stderr", "stdout_encoding", "stderr_encoding"}) j.erase(gone);
  j["type"] = "exit";
  j["id"] = id;
  if (cancelled) j["cancelled"] = true;
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

std::string error_event(const nlohmann::json& id, std::string_view code, std::string_view message,
                        std::string_view request) {
  json j = {{"type", "error"}, {"code", std::string(code)}, {"message", std::string(message)}};
  if (!id.is_null()) j["id"] = id;
  if (!request.empty()) j["request"] = std::string(request);
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

std::string challenge_event(const std::string& nonce, const std::string& proof) {
  return line(json{{"type", "challenge"}, {"nonce", nonce}, {"proof", proof}});
}

std::string session_opened_event(const nlohmann::json& id, pid_t pid, const std::string& cwd) {
  return line(json{{"type", "session_opened"}, {"id", id}, {"pid", pid}, {"cwd", cwd}});
}

std::string session_closed_event(const nlohmann::json& id, const SessionSummary& summary) {
  ExecResult r;  // its changes and violations, in the shape of an exit's
  r.changes = summary.changes;
  r.violations = summary.violations;
  const json result = to_json(r);
  json j = {{"type", "session_closed"}, {"id", id}, {"violations", result["violations"]}};
  if (result.contains("changes")) j["changes"] = result["changes"];
  if (!summary.branch.empty()) {
    j["worktree"] = {
        {"branch", summary.branch}, {"head", summary.branch_head}, {"result", summary.worktree}};
  }
  if (!summary.failure.empty()) {
    j["error_code"] = "E_SANDBOX_VIOLATION";
    j["error"] = summary.failure;
  }
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

std::string pong_event(const nlohmann::json& id) {
  json j = {{"type", "pong"}};
  if (!id.is_null()) j["id"] = id;
  return line(j);
}

}  // namespace paddock::serve
