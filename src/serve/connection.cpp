#include "serve/connection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"

namespace paddock::serve {
namespace {

using clock = std::chrono::steady_clock;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kClientReadChunk = 16 * 1024;
// Before its hello with the token, a TCP client may send this much and take this long.
constexpr std::size_t kMaxUnauthenticatedLine = 4096;
constexpr std::chrono::seconds kAuthDeadline{5};
constexpr std::size_t kMaxGather = 64;  // events per write

// A pipe whose end we keep non-blocking (the other end is the command's, blocking as usual).
bool make_pipe(UniqueFd& read_end, UniqueFd& write_end, bool ours_is_read) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  const int ours = ours_is_read ? fds[0] : fds[1];
  return ::fcntl(ours, F_SETFL, ::fcntl(ours, F_GETFL) | O_NONBLOCK) == 0;
}

bool looks_like_http(std::string_view line) {
  for (std::string_view m :
       {"GET ", "POST ", "PUT ", "HEAD ", "OPTIONS ", "DELETE ", "PATCH ", "CONNECT ", "TRACE "}) {
    if (line.substr(0, m.size()) == m) return true;
  }
  return false;
}

// Both strings compared in full whatever their contents (no early exit on a mismatch).
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

struct Connection::Running {
  explicit Running(const asio::any_io_executor& ex) : drain_timer(ex) {}
  nlohmann::json id;
  std::string key;
  std::shared_ptr<ExecControl> control = std::make_shared<ExecControl>();
  asio::cancellation_signal cancel;
  struct Pipe {
    std::optional<asio::posix::stream_descriptor> fd;
    bool waiting = false;  // an async_wait is in flight: close only from its handler
    bool paused = false;
    bool eof = false;
    bool dropped = false;     // the client closed it (close_output)
    std::uint64_t total = 0;  // bytes the command wrote
    std::uint64_t kept = 0;   // bytes sent (the cap cuts the rest)
  } out, err;
  std::size_t cap = 0;
  std::uint64_t seq = 0;
  std::optional<asio::posix::stream_descriptor> in;
  std::deque<std::string> stdin_chunks;
  std::size_t stdin_queued = 0;
  bool stdin_writing = false;
  bool stdin_close = false;

  std::function<void(Approval)> respond;
  bool cancelled = false;
  bool started = false;
  bool finished = false;
  bool final_sent = false;     // its one exit or error went out already (a closing daemon's)
  bool drain_expired = false;  // the command ended exit_drain ago: empty pipes are done
  int pending_signal = 0;      // a signal sent before the command started
  std::string approval_key;    // what approve_session remembers, for this connection only
  std::optional<std::pair<std::error_code, ExecResult>> result;
  clock::time_point requested = clock::now();
  asio::steady_timer drain_timer;

  Pipe& pipe(Stream s) { return s == Stream::out ? out : err; }
};

Connection::Connection(std::shared_ptr<Shared> shared,
                       asio::generic::stream_protocol::socket socket, bool authenticated,
                       std::string peer, std::optional<uid_t> peer_uid)
    : shared_(std::move(shared)),
      strand_(asio::make_strand(socket.get_executor())),
      socket_(std::move(socket)),
      write_timer_(strand_),
      peer_(std::move(peer)),
      peer_uid_(peer_uid),
      authenticated_(authenticated),
      read_buffer_(kClientReadChunk),
      tokens_(shared_->limits.exec_per_second),
      refilled_(clock::now()) {
  shared_->metrics.connections.fetch_add(1);
  shared_->metrics.connections_total.fetch_add(1);
  if (!authenticated_) shared_->unauthenticated.fetch_add(1);
}

Connection::~Connection() {
  if (!authenticated_) shared_->unauthenticated.fetch_sub(1);
  shared_->metrics.connections.fetch_sub(1);
  shared_->metrics.queued_bytes.fetch_sub(static_cast<std::int64_t>(queued_bytes_));
}

void Connection::start() {
  asio::post(strand_, [self = shared_from_this()] {
    self->log_line("info", {{"event", "connected"}});
    if (!self->authenticated_) {
      self->write_timer_.expires_after(kAuthDeadline);
      self->write_timer_.async_wait(asio::bind_executor(self->strand_, [self](std::error_code ec) {
        if (ec || self->authenticated_ || self->closed_) return;
        self->shared_->metrics.connections_refused.fetch_add(1);
        self->do_close("no hello with the token within " + std::to_string(kAuthDeadline.count()) +
                       " s");
      }));
    }
    self->read_more();
  });
}

void Connection::log_line(const char* level, nlohmann::json fields) {
  if (!shared_->log) return;
  fields["peer"] = peer_;
  shared_->log(level, fields);
}

// ---- the client's lines ----

void Connection::read_more() {
  if (closed_ || reading_ || read_paused_ || stdin_was_full_) return;
  reading_ = true;
  socket_.async_read_some(
      asio::buffer(read_buffer_),
      asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, std::size_t n) {
        self->reading_ = false;
        if (ec) {
          if (!self->closed_) {
            self->do_close(ec == asio::error::eof ? "the client closed the connection"
                                                  : "reading from the client: " + ec.message());
          }
          return;
        }
        self->on_read(n);
      }));
}

void Connection::on_read(std::size_t n) {
  std::string_view data(read_buffer_.data(), n);
  while (!data.empty() && !closed_ && !closing_after_flush_) {
    const auto nl = data.find('\n');
    if (skipping_) {
      if (nl == std::string_view::npos) return read_more();
      skipping_ = false;
      data.remove_prefix(nl + 1);
      continue;
    }
    if (nl == std::string_view::npos) {
      input_.append(data);
      data = {};
    } else {
      input_.append(data.substr(0, nl));
      data.remove_prefix(nl + 1);
    }
    const std::size_t line_limit =
        authenticated_ ? shared_->limits.max_line_bytes : kMaxUnauthenticatedLine;
    if (input_.size() > line_limit && !authenticated_) {
      shared_->metrics.connections_refused.fetch_add(1);
      do_close("an unauthenticated client sent more than " +
               std::to_string(kMaxUnauthenticatedLine) + " bytes without a hello");
      return;
    }
    if (input_.size() > line_limit) {
      shared_->metrics.protocol_errors.fetch_add(1);
      send(error_event(nullptr, "E_CONFIG_INVALID",
                       "line longer than " + std::to_string(shared_->limits.max_line_bytes) +
                           " bytes: dropped"));
      input_.clear();
      skipping_ = nl == std::string_view::npos;
      continue;
    }
    if (nl == std::string_view::npos) break;
    std::string line = std::move(input_);
    input_.clear();
    handle_line(line);
  }
  read_more();
}

void Connection::handle_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  const bool first = std::exchange(first_line_, false);
  if (first && looks_like_http(line)) {
    // A browser or an HTTP client on the protocol port (DNS rebinding, a confused proxy):
    // answered as HTTP so it stops, never read as commands.
    shared_->metrics.connections_refused.fetch_add(1);
    send(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
        "paddock serve speaks JSON lines, not HTTP (the HTTP endpoints are on --http)\n");
    closing_after_flush_ = true;
    close_reason_ = "an HTTP request on the protocol port";
    return;
  }
  auto parsed = parse_request(line, shared_->rules);
  if (auto* e = std::get_if<ProtocolError>(&parsed)) {
    shared_->metrics.protocol_errors.fetch_add(1);
    send(error_event(e->id, e->code, e->message));
    if (!authenticated_) {
      closing_after_flush_ = true;
      close_reason_ = "an unauthenticated client sent a bad line";
    }
    return;
  }
  Request& r = std::get<Request>(parsed);
  if (!authenticated_) {
    if (r.type != MessageType::hello || !r.token || !shared_->token ||
        !same_secret(*r.token, *shared_->token)) {
      shared_->metrics.connections_refused.fetch_add(1);
      send(error_event(r.id, "E_CONFIG_INVALID",
                       "authentication required: the first line must be {\"type\":\"hello\","
                       "\"version\":1,\"token\":\"...\"} with this daemon's token"));
      closing_after_flush_ = true;
      close_reason_ = "no valid token";
      return;
    }
    authenticated_ = true;
    shared_->unauthenticated.fetch_sub(1);
    if (writing_count_ == 0) write_timer_.cancel();  // the auth deadline
  }
  dispatch(r);
}

void Connection::dispatch(Request& r) {
  auto found = running_.find(r.key);
  const char* kNames[] = {"hello",           "exec",   "write",  "close_stdin",
                          "close_output",    "signal", "cancel", "approve",
                          "approve_session", "deny",   "ping"};
  const std::string_view request = kNames[static_cast<int>(r.type)];
  // An answer to this message only: it ends nothing (protocol.hpp, error_event).
  auto refuse = [&](std::string_view message) {
    send(error_event(r.id, "E_CONFIG_INVALID", message, request));
  };
  auto unknown = [&] { refuse("no command with this id on this connection"); };
  switch (r.type) {
    case MessageType::hello:
      send(hello_event(shared_->capabilities));
      return;
    case MessageType::ping:
      send(pong_event(r.id));
      return;
    case MessageType::exec:
      if (found != running_.end()) {
        refuse("duplicate id: a command with it is running");
        return;
      }
      exec(r);
      return;
    default:
      break;
  }
  if (found == running_.end()) return unknown();
  const std::shared_ptr<Running> run = found->second;
  switch (r.type) {
    case MessageType::write:
      if (!run->in || run->stdin_close) {
        refuse(run->in ? "stdin is closed" : "stdin is not streamed for this id");
        return;
      }
      run->stdin_queued += r.data.size();
      stdin_queued_ += r.data.size();
      run->stdin_chunks.push_back(std::move(r.data));
      write_stdin(run);  // which holds this client's lines past the bound (release_stdin)
      return;
    case MessageType::close_stdin:
      if (!run->in) return refuse("stdin is not streamed for this id");
      run->stdin_close = true;
      write_stdin(run);
      return;
    case MessageType::signal:
      if (run->control->signal(r.signal)) return;
      if (!run->started && !run->result) {
        run->pending_signal = r.signal;  // delivered when it starts (it may wait for approval)
        return;
      }
      refuse("the command is not running any more");
      return;
    case MessageType::close_output: {
      // The reader went away (`... | head -1`): close our end, so the command's next write
      // fails with EPIPE/SIGPIPE as it would without paddock.
      Running::Pipe& p =
          run->pipe(r.stream == OutputStream::stdout_stream ? Stream::out : Stream::err);
      p.dropped = true;
      if (p.fd && p.waiting) {
        p.fd->cancel();  // its handler closes it
      } else if (p.fd) {
        std::error_code ignored;
        p.fd->close(ignored);
        p.fd.reset();
        p.eof = true;
        maybe_finish(run);
      }
      return;
    }
    case MessageType::cancel:
      run->cancelled = true;
      run->cancel.emit(asio::cancellation_type::terminal);
      return;
    case MessageType::approve:
    case MessageType::approve_session:
    case MessageType::deny: {
      if (!run->respond) return refuse("no approval is pending for this id");
      auto respond = std::move(run->respond);
      run->respond = nullptr;
      if (r.type == MessageType::approve_session) approved_for_session_.insert(run->approval_key);
      // Never the Manager's own session memory: it is shared by every client of the daemon.
      respond(r.type == MessageType::deny ? Approval::deny : Approval::approve);
      return;
    }
    default:
      return;
  }
}

// ---- running a command ----

std::optional<std::string> Connection::cwd_refusal(ExecRequest& req) const {
  const auto& roots = shared_->roots;
  if (roots.empty()) {
    // Without roots the daemon's own user (or root) chooses freely: they could run anything
    // as that user anyway. Anyone else would get the daemon's uid's writable directories.
    if (peer_uid_ && (*peer_uid_ == ::geteuid() || *peer_uid_ == 0)) return std::nullopt;
    return "cwd: this daemon has no --root, so only its own user may choose where commands "
           "run (start it with --root DIR for other users and TCP clients)";
  }
  if (!req.cwd || req.cwd->empty() || req.cwd->front() != '/') {
    return "cwd: an absolute working directory under one of the daemon's --root directories "
           "is required";
  }
  char resolved[PATH_MAX];
  if (::realpath(req.cwd->c_str(), resolved) == nullptr) {
    return "cwd: " + *req.cwd + ": " + std::strerror(errno);
  }
  const std::string path = resolved;
  for (const auto& root : roots) {
    if (path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                         (root == "/" || path[root.size()] == '/'))) {
      req.cwd = path;  // the path checked, not the spelling (its links resolved once, here)
      return std::nullopt;
    }
  }
  return "cwd: " + path + " is outside the daemon's --root directories";
}

void Connection::exec(Request& r) {
  const ServeLimits& limits = shared_->limits;
  if (shared_->draining.load()) {
    send(error_event(r.id, "E_MANAGER_CLOSED", "the daemon is draining: it starts nothing new"));
    return;
  }
  // The rate limiter: a bucket of exec_per_second, refilled continuously.
  const auto now = clock::now();
  tokens_ = std::min(
      limits.exec_per_second,
      tokens_ + limits.exec_per_second * std::chrono::duration<double>(now - refilled_).count());
  refilled_ = now;
  std::string overloaded;
  if (tokens_ < 1) {
    overloaded = "more than " + std::to_string(static_cast<long>(limits.exec_per_second)) +
                 " commands per second on this connection";
  } else if (running_.size() >= limits.max_per_connection) {
    overloaded =
        std::to_string(limits.max_per_connection) + " commands already run on this connection";
  } else if (shared_->commands.fetch_add(1) >= limits.max_commands) {
    shared_->commands.fetch_sub(1);
    overloaded = std::to_string(limits.max_commands) + " commands already run in this daemon";
  }
  if (!overloaded.empty()) {
    shared_->metrics.overloaded.fetch_add(1);
    send(error_event(r.id, "E_OVERLOADED", overloaded + "; retry later"));
    return;
  }
  tokens_ -= 1;

  auto run = std::make_shared<Running>(strand_);
  run->id = r.id;
  run->key = r.key;
  ExecRequest& req = r.exec;
  if (auto why = cwd_refusal(req)) {
    shared_->commands.fetch_sub(1);
    send(error_event(r.id, "E_CONFIG_INVALID", *why));
    return;
  }
  {
    // Everything that makes the command what it is: approved for the session means this.
    nlohmann::json key = {
        {"argv", req.command.argv},
        {"shell", req.command.shell ? *req.command.shell : std::string()},
        {"cwd", req.cwd ? *req.cwd : std::string()},
        {"env", req.env},
        {"policy",
         {req.policy.allow_write, req.policy.deny_read, req.policy.deny_write,
          req.policy.network ? to_string(*req.policy.network) : "",
          req.policy.allowed_domains ? *req.policy.allowed_domains : std::vector<std::string>{"*"},
          req.policy.denied_domains, req.policy.shell.value_or("")}}};
    run->approval_key = key.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }
  UniqueFd out_r, out_w, err_r, err_w, in_r, in_w;
  if (!make_pipe(out_r, out_w, true) || !make_pipe(err_r, err_w, true) ||
      (req.stdin_stream && !make_pipe(in_r, in_w, false))) {
    shared_->commands.fetch_sub(1);
    send(error_event(r.id, "E_SPAWN_FAILED", std::string("pipe: ") + std::strerror(errno)));
    return;
  }
  ExecOptions o;
  o.cwd = req.cwd;
  o.env = std::move(req.env);
  o.timeout = req.timeout;
  o.policy = std::move(req.policy);
  o.keep_output = false;
  o.stdout_fd = out_w.get();
  o.stderr_fd = err_w.get();
  if (req.stdin_stream) {
    o.stdin_fd = in_r.get();
  } else if (req.stdin_data) {
    o.stdin_data = std::move(req.stdin_data);
  }
  run->cap = req.max_output_bytes.value_or(shared_->default_max_output);
  o.control = run->control;
  std::weak_ptr<Connection> weak = weak_from_this();
  std::weak_ptr<Running> weak_run = run;
  o.on_start = [weak, weak_run, strand = strand_](const StartInfo& info) {
    asio::post(strand, [weak, weak_run, info] {
      auto self = weak.lock();
      auto rn = weak_run.lock();
      if (!self || !rn || self->closed_) return;
      rn->started = true;
      if (rn->pending_signal != 0) rn->control->signal(std::exchange(rn->pending_signal, 0));
      self->shared_->metrics.started[static_cast<std::size_t>(info.decision)].fetch_add(1);
      self->shared_->metrics.observe_spawn(
          std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - rn->requested));
      self->send(started_event(rn->id, info));
    });
  };
  o.approve = [weak, weak_run, strand = strand_](const CommandApprovalRequest& request,
                                                 std::function<void(Approval)> respond) {
    asio::post(strand, [weak, weak_run, request, respond = std::move(respond)]() mutable {
      auto self = weak.lock();
      auto rn = weak_run.lock();
      if (!self || !rn || self->closed_ || self->shared_->draining) return respond(Approval::deny);
      // approve_session is this connection's: another client never inherits it.
      if (self->approved_for_session_.count(rn->approval_key) != 0) {
        return respond(Approval::approve);
      }
      rn->respond = std::move(respond);
      rn->requested = clock::now();  // the spawn latency excludes the wait for a person
      self->send(approval_event(rn->id, request));
    });
  };
  running_[run->key] = run;
  running_count_.store(running_.size());
  shared_->metrics.in_flight.fetch_add(1);
  shared_->manager.async_exec(
      std::move(req.command), std::move(o),
      asio::bind_cancellation_slot(
          run->cancel.slot(),
          asio::bind_executor(
              strand_, [self = shared_from_this(), run](std::error_code ec, ExecResult result) {
                self->on_done(run, ec, std::move(result));
              })));
  // The command has its copies (ExecOptions: ours are closed once the call is initiated).
  out_w.reset();
  err_w.reset();
  in_r.reset();
  run->out.fd.emplace(strand_, out_r.release());
  run->err.fd.emplace(strand_, err_r.release());
  if (req.stdin_stream) run->in.emplace(strand_, in_w.release());
  wait_output(run, Stream::out);
  wait_output(run, Stream::err);
}

void Connection::wait_output(const std::shared_ptr<Running>& r, Stream s) {
  Running::Pipe& p = r->pipe(s);
  if (!p.fd || p.waiting || p.eof) return;
  // Backpressure: past the high-water mark the pipe is not read (the command blocks in
  // write(2)), unless its output is past the cap anyway (then it is drained and dropped).
  if (queued_bytes_ >= shared_->limits.high_water_bytes && p.kept < r->cap && !closed_) {
    if (!p.paused) {
      p.paused = true;
      shared_->metrics.backpressure_pauses.fetch_add(1);
      paused_.emplace_back(r, s);
    }
    return;
  }
  p.paused = false;
  p.waiting = true;
  if (r->drain_expired) {  // read what is there now; nothing there is the end
    asio::post(strand_, [self = shared_from_this(), r, s] { self->on_readable(r, s, {}); });
    return;
  }
  p.fd->async_wait(
      asio::posix::stream_descriptor::wait_read,
      asio::bind_executor(strand_, [self = shared_from_this(), r, s](std::error_code ec) {
        self->on_readable(r, s, ec);
      }));
}

void Connection::on_readable(const std::shared_ptr<Running>& r, Stream s, std::error_code ec) {
  Running::Pipe& p = r->pipe(s);
  p.waiting = false;
  if (ec == asio::error::operation_aborted && r->drain_expired && !p.dropped) {
    ec = {};  // read what is left
  }
  if (p.dropped) p.eof = true;  // the client closed it (a wait may have completed meanwhile)
  if (!ec && !p.eof) {
    if (output_buffer_.empty()) output_buffer_.resize(kReadChunk);  // with the first command
    const ssize_t n = ::read(p.fd->native_handle(), output_buffer_.data(), output_buffer_.size());
    if (n > 0) {
      const auto bytes = static_cast<std::uint64_t>(n);
      p.total += bytes;
      if (p.kept < r->cap && !closed_) {
        const std::size_t keep =
            static_cast<std::size_t>(std::min<std::uint64_t>(bytes, r->cap - p.kept));
        p.kept += keep;
        shared_->metrics.output_bytes.fetch_add(keep);
        send(output_event(
            r->id, s == Stream::out ? OutputStream::stdout_stream : OutputStream::stderr_stream,
            ++r->seq, std::string_view(output_buffer_.data(), keep)));
      }
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR) || r->drain_expired) {
      p.eof = true;
    }
  } else {
    p.eof = true;  // cancelled: the drain deadline, or the connection is closing
  }
  if (p.eof) {
    std::error_code ignored;
    p.fd->close(ignored);  // no operation is in flight on it now
    p.fd.reset();
    return maybe_finish(r);
  }
  wait_output(r, s);
}

void Connection::resume_paused() {
  if (queued_bytes_ >= shared_->limits.high_water_bytes / 2 && !closed_) return;
  auto paused = std::move(paused_);
  paused_.clear();
  for (auto& [weak, s] : paused) {
    if (auto r = weak.lock()) {
      r->pipe(s).paused = false;
      wait_output(r, s);
    }
  }
}

// Backpressure on stdin, for the connection as a whole: past max_stdin_queued its lines wait
// in its socket (the kernel blocks its writes) until its commands have read half of it.
void Connection::release_stdin(const std::shared_ptr<Running>&) {
  const auto limit = shared_->limits.max_stdin_queued;
  if (!stdin_was_full_ && stdin_queued_ > limit) {
    stdin_was_full_ = true;
  } else if (stdin_was_full_ && stdin_queued_ <= limit / 2) {
    stdin_was_full_ = false;
    read_more();
  }
}

void Connection::write_stdin(const std::shared_ptr<Running>& r) {
  release_stdin(r);
  if (!r->in || r->stdin_writing) return;
  if (r->stdin_chunks.empty()) {
    if (r->stdin_close) close_stdin(r);
    return;
  }
  r->stdin_writing = true;
  asio::async_write(
      *r->in, asio::buffer(r->stdin_chunks.front()),
      asio::bind_executor(strand_, [self = shared_from_this(), r](std::error_code ec, std::size_t) {
        r->stdin_writing = false;
        if (!r->stdin_chunks.empty()) {
          r->stdin_queued -= r->stdin_chunks.front().size();
          self->stdin_queued_ -= r->stdin_chunks.front().size();
          r->stdin_chunks.pop_front();
        }
        if (ec) {
          // EPIPE: the command stopped reading; what is left is dropped.
          self->stdin_queued_ -= r->stdin_queued;
          r->stdin_chunks.clear();
          r->stdin_queued = 0;
          r->stdin_close = true;
        }
        self->write_stdin(r);
      }));
}

void Connection::close_stdin(const std::shared_ptr<Running>& r) {
  if (!r->in || r->stdin_writing) return;  // the write's handler comes back here
  std::error_code ignored;
  r->in->close(ignored);
  r->in.reset();
  stdin_queued_ -= r->stdin_queued;
  r->stdin_chunks.clear();
  r->stdin_queued = 0;
  release_stdin(r);
}

void Connection::on_done(const std::shared_ptr<Running>& r, std::error_code ec, ExecResult result) {
  r->result.emplace(ec, std::move(result));
  if (r->respond) r->respond = nullptr;  // answered by the Manager's deadline or a cancel
  close_stdin(r);
  if (!r->out.fd && !r->err.fd) return maybe_finish(r);
  // What the command's leftovers still write gets a bounded time (a daemonized grandchild on
  // the host could hold the pipe forever; in a sandbox everything died with its init).
  r->drain_timer.expires_after(shared_->limits.exit_drain);
  r->drain_timer.async_wait(asio::bind_executor(strand_, [r](std::error_code timer_ec) {
    if (timer_ec) return;
    // From now on an empty pipe is at its end (wait_output, on_readable); one a slow client
    // paused keeps its bytes until they are sent.
    r->drain_expired = true;
    for (auto* p : {&r->out, &r->err}) {
      if (p->fd && p->waiting) p->fd->cancel();  // its handler reads what is left
    }
  }));
  maybe_finish(r);
}

void Connection::maybe_finish(const std::shared_ptr<Running>& r) {
  if (r->finished || !r->result || r->out.fd || r->err.fd) return;
  r->finished = true;
  r->drain_timer.cancel();
  auto& [ec, result] = *r->result;
  result.stdout_bytes_total = r->out.total;
  result.stderr_bytes_total = r->err.total;
  result.truncated = r->out.total > r->out.kept || r->err.total > r->err.kept;
  shared_->metrics.count_finish(result, ec, r->cancelled);
  shared_->metrics.in_flight.fetch_sub(1);
  shared_->commands.fetch_sub(1);
  if (!closed_ && !r->final_sent) {
    if (ec && result.pid == 0 && ec != errc::timeout && !r->cancelled) {
      // Nothing ran (refused, bad request, set-up failure): an error event, with what the
      // classifier said when it said something.
      nlohmann::json e = nlohmann::json::parse(
          error_event(r->id, code_string(ec), result.error.empty() ? ec.message() : result.error));
      if (result.exit_code >= 0) e["exit_code"] = result.exit_code;  // 126, 127: as locally
      if (!result.rule.empty()) {
        e["decision"] = to_string(result.decision);
        e["rule"] = result.rule;
        e["reason"] = result.reason;
      }
      if (r->cancelled) e["cancelled"] = true;
      send(e.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n");
    } else {
      // A cancel is said by `cancelled`, not as a failure of paddock's.
      const bool aborted = r->cancelled && ec == asio::error::operation_aborted;
      send(exit_event(r->id, result, aborted ? std::error_code() : ec, r->cancelled));
    }
  }
  log_line(ec && ec != errc::timeout ? "warn" : "info",
           {{"event", "command"},
            {"id", r->id},
            {"decision", to_string(result.decision)},
            {"rule", result.rule},
            {"exit_code", result.exit_code},
            {"signal", result.signal},
            {"error_code", ec ? std::string(code_string(ec)) : std::string()},
            {"cancelled", r->cancelled},
            {"duration_ms", result.duration.count()},
            {"stdout_bytes", r->out.total},
            {"stderr_bytes", r->err.total}});
  running_.erase(r->key);
  running_count_.store(running_.size());
  if (closed_ && running_.empty()) do_close(close_reason_);
}

// ---- the send queue ----

void Connection::send(std::string line) {
  if (closed_) return;
  queued_bytes_ += line.size();
  shared_->metrics.queued_bytes.fetch_add(static_cast<std::int64_t>(line.size()));
  queue_.push_back(std::move(line));
  if (queued_bytes_ > shared_->limits.hard_limit_bytes) read_paused_ = true;
  write_more();
}

void Connection::write_more() {
  if (writing_count_ != 0 || queue_.empty() || closed_) return;
  std::vector<asio::const_buffer> buffers;
  for (std::size_t i = 0; i < queue_.size() && i < kMaxGather; ++i) {
    buffers.push_back(asio::buffer(queue_[i]));
  }
  writing_count_ = buffers.size();
  arm_write_deadline();
  asio::async_write(
      socket_, buffers,
      asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, std::size_t) {
        const std::size_t count = self->writing_count_;
        self->writing_count_ = 0;
        ++self->write_generation_;
        self->write_timer_.cancel();
        if (ec) {
          if (!self->closed_) self->do_close("writing to the client: " + ec.message());
          return;
        }
        self->on_written(count);
      }));
}

void Connection::arm_write_deadline() {
  const std::uint64_t generation = write_generation_;
  write_timer_.expires_after(shared_->limits.write_timeout);
  write_timer_.async_wait(
      asio::bind_executor(strand_, [self = shared_from_this(), generation](std::error_code ec) {
        if (ec || generation != self->write_generation_ || self->closed_) return;
        self->do_close("the client read nothing for " +
                       std::to_string(self->shared_->limits.write_timeout.count()) +
                       " ms: dropped, its commands killed");
      }));
}

void Connection::on_written(std::size_t count) {
  for (std::size_t i = 0; i < count && !queue_.empty(); ++i) {
    queued_bytes_ -= queue_.front().size();
    shared_->metrics.queued_bytes.fetch_sub(static_cast<std::int64_t>(queue_.front().size()));
    queue_.pop_front();
  }
  if (queue_.empty() && closing_after_flush_) {
    do_close(close_reason_);
    return;
  }
  resume_paused();
  if (read_paused_ && queued_bytes_ <= shared_->limits.hard_limit_bytes / 2) {
    read_paused_ = false;
    read_more();
  }
  write_more();
}

// ---- closing ----

void Connection::close(std::string why) {
  asio::post(strand_, [self = shared_from_this(), why = std::move(why)] {
    if (self->closed_) return;
    // Exactly one outcome per command, also now: an error for each still running, sent
    // before the connection goes (its commands are killed by do_close).
    bool said = false;
    for (auto& [key, r] : self->running_) {
      if (r->final_sent) continue;
      r->final_sent = true;
      self->send(error_event(r->id, "E_MANAGER_CLOSED", why));
      said = true;
    }
    if (!said || self->queue_.empty()) return self->do_close(why);
    for (auto& [key, r] : self->running_) {
      r->cancelled = true;
      r->cancel.emit(asio::cancellation_type::terminal);
    }
    self->closing_after_flush_ = true;
    self->close_reason_ = why;
  });
}

void Connection::deny_pending_approvals() {
  asio::post(strand_, [self = shared_from_this()] {
    for (auto& [key, r] : self->running_) {
      if (!r->respond) continue;
      auto respond = std::move(r->respond);
      r->respond = nullptr;
      respond(Approval::deny);
    }
  });
}

void Connection::do_close(const std::string& why) {
  if (!closed_) {
    closed_ = true;
    close_reason_ = why;
    log_line("info",
             {{"event", "disconnected"}, {"reason", why}, {"commands_killed", running_.size()}});
    std::error_code ignored;
    // Shut down and cancelled, closed by the destructor: never a close under an operation
    // in flight (proxy/README.md says why).
    socket_.shutdown(asio::socket_base::shutdown_both, ignored);
    socket_.cancel(ignored);
    write_timer_.cancel();
    for (auto& [key, r] : running_) {
      r->cancelled = true;
      r->cancel.emit(asio::cancellation_type::terminal);
      if (r->respond) {
        auto respond = std::move(r->respond);
        r->respond = nullptr;
        respond(Approval::deny);
      }
      stdin_queued_ -= r->stdin_queued;
      r->stdin_queued = 0;
      r->stdin_chunks.clear();
      r->stdin_close = true;
      close_stdin(r);
    }
    for (auto& [weak, s] : paused_) {
      if (auto r = weak.lock()) wait_output(r, s);  // drained and dropped until EOF
    }
    paused_.clear();
  }
}

}  // namespace paddock::serve
