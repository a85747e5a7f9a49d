#include "serve/connection.hpp"

#include <fcntl.h>
#include <signal.h>
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
#include "client/mutual_auth.hpp"
#include "paddock/errors.hpp"
#include "serve/running_command.hpp"

namespace paddock::serve {
namespace {

using detail::clock;
using detail::kClientReadChunk;
using detail::kMaxGather;
using detail::kMaxUnauthenticatedLine;

bool looks_like_http(std::string_view line) {
  for (std::string_view m :
       {"GET ", "POST ", "PUT ", "HEAD ", "OPTIONS ", "DELETE ", "PATCH ", "CONNECT ", "TRACE "}) {
    if (line.substr(0, m.size()) == m) return true;
  }
  return false;
}

}  // namespace

Connection::Connection(std::shared_ptr<Shared> shared,
                       asio::generic::stream_protocol::socket socket, bool authenticated,
                       std::string peer, std::optional<uid_t> peer_uid,
                       std::optional<ExecOptions::ProcessRef> peer_process)
    : shared_(std::move(shared)),
      strand_(asio::make_strand(socket.get_executor())),
      socket_(std::move(socket)),
      write_timer_(strand_),
      auth_timer_(strand_),
      peer_(std::move(peer)),
      peer_uid_(peer_uid),
      peer_process_(peer_process),
      authenticated_(authenticated),
      read_buffer_(kClientReadChunk),
      tokens_(shared_->limits.exec_per_second),
      refilled_(clock::now()) {
  note_peer_namespaces();
  shared_->metrics.connections.fetch_add(1);
  shared_->metrics.connections_total.fetch_add(1);
  if (!authenticated_) {
    shared_->unauthenticated.fetch_add(1);
    std::lock_guard lock(shared_->mutex);
    ++shared_->unauthenticated_by_peer[peer_];
  }
}

void Connection::no_longer_unauthenticated() {
  shared_->unauthenticated.fetch_sub(1);
  std::lock_guard lock(shared_->mutex);
  auto it = shared_->unauthenticated_by_peer.find(peer_);
  if (it != shared_->unauthenticated_by_peer.end() && --it->second == 0)
    shared_->unauthenticated_by_peer.erase(it);
}

void Connection::evict_unauthenticated(std::string why) {
  asio::post(strand_, [self = shared_from_this(), why = std::move(why)] {
    if (self->authenticated_ || self->closed_) return;
    self->shared_->metrics.connections_refused.fetch_add(1);
    self->do_close(why);
  });
}

Connection::~Connection() {
  if (!authenticated_) no_longer_unauthenticated();
  shared_->metrics.connections.fetch_sub(1);
  shared_->metrics.queued_bytes.fetch_sub(static_cast<std::int64_t>(queued_bytes_));
}

void Connection::start() {
  asio::post(strand_, [self = shared_from_this()] {
    self->log_line("info", {{"event", "connected"}});
    if (!self->authenticated_) {
      self->auth_timer_.expires_after(self->shared_->limits.auth_deadline);
      self->auth_timer_.async_wait(asio::bind_executor(self->strand_, [self](std::error_code ec) {
        if (ec || self->authenticated_ || self->closed_) return;
        self->shared_->metrics.connections_refused.fetch_add(1);
        self->do_close("no authentication within " +
                       std::to_string(self->shared_->limits.auth_deadline.count()) + " ms");
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
  if (peer_uid_) return receive_more();  // a unix peer
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
  const std::uint64_t start = received_bytes_;
  received_bytes_ += n;
  // The stream offset of what is left of `data`; descriptors that came before it belonged to
  // a line handled (or dropped) by now.
  auto done_up_to_here = [&] {
    line_end_ = start + (n - data.size());
    line_begin_ = line_end_;
    while (!received_fds_.empty() && received_fds_.front().end <= line_end_) {
      received_fds_.pop_front();
    }
  };
  while (!data.empty() && !closed_ && !closing_after_flush_) {
    const auto nl = data.find('\n');
    if (skipping_) {
      if (nl == std::string_view::npos) return read_more();
      skipping_ = false;
      data.remove_prefix(nl + 1);
      done_up_to_here();
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
    if (input_.size() > line_limit && shared_->rules.keyed_lines) {
      shared_->metrics.protocol_errors.fetch_add(1);
      do_close("a line longer than " + std::to_string(line_limit) + " bytes on a keyed connection");
      return;
    }
    if (input_.size() > line_limit) {
      shared_->metrics.protocol_errors.fetch_add(1);
      send(error_event(nullptr, "E_CONFIG_INVALID",
                       "line longer than " + std::to_string(shared_->limits.max_line_bytes) +
                           " bytes: dropped"));
      input_.clear();
      skipping_ = nl == std::string_view::npos;
      if (!skipping_) done_up_to_here();
      continue;
    }
    if (nl == std::string_view::npos) break;
    std::string line = std::move(input_);
    input_.clear();
    line_end_ = start + (n - data.size());
    handle_line(line);
    done_up_to_here();
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
  if (auto* e = std::get_if<ProtocolError>(&parsed); e != nullptr && shared_->rules.keyed_lines) {
    // Its client writes no bad lines: one is someone else's, or a line of the client's that
    // someone else's bytes were glued to (its cancel, its deny lost). Not answered, so no
    // error naming one of its ids reads as that command's outcome.
    shared_->metrics.protocol_errors.fetch_add(1);
    return do_close("a line that is not the protocol's on a keyed connection: " + e->message);
  }
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
  if (shared_->rules.keyed_lines) {
    // The first line is the hello, answered with this connection's key; every line after it
    // carries the key. One that does not was not written by the client (RequestRules).
    const bool first_hello = line_key_.empty() && r.type == MessageType::hello;
    if (first_hello) {
      line_key_ = client::random_nonce();
      auto caps = shared_->capabilities;
      caps["conn_key"] = line_key_;
      send(hello_event(caps));
      return;
    }
    if (line_key_.empty() || !r.conn_key || !client::same_secret(*r.conn_key, line_key_)) {
      shared_->metrics.connections_refused.fetch_add(1);
      do_close(line_key_.empty() ? "the first line was not a hello"
                                 : "a line without this connection's key: not written by its "
                                   "client (a connection handed to a command?); its commands "
                                   "are stopped");
      return;
    }
  }
  if (!authenticated_) {
    // Mutual proof (client/mutual_auth.hpp): the daemon proves it holds the token before the
    // client proves it; the token itself never crosses the connection.
    const auto refuse = [&](const std::string& why, const std::string& message) {
      shared_->metrics.connections_refused.fetch_add(1);
      send(error_event(r.id, "E_CONFIG_INVALID", message));
      closing_after_flush_ = true;
      close_reason_ = why;
    };
    if (!client_nonce_) {
      if (r.type != MessageType::hello || !r.nonce || !client::well_formed_nonce(*r.nonce) ||
          !shared_->token) {
        return refuse(r.token ? "a token sent in the clear" : "no hello with a nonce",
                      std::string(r.token ? "the token is never sent: " : "") +
                          "authentication required: the first line must be "
                          "{\"type\":\"hello\",\"version\":1,\"nonce\":\"<64 hex digits>\"}, "
                          "then answer the daemon's challenge with {\"type\":\"auth\","
                          "\"proof\":...} (see docs/serve-protocol.md)");
      }
      client_nonce_ = *r.nonce;
      server_nonce_ = client::random_nonce();
      hello_ = r;  // answered once the client has proven itself
      send(challenge_event(server_nonce_,
                           client::auth_proof(*shared_->token, client::AuthRole::daemon,
                                              *client_nonce_, server_nonce_)));
      return;
    }
    const std::string expected = client::auth_proof(*shared_->token, client::AuthRole::client,
                                                    *client_nonce_, server_nonce_);
    if (r.type != MessageType::auth || !r.proof || !client::same_secret(*r.proof, expected)) {
      return refuse("no valid proof", "authentication failed: the proof does not match");
    }
    authenticated_ = true;
    no_longer_unauthenticated();
    auth_timer_.cancel();
    dispatch(*hello_);
    hello_.reset();
    return;
  }
  dispatch(r);
}

void Connection::dispatch(Request& r) {
  auto found = running_.find(r.key);
  const char* kNames[] = {"hello",  "exec",   "write",        "close_stdin",     "close_output",
                          "signal", "cancel", "approve",      "approve_session", "deny",
                          "ping",   "auth",   "session_open", "session_close"};
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
    case MessageType::auth:
      refuse("this connection needs no proof (already authenticated, or a unix socket)");
      return;
    case MessageType::session_open:
      open_session(r);
      return;
    case MessageType::session_close:
      close_session(r);
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
      if (self->shared_->clients_own_changes) r->control->leave_changes();
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
    auth_timer_.cancel();
    for (auto& [key, r] : running_) {
      // A helper's client gone: its command's writes wait, abandoned, as a killed `paddock
      // run`'s do (ExecControl::leave_changes). And the command goes at once, as its sandbox
      // does with a paddock killed in process (the parent-death signal), not after a grace
      // for a SIGTERM (new-user trial: a command that ignored it outlived its client by 2 s).
      if (shared_->clients_own_changes) {
        r->control->leave_changes();
        r->control->signal(SIGKILL);
      }
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
    // The connection's sessions end with it: killed, their last writes applied (off the loop).
    for (auto& [key, session] : sessions_) {
      if (session) session->async_close([](SessionSummary) {});
    }
    sessions_.clear();
  }
}

}  // namespace paddock::serve
