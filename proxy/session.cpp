#include "proxy/session.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <asio/post.hpp>
#include <cerrno>
#include <utility>

#include "net/host.hpp"
#include "proxy/client_connection.hpp"

namespace paddock::proxy {

Session::Session(std::shared_ptr<ProxyCore> core, asio::any_io_executor executor,
                 std::string process, std::optional<std::string> credential)
    : core_(std::move(core)),
      strand_(asio::make_strand(std::move(executor))),
      process_(std::move(process)),
      credential_(std::move(credential)) {}

Session::~Session() = default;

void Session::start(asio::ip::tcp::acceptor acceptor) {
  // Rebound onto our strand whatever executor it came with: accept_next, close and the
  // accept handler share accepting_ and the acceptor, and only the strand orders them.
  const auto protocol = acceptor.local_endpoint().protocol();
  const int fd = acceptor.release();
  start(fd, protocol);
}

void Session::start(int listening_fd, asio::ip::tcp protocol) {
  acceptor_.emplace(strand_);
  acceptor_->assign(protocol, listening_fd);
  acceptor_->non_blocking(true);  // accept4 must not block the loop
  asio::post(strand_, [self = shared_from_this()] { self->accept_next(); });
}

asio::ip::tcp::endpoint Session::local_endpoint() const { return acceptor_->local_endpoint(); }

// Readiness plus accept4() of our own, not Asio's async_accept: on Asio 1.22's io_uring
// backend an accept is a kernel operation whose result is a descriptor number, and a stale
// completion (see ClientConnection::close_now) was read as an accepted socket 0 — and closed,
// taking the process's stdin with it. A readiness wait's result is only a poll mask.
void Session::accept_next() {
  accepting_ = true;
  acceptor_->async_wait(
      asio::socket_base::wait_read, [self = shared_from_this()](const std::error_code&) {
        self->accepting_ = false;
        {
          std::lock_guard lock(self->mutex_);
          if (self->closed_) {
            self->finish_close();
            return;
          }
        }
        // Any error (a stray abort included) just means: look, and wait again. Only close()
        // ends the loop.
        for (int round = 0; round < 64; ++round) {
          const int fd = ::accept4(self->acceptor_->native_handle(), nullptr, nullptr,
                                   SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            break;  // EAGAIN: drained; EMFILE and friends: try again on the next wake-up
          }
          self->admit(fd);
        }
        self->accept_next();
      });
}

void Session::admit(int fd) {
  // Over budget: the client is dropped at once rather than left to queue (a command that
  // opens sockets in a loop must not starve the others).
  bool admitted = false;
  {
    std::lock_guard lock(mutex_);
    if (open_ < core_->limits().max_connections_per_session && core_->try_open_connection()) {
      ++open_;
      admitted = true;
    }
  }
  if (!admitted) {
    ::close(fd);
    return;
  }
  asio::ip::tcp::socket socket(strand_.get_inner_executor());
  std::error_code ec;
  socket.assign(acceptor_->local_endpoint(ec).protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    std::lock_guard lock(mutex_);
    --open_;
    core_->close_connection();
    return;
  }
  auto c = std::make_shared<ClientConnection>(shared_from_this(), std::move(socket));
  {
    std::lock_guard lock(mutex_);
    connections_.emplace(c.get(), c);
  }
  c->start();
}

void Session::close(std::function<void()> on_closed) {
  std::vector<std::shared_ptr<ClientConnection>> open;
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      if (on_closed) asio::post(strand_, std::move(on_closed));  // already closed or closing
      return;
    }
    closed_ = true;
    for (auto& [ptr, weak] : connections_) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  // Neither cancel nor close under the wait (see ClientConnection::close_now): shutting the
  // listener down wakes its wait (POLLHUP), and the handler finishes the close.
  asio::post(strand_, [self = shared_from_this(), on_closed = std::move(on_closed)]() mutable {
    self->on_closed_ = std::move(on_closed);
    std::error_code ignored;
    if (self->accepting_) {
      ::shutdown(self->acceptor_->native_handle(), SHUT_RDWR);  // the handler finishes the close
    } else {
      self->finish_close();
    }
  });
  for (auto& c : open) c->close();
}

void Session::finish_close() {
  std::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  if (on_closed_) std::exchange(on_closed_, nullptr)();
}

void Session::connection_closed(ClientConnection* c) {
  std::lock_guard lock(mutex_);
  connections_.erase(c);
  --open_;
  core_->close_connection();
}

bool Session::begin_lookup() noexcept {
  std::size_t now = lookups_->load(std::memory_order_relaxed);
  do {
    if (now >= core_->limits().max_lookups_per_session) return false;
  } while (!lookups_->compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  return true;
}

void Session::deny(const std::string& protocol, const std::string& raw_target,
                   const std::string& raw_reason, const std::string& raw_request) {
  // Client bytes reach violations and logs as printable ASCII only (JSON consumers broke on
  // raw bytes: the standalone proxy's log dropped such denials).
  using net::printable;
  const std::string target = printable(raw_target.substr(0, 1024)),
                    reason = printable(raw_reason.substr(0, 1024)),
                    raw = printable(raw_request.substr(0, 1024));
  {
    std::lock_guard lock(mutex_);
    if (violations_.size() < kMaxViolations) {
      violations_.push_back(Violation{"network", target, reason, process_, raw});
    } else {
      ++violations_dropped_;
    }
  }
  NetworkEvent e;
  e.allowed = false;
  e.protocol = protocol;
  e.target = target;
  e.reason = reason;
  e.process = process_;
  emit(e);
}

void Session::emit(const NetworkEvent& e) const noexcept {
  core_->emit(e);
  if (!call_sink_) return;
  try {
    call_sink_(e);
  } catch (...) {
  }
}

std::vector<Violation> Session::take_violations() {
  std::lock_guard lock(mutex_);
  if (violations_dropped_ > 0) {
    violations_.push_back(Violation{
        "network", "", std::to_string(violations_dropped_) + " more denied requests not listed",
        process_, ""});
    violations_dropped_ = 0;
  }
  return std::move(violations_);
}

}  // namespace paddock::proxy
