#include "proxy/client_connection.hpp"

#include <sys/socket.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <memory>

#include "base/off_loop_work.hpp"
#include "base/thread_scratch.hpp"
#include "net/host.hpp"
#include "proxy/session.hpp"
#include "proxy/socks5.hpp"

namespace paddock::proxy {
namespace {

// The relay reads into the thread's scratch buffer (read, then a non-blocking send; what the
// send leaves is copied out before waiting), so an idle tunnel holds no buffer at all.
using base::kThreadScratchSize;
using base::thread_scratch;

// The credential is compared without an early exit, so its bytes cannot be found one at a
// time by timing (its length may show; it is fixed and public anyway).
bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

}  // namespace

ClientConnection::ClientConnection(std::shared_ptr<Session> session, asio::ip::tcp::socket client)
    : session_(std::move(session)),
      strand_(asio::make_strand(client.get_executor())),
      client_(std::move(client)),
      upstream_(strand_),
      watchdog_(strand_),
      idle_timeout_(session_->core()->limits().idle_timeout) {}

ClientConnection::~ClientConnection() { session_->connection_closed(this); }

void ClientConnection::start() {
  asio::co_spawn(
      strand_, [self = shared_from_this()]() { return self->run(); }, asio::detached);
}

void ClientConnection::close() {
  asio::post(strand_, [self = shared_from_this()] { self->close_now(); });
}

// Ends the connection without closing or cancelling anything: shutting both sockets down
// completes every operation in flight on them (reads see EOF, writes EPIPE, a connect fails),
// and the destructor closes them once the last one has finished. Never cancel() or close() a
// socket under an operation on Asio 1.22's io_uring backend (see docs/design.md, "Never cancel or
// close under an operation").
void ClientConnection::close_now() {
  if (closed_) return;
  closed_ = true;
  std::error_code ignored;
  client_.shutdown(asio::socket_base::shutdown_both, ignored);
  upstream_.shutdown(asio::socket_base::shutdown_both, ignored);
  watchdog_.cancel();
}

asio::awaitable<void> ClientConnection::watchdog() {
  auto self = shared_from_this();
  while (!closed_) {
    watchdog_.expires_at(deadline_);
    co_await watchdog_.async_wait(nothrow);
    if (closed_) co_return;
    if (deadline_ <= clock::now()) close_now();  // else: moved on (activity); wait again
  }
}

asio::awaitable<void> ClientConnection::run() {
  auto self = shared_from_this();
  deadline_ = clock::now() + session_->core()->limits().handshake_timeout;
  asio::co_spawn(
      strand_, [self] { return self->watchdog(); }, asio::detached);
  std::error_code ignored;
  client_.set_option(asio::ip::tcp::no_delay(true), ignored);
  if (co_await read_more()) {
    if (static_cast<unsigned char>(buffer_[0]) == socks5::kVersion) {
      co_await serve_socks5();
    } else {
      co_await serve_http();
    }
  }
  close_now();
}

asio::awaitable<bool> ClientConnection::read_more() {
  if (closed_) co_return false;
  const std::size_t old = buffer_.size();
  buffer_.resize(old + 4096);
  auto [ec, n] =
      co_await client_.async_read_some(asio::buffer(buffer_.data() + old, 4096), nothrow);
  buffer_.resize(old + n);
  co_return !ec && n > 0 && !closed_;
}

asio::awaitable<bool> ClientConnection::write_client(std::string data) {
  if (closed_) co_return false;
  auto [ec, n] = co_await asio::async_write(client_, asio::buffer(data), nothrow);
  co_return !ec;
}

bool ClientConnection::credential_ok(const std::string& presented) const {
  const auto& expected = session_->credential();
  return !expected || constant_time_equal(presented, *expected);
}

asio::awaitable<bool> ClientConnection::ask_approval(const net::Authority& target) {
  const auto& approval = session_->core()->hooks().approval;
  if (!approval) co_return false;
  // The answer comes from any thread; it lands on our strand and wakes the wait. No answer
  // before the timer: denied (fail closed).
  struct Pending {
    explicit Pending(asio::strand<asio::any_io_executor> s) : timer(s) {}
    asio::steady_timer timer;
    std::optional<bool> answer;
  };
  auto pending = std::make_shared<Pending>(strand_);
  pending->timer.expires_after(session_->core()->limits().approval_timeout);
  ApprovalRequest req{target.host.text, target.port, session_->process()};
  auto once = std::make_shared<std::atomic<bool>>(false);
  try {
    // Answered on the caller's thread, kept by the caller maybe past this connection and its
    // loop: weak, and under a ticket while it posts (base/off_loop_work.hpp).
    approval(req, [weak = std::weak_ptr<Pending>(pending),
                   gate = base::OffLoopWork::gate_of(strand_), once](bool allow) {
      if (once->exchange(true)) return;
      base::OffLoopTicket ticket(gate);
      if (!ticket) return;
      auto p = weak.lock();
      if (!p) return;
      asio::post(p->timer.get_executor(), [p, allow] {
        if (!p->answer) p->answer = allow;
        p->timer.cancel();
      });
    });
  } catch (...) {
    co_return false;  // a throwing callback is a "no"
  }
  if (!pending->answer) {
    // The approval window is its own: the handshake deadline must not cut it short (the
    // watchdog would close us mid-question and the denial would go unrecorded).
    const auto limits = session_->core()->limits();
    deadline_ = std::max(deadline_,
                         clock::now() + limits.approval_timeout + std::chrono::milliseconds(100));
    co_await pending->timer.async_wait(nothrow);
    deadline_ = clock::now() + limits.handshake_timeout;
  }
  co_return pending->answer.value_or(false);
}

asio::awaitable<ClientConnection::Outcome> ClientConnection::authorize_and_connect(
    const net::Authority& target, const std::string& protocol, const std::string& raw) {
  auto rules = session_->core()->rules();  // one snapshot for the whole decision
  const std::string where = net::to_string(target);
  net::Decision d = rules->decide(target.host, target.port);
  // The call's own lists narrow what the Manager allows (CallPolicy), checked before anyone is
  // asked: an approver never hears of a host this call could not reach anyway. Its layer's
  // `matched` entry decides which special addresses it names.
  const net::DomainRules* call = session_->call_rules().get();
  net::Decision call_d;
  if (d.verdict != net::Verdict::deny && call != nullptr) {
    call_d = call->decide(target.host, target.port);
    if (call_d.verdict != net::Verdict::allow) {
      d.verdict = net::Verdict::deny;
      d.reason = call_d.reason;
    }
  }
  if (d.verdict == net::Verdict::unknown) {
    if (co_await ask_approval(target)) {
      d.verdict = net::Verdict::allow;
    } else {
      d.reason += session_->core()->hooks().approval ? " (approval refused or timed out)" : "";
    }
  }
  if (d.verdict != net::Verdict::allow) {  // recorded even if the client is gone by now
    reason_ = d.reason;
    session_->deny(protocol, where, reason_, raw);
    co_return Outcome::denied;
  }
  if (closed_) co_return Outcome::failed;
  // Both layers' address checks, the Manager's first (its reason is the one reported).
  auto dialable = [&](const std::vector<asio::ip::address>& found, std::string* why) {
    auto out = rules->dialable(found, d.matched, target.port, why);
    if (call != nullptr && !out.empty())
      out = call->dialable(out, call_d.matched, target.port, why);
    return out;
  };

  std::vector<asio::ip::address> addresses;
  if (target.host.is_ip()) {
    addresses.push_back(target.host.address);  // listed literally: the entry names it
    if (call != nullptr) {
      std::string why;
      addresses = call->dialable(addresses, call_d.matched, target.port, &why);
      if (addresses.empty()) {
        reason_ = why;
        session_->deny(protocol, where, reason_, raw);
        co_return Outcome::denied;
      }
    }
  } else if (target.host.text == "localhost") {
    // RFC 6761: localhost is loopback, whatever a hosts file says; no trip to the resolver
    // pool (two thread hand-offs per CONNECT).
    addresses = {asio::ip::make_address("127.0.0.1"), asio::ip::make_address("::1")};
    std::string why;
    addresses = dialable(addresses, &why);
    if (addresses.empty()) {
      reason_ = why;
      session_->deny(protocol, where, reason_, raw);
      co_return Outcome::denied;
    }
  } else {
    struct Lookup {
      explicit Lookup(asio::strand<asio::any_io_executor> s) : timer(s) {}
      asio::steady_timer timer;
      std::optional<std::pair<std::error_code, std::vector<asio::ip::address>>> result;
    };
    // The lookup's slot in the command's budget goes back once, whichever comes first: the
    // answer, or the last copy of the callback going (a resolver that drops it unanswered, or
    // throws before keeping it), or an allocation below failing. Counted in a shared counter,
    // not the session's, for the reason below.
    struct Slot {
      explicit Slot(Session::LookupCount c) : count(std::move(c)) {}
      ~Slot() { release(); }
      void release() noexcept {
        if (!released.exchange(true)) count->fetch_sub(1, std::memory_order_relaxed);
      }
      Session::LookupCount count;
      std::atomic<bool> released{true};  // until begin_lookup() took the slot
    };
    auto slot = std::make_shared<Slot>(session_->lookups());
    if (!session_->begin_lookup()) {
      reason_ = "too many name lookups in flight for this command (limit " +
                std::to_string(session_->core()->limits().max_lookups_per_session) + ")";
      co_return Outcome::failed;
    }
    slot->released = false;
    auto lookup = std::make_shared<Lookup>(strand_);
    lookup->timer.expires_at(clock::time_point::max());
    // The answer comes on a resolver thread, maybe after this loop's context is gone: it holds
    // nothing of the loop but weakly, and touches it only under a ticket (the context's
    // shutdown waits for it; base/off_loop_work.hpp), or the last reference to a timer, strand
    // or session could be dropped there after their services were destroyed.
    std::optional<std::string> failed;  // the resolver threw (what it said)
    try {
      session_->core()->resolver().resolve(
          target.host.text, [weak_lookup = std::weak_ptr<Lookup>(lookup), slot = std::move(slot),
                             gate = base::OffLoopWork::gate_of(strand_)](
                                std::error_code ec, std::vector<asio::ip::address> a) {
            slot->release();  // free again, whoever is left
            base::OffLoopTicket ticket(gate);
            if (!ticket) return;
            if (auto l = weak_lookup.lock()) {
              asio::post(l->timer.get_executor(), [l, ec, a = std::move(a)]() mutable {
                l->result.emplace(ec, std::move(a));
                l->timer.cancel();
              });
            }
          });
    } catch (const std::exception& e) {  // an embedder's Resolver: its failure is this request's
      failed = e.what();
    } catch (...) {
      failed = "unknown exception";
    }
    if (failed) {
      reason_ = "could not resolve " + target.host.text + ": the resolver failed (" +
                net::printable(failed->substr(0, 256)) + ")";
      co_return Outcome::failed;
    }
    while (!lookup->result && !closed_) co_await lookup->timer.async_wait(nothrow);
    if (closed_ || !lookup->result) co_return Outcome::failed;
    if (lookup->result->first) {
      reason_ = "could not resolve " + target.host.text + ": " + lookup->result->first.message();
      co_return Outcome::failed;
    }
    std::string why;
    addresses = dialable(lookup->result->second, &why);
    if (addresses.empty()) {
      reason_ = why;
      session_->deny(protocol, where, reason_, raw);
      co_return Outcome::denied;
    }
  }

  // Exactly the addresses checked above, never the name again (no DNS rebinding).
  const auto handshake_deadline = deadline_;
  std::error_code last;
  for (const auto& a : addresses) {
    if (closed_) co_return Outcome::failed;
    std::error_code ignored;
    upstream_.close(ignored);
    deadline_ =
        std::min(handshake_deadline, clock::now() + session_->core()->limits().connect_timeout);
    auto [ec] = co_await upstream_.async_connect({a, target.port}, nothrow);
    if (!ec && !closed_) {
      deadline_ = handshake_deadline;
      upstream_.set_option(asio::ip::tcp::no_delay(true), ignored);
      NetworkEvent e;
      e.allowed = true;
      e.protocol = protocol;
      e.target = where;
      e.address = a.to_string();
      e.process = session_->process();
      session_->emit(e);
      co_return Outcome::connected;
    }
    last = ec;
  }
  reason_ = "could not connect to " + where + ": " + (last ? last.message() : "timed out");
  co_return Outcome::failed;
}

asio::awaitable<void> ClientConnection::relay() {
  using namespace asio::experimental::awaitable_operators;
  co_await (pump(client_, upstream_) && pump(upstream_, client_));
}

asio::awaitable<void> ClientConnection::pump(asio::ip::tcp::socket& from,
                                             asio::ip::tcp::socket& to) {
  std::string pending;
  while (!closed_) {
    auto [ec] = co_await from.async_wait(asio::socket_base::wait_read, nothrow);
    if (ec || closed_) break;
    // Drain what is there before waiting again: one readiness wake-up moves many buffers.
    for (int round = 0; round < 16 && !closed_; ++round) {
      char* buf = thread_scratch();
      ssize_t n = ::recv(from.native_handle(), buf, kThreadScratchSize, MSG_DONTWAIT);
      if (n == 0) {  // EOF one way: pass it on, keep the other direction going
        std::error_code ignored;
        to.shutdown(asio::socket_base::shutdown_send, ignored);
        co_return;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        close_now();
        co_return;
      }
      bump_idle();
      ssize_t sent =
          ::send(to.native_handle(), buf, static_cast<std::size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        close_now();
        co_return;
      }
      if (sent < n) {
        // The other side is slower: keep the rest (copied out of the shared scratch buffer)
        // and wait for room before reading more.
        pending.assign(buf + std::max<ssize_t>(sent, 0), buf + n);
        auto [wec, w] = co_await asio::async_write(to, asio::buffer(pending), nothrow);
        std::string().swap(pending);
        if (wec) {
          close_now();
          co_return;
        }
        bump_idle();
        break;
      }
      if (n < static_cast<ssize_t>(kThreadScratchSize)) break;
    }
  }
}

}  // namespace paddock::proxy
