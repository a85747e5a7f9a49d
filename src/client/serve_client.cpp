// ServeClient (paddock/serve_client.hpp): the protocol's client side over one socket. One
// strand runs everything: the reads (one JSON line per event, dispatched by id), the writes
// (a queue, one async_write at a time), and the callers' requests, posted onto it. The socket
// is never closed under an operation (Asio 1.22's io_uring backend then completes the wrong
// operations; docs/design.md, "Never cancel or close under an operation"): close() shuts it down,
// which ends the read and the write in flight, and the last of them closes it.
#include "paddock/serve_client.hpp"

#include <asio/connect.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/read_until.hpp>
#include <asio/strand.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <vector>

#include "client/endpoint.hpp"
#include "client/mutual_auth.hpp"
#include "paddock/config.hpp"
#include "paddock/errors.hpp"
#include "paddock/result_json.hpp"
#include "paddock/runtime.hpp"
#include "runtime/text_encoding.hpp"

namespace paddock {

using json = nlohmann::json;

namespace {

// A line longer than this from the daemon is a broken daemon, not an event (its own lines are
// bounded by its output chunk size).
constexpr std::size_t kMaxLine = 16 * 1024 * 1024;
// Requests and stdin waiting to be sent: past this the daemon is not reading.
constexpr std::size_t kMaxQueued = 64 * 1024 * 1024;

std::error_code code_from_daemon(const std::string& code) {
  if (auto ec = error_code_from_string(code)) return ec;
  if (code == "E_OVERLOADED")
    return std::make_error_code(std::errc::resource_unavailable_try_again);
  return std::make_error_code(std::errc::protocol_error);
}

struct Running {
  ServeClient::Exec exec;
  ExecResult result;
  detail::unique_function<void(std::error_code, ExecResult)> done;
};

}  // namespace

struct ServeClient::State : std::enable_shared_from_this<ServeClient::State> {
  explicit State(asio::any_io_executor ex) : strand(asio::make_strand(ex)), socket(strand) {}

  asio::strand<asio::any_io_executor> strand;
  asio::generic::stream_protocol::socket socket;
  asio::streambuf in{kMaxLine};
  std::deque<std::string> out;
  std::size_t queued = 0;  // bytes in `out`
  // Ids cancelled before their exec was sent (waiting for the hello, or not yet on the
  // strand): never sent. Bounded: a cancel for an id that never comes is dropped past it.
  std::set<std::string> cancelled_early;
  bool writing = false, reading = false, connecting = false, closed = false, hello_done = false;
  mutable std::mutex error_mutex;  // error_message() reads it from any thread
  std::string last_error;
  void set_error(std::string text) {
    std::lock_guard lock(error_mutex);
    last_error = std::move(text);
  }
  detail::unique_function<void(std::error_code)> on_hello;
  bool hello_pending = false;  // async_connect started, no hello yet
  // TCP: the token (never sent) and our nonce, for the daemon's challenge (mutual_auth.hpp).
  std::string auth_token, client_nonce;
  bool auth_sent = false;  // our proof went out, after the daemon's checked out
  std::vector<detail::unique_function<void()>> waiting_for_hello;
  std::unordered_map<std::string, Running> running;
  std::uint64_t next_id = 1;

  void send(const json& message) {
    if (closed) return;
    out.push_back(message.dump(-1, ' ', true, json::error_handler_t::replace) + "\n");
    queued += out.back().size();
    if (queued > kMaxQueued) {  // the daemon stopped reading: not an unbounded queue here
      set_error("the daemon stopped reading (more than 64 MiB waiting to be sent)");
      return fail(std::make_error_code(std::errc::no_buffer_space));
    }
    if (!writing) write_next();
  }

  void write_next() {
    if (out.empty() || closed) {
      writing = false;
      return;
    }
    writing = true;
    asio::async_write(socket, asio::buffer(out.front()),
                      [self = shared_from_this()](std::error_code ec, std::size_t) {
                        self->writing = false;
                        if (ec || self->closed) {
                          self->fail(ec ? ec : asio::error::operation_aborted);
                          return self->close_when_idle();
                        }
                        self->queued -= self->out.front().size();
                        self->out.pop_front();
                        self->write_next();
                      });
  }

  void close_when_idle() {
    if (!closed || reading || writing || connecting || !socket.is_open()) return;
    std::error_code ignored;
    socket.close(ignored);
  }

  void read_next() {
    reading = true;
    asio::async_read_until(
        socket, in, '\n', [self = shared_from_this()](std::error_code ec, std::size_t n) {
          self->reading = false;
          if (ec || self->closed) {
            self->fail(ec ? ec : asio::error::operation_aborted);
            return self->close_when_idle();
          }
          std::string line(asio::buffers_begin(self->in.data()),
                           asio::buffers_begin(self->in.data()) + static_cast<std::ptrdiff_t>(n));
          self->in.consume(n);
          self->on_line(line);
          if (!self->closed) return self->read_next();
          self->close_when_idle();
        });
  }

  // A daemon that sends what the protocol does not allow (a wrong type in a field, say) ends
  // the connection: its commands fail, nothing throws out of the caller's io_context.
  void on_line(const std::string& line) {
    try {
      handle_line(line);
    } catch (const std::exception& e) {
      set_error(std::string("the daemon broke the protocol: ") + e.what());
      fail(std::make_error_code(std::errc::protocol_error));
    }
  }

  // The peer is not (or not proven to be) the daemon: the connection fails, nothing sent.
  void refuse_peer(const std::string& why) {
    set_error(why);
    const auto refused = std::make_error_code(std::errc::permission_denied);
    if (on_hello) std::exchange(on_hello, {})(refused);
    fail(refused);
  }

  void handle_line(const std::string& line) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) return set_error("the daemon sent a line that is not a JSON object");
    const std::string type = e.value("type", "");
    if (type == "challenge" && !hello_done) {
      // The daemon proves it holds the token first; only then do we prove it too.
      const std::string nonce = e.value("nonce", "");
      const bool proven =
          !auth_token.empty() && client::well_formed_nonce(nonce) &&
          client::same_secret(
              e.value("proof", ""),
              client::auth_proof(auth_token, client::AuthRole::daemon, client_nonce, nonce));
      if (!proven) {
        return refuse_peer(
            "the daemon's proof does not match this token (a wrong token, or something "
            "other than the daemon listening there); nothing was sent");
      }
      send(json{{"type", "auth"},
                {"proof",
                 client::auth_proof(auth_token, client::AuthRole::client, client_nonce, nonce)}});
      auth_sent = true;
      return;
    }
    if (!auth_token.empty() && !auth_sent && !hello_done && type != "error") {
      // A peer that answers without proving it holds the token is not the daemon: nothing
      // queued goes to it.
      return refuse_peer(
          "the peer answered without proving it holds the token: not the daemon; "
          "nothing was sent");
    }
    if (type == "hello") {
      hello_done = true;
      hello_pending = false;
      if (on_hello) std::exchange(on_hello, {})(std::error_code{});
      return release_waiting();
    }
    const json& idj = e.contains("id") ? e["id"] : json();
    const std::string id = idj.is_string() ? idj.get<std::string>() : idj.dump();
    auto it = running.find(id);
    if (type == "error") {
      set_error(e.value("message", ""));
      if (!hello_done) {  // the hello itself was refused (token, peer, limits)
        const std::error_code refused = code_from_daemon(e.value("code", ""));
        if (on_hello) std::exchange(on_hello, {})(refused);
        return fail(refused);
      }
      // An error about one message (a write, a signal) ends nothing.
      if (e.contains("request") || it == running.end()) return;
      ExecResult r = std::move(it->second.result);
      r.error = e.value("message", "");
      if (e.contains("exit_code")) r.exit_code = e["exit_code"].get<int>();
      return finish(it, code_from_daemon(e.value("code", "")), std::move(r));
    }
    if (it == running.end()) return;
    Running& run = it->second;
    if (type == "started") {
      run.result.pid = e.value("pid", 0);
      if (run.exec.on_started) run.exec.on_started(run.result.pid);
    } else if (type == "stdout" || type == "stderr") {
      std::string bytes = e.value("data", "");
      if (e.value("encoding", "") == "base64") {
        auto decoded = base64_decode(bytes);
        if (!decoded) return;
        bytes = std::move(*decoded);
      }
      const auto stream =
          type == "stdout" ? OutputStream::stdout_stream : OutputStream::stderr_stream;
      if (run.exec.on_output) run.exec.on_output(stream, bytes);
      if (run.exec.keep_output) {
        // Kept up to the call's cap, as the daemon would: a broken daemon cannot grow us.
        std::string& kept =
            stream == OutputStream::stdout_stream ? run.result.stdout_data : run.result.stderr_data;
        const std::size_t cap = run.exec.max_output_bytes.value_or(kDefaultMaxOutputBytes);
        const std::size_t room = cap > kept.size() ? cap - kept.size() : 0;
        if (bytes.size() > room) run.result.truncated = true;
        kept.append(bytes, 0, std::min(room, bytes.size()));
      }
    } else if (type == "approval_request") {
      CommandApprovalRequest req{e.value("command", ""), e.value("rule", ""),
                                 e.value("reason", "")};
      const Approval a = run.exec.approve ? run.exec.approve(req) : Approval::deny;
      send({{"type", a == Approval::approve           ? "approve"
                     : a == Approval::approve_session ? "approve_session"
                                                      : "deny"},
            {"id", idj}});
    } else if (type == "exit") {
      std::error_code ec;
      ExecResult r = result_from_json(e, &ec);
      r.stdout_data = std::move(run.result.stdout_data);
      r.stderr_data = std::move(run.result.stderr_data);
      r.truncated = r.truncated || run.result.truncated;  // the daemon's cap, or ours
      if (r.pid == 0) r.pid = run.result.pid;
      if (e.value("cancelled", false) && !ec) ec = asio::error::operation_aborted;
      finish(it, ec, std::move(r));
    }
  }

  void begin_exec(Command command, ServeClient::Exec exec, ServeClient::ExecHandler done) {
    if (cancelled_early.erase(exec.id) != 0) {
      ExecResult r;
      r.error = "cancelled before it was sent";
      return done(asio::error::operation_aborted, std::move(r));
    }
    if (closed || !hello_done) {
      ExecResult r;
      r.error = closed ? "the connection to the daemon is closed" : "not connected";
      return done(asio::error::not_connected, std::move(r));
    }
    if (running.count(exec.id) != 0) {
      ExecResult r;
      r.error = "id " + exec.id + " is already running on this connection";
      return done(make_error_code(errc::config_invalid), std::move(r));
    }
    json m = {{"type", "exec"}, {"id", exec.id}};
    if (command.shell) {
      m["shell"] = *command.shell;
    } else {
      m["argv"] = command.argv;
    }
    if (exec.cwd) m["cwd"] = *exec.cwd;
    if (!exec.env.empty()) m["env"] = exec.env;
    if (exec.timeout) m["timeout_ms"] = exec.timeout->count();
    if (exec.max_output_bytes) m["max_output_bytes"] = *exec.max_output_bytes;
    if (exec.stdin_stream) {
      m["stdin"] = "stream";
    } else if (exec.stdin_data) {
      m["stdin"] = base64_encode(*exec.stdin_data);  // lossless, whatever the bytes
      m["stdin_encoding"] = "base64";
    }
    const std::string key = exec.id;
    running.emplace(key, Running{std::move(exec), ExecResult{}, std::move(done)});
    send(m);
  }

  // Requests made while the hello was on its way go out once it is done (or fail with it).
  void release_waiting() {
    auto waiting = std::move(waiting_for_hello);
    waiting_for_hello.clear();
    for (auto& job : waiting) job();
  }

  void finish(std::unordered_map<std::string, Running>::iterator it, std::error_code ec,
              ExecResult r) {
    auto done = std::move(it->second.done);
    running.erase(it);
    done(ec, std::move(r));
  }

  // The connection is gone: every command still running completes (the daemon kills them).
  void fail(std::error_code ec) {
    if (closed) return;
    closed = true;
    {
      std::lock_guard lock(error_mutex);
      if (last_error.empty() && ec != asio::error::operation_aborted) {
        last_error = "the connection to the daemon: " + ec.message();
      }
    }
    std::error_code ignored;
    socket.shutdown(asio::socket_base::shutdown_both, ignored);  // ends what is in flight
    close_when_idle();
    if (on_hello) std::exchange(on_hello, {})(ec);
    auto all = std::move(running);
    running.clear();
    for (auto& [id, run] : all) {
      ExecResult r = std::move(run.result);
      r.error = "the connection to the daemon ended: " + ec.message();
      run.done(ec == asio::error::eof ? ec : asio::error::operation_aborted, std::move(r));
    }
    hello_pending = false;
    release_waiting();  // they find the connection closed
  }
};

ServeClient::ServeClient(asio::any_io_executor executor)
    : state_(std::make_shared<State>(std::move(executor))) {
  // A daemon that goes away must be an error of the calls, not SIGPIPE for the whole process.
  ignore_sigpipe_unless_handled();
}

ServeClient::~ServeClient() { close(); }

asio::any_io_executor ServeClient::get_executor() const noexcept { return state_->strand; }

std::string ServeClient::error_message() const {
  std::lock_guard lock(state_->error_mutex);
  return state_->last_error;
}

void ServeClient::cancel_by(const std::weak_ptr<State>& state, const std::string& id) {
  auto s = state.lock();
  if (!s) return;
  asio::post(s->strand, [s, id] {
    if (s->running.count(id) != 0) return s->send({{"type", "cancel"}, {"id", id}});
    if (s->cancelled_early.size() < 1024) s->cancelled_early.insert(id);
  });
}

void ServeClient::start_connect(std::string endpoint, std::string token, ConnectHandler done) {
  asio::post(state_->strand, [s = state_, endpoint = std::move(endpoint), token = std::move(token),
                              done = std::move(done)]() mutable {
    if (s->hello_pending || s->hello_done || s->closed) {
      s->set_error("async_connect: this client is already connecting, connected or closed");
      return done(asio::error::already_connected);
    }
    s->on_hello = std::move(done);
    s->hello_pending = true;
    auto after_connect = [s, token](std::error_code ec) {
      s->connecting = false;
      if (ec || s->closed) {
        s->fail(ec ? ec : asio::error::operation_aborted);
        return s->close_when_idle();
      }
      json hello = {{"type", "hello"}, {"version", 1}};
      if (!token.empty()) {  // never sent: the daemon is challenged (mutual_auth.hpp)
        s->auth_token = token;
        s->client_nonce = client::random_nonce();
        hello["nonce"] = s->client_nonce;
      }
      s->send(hello);
      s->read_next();
    };
    client::Endpoint where;
    try {
      where = client::parse_endpoint(endpoint, "endpoint");
    } catch (const Error& e) {
      s->set_error(e.what());
      return std::exchange(s->on_hello, {})(make_error_code(errc::config_invalid));
    }
    if (where.unix_socket) {
      asio::local::stream_protocol::endpoint ep(where.path);
      s->connecting = true;
      s->socket.async_connect(asio::generic::stream_protocol::endpoint(ep), after_connect);
    } else {
      auto resolver = std::make_shared<asio::ip::tcp::resolver>(s->strand);
      resolver->async_resolve(
          where.host, std::to_string(where.port),
          [s, resolver, after_connect](std::error_code ec,
                                       asio::ip::tcp::resolver::results_type results) {
            if (ec || results.empty()) return s->fail(ec ? ec : asio::error::host_not_found);
            if (s->closed) return;
            s->connecting = true;
            s->socket.async_connect(
                asio::generic::stream_protocol::endpoint(results.begin()->endpoint()),
                after_connect);
          });
    }
  });
}

std::string ServeClient::next_id() {
  static std::atomic<std::uint64_t> next{1};
  return "paddock-client-" + std::to_string(next.fetch_add(1));
}

std::string ServeClient::start_exec(Command command, Exec exec, ExecHandler done) {
  if (exec.id.empty()) exec.id = next_id();
  std::string id = exec.id;
  asio::post(state_->strand, [s = state_, command = std::move(command), exec = std::move(exec),
                              done = std::move(done)]() mutable {
    if (!s->closed && !s->hello_done && s->hello_pending) {  // sent once the hello is done
      s->waiting_for_hello.push_back([s, command = std::move(command), exec = std::move(exec),
                                      done = std::move(done)]() mutable {
        s->begin_exec(std::move(command), std::move(exec), std::move(done));
      });
      return;
    }
    s->begin_exec(std::move(command), std::move(exec), std::move(done));
  });
  return id;
}

void ServeClient::write_stdin(const std::string& id, std::string bytes) {
  asio::post(state_->strand, [s = state_, id, bytes = std::move(bytes)] {
    if (s->running.count(id) == 0) return;
    s->send(
        {{"type", "write"}, {"id", id}, {"data", base64_encode(bytes)}, {"encoding", "base64"}});
  });
}

void ServeClient::close_stdin(const std::string& id) {
  asio::post(state_->strand, [s = state_, id] {
    if (s->running.count(id) != 0) s->send({{"type", "close_stdin"}, {"id", id}});
  });
}

void ServeClient::signal(const std::string& id, int signal) {
  asio::post(state_->strand, [s = state_, id, signal] {
    if (s->running.count(id) != 0) s->send({{"type", "signal"}, {"id", id}, {"signal", signal}});
  });
}

void ServeClient::cancel(const std::string& id) { cancel_by(state_, id); }

void ServeClient::close() {
  asio::post(state_->strand, [s = state_] { s->fail(asio::error::operation_aborted); });
}

}  // namespace paddock
