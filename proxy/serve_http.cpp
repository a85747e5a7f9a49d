// The HTTP side of a client: CONNECT and absolute-form requests (see client_connection.hpp).
#include <asio/write.hpp>

#include "proxy/client_connection.hpp"
#include "proxy/http_head.hpp"
#include "proxy/session.hpp"

namespace paddock::proxy {
namespace {

std::string http_response(int status, const char* phrase, const std::string& body,
                          const char* extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + phrase +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra_headers + "\r\n" + body;
}

constexpr std::string_view kBlockedSentence = "Connection blocked by network allowlist";

// The body starts with srt's exact sentence: srt's integration tests and the tools written
// around it look for it to tell a policy refusal from a network failure. paddock's detail
// (which host, and why) follows on the same line.
std::string blocked_response(const std::string& target, const std::string& reason) {
  return http_response(
      403, "Forbidden",
      std::string(kBlockedSentence) + ": paddock refused " + target + ": " + reason + "\n",
      "X-Proxy-Error: blocked-by-allowlist\r\n");
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
  for (const char* h :
       {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
        "te", "trailer", "upgrade", "host", "content-length", "transfer-encoding"}) {
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
      std::string reply =
          http_response(431, "Request Header Fields Too Large", parsed.error + "\n");
      co_await write_client(std::move(reply));
    }
    co_return;
  }
  if (parsed.status == HeadStatus::invalid) {
    {
      std::string reply =
          http_response(400, "Bad Request", "paddock proxy: " + parsed.error + "\n");
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
        std::string reply =
            http_response(407, "Proxy Authentication Required",
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
      if (!f)
        target.reset();
      else
        framing = *f;
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
    case Outcome::denied: {
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

}  // namespace paddock::proxy
