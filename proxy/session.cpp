#include "proxy/session.hpp"

#include <asio/post.hpp>
#include <utility>

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
  asio::post(strand_, [self = shared_from_this()] { self->accept_next(); });
}

asio::ip::tcp::endpoint Session::local_endpoint() const { return acceptor_->local_endpoint(); }

void Session::accept_next() {
  accepting_ = true;
  acceptor_->async_accept(
      strand_.get_inner_executor(),
      [self = shared_from_this()](std::error_code ec, asio::ip::tcp::socket socket) {
        self->accepting_ = false;
        {
          std::lock_guard lock(self->mutex_);
          if (self->closed_) {
            self->finish_close();
            return;
          }
        }
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
          // Over budget: the client is dropped at once rather than left to queue (a command
          // that opens sockets in a loop must not starve the others).
          bool admitted = false;
          {
            std::lock_guard lock(self->mutex_);
            if (self->open_ < self->core_->limits().max_connections_per_session &&
                self->core_->try_open_connection()) {
              ++self->open_;
              admitted = true;
            }
          }
          if (admitted) {
            auto c = std::make_shared<ClientConnection>(self, std::move(socket));
            {
              std::lock_guard lock(self->mutex_);
              self->connections_.emplace(c.get(), c);
            }
            c->start();
          }
        }
        // EMFILE and friends: keep accepting (the next accept may succeed once fds free up).
        self->accept_next();
      });
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
  // Cancel, not close: the descriptor is closed by our destructor once the accept has
  // completed (see ClientConnection::close_now for the Asio io_uring hazard).
  asio::post(strand_, [self = shared_from_this(), on_closed = std::move(on_closed)]() mutable {
    self->on_closed_ = std::move(on_closed);
    std::error_code ignored;
    if (self->accepting_) {
      self->acceptor_->cancel(ignored);  // the accept handler finishes the close
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
  std::size_t now = lookups_.load(std::memory_order_relaxed);
  do {
    if (now >= core_->limits().max_lookups_per_session) return false;
  } while (!lookups_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  return true;
}

namespace {
// What a client sent goes into violations and log lines as printable ASCII only: raw bytes
// would break JSON consumers (and did: the standalone proxy's log dropped such denials).
std::string printable(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (unsigned char c : in.substr(0, 1024)) {
    if (c < 0x20 || c >= 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
}  // namespace

void Session::deny(const std::string& protocol, const std::string& raw_target,
                   const std::string& raw_reason, const std::string& raw_request) {
  const std::string target = printable(raw_target), reason = printable(raw_reason),
                    raw = printable(raw_request);
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
  core_->emit(e);
}

std::vector<Violation> Session::take_violations() {
  std::lock_guard lock(mutex_);
  if (violations_dropped_ > 0) {
    violations_.push_back(Violation{"network", "", std::to_string(violations_dropped_) +
                                                       " more denied requests not listed",
                                    process_, ""});
    violations_dropped_ = 0;
  }
  return std::move(violations_);
}

}  // namespace paddock::proxy
