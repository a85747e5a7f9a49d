#include "serve/ops_http.hpp"

#include <asio/bind_executor.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>
#include <chrono>

#include "paddock/errors.hpp"
#include "serve/server.hpp"

namespace paddock::serve {
namespace {

constexpr std::size_t kMaxHead = 8 * 1024;
constexpr std::chrono::seconds kHeadTimeout{5};

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return "Service Unavailable";
  }
}

struct Exchange : std::enable_shared_from_this<Exchange> {
  Exchange(asio::ip::tcp::socket s, OpsHttp::Route r)
      : socket(std::move(s)), timer(socket.get_executor()), buffer(kMaxHead), route(std::move(r)) {}

  void start() {
    timer.expires_after(kHeadTimeout);
    timer.async_wait([self = shared_from_this()](std::error_code ec) {
      if (ec) return;
      std::error_code ignored;
      self->socket.shutdown(asio::socket_base::shutdown_both, ignored);
      self->socket.cancel(ignored);
    });
    asio::async_read_until(socket, buffer, "\r\n\r\n",
                           [self = shared_from_this()](std::error_code ec, std::size_t) {
                             self->timer.cancel();
                             if (ec) return;  // too long, too slow or gone: nothing to answer
                             self->answer();
                           });
  }

  void answer() {
    std::istream in(&buffer);
    std::string method, target, version;
    in >> method >> target >> version;
    int status = 400;
    std::string body = "bad request\n";
    if (version.rfind("HTTP/1.", 0) != 0) {
      status = 400;
    } else if (method != "GET" && method != "HEAD") {
      status = 405;
      body = "GET only\n";
    } else {
      const auto query = target.find('?');
      body = route(target.substr(0, query), status);
      if (method == "HEAD") body.clear();
    }
    const bool metrics = target.rfind("/metrics", 0) == 0 && status == 200;
    response =
        "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\nContent-Type: " +
        (metrics ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8") +
        "\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n" + body;
    asio::async_write(socket, asio::buffer(response),
                      [self = shared_from_this()](std::error_code, std::size_t) {
                        std::error_code ignored;
                        self->socket.shutdown(asio::socket_base::shutdown_both, ignored);
                      });
  }

  asio::ip::tcp::socket socket;
  asio::steady_timer timer;
  asio::streambuf buffer;
  OpsHttp::Route route;
  std::string response;
};

}  // namespace

struct OpsHttp::Impl : std::enable_shared_from_this<OpsHttp::Impl> {
  Impl(asio::any_io_executor ex, Route r)
      : strand(asio::make_strand(ex)), acceptor(strand), route(std::move(r)) {}
  asio::strand<asio::any_io_executor> strand;
  asio::ip::tcp::acceptor acceptor;
  Route route;
  bool stopped = false;

  void accept_next() {
    acceptor.async_accept(
        asio::make_strand(strand.get_inner_executor()),
        asio::bind_executor(
            strand, [self = shared_from_this()](std::error_code ec, asio::ip::tcp::socket s) {
              if (self->stopped) return;
              if (!ec) std::make_shared<Exchange>(std::move(s), self->route)->start();
              self->accept_next();
            }));
  }
};

OpsHttp::OpsHttp(asio::any_io_executor executor, const std::string& host_port, Route route)
    : impl_(std::make_shared<Impl>(executor, std::move(route))) {
  const Endpoint e = parse_endpoint("tcp:" + host_port, "--http");
  asio::ip::tcp::endpoint where(asio::ip::make_address(e.host), e.port);
  try {
    impl_->acceptor.open(where.protocol());
    impl_->acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(where);
    impl_->acceptor.listen(128);
  } catch (const std::system_error& err) {
    throw Error(errc::spawn_failed, "--http " + host_port + ": " + err.code().message());
  }
  asio::post(impl_->strand, [impl = impl_] { impl->accept_next(); });
}

OpsHttp::~OpsHttp() {
  asio::post(impl_->strand, [impl = impl_] {
    impl->stopped = true;
    std::error_code ignored;
    impl->acceptor.cancel(ignored);
  });
}

std::string OpsHttp::endpoint() const {
  std::error_code ec;
  const auto local = impl_->acceptor.local_endpoint(ec);
  if (ec) return "";
  const std::string host = local.address().to_string();
  return (local.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(local.port());
}

}  // namespace paddock::serve
