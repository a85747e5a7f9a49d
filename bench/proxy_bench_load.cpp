// proxy_bench's helper modes, each run by a driver in proxy_bench.cpp as a process of its own:
// `client` (the one throughput client of every variant, blocking), `rate-load` and
// `tunnels-load` (single-threaded Asio clients through paddock's proxy, HTTP CONNECT or SOCKS5,
// with the Asio sink at the tunnels' far end). They print RESULT lines (or speak a line
// protocol on stdin/stdout) for the driver to read.
#include "proxy_bench_load.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/read_until.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy_bench_common.hpp"
#include "runtime/text_encoding.hpp"

namespace proxy_bench {

namespace {

using asio::ip::tcp;
constexpr auto nothrow = asio::experimental::as_tuple(asio::use_awaitable);

void raise_nofile() {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
}

std::string connect_request(const std::string& host, const std::string& port,
                            const std::string& credential) {
  std::string r =
      "CONNECT " + host + ":" + port + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n";
  if (!credential.empty())
    r += "Proxy-Authorization: Basic " + paddock::base64_encode(credential) + "\r\n";
  return r + "\r\n";
}

}  // namespace

// ---- client BYTES HOST PORT [--proxy HOST:PORT --auth USER:PASS | --proxy-env] -------------
// The one client every throughput variant runs (a process of its own each time, inside `srt`
// for srt's row): only how it reaches the sink differs. The tunnel handshake is outside the
// timed part; the clock runs from the request for BYTES to the last byte received.
int client_main(int argc, char** argv) {
  if (argc < 5) return 2;
  const long long bytes = std::atoll(argv[2]);
  const std::string host = argv[3], port = argv[4];
  std::string proxy_host, proxy_port, credential;
  for (int i = 5; i < argc; ++i) {
    std::string a = argv[i];
    auto split = [](const std::string& s, std::string& h, std::string& p) {
      auto c = s.rfind(':');
      h = s.substr(0, c);
      p = s.substr(c + 1);
    };
    if (a == "--proxy" && i + 1 < argc) {
      split(argv[++i], proxy_host, proxy_port);
    } else if (a == "--auth" && i + 1 < argc) {
      credential = argv[++i];
    } else if (a == "--proxy-env") {
      // srt sets HTTPS_PROXY=http://USER:TOKEN@localhost:3128 in the sandbox.
      const char* env = std::getenv("HTTPS_PROXY");
      if (env == nullptr) env = std::getenv("https_proxy");
      if (env == nullptr) {
        std::printf("no HTTPS_PROXY in the environment\n");
        return 1;
      }
      std::string url = env;
      if (auto s = url.find("://"); s != std::string::npos) url = url.substr(s + 3);
      if (!url.empty() && url.back() == '/') url.pop_back();
      if (auto at = url.rfind('@'); at != std::string::npos) {
        credential = url.substr(0, at);
        url = url.substr(at + 1);
      }
      split(url, proxy_host, proxy_port);
    }
  }
  const bool proxied = !proxy_host.empty();
  int fd = proxied ? dial(proxy_host, proxy_port) : dial(host, port);
  // Inside `srt` the command starts while srt's in-sandbox socat may not be listening on
  // :3128 yet (it is started in the background just before): retry a refused dial for up to
  // 3 s, as a patient client would. Outside the timed part; the other rows never need it.
  for (int i = 0; fd < 0 && errno == ECONNREFUSED && i < 60; ++i) {
    ::usleep(50'000);
    fd = proxied ? dial(proxy_host, proxy_port) : dial(host, port);
  }
  if (fd < 0) {
    std::printf("connect failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (proxied) {
    std::string req = connect_request(host, port, credential);
    if (!write_all(fd, req.data(), req.size())) return 1;
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos) {  // byte by byte: nothing past the head
      if (::recv(fd, &c, 1, 0) != 1) {
        std::printf("proxy closed during the handshake: %s\n", head.c_str());
        return 1;
      }
      head += c;
    }
    if (head.compare(0, 12, "HTTP/1.1 200") != 0 && head.compare(0, 12, "HTTP/1.0 200") != 0) {
      std::printf("proxy refused: %s\n", head.substr(0, head.find('\r')).c_str());
      return 1;
    }
  }
  std::unique_ptr<char[]> buf(new char[kBulkBuffer]);
  const auto t = clock_type::now();
  if (!write_all(fd, reinterpret_cast<const char*>(&bytes), sizeof bytes)) return 1;
  long long got = 0;
  while (got < bytes) {
    ssize_t r = ::recv(fd, buf.get(), kBulkBuffer, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += r;
  }
  const double us = us_since(t);
  ::close(fd);
  if (got != bytes) {
    std::printf("short transfer: %lld of %lld bytes\n", got, bytes);
    return 1;
  }
  std::printf("RESULT %.0f %lld\n", us, got);
  return 0;
}

namespace {

// ---- asio client side (rate-load, tunnels-load) -------------------------------------------

struct ClientSpec {
  tcp::endpoint proxy;
  bool socks5 = false;
  std::string host;  // the target, as named in the request
  uint16_t port = 0;
  std::string user, password;
};

// After the TCP connect: the handshake up to the proxy's success reply, nothing read beyond it.
asio::awaitable<bool> handshake(tcp::socket& s, const ClientSpec& c) {
  if (!c.socks5) {
    std::string req = connect_request(c.host, std::to_string(c.port), c.user + ":" + c.password);
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(req), nothrow);
    if (ec) co_return false;
    std::string head;
    auto [rec, m] =
        co_await asio::async_read_until(s, asio::dynamic_buffer(head), "\r\n\r\n", nothrow);
    co_return !rec && head.size() == m && head.compare(0, 12, "HTTP/1.1 200") == 0;
  }
  unsigned char reply[262];
  const unsigned char greeting[] = {5, 1, 2};  // username/password, as paddock's sandbox uses
  if (std::get<0>(co_await asio::async_write(s, asio::buffer(greeting), nothrow))) co_return false;
  if (std::get<0>(co_await asio::async_read(s, asio::buffer(reply, 2), nothrow)) || reply[1] != 2)
    co_return false;
  std::string up{char(1), char(c.user.size())};
  up += c.user;
  up += char(c.password.size());
  up += c.password;
  if (std::get<0>(co_await asio::async_write(s, asio::buffer(up), nothrow))) co_return false;
  if (std::get<0>(co_await asio::async_read(s, asio::buffer(reply, 2), nothrow)) || reply[1] != 0)
    co_return false;
  std::string req{char(5), char(1), char(0), char(3), char(c.host.size())};
  req += c.host;
  req += char(c.port >> 8);
  req += char(c.port & 0xff);
  if (std::get<0>(co_await asio::async_write(s, asio::buffer(req), nothrow))) co_return false;
  if (std::get<0>(co_await asio::async_read(s, asio::buffer(reply, 4), nothrow)) || reply[1] != 0)
    co_return false;
  std::size_t rest = reply[3] == 1 ? 6 : reply[3] == 4 ? 18 : 0;
  if (reply[3] == 3) {
    if (std::get<0>(co_await asio::async_read(s, asio::buffer(reply, 1), nothrow))) co_return false;
    rest = reply[0] + 2u;
  }
  co_return !std::get<0>(co_await asio::async_read(s, asio::buffer(reply, rest), nothrow));
}

ClientSpec client_spec(uint16_t proxy_port, const std::string& proto, const std::string& host,
                       uint16_t target_port, const std::string& credential) {
  ClientSpec c;
  c.proxy = tcp::endpoint(asio::ip::address_v4::loopback(), proxy_port);
  c.socks5 = proto == "socks5";
  c.host = host;
  c.port = target_port;
  auto colon = credential.find(':');
  c.user = credential.substr(0, colon);
  c.password = credential.substr(colon + 1);
  return c;
}

// A sink that holds each connection until EOF; echo=true sends back what it reads.
asio::awaitable<void> sink_connection(tcp::socket s, bool echo) {
  char buf[512];
  for (;;) {
    auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), nothrow);
    if (ec) co_return;
    if (echo && std::get<0>(co_await asio::async_write(s, asio::buffer(buf, n), nothrow)))
      co_return;
  }
}

asio::awaitable<void> sink_accept(tcp::acceptor& a, bool echo) {
  for (;;) {
    auto [ec, s] = co_await a.async_accept(nothrow);
    if (ec == asio::error::operation_aborted || !a.is_open()) co_return;
    if (!ec) asio::co_spawn(a.get_executor(), sink_connection(std::move(s), echo), asio::detached);
  }
}

}  // namespace

// ---- rate-load PROXY_PORT SECONDS CONCURRENCY http|socks5 TARGET_HOST USER:PASS -----------
// Sink and clients in one single-threaded process apart from the proxy: the proxy process's
// CPU time is then the proxy's alone.
int rate_load_main(int argc, char** argv) {
  if (argc < 9) return 2;
  raise_nofile();
  asio::io_context io(1);
  tcp::acceptor sink(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  const ClientSpec spec = client_spec(static_cast<uint16_t>(std::atoi(argv[2])), argv[5], argv[6],
                                      sink.local_endpoint().port(), argv[7]);
  const double seconds = std::atof(argv[3]);
  const int concurrency = std::atoi(argv[4]);
  asio::co_spawn(io, sink_accept(sink, false), asio::detached);
  const auto start = clock_type::now();
  const auto warm_end = start + std::chrono::milliseconds(500);
  const auto end = warm_end + std::chrono::microseconds(static_cast<long long>(seconds * 1e6));
  std::vector<double> latency;
  latency.reserve(1 << 20);
  long failed = 0, total = 0;  // total: every completed handshake, warm-up included (for CPU)
  int running = concurrency;
  for (int i = 0; i < concurrency; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          while (clock_type::now() < end) {
            tcp::socket s(io);
            const auto t = clock_type::now();
            auto [ec] = co_await s.async_connect(spec.proxy, nothrow);
            bool ok = false;
            if (!ec) {
              std::error_code ignored;
              s.set_option(tcp::no_delay(true), ignored);
              ok = co_await handshake(s, spec);
            }
            const auto done = clock_type::now();
            total += ok ? 1 : 0;
            if (done >= warm_end && done < end) {
              if (ok)
                latency.push_back(std::chrono::duration<double, std::micro>(done - t).count());
              else
                ++failed;
            }
            std::error_code ignored;
            s.close(ignored);
          }
          if (--running == 0) {
            sink.close();
            io.stop();
          }
        },
        asio::detached);
  }
  io.run();
  if (latency.empty()) {
    std::printf("RESULT 0 0 %ld %ld\n", failed, total);
    return 1;
  }
  // Every latency to the file the orchestrator pools over rounds (raw doubles, µs).
  if (std::FILE* f = std::fopen(argv[8], "wb")) {
    std::fwrite(latency.data(), sizeof(double), latency.size(), f);
    std::fclose(f);
  }
  std::printf("RESULT %zu %.6f %ld %ld\n", latency.size(), seconds, failed, total);
  return 0;
}

// ---- tunnels-load PROXY_PORT N USER:PASS --------------------------------------------------
// Holds the client and the sink (echo) end of N tunnels, so the proxy process holds only its
// own 2 fds per tunnel. Phases on stdin/stdout: prints WARM; GO -> opens N, prints OPEN secs
// failures; CHECK -> one byte through each and back, prints CHECKED ok secs; QUIT.
int tunnels_load_main(int argc, char** argv) {
  if (argc < 5) return 2;
  raise_nofile();
  asio::io_context io(1);
  tcp::acceptor sink(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  sink.listen(4096);
  const ClientSpec spec = client_spec(static_cast<uint16_t>(std::atoi(argv[2])), "http",
                                      "localhost", sink.local_endpoint().port(), argv[4]);
  const std::size_t n = static_cast<std::size_t>(std::atol(argv[3]));
  asio::co_spawn(io, sink_accept(sink, true), asio::detached);

  std::vector<std::optional<tcp::socket>> tunnels;
  // Opens `count` tunnels, at most 256 handshakes in flight (the listen backlog is 4096).
  auto open = [&](std::size_t count) {
    tunnels.clear();
    tunnels.resize(count);
    std::size_t next = 0, failed = 0;
    int workers = 256;
    for (int w = 0; w < 256; ++w) {
      asio::co_spawn(
          io,
          [&]() -> asio::awaitable<void> {
            while (next < count) {
              std::size_t i = next++;
              tcp::socket s(io);
              auto [ec] = co_await s.async_connect(spec.proxy, nothrow);
              if (!ec && co_await handshake(s, spec))
                tunnels[i].emplace(std::move(s));
              else
                ++failed;
            }
            if (--workers == 0) io.stop();
          },
          asio::detached);
    }
    io.restart();
    io.run();
    return failed;
  };
  // One byte through every open tunnel and back, all at once.
  auto check = [&] {
    std::size_t ok = 0, pending = 0;
    for (auto& t : tunnels) {
      if (!t) continue;
      ++pending;
      asio::co_spawn(
          io,
          [&, s = &*t]() -> asio::awaitable<void> {
            char out = 'p', in = 0;
            auto [wec, w] = co_await asio::async_write(*s, asio::buffer(&out, 1), nothrow);
            if (!wec) {
              auto [rec, r] = co_await asio::async_read(*s, asio::buffer(&in, 1), nothrow);
              if (!rec && in == out) ++ok;
            }
            if (--pending == 0) io.stop();
          },
          asio::detached);
    }
    if (pending > 0) {
      io.restart();
      io.run();
    }
    return ok;
  };
  auto command = [] {
    char line[64];
    if (std::fgets(line, sizeof line, stdin) == nullptr) std::exit(0);
    return std::string(line);
  };

  // Warm-up: the proxy's per-thread relay buffers, its resolver threads, its allocator arenas
  // exist before the "before" reading, so the per-tunnel figure is the tunnels' own.
  open(64);
  check();
  tunnels.clear();  // closed: the sink must see the EOFs for the proxy to end those tunnels
  io.restart();
  io.run_for(std::chrono::milliseconds(300));
  std::printf("WARM\n");
  std::fflush(stdout);
  if (command() != "GO\n") return 1;
  auto t = clock_type::now();
  std::size_t failed = open(n);
  std::printf("OPEN %.3f %zu\n", us_since(t) / 1e6, failed);
  std::fflush(stdout);
  if (command() != "CHECK\n") return 1;
  t = clock_type::now();
  std::size_t ok = check();
  std::printf("CHECKED %zu %.3f\n", ok, us_since(t) / 1e6);
  std::fflush(stdout);
  command();  // QUIT
  return 0;
}

}  // namespace proxy_bench
