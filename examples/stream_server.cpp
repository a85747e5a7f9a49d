// An Asio server that embeds paddock and streams each command's output to its own clients:
// a client connects over TCP, sends one line (a shell command), and receives the command's
// output as it is written, then "[exit N]" and the end of the connection.
//
//   paddock_example_stream_server 7070                       # commands run in this process
//   paddock_example_stream_server 7070 unix:/run/paddock.sock  # ... or through `paddock serve`
//   printf 'for i in 1 2 3; do echo $i; sleep 0.2; done\n' | nc 127.0.0.1 7070
//
// Both ways have the same shape: async_exec with an on_output callback (paddock::Manager in
// process, paddock::ServeClient through the daemon, whose sandboxes are made ahead). The
// output callback runs on paddock's side; each chunk is handed to the connection's strand,
// which writes one chunk at a time, so a slow client delays only its own output. A client
// that hangs up ends its command: the call's cancellation slot (any Asio operation's way).
// One thread runs the io_context (main), so the slot is emitted on the thread that owns it.
#include <array>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/read_until.hpp>
#include <asio/signal_set.hpp>
#include <asio/strand.hpp>
#include <asio/streambuf.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "paddock/serve_client.hpp"

namespace {

using asio::ip::tcp;

// One client: its socket, and the chunks waiting to be written to it, in order.
class ClientSession : public std::enable_shared_from_this<ClientSession> {
 public:
  explicit ClientSession(tcp::socket socket)
      : strand_(asio::make_strand(socket.get_executor())), socket_(std::move(socket)) {}

  tcp::socket& socket() { return socket_; }

  // Calls `gone` once the client hangs up (or the connection fails), or when it is closed
  // after the last write; anything more the client sends is read and ignored.
  void on_hangup(std::function<void()> gone) {
    auto buf = std::make_shared<std::array<char, 512>>();
    socket_.async_read_some(
        asio::buffer(*buf),
        asio::bind_executor(strand_, [self = shared_from_this(), buf, gone = std::move(gone)](
                                         std::error_code ec, std::size_t) {
          if (ec) return gone();
          self->on_hangup(std::move(gone));
        }));
  }

  // From any thread: queued on the strand, written in order.
  void send(std::string bytes, bool last = false) {
    asio::post(strand_, [self = shared_from_this(), bytes = std::move(bytes), last]() mutable {
      self->queue_.push_back(std::move(bytes));
      self->close_after_ = self->close_after_ || last;
      if (!self->writing_) self->write_next();
    });
  }

 private:
  void write_next() {
    if (queue_.empty()) {
      writing_ = false;
      if (close_after_) {
        std::error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_both, ignored);  // nothing is in flight now
      }
      return;
    }
    writing_ = true;
    asio::async_write(
        socket_, asio::buffer(queue_.front()),
        asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, std::size_t) {
          self->queue_.pop_front();
          if (ec) self->queue_.clear();  // the client left: drop the rest
          self->write_next();
        }));
  }

  asio::strand<asio::any_io_executor> strand_;
  tcp::socket socket_;
  std::deque<std::string> queue_;
  bool writing_ = false, close_after_ = false;
};

// Runs `line` through whichever paddock this server embeds.
struct Runner {
  paddock::Manager* manager = nullptr;
  paddock::ServeClient* client = nullptr;

  asio::awaitable<paddock::ExecResult> run(std::string line,
                                           std::shared_ptr<ClientSession> session) {
    auto on_output = [session](paddock::OutputStream, std::string_view bytes) {
      session->send(std::string(bytes));
    };
    // The client hanging up cancels the call: the command and all it started are killed.
    // (After a normal end this fires too, when the connection closes: nothing to cancel then.)
    auto hangup = std::make_shared<asio::cancellation_signal>();
    session->on_hangup([hangup] { hangup->emit(asio::cancellation_type::terminal); });
    auto token = asio::bind_cancellation_slot(hangup->slot(), asio::use_awaitable);
    if (client != nullptr) {
      paddock::ServeClient::Exec e;
      e.timeout = std::chrono::seconds(30);
      e.keep_output = false;  // streamed only: nothing is kept in this process
      e.on_output = on_output;
      co_return co_await client->async_exec(paddock::Command::shell_string(std::move(line)),
                                            std::move(e), token);
    }
    paddock::ExecOptions o;
    o.timeout = std::chrono::seconds(30);
    o.keep_output = false;
    o.on_output = on_output;
    co_return co_await manager->async_exec(paddock::Command::shell_string(std::move(line)),
                                           std::move(o), token);
  }
};

asio::awaitable<void> serve_one(std::shared_ptr<ClientSession> session, Runner& runner) {
  asio::streambuf in(64 * 1024);
  std::string line;
  try {
    const std::size_t n =
        co_await asio::async_read_until(session->socket(), in, '\n', asio::use_awaitable);
    line.assign(asio::buffers_begin(in.data()),
                asio::buffers_begin(in.data()) + static_cast<std::ptrdiff_t>(n) - 1);
  } catch (const std::system_error&) {
    co_return;  // no line: nothing to run
  }
  std::string status;
  try {
    paddock::ExecResult r = co_await runner.run(line, session);
    status = "[exit " + std::to_string(r.exit_code) + "]\n";
  } catch (const std::system_error& e) {  // refused, timed out, the daemon went away, ...
    status = "[paddock: " + std::string(paddock::code_string(e.code())) + ": " + e.what() + "]\n";
  }
  session->send(status, /*last=*/true);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, Runner& runner) {
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
    auto session = std::make_shared<ClientSession>(std::move(socket));
    asio::co_spawn(acceptor.get_executor(), serve_one(session, runner), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PORT [unix:PATH|tcp:HOST:PORT of paddock serve]\n", argv[0]);
    return 2;
  }
  asio::io_context io;
  int status = 0;
  Runner runner;
  std::optional<paddock::Manager> manager;
  std::optional<paddock::ServeClient> client;
  if (argc > 2) {
    client.emplace(io.get_executor());
    client->async_connect(argv[2], {}, [&](std::error_code ec) {
      if (!ec) return;
      std::fprintf(stderr, "stream_server: %s: %s\n", argv[2], client->error_message().c_str());
      status = 1;
      io.stop();
    });
    runner.client = &*client;
  } else {
    manager.emplace(io.get_executor(), paddock::DefaultConfig());
    runner.manager = &*manager;
  }
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(std::stoi(argv[1]))));
  std::printf("listening on 127.0.0.1:%u\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  asio::co_spawn(io, accept_loop(acceptor, runner), asio::detached);
  asio::signal_set stop(io, SIGINT, SIGTERM);
  stop.async_wait([&](std::error_code, int) { io.stop(); });
  io.run();
  return status;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stream_server: %s\n", e.what());
  return 1;
}
