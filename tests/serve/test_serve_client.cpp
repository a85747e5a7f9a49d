// paddock::ServeClient (paddock/serve_client.hpp) against an in-process daemon over a real
// unix socket: streamed output in order, the full result, stdin (whole and streamed), signal,
// cancel through a cancellation slot, approvals, the daemon's errors as error codes, many
// commands at once on one connection, a refused endpoint, and the connection's end.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/post.hpp>
#include <asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <thread>

#include "paddock/errors.hpp"
#include "paddock/serve_client.hpp"
#include "serve/daemon_fixture.hpp"
#include "support/processes.hpp"

using namespace std::chrono_literals;

extern char** environ;

namespace {

struct Connected {
  explicit Connected(paddock::Config config = test::unclassified_sandbox()) : daemon(config) {
    auto f = client.async_connect("unix:" + daemon.path, {}, asio::use_future);
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
    REQUIRE_NOTHROW(f.get());
  }
  test::Daemon daemon;
  paddock::ServeClient client{test::shared_runtime().executor()};
};

// Waits for a future with a deadline, so a lost completion fails the test instead of hanging.
template <typename T>
T get(std::future<T>& f) {
  REQUIRE(f.wait_for(60s) == std::future_status::ready);
  return f.get();
}

}  // namespace

TEST_CASE("serve client: output streamed in order, then the result", "[serve][client]") {
  Connected c;
  std::string streamed;
  paddock::ServeClient::Exec e;
  e.env = {{"CLIENT_X", "7"}};
  e.on_output = [&](paddock::OutputStream s, std::string_view bytes) {
    streamed += (s == paddock::OutputStream::stdout_stream ? "o:" : "e:") + std::string(bytes);
  };
  int started_pid = 0;
  e.on_started = [&](int pid) { started_pid = pid; };
  auto f = c.client.async_exec(paddock::Command::shell_string(
                                   "echo one $CLIENT_X; echo two >&2; printf '\\377\\000'; exit 4"),
                               std::move(e), asio::use_future);
  auto r = get(f);
  CHECK(r.exit_code == 4);
  CHECK(r.sandboxed);
  CHECK(started_pid > 0);
  CHECK(r.stdout_data == std::string("one 7\n\xff\x00", 8));  // non-UTF-8 bytes: nothing lost
  CHECK(r.stderr_data == "two\n");
  CHECK(r.stdout_bytes_total == 8);
  CHECK(streamed.find("o:one 7\n") != std::string::npos);
  CHECK(streamed.find("e:two\n") != std::string::npos);
}

TEST_CASE("serve client: stdin given whole and streamed", "[serve][client]") {
  Connected c;
  paddock::ServeClient::Exec whole;
  whole.stdin_data = std::string("stream\n\xfe", 8);  // bytes that spell the protocol's word
  auto f1 =
      c.client.async_exec(paddock::Command::exec({"/bin/cat"}), std::move(whole), asio::use_future);
  CHECK(get(f1).stdout_data == std::string("stream\n\xfe", 8));

  paddock::ServeClient::Exec streamed;
  streamed.id = "cat-stream";
  streamed.stdin_stream = true;
  auto f2 = c.client.async_exec(paddock::Command::exec({"/bin/cat"}), std::move(streamed),
                                asio::use_future);
  c.client.write_stdin("cat-stream", "first ");
  c.client.write_stdin("cat-stream", "second");
  c.client.close_stdin("cat-stream");
  auto r = get(f2);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == "first second");
}

TEST_CASE("serve client: signal, and cancel through a cancellation slot", "[serve][client]") {
  Connected c;
  paddock::ServeClient::Exec e;
  e.id = "sleeper";
  std::promise<void> started;
  e.on_started = [&](int) { started.set_value(); };
  auto f = c.client.async_exec(paddock::Command::exec({"/bin/sleep", "60"}), std::move(e),
                               asio::use_future);
  REQUIRE(started.get_future().wait_for(30s) == std::future_status::ready);
  c.client.signal("sleeper", SIGTERM);
  auto r = get(f);
  CHECK(r.signal == SIGTERM);

  asio::cancellation_signal cancel;
  std::promise<void> started2;
  paddock::ServeClient::Exec e2;
  e2.on_started = [&](int) { started2.set_value(); };
  auto f2 = c.client.async_exec(paddock::Command::exec({"/bin/sleep", "60"}), std::move(e2),
                                asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
  REQUIRE(started2.get_future().wait_for(30s) == std::future_status::ready);
  asio::post(test::shared_runtime().executor(),
             [&] { cancel.emit(asio::cancellation_type::terminal); });
  std::future_status status = f2.wait_for(60s);
  REQUIRE(status == std::future_status::ready);
  CHECK_THROWS_AS(f2.get(), std::system_error);  // use_future: operation_aborted as a throw
}

TEST_CASE("serve client: the daemon's refusals are error codes", "[serve][client]") {
  auto config = test::sandbox_config();
  config.commands = paddock::DefaultConfig().commands;  // classified: chmod o+w is escalated
  Connected c(config);
  auto f = c.client.async_exec(paddock::Command::exec({"/no/such/program"}), {}, asio::use_future);
  CHECK_THROWS_AS(f.get(), std::system_error);
  // An escalated command: the client's approve callback is asked.
  paddock::ServeClient::Exec e;
  bool asked = false;
  e.approve = [&](const paddock::CommandApprovalRequest& req) {
    asked = true;
    CHECK_FALSE(req.command.empty());
    return paddock::Approval::deny;
  };
  std::promise<std::error_code> result;
  c.client.async_exec(paddock::Command::shell_string("touch x; chmod o+w x"), std::move(e),
                      [&](std::error_code ec, paddock::ExecResult) { result.set_value(ec); });
  auto rf = result.get_future();
  REQUIRE(rf.wait_for(60s) == std::future_status::ready);
  CHECK(rf.get() == paddock::make_error_code(paddock::errc::escalated_command));
  CHECK(asked);
}

TEST_CASE("serve client: 100 commands at once on one connection", "[serve][client]") {
  Connected c;
  constexpr int kCount = 100;
  std::vector<std::future<paddock::ExecResult>> all;
  for (int i = 0; i < kCount; ++i) {
    paddock::ServeClient::Exec e;
    all.push_back(
        c.client.async_exec(paddock::Command::exec({"/bin/echo", "n" + std::to_string(i)}),
                            std::move(e), asio::use_future));
  }
  for (int i = 0; i < kCount; ++i) {
    auto r = get(all[i]);
    CHECK(r.stdout_data == "n" + std::to_string(i) + "\n");
  }
}

TEST_CASE("serve client: a wrong endpoint, and the connection's end", "[serve][client]") {
  paddock::ServeClient lost(test::shared_runtime().executor());
  auto bad = lost.async_connect("unix:/nonexistent/paddock.sock", {}, asio::use_future);
  CHECK_THROWS_AS(get(bad), std::system_error);
  paddock::ServeClient wrong(test::shared_runtime().executor());
  auto malformed = wrong.async_connect("http://localhost", {}, asio::use_future);
  CHECK_THROWS_AS(get(malformed), std::system_error);
  CHECK(wrong.error_message().find("unix:PATH or tcp:HOST:PORT") != std::string::npos);
  // The grammar of `paddock serve --listen` (client/endpoint.hpp): the same refusals.
  for (const char* text : {"tcp:[::1]", "tcp::80", "tcp:[]:80", "tcp:host:99999", "unix:"}) {
    INFO(text);
    paddock::ServeClient refused(test::shared_runtime().executor());
    auto f = refused.async_connect(text, "t", asio::use_future);
    CHECK_THROWS_AS(get(f), std::system_error);
    CHECK(refused.error_message().rfind(std::string("endpoint ") + text + ": ", 0) == 0);
  }

  Connected c;
  paddock::ServeClient::Exec e;
  std::promise<void> started;
  e.on_started = [&](int) { started.set_value(); };
  auto f = c.client.async_exec(paddock::Command::exec({"/bin/sleep", "60"}), std::move(e),
                               asio::use_future);
  REQUIRE(started.get_future().wait_for(30s) == std::future_status::ready);
  c.client.close();  // the daemon kills it; the call completes here
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  CHECK_THROWS_AS(f.get(), std::system_error);
}

// An IPv6 host is written in brackets, as the daemon's --listen takes it; the client used to
// hand the brackets to the resolver and never connected.
TEST_CASE("serve client: tcp:[::1]:PORT reaches a listener on IPv6 loopback", "[serve][client]") {
  const int listener = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1) != 0) {
    WARN("no IPv6 loopback here: nothing to connect to");
    if (listener >= 0) ::close(listener);
    return;
  }
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string where = "tcp:[::1]:" + std::to_string(ntohs(addr.sin6_port));
  paddock::ServeClient client(test::shared_runtime().executor());
  auto connected = client.async_connect(where, "t0ken", asio::use_future);
  pollfd pfd{listener, POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 10000) == 1);  // the client connected
  const int peer = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  REQUIRE(peer >= 0);
  std::string line;
  char c;
  pfd = {peer, POLLIN, 0};
  while (line.size() < 4096 && ::poll(&pfd, 1, 10000) == 1 && ::read(peer, &c, 1) == 1 &&
         c != '\n') {
    line += c;
  }
  CHECK(line.find("\"hello\"") != std::string::npos);  // its first line, over IPv6
  ::close(peer);
  ::close(listener);
  CHECK_THROWS_AS(get(connected), std::system_error);  // no daemon answered
}

#ifdef STREAM_SERVER_BINARY
namespace {

// The example server as a process of its own; its first line says its port.
struct StreamServer {
  explicit StreamServer(const std::string& daemon = {}) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    // Its stderr kept, for a failure to say why (the example says what it could not reach).
    char err_path[] = "/tmp/paddock-stream-server-XXXXXX";
    const int err = ::mkstemp(err_path);
    REQUIRE(err >= 0);
    stderr_path = err_path;
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    std::vector<std::string> args = {STREAM_SERVER_BINARY, "0"};
    if (!daemon.empty()) args.push_back(daemon);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    REQUIRE(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(err);
    std::string first;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') first += c;  // "listening on 127.0.0.1:P"
    ::close(out[0]);
    REQUIRE(first.rfind("listening on 127.0.0.1:", 0) == 0);
    port = std::stoi(first.substr(first.rfind(':') + 1));
  }
  ~StreamServer() {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    ::unlink(stderr_path.c_str());
  }
  // What the server wrote on stderr, and whether it is still running (for a failure's message).
  std::string diagnostics() const {
    std::ifstream in(stderr_path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    return "stream_server stderr: [" + text + "]; " +
           (done == pid ? "exited, wait status " + std::to_string(status) : "still running");
  }
  // Sends one command line and hangs up once `marker` runs: the server must end the command.
  bool hang_up_while(const std::string& line, const std::string& marker) const {
    const int fd = connect_to_server();
    const std::string sent = line + "\n";
    REQUIRE(::write(fd, sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
    REQUIRE(test::running_within(marker, 1, 30s));
    ::close(fd);
    return test::gone_within(marker, 10s);
  }
  // Sends one command line and reads until the server closes.
  std::string run(const std::string& line) const {
    const int fd = connect_to_server();
    const std::string sent = line + "\n";
    REQUIRE(::write(fd, sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
    timeval tv{60, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return got;
  }
  int connect_to_server() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    return fd;
  }
  pid_t pid = -1;
  int port = 0;
  std::string stderr_path;
};

}  // namespace

TEST_CASE("the stream server example: output streamed to its clients, in process and via serve",
          "[serve][client][example]") {
  const std::string script = "echo one; echo two >&2; exit 3";
  {
    StreamServer in_process;
    const std::string got = in_process.run(script);
    INFO((got.size() < 9 ? in_process.diagnostics() : std::string()));
    REQUIRE(got.size() >= 9);
    CHECK(got.find("one\n") != std::string::npos);
    CHECK(got.find("two\n") != std::string::npos);
    CHECK(got.substr(got.size() - 9) == "[exit 3]\n");
  }
  test::Daemon daemon(test::unclassified_sandbox());
  StreamServer through_daemon("unix:" + daemon.path);
  const std::string got = through_daemon.run(script);
  INFO((got.size() < 9 ? through_daemon.diagnostics() : std::string()));
  REQUIRE(got.size() >= 9);
  CHECK(got.find("one\n") != std::string::npos);
  CHECK(got.substr(got.size() - 9) == "[exit 3]\n");
}

TEST_CASE("the stream server example: a client that hangs up ends its command",
          "[serve][client][example]") {
  {
    StreamServer in_process;
    CHECK(in_process.hang_up_while("sleep 987661; echo never", "sleep 987661"));
  }
  test::Daemon daemon(test::unclassified_sandbox());
  StreamServer through_daemon("unix:" + daemon.path);
  CHECK(through_daemon.hang_up_while("sleep 987662; echo never", "sleep 987662"));
}
#endif

namespace {

// A daemon that says what the test wants: its hello, then `script(first exec line)` as is.
struct FakeDaemon {
  // hold_hello: the hello waits for release_hello(), so a test knows what the client
  // did before it.
  explicit FakeDaemon(std::function<std::string(const std::string&)> script,
                      bool hold_hello = false)
      : path(test::socket_path("fake")) {
    if (!hold_hello) release_hello();
    listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    thread = std::thread([this, script = std::move(script), gate = hello_gate.get_future()] {
      const int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      auto next_line = [&]() -> std::string {
        for (;;) {
          if (auto nl = in.find('\n'); nl != std::string::npos) {
            std::string line = in.substr(0, nl);
            in.erase(0, nl + 1);
            return line;
          }
          const ssize_t n = ::read(c, buf, sizeof buf);
          if (n <= 0) return {};
          in.append(buf, static_cast<std::size_t>(n));
        }
      };
      next_line();  // the client's hello
      gate.wait();
      const std::string hello = "{\"type\":\"hello\",\"version\":1}\n";
      (void)!::write(c, hello.data(), hello.size());
      const std::string exec = next_line();
      received = exec;
      const std::string reply = script(exec);
      for (std::size_t at = 0; at < reply.size();) {
        const ssize_t n = ::write(c, reply.data() + at, reply.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      next_line();  // until the client goes
      ::close(c);
    });
  }
  void release_hello() {
    if (!hello_released) hello_gate.set_value();
    hello_released = true;
  }
  ~FakeDaemon() {
    join();
    ::close(listener);
    ::unlink(path.c_str());
  }
  // Once the client has gone: `received` is complete.
  void join() {
    release_hello();  // a test that failed early must not leave the thread waiting
    ::shutdown(listener, SHUT_RDWR);
    if (thread.joinable()) thread.join();
  }
  std::string path, received;
  std::promise<void> hello_gate;
  bool hello_released = false;
  int listener = -1;
  std::thread thread;
};

std::string id_of(const std::string& exec_line) {
  return nlohmann::json::parse(exec_line).value("id", "");
}

}  // namespace

TEST_CASE("serve client: a daemon that breaks the protocol ends the connection, no throw",
          "[serve][client]") {
  for (const char* bad : {R"({"type":"started","id":"ID","pid":"not a number"})",
                          R"({"type":"error","id":"ID","exit_code":"oops","code":"E_X"})",
                          R"({"type":"stdout","id":"ID","data":7})"}) {
    CAPTURE(bad);
    FakeDaemon fake([bad](const std::string& exec) {
      std::string line = bad;
      line.replace(line.find("ID"), 2, id_of(exec));
      return line + "\n";
    });
    paddock::ServeClient client(test::shared_runtime().executor());
    auto c = client.async_connect("unix:" + fake.path, {}, asio::use_future);
    REQUIRE_NOTHROW(get(c));
    auto f = client.async_exec(paddock::Command::exec({"/bin/true"}), {}, asio::use_future);
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
    CHECK_THROWS_AS(f.get(), std::system_error);
    CHECK(client.error_message().find("broke the protocol") != std::string::npos);
  }
}

TEST_CASE("serve client: kept output stops at the call's cap, whatever the daemon sends",
          "[serve][client]") {
  FakeDaemon fake([](const std::string& exec) {
    const std::string id = id_of(exec), chunk(600 * 1024, 'x');
    std::string out;
    for (int seq = 0; seq < 4; ++seq) {
      out += nlohmann::json{{"type", "stdout"}, {"id", id}, {"seq", seq}, {"data", chunk}}.dump() +
             "\n";
    }
    return out + nlohmann::json{{"type", "exit"}, {"id", id}, {"exit_code", 0}}.dump() + "\n";
  });
  paddock::ServeClient client(test::shared_runtime().executor());
  auto c = client.async_connect("unix:" + fake.path, {}, asio::use_future);
  REQUIRE_NOTHROW(get(c));
  std::size_t streamed = 0;
  paddock::ServeClient::Exec e;
  e.on_output = [&](paddock::OutputStream, std::string_view bytes) { streamed += bytes.size(); };
  auto f = client.async_exec(paddock::Command::exec({"/bin/true"}), std::move(e), asio::use_future);
  auto r = get(f);
  CHECK(streamed == 4 * 600 * 1024);  // every chunk reached the callback
  CHECK(r.stdout_data.size() == 1024 * 1024);
  CHECK(r.truncated);
}

TEST_CASE("serve client: a command cancelled before it was sent is never sent", "[serve][client]") {
  FakeDaemon fake([](const std::string&) { return std::string(); }, /*hold_hello=*/true);
  paddock::ServeClient client(test::shared_runtime().executor());
  asio::cancellation_signal cancel;
  paddock::ServeClient::Exec e;
  e.id = "never";
  // Issued before the hello arrives (the fake holds it): the exec waits for the hello,
  // and the cancel comes first.
  auto c = client.async_connect("unix:" + fake.path, {}, asio::use_future);
  auto f = client.async_exec(paddock::Command::exec({"/bin/true"}), std::move(e),
                             asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
  cancel.emit(asio::cancellation_type::terminal);
  fake.release_hello();
  REQUIRE_NOTHROW(get(c));
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  CHECK_THROWS_AS(f.get(), std::system_error);
  client.close();
  fake.join();
  CHECK(fake.received.find("never") == std::string::npos);
}
