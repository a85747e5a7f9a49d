#include "proxy/client_connection.hpp"

#include <sys/socket.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <memory>

#include "proxy/http_head.hpp"
#include "proxy/session.hpp"
#include "proxy/socks5.hpp"

namespace paddock::proxy {
namespace {

constexpr auto nothrow = asio::experimental::as_tuple(asio::use_awaitable);

// Relay buffer: one per thread, used only between two suspension points (read, then a
// non-blocking send; what the send leaves is copied out before waiting). An idle tunnel so
// holds no buffer at all.
constexpr std::size_t kScratch = 256 * 1024;
char* scratch() {
  thread_local std::unique_ptr<char[]> buf(new char[kScratch]);
  return buf.get();
}

std::string http_response(int status, const char* phrase, const std::string& body,
                          const char* extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + phrase +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra_headers + "\r\n" + body;
}

std::string blocked_response(const std::string& target, const std::string& reason) {
  return http_response(403, "Forbidden",
                       "paddock: the connection to " + target +
                           " was blocked by the network allowlist: " + reason + "\n",
                       "X-Proxy-Error: blocked-by-allowlist\r\n");
}

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

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

// Headers that belong to the hop between the client and us, not to the origin server.
bool hop_by_hop(std::string_view name, const std::string* connection_header) {
  // Framing is always written by us, never copied: a client that names Content-Length in
  // `Connection` would otherwise strip it from the forwarded head while we still send the
  // body, and the body would reach the server as a second request with any Host.
  for (const char* h : {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
                        "proxy-authenticate", "te", "trailer", "upgrade", "host", "content-length",
                        "transfer-encoding"}) {
    if (iequal(name, h)) return true;
  }
  if (connection_header != nullptr) {  // `Connection: foo` makes `foo` hop-by-hop too
    std::string_view list = *connection_header;
    while (!list.empty()) {
      auto comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (iequal(item, name)) return true;
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return false;
}

std::string first_line(std::string_view buffer) {
  auto end = buffer.find("\r\n");
  return std::string(buffer.substr(0, std::min<std::size_t>(end, 512)));
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
  asio::co_spawn(strand_, [self = shared_from_this()]() { return self->run(); }, asio::detached);
}

void ClientConnection::close() {
  asio::post(strand_, [self = shared_from_this()] { self->close_now(); });
}

// Ends the connection without closing the sockets: Asio 1.22's io_uring backend frees a
// closed descriptor's state while the kernel still holds its cancelled operation, and the
// late completion then lands on whatever descriptor reuses that state (we saw a command's
// pidfd wait lost that way). So: shut down (the peers see EOF at once), cancel, and let the
// destructor close them once every operation has completed.
void ClientConnection::close_now() {
  if (closed_) return;
  closed_ = true;
  std::error_code ignored;
  client_.shutdown(asio::socket_base::shutdown_both, ignored);
  upstream_.shutdown(asio::socket_base::shutdown_both, ignored);
  client_.cancel(ignored);
  upstream_.cancel(ignored);
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
  asio::co_spawn(strand_, [self] { return self->watchdog(); }, asio::detached);
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
  auto [ec, n] = co_await client_.async_read_some(asio::buffer(buffer_.data() + old, 4096), nothrow);
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
  auto strand = strand_;
  auto once = std::make_shared<std::atomic<bool>>(false);
  try {
    approval(req, [pending, strand, once](bool allow) {
      if (once->exchange(true)) return;
      asio::post(strand, [pending, allow] {
        if (!pending->answer) pending->answer = allow;
        pending->timer.cancel();
      });
    });
  } catch (...) {
    co_return false;  // a throwing callback is a "no"
  }
  if (!pending->answer) {
    // The approval window is its own: the handshake deadline must not cut it short (the
    // watchdog would close us mid-question and the denial would go unrecorded).
    const auto limits = session_->core()->limits();
    deadline_ = std::max(deadline_, clock::now() + limits.approval_timeout +
                                         std::chrono::milliseconds(100));
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

  std::vector<asio::ip::address> addresses;
  if (target.host.is_ip()) {
    addresses.push_back(target.host.address);  // listed literally: the entry names it
  } else if (target.host.text == "localhost") {
    // RFC 6761: localhost is loopback, whatever a hosts file says; no trip to the resolver
    // pool (two thread hand-offs per CONNECT).
    addresses = {asio::ip::make_address("127.0.0.1"), asio::ip::make_address("::1")};
    std::string why;
    addresses = rules->dialable(addresses, d.matched, target.port, &why);
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
    if (!session_->begin_lookup()) {
      reason_ = "too many name lookups in flight for this command (limit " +
                std::to_string(session_->core()->limits().max_lookups_per_session) + ")";
      co_return Outcome::failed;
    }
    auto lookup = std::make_shared<Lookup>(strand_);
    lookup->timer.expires_at(clock::time_point::max());
    auto strand = strand_;
    session_->core()->resolver().resolve(
        target.host.text, [lookup, strand, session = session_](std::error_code ec,
                                                               std::vector<asio::ip::address> a) {
          session->end_lookup();  // the pool's slot is free again (not when our client left)
          asio::post(strand, [lookup, ec, a = std::move(a)]() mutable {
            lookup->result.emplace(ec, std::move(a));
            lookup->timer.cancel();
          });
        });
    while (!lookup->result && !closed_) co_await lookup->timer.async_wait(nothrow);
    if (closed_ || !lookup->result) co_return Outcome::failed;
    if (lookup->result->first) {
      reason_ = "could not resolve " + target.host.text + ": " + lookup->result->first.message();
      co_return Outcome::failed;
    }
    std::string why;
    addresses = rules->dialable(lookup->result->second, d.matched, target.port, &why);
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
    deadline_ = std::min(handshake_deadline,
                         clock::now() + session_->core()->limits().connect_timeout);
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
      session_->core()->emit(e);
      co_return Outcome::connected;
    }
    last = ec;
  }
  reason_ = "could not connect to " + where + ": " + (last ? last.message() : "timed out");
  co_return Outcome::failed;
}

asio::awaitable<void> ClientConnection::serve_http() {
  const auto& limits = session_->core()->limits();
  HttpRequestHead head;
  HeadParse parsed;
  for (;;) {
    parsed = parse_request_head(buffer_, limits.max_header_bytes, head);
    if (parsed.status != HeadStatus::incomplete) break;
    if (!co_await read_more()) co_return;
  }
  if (parsed.status == HeadStatus::too_large) {
    {
      std::string reply = http_response(431, "Request Header Fields Too Large", parsed.error + "\n");
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  if (parsed.status == HeadStatus::invalid) {
    {
      std::string reply = http_response(400, "Bad Request", "paddock proxy: " + parsed.error + "\n");
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  const std::string raw = first_line(buffer_);
  const bool is_connect = head.method == "CONNECT";

  // The credential first: without it nothing is said about hosts.
  if (session_->credential()) {
    const std::string* auth = head.find("Proxy-Authorization");
    auto presented = auth ? decode_basic_credentials(*auth) : std::nullopt;
    if (!presented || !credential_ok(*presented)) {
      session_->deny(is_connect ? "connect" : "http", head.target,
                     auth ? "wrong proxy credential" : "no proxy credential", raw);
      {
        std::string reply = http_response(
          407, "Proxy Authentication Required",
          "paddock proxy: this proxy serves paddock's sandboxes only (credential " +
              std::string(auth ? "wrong" : "missing") + ")\n",
          "Proxy-Authenticate: Basic realm=\"paddock\"\r\n");
        co_await write_client(std::move(reply));
      }
      co_return;
    }
  }

  std::string error;
  std::optional<net::Authority> target;
  std::optional<AbsoluteTarget> absolute;
  BodyFraming framing;
  if (is_connect) {
    target = net::parse_authority(head.target, 0, &error);
  } else {
    absolute = parse_absolute_http_target(head.target, &error);
    if (absolute) target = net::parse_authority(absolute->authority, 80, &error);
    if (target) {
      // The server behind us reads Host; we filter on the URL. They must name the same host,
      // or the filter checked one host and the request reaches another.
      if (const std::string* host = head.find("Host")) {
        std::string host_error;
        auto named = net::parse_authority(*host, 80, &host_error);
        if (!named || named->host.text != target->host.text || named->port != target->port) {
          const std::string why = "Host header '" + *host + "' does not match the request target " +
                                  net::to_string(*target);
          session_->deny("http", net::to_string(*target), why, raw);
          {
            std::string reply = http_response(400, "Bad Request", "paddock proxy: " + why + "\n");
            co_await write_client(std::move(reply));
          }
          co_return;
        }
      }
      auto f = request_body_framing(head, &error);
      if (!f) target.reset();
      else framing = *f;
    }
  }
  if (!target) {
    // A host that cannot be canonicalised (zone id, control characters, a malformed IP
    // literal) is refused as a violation: it is how filters are usually fooled.
    session_->deny(is_connect ? "connect" : "http", head.target, error, raw);
    {
      std::string reply = http_response(400, "Bad Request", "paddock proxy: " + error + "\n");
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  if (framing.chunked) {
    {
      std::string reply = http_response(
        411, "Length Required",
        "paddock proxy: chunked request bodies are not relayed over plain http; send a "
        "Content-Length or use https (CONNECT)\n");
      co_await write_client(std::move(reply));
    }
    co_return;
  }

  const std::string where = net::to_string(*target);
  const std::string protocol = is_connect ? "connect" : "http";
  switch (co_await authorize_and_connect(*target, protocol, raw)) {
    case Outcome::denied:
      {
        std::string reply = blocked_response(where, reason_);
        co_await write_client(std::move(reply));
      }
      co_return;
    case Outcome::failed:
      if (!closed_) {
        {
          std::string reply = http_response(502, "Bad Gateway", "paddock proxy: " + reason_ + "\n");
          co_await write_client(std::move(reply));
        }
      }
      co_return;
    case Outcome::connected:
      break;
  }

  std::string rest = buffer_.substr(parsed.head_bytes);
  std::string().swap(buffer_);
  if (is_connect) {
    std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (!co_await write_client(std::move(established))) co_return;
    if (!rest.empty()) {
      auto [ec, n] = co_await asio::async_write(upstream_, asio::buffer(rest), nothrow);
      if (ec) co_return;
    }
    deadline_ = clock::now() + idle_timeout_;
    co_await relay();
    co_return;
  }

  // Plain http: one request, rewritten to origin form, then the response until the server
  // closes. `Connection: close` both ways, so the client cannot send a second request on this
  // connection to another host past the filter.
  std::string out = head.method + " " + absolute->origin_form + " HTTP/1." +
                    std::to_string(head.minor_version) + "\r\nHost: " + target->host.display() +
                    (target->port == 80 ? "" : ":" + std::to_string(target->port)) + "\r\n";
  const std::string* connection = head.find("Connection");
  for (const auto& [k, v] : head.headers) {
    if (!hop_by_hop(k, connection)) out += k + ": " + v + "\r\n";
  }
  if (head.find("Content-Length") != nullptr) {
    out += "Content-Length: " + std::to_string(framing.content_length) + "\r\n";
  }
  out += "Connection: close\r\n\r\n";
  const std::uint64_t body_now = std::min<std::uint64_t>(rest.size(), framing.content_length);
  out.append(rest, 0, body_now);
  auto [ec, n] = co_await asio::async_write(upstream_, asio::buffer(out), nothrow);
  if (ec || closed_) co_return;
  deadline_ = clock::now() + idle_timeout_;
  if (!co_await forward_body(framing.content_length - body_now)) co_return;
  co_await pump(upstream_, client_);
}

asio::awaitable<bool> ClientConnection::forward_body(std::uint64_t remaining) {
  std::string chunk;
  while (remaining > 0 && !closed_) {
    chunk.resize(std::min<std::uint64_t>(remaining, 64 * 1024));
    auto [ec, n] = co_await client_.async_read_some(asio::buffer(chunk), nothrow);
    if (ec || n == 0) co_return false;
    bump_idle();
    auto [wec, w] = co_await asio::async_write(upstream_, asio::buffer(chunk.data(), n), nothrow);
    if (wec) co_return false;
    remaining -= n;
  }
  co_return !closed_;
}

asio::awaitable<void> ClientConnection::serve_socks5() {
  std::size_t used = 0;
  std::string error;
  socks5::Greeting greeting;
  socks5::Status st;
  while ((st = socks5::parse_greeting(buffer_, greeting, &used, &error)) == socks5::Status::incomplete) {
    if (!co_await read_more()) co_return;
  }
  if (st == socks5::Status::invalid) co_return;
  buffer_.erase(0, used);

  if (session_->credential()) {
    if (!greeting.offers_userpass) {
      session_->deny("socks5", "", "no proxy credential (SOCKS5 username/password not offered)",
                     "SOCKS5 greeting");
      {
        std::string reply = std::string{char(socks5::kVersion), char(socks5::kNoAcceptableMethod)};
        co_await write_client(std::move(reply));
      }
      co_return;
    }
    std::string choose_userpass{char(socks5::kVersion), char(socks5::kMethodUserPass)};
    if (!co_await write_client(std::move(choose_userpass))) co_return;
    socks5::UserPass up;
    while ((st = socks5::parse_userpass(buffer_, up, &used, &error)) == socks5::Status::incomplete) {
      if (!co_await read_more()) co_return;
    }
    if (st == socks5::Status::invalid) co_return;
    buffer_.erase(0, used);
    const bool ok = credential_ok(up.user + ":" + up.password);
    {
      std::string reply = std::string{1, char(ok ? 0 : 1)};
      co_await write_client(std::move(reply));
    }
    if (!ok) {
      session_->deny("socks5", "", "wrong proxy credential", "SOCKS5 username/password");
      co_return;
    }
  } else {
    const char method = greeting.offers_none ? char(socks5::kMethodNone) : char(socks5::kNoAcceptableMethod);
    std::string choice{char(socks5::kVersion), method};
    if (!co_await write_client(std::move(choice)) || !greeting.offers_none) co_return;
  }

  socks5::Request req;
  while ((st = socks5::parse_request(buffer_, req, &used, &error)) == socks5::Status::incomplete) {
    if (!co_await read_more()) co_return;
  }
  if (st == socks5::Status::invalid) {
    {
      std::string reply = socks5::make_reply(socks5::Reply::general_failure);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  buffer_.erase(0, used);
  if (req.command != static_cast<std::uint8_t>(socks5::Command::connect)) {
    // BIND and UDP ASSOCIATE would open paths the filter cannot see (inbound, datagrams).
    {
      std::string reply = socks5::make_reply(socks5::Reply::command_not_supported);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  const std::string raw = "SOCKS5 CONNECT " + req.host + ":" + std::to_string(req.port);
  auto host = net::canonicalize_host(req.host, &error);
  if (!host || req.port == 0) {
    session_->deny("socks5", req.host + ":" + std::to_string(req.port),
                   host ? std::string("port 0") : error, raw);
    {
      std::string reply = socks5::make_reply(socks5::Reply::not_allowed_by_ruleset);
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  net::Authority target{std::move(*host), req.port};
  const std::string protocol = "socks5";
  switch (co_await authorize_and_connect(target, protocol, raw)) {
    case Outcome::denied:
      {
        std::string reply = socks5::make_reply(socks5::Reply::not_allowed_by_ruleset);
        co_await write_client(std::move(reply));
      }
      co_return;
    case Outcome::failed:
      if (!closed_) co_await write_client(socks5::make_reply(socks5::Reply::host_unreachable));
      co_return;
    case Outcome::connected:
      break;
  }
  std::string succeeded = socks5::make_reply(socks5::Reply::succeeded);
  if (!co_await write_client(std::move(succeeded))) co_return;
  if (!buffer_.empty()) {
    auto [ec, n] = co_await asio::async_write(upstream_, asio::buffer(buffer_), nothrow);
    if (ec) co_return;
  }
  std::string().swap(buffer_);
  deadline_ = clock::now() + idle_timeout_;
  co_await relay();
}

asio::awaitable<void> ClientConnection::relay() {
  using namespace asio::experimental::awaitable_operators;
  co_await (pump(client_, upstream_) && pump(upstream_, client_));
}

asio::awaitable<void> ClientConnection::pump(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to) {
  std::string pending;
  while (!closed_) {
    auto [ec] = co_await from.async_wait(asio::socket_base::wait_read, nothrow);
    if (ec || closed_) break;
    // Drain what is there before waiting again: one readiness wake-up moves many buffers.
    for (int round = 0; round < 16 && !closed_; ++round) {
      char* buf = scratch();
      ssize_t n = ::recv(from.native_handle(), buf, kScratch, MSG_DONTWAIT);
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
      ssize_t sent = ::send(to.native_handle(), buf, static_cast<std::size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL);
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
      if (n < static_cast<ssize_t>(kScratch)) break;
    }
  }
}

}  // namespace paddock::proxy
