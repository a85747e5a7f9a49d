// The command side of a Connection: checking and starting a request (exec), reading the
// command's pipes under backpressure, streaming its stdin, and its one outcome. The client
// side (lines in, events out, closing) is connection.cpp; reading a unix peer (descriptors,
// who wrote what) is connection_reading.cpp.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "serve/connection.hpp"
#include "serve/running_command.hpp"

namespace paddock::serve {
namespace {

using detail::clock;
using detail::kReadChunk;

// `network` events per command at most (as the proxy keeps at most 1000 violations): a command
// retrying a refused host in a loop must not grow a connection's queue without end.
constexpr std::size_t kMaxNetworkEvents = 1000;

// A pipe whose end we keep non-blocking (the other end is the command's, blocking as usual).
bool make_pipe(UniqueFd& read_end, UniqueFd& write_end, bool ours_is_read) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  const int ours = ours_is_read ? fds[0] : fds[1];
  return ::fcntl(ours, F_SETFL, ::fcntl(ours, F_GETFL) | O_NONBLOCK) == 0;
}

}  // namespace

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
  std::string refusal;
  std::shared_ptr<Session> session = session_for(req, refusal);
  // A session's directory was checked when it opened; a cwd named again is checked as any.
  std::optional<std::string> why;
  if (!refusal.empty()) {
    why = refusal;
  } else if (!session || req.cwd) {
    why = cwd_refusal(req);
  }
  if (why) {
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
  // The caller's own streams, as it sent them with this line (a helper's client): the Manager
  // decides whether a sandboxed command may have each (process/given_fd.hpp).
  UniqueFd given[3];
  auto came = take_given(req.given.size());
  if (came.size() != req.given.size()) {
    shared_->commands.fetch_sub(1);
    send(error_event(r.id, "E_CONFIG_INVALID",
                     std::to_string(req.given.size()) + " descriptors named in \"given\", " +
                         std::to_string(came.size()) + " came with the line"));
    return;
  }
  for (std::size_t i = 0; i < came.size(); ++i) {
    // A connection to this very daemon, given on to the command, would let it read the
    // client's events and write as the client (hostile review helper-49).
    sockaddr_un peer{};
    socklen_t len = sizeof peer;
    const bool to_us =
        ::getpeername(came[i].get(), reinterpret_cast<sockaddr*>(&peer), &len) == 0 &&
        peer.sun_family == AF_UNIX && len > offsetof(sockaddr_un, sun_path) &&
        std::find(shared_->listen_addresses.begin(), shared_->listen_addresses.end(),
                  std::string(peer.sun_path, len - offsetof(sockaddr_un, sun_path))) !=
            shared_->listen_addresses.end();
    if (to_us) {
      shared_->commands.fetch_sub(1);
      send(error_event(r.id, "E_CONFIG_INVALID",
                       "a connection to this daemon cannot be a command's stream"));
      return;
    }
    given[req.given[i]] = std::move(came[i]);
  }
  UniqueFd out_r, out_w, err_r, err_w, in_r, in_w;
  if ((given[1].get() < 0 && !make_pipe(out_r, out_w, true)) ||
      (given[2].get() < 0 && !make_pipe(err_r, err_w, true)) ||
      (req.stdin_stream && !make_pipe(in_r, in_w, false))) {
    shared_->commands.fetch_sub(1);
    send(error_event(r.id, "E_SPAWN_FAILED", std::string("pipe: ") + std::strerror(errno)));
    return;
  }
  ExecOptions o;
  o.session = std::move(session);
  o.cwd = req.cwd;
  o.env = std::move(req.env);
  o.timeout = req.timeout;
  o.policy = std::move(req.policy);
  o.parent_env = std::move(req.parent_env);
  if (shared_->clients_own_changes && peer_process_) o.changes_owner = *peer_process_;
  o.keep_output = false;
  o.stdout_fd = given[1].get() >= 0 ? given[1].get() : out_w.get();
  o.stderr_fd = given[2].get() >= 0 ? given[2].get() : err_w.get();
  if (given[0].get() >= 0) {
    o.stdin_fd = given[0].get();
  } else if (req.stdin_stream) {
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
  if (req.network_events) {
    // From the proxy's threads.
    auto count = std::make_shared<std::atomic<std::size_t>>(0);
    o.on_network = [weak, id = r.id, strand = strand_, count](const NetworkEvent& e) {
      if (count->fetch_add(1) >= kMaxNetworkEvents) return;
      asio::post(strand, [weak, line = network_event(id, e)]() mutable {
        if (auto self = weak.lock(); self && !self->closed_) self->send(std::move(line));
      });
    };
  }
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
  for (auto& fd : given) fd.reset();  // the caller keeps its own: the command's end comes
  if (out_r.get() >= 0) run->out.fd.emplace(strand_, out_r.release());
  if (err_r.get() >= 0) run->err.fd.emplace(strand_, err_r.release());
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
  // A cancel the client asked for is the command's outcome, said by `cancelled`, not a
  // failure of paddock's: no error in the exit event or the log.
  const bool cancelled_by_client = r->cancelled && ec == asio::error::operation_aborted;
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
      send(exit_event(r->id, result, cancelled_by_client ? std::error_code() : ec, r->cancelled));
    }
  }
  const bool failed = ec && ec != errc::timeout && !cancelled_by_client;
  log_line(
      failed ? "warn" : "info",
      {{"event", "command"},
       {"id", r->id},
       {"decision", to_string(result.decision)},
       {"rule", result.rule},
       {"exit_code", result.exit_code},
       {"signal", result.signal},
       {"error_code", ec && !cancelled_by_client ? std::string(code_string(ec)) : std::string()},
       {"cancelled", r->cancelled},
       {"duration_ms", result.duration.count()},
       {"stdout_bytes", r->out.total},
       {"stderr_bytes", r->err.total}});
  running_.erase(r->key);
  running_count_.store(running_.size());
  if (closed_ && running_.empty()) do_close(close_reason_);
}

}  // namespace paddock::serve
