// A `paddock run` helper's client gives the command its own standard streams (SCM_RIGHTS with
// the exec line, "given"): the command writes and reads them as a run in the client's process
// would, and nothing the client sends that way lets a sandboxed command reach a host inode
// (a file, a directory, a device other than /dev/null) or more descriptors than streams.
// Tagged [helper]: the suite runs again as nobody.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "serve/daemon_fixture.hpp"
#include "serve/protocol.hpp"
#include "serve/serve_client.hpp"

using namespace std::chrono_literals;
using nlohmann::json;
using test::Daemon;
using test::unclassified_sandbox;

namespace {

// As the helper's (cli/run_helper.cpp).
paddock::serve::ServeOptions helper_rules() {
  paddock::serve::ServeOptions o;
  o.rules.parent_env = true;
  o.rules.given_descriptors = true;
  o.rules.keyed_lines = true;
  o.rules.one_writer = true;
  o.peer_namespaces = {"user", "mnt", "net", "pid", "ipc", "uts", "cgroup"};
  return o;
}

// Everything in the pipe up to its end (every writer gone), or what came by the deadline.
std::string read_to_end(int fd, std::chrono::milliseconds limit = 20s) {
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  std::string all;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return all;
    if (n > 0) all.append(buf, static_cast<std::size_t>(n));
  }
  return all + "[no end]";
}

// What a command inside would ask of the daemon: a command of its own, writing on the host.
std::string escape_line(const std::string& marker) {
  return json{{"type", "exec"},
              {"id", 9},
              {"argv", {"/bin/sh", "-c", "echo escaped > " + marker}},
              {"cwd", std::filesystem::path(marker).parent_path().string()}}
      .dump();
}

// The daemon closed the connection (EOF) rather than leaving it open past 10 s.
bool closed_by_daemon(test::LineClient& c) {
  while (c.line(std::chrono::seconds(10))) {
  }
  return c.last_errno() == 0;
}

struct Pipe {
  Pipe() { REQUIRE(::pipe2(fd, O_CLOEXEC) == 0); }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int end) {
    ::close(fd[end]);
    fd[end] = -1;
  }
  int fd[2];
};

}  // namespace

TEST_CASE("serve given: the command reads and writes the client's own pipes", "[serve][helper]") {
  Daemon d(unclassified_sandbox(), helper_rules());
  auto c = d.connect();
  c.greet();
  Pipe in, out;
  REQUIRE(::write(in.fd[1], "from the client\n", 16) == 16);
  in.close(1);
  // stdout and stderr on one pipe (`2>&1 | ...`): one stream, in the order written.
  REQUIRE(c.send_with_fds({{"type", "exec"},
                           {"id", 1},
                           {"argv", {"/bin/sh", "-c", "cat; echo out; echo err >&2; echo out2"}},
                           {"given", {"stdin", "stdout", "stderr"}}},
                          {in.fd[0], out.fd[1], out.fd[1]}));
  in.close(0);
  out.close(1);
  const auto events = c.until("exit", 1);
  for (const auto& e : events) CHECK(e["type"] != "stdout");
  CHECK(events.back()["exit_code"] == 0);
  CHECK(read_to_end(out.fd[0]) == "from the client\nout\nerr\nout2\n");

  // Only the streams named are given: stderr still comes back as events.
  Pipe only_out;
  REQUIRE(c.send_with_fds({{"type", "exec"},
                           {"id", 2},
                           {"argv", {"/bin/sh", "-c", "echo o; echo e >&2"}},
                           {"given", {"stdout"}}},
                          {only_out.fd[1]}));
  only_out.close(1);
  std::string err;
  for (const auto& e : c.until("exit", 2)) {
    if (e["type"] == "stderr") err += e["data"].get<std::string>();
  }
  CHECK(err == "e\n");
  CHECK(read_to_end(only_out.fd[0]) == "o\n");

  // A line sent just before, without descriptors, joined to the same read (hostile review
  // helper-48: the descriptors went with the first line and were lost).
  for (int round = 0; round < 5; ++round) {
    Pipe joined;
    c.send({{"type", "ping"}, {"id", "before"}});
    REQUIRE(c.send_with_fds({{"type", "exec"},
                             {"id", 10 + round},
                             {"argv", {"/bin/echo", "joined"}},
                             {"given", {"stdout"}}},
                            {joined.fd[1]}));
    joined.close(1);
    CHECK(c.until("exit", 10 + round).back()["exit_code"] == 0);
    CHECK(read_to_end(joined.fd[0]) == "joined\n");
  }

  // A connected unix stream pair (how libuv and others give a child its stdio) is taken.
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  REQUIRE(c.send_with_fds(
      {{"type", "exec"}, {"id", 3}, {"argv", {"/bin/echo", "paired"}}, {"given", {"stdout"}}},
      {pair[1]}));
  ::close(pair[1]);
  CHECK(c.until("exit", 3).back()["exit_code"] == 0);
  CHECK(read_to_end(pair[0]) == "paired\n");
  ::close(pair[0]);
}

// Hostile review helper-47: a connection to the helper, given to a sandboxed command as its
// stdout, let the command write protocol lines the helper trusted (its peer was checked when
// it connected): commands anywhere, with the helper's reach. Every segment's writer is checked
// now: the first line from inside the sandbox closes the connection, and nothing it asked runs.
TEST_CASE("serve given: a connection handed into a sandbox cannot speak for its client",
          "[serve][helper]") {
  Daemon d(unclassified_sandbox(), helper_rules());
  const std::string marker = test::socket_path("escaped") + ".txt";
  const std::string line = escape_line(marker);
  const std::string shell = "printf '%s\\n' \"$0\"; sleep 5";
  {
    // Our very connection as the command's stdout: refused (hostile review helper-49: it
    // would read our events, the hello's key among them, and write as us).
    auto c = d.connect();
    c.greet();
    REQUIRE(c.send_with_fds({{"type", "exec"},
                             {"id", 1},
                             {"argv", {"/bin/sh", "-c", shell, line}},
                             {"given", {"stdout"}}},
                            {c.native_handle()}));
    const auto e = c.until("error", 1).back();
    CHECK(e["message"] == "a connection to this daemon cannot be a command's stream");
  }
  {
    // Handed on otherwise (a command the client runs itself, in its own process): the
    // command's line is another process's, and closes the connection.
    auto c = d.connect();
    c.greet();
    paddock::ExecOptions o;
    o.stdout_fd = c.native_handle();
    o.timeout = std::chrono::seconds(20);
    const auto begun = std::chrono::steady_clock::now();
    auto r = d.h.exec(paddock::Command::exec({"/bin/sh", "-c", shell, line}), std::move(o));
    CHECK(closed_by_daemon(c));  // closed by the daemon
    CHECK(std::chrono::steady_clock::now() - begun < 8s);
  }
  {
    // Even with the key (a client that greeted, then let another process at the answer):
    // only the process that wrote first writes on the connection.
    auto c = d.connect();
    c.greet();
    const pid_t other = ::fork();
    if (other == 0) {
      c.send(nlohmann::json::parse(line));  // keyed: send() adds our key
      ::_exit(0);
    }
    REQUIRE(other > 0);
    ::waitpid(other, nullptr, 0);
    CHECK(closed_by_daemon(c));
  }
  CHECK_FALSE(std::filesystem::exists(marker));
  std::error_code ignored;
  std::filesystem::remove(marker, ignored);
}

TEST_CASE("serve given: a host inode is never given to a sandboxed command", "[serve][helper]") {
  Daemon d(unclassified_sandbox(), helper_rules());
  const std::string file = test::socket_path("given-file") + ".txt";
  { std::ofstream(file) << "host\n"; }
  struct Attempt {
    const char* stream;
    int fd;
  };
  // The host's file (fchmod, writes whatever the mounts say), a directory (openat past every
  // deny rule), its O_PATH spelling, a device that is not /dev/null; sockets that keep the
  // host's network (an unconnected datagram one connect() aims anywhere, abstract unix names
  // too; a TCP one disconnects with connect(AF_UNSPEC) and connects again; a listening one;
  // netlink); an O_PATH handle on a socket file (reopened through /proc/self/fd, past deny
  // rules: hostile review helper-47); a unix datagram pair (connect() re-aims it).
  const int file_fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  const int dir_fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int path_fd = ::open("/etc", O_PATH | O_CLOEXEC);
  const int zero_fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  const int udp_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int unbound_unix = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int netlink_fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
  // A TCP connection on loopback, both ends ours.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in loop{};
  loop.sin_family = AF_INET;
  loop.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t loop_len = sizeof loop;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&loop), sizeof loop) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&loop), &loop_len) == 0);
  const int tcp_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(::connect(tcp_fd, reinterpret_cast<sockaddr*>(&loop), sizeof loop) == 0);
  int dgram_pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dgram_pair) == 0);
  // A socket file on the host, by an O_PATH handle.
  const std::string sock_file = test::socket_path("given-sock");
  const int bound = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un at{};
  at.sun_family = AF_UNIX;
  std::strncpy(at.sun_path, sock_file.c_str(), sizeof at.sun_path - 1);
  REQUIRE(::bind(bound, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  const int sock_path_fd = ::open(sock_file.c_str(), O_PATH | O_CLOEXEC);
  const std::vector<int> all = {file_fd,    dir_fd,   path_fd, zero_fd,       udp_fd, unbound_unix,
                                netlink_fd, listener, tcp_fd,  dgram_pair[0], bound,  sock_path_fd};
  for (int fd : all) REQUIRE(fd >= 0);
  int id = 0;
  for (const Attempt& a :
       {Attempt{"stdout", file_fd}, Attempt{"stderr", file_fd}, Attempt{"stdin", dir_fd},
        Attempt{"stdin", path_fd}, Attempt{"stdout", dir_fd}, Attempt{"stdin", zero_fd},
        Attempt{"stdin", udp_fd}, Attempt{"stdout", unbound_unix}, Attempt{"stdin", netlink_fd},
        Attempt{"stdin", listener}, Attempt{"stdout", tcp_fd}, Attempt{"stdout", dgram_pair[0]},
        Attempt{"stdin", bound}, Attempt{"stdout", sock_path_fd}}) {
    INFO(a.stream << " " << a.fd);
    auto c = d.connect();
    c.greet();
    ++id;
    REQUIRE(c.send_with_fds({{"type", "exec"},
                             {"id", id},
                             {"argv",
                              {"/bin/sh", "-c",
                               "echo owned; echo owned >&2; chmod 777 /proc/self/fd/0 "
                               "/proc/self/fd/1 /proc/self/fd/2"}},
                             {"given", {a.stream}}},
                            {a.fd}));
    const auto events = c.until("error", id);
    CHECK(events.back()["code"] == "E_CONFIG_INVALID");
    CHECK(events.back()["message"].get<std::string>().find(std::string(a.stream) + "_fd") !=
          std::string::npos);
    for (const auto& e : events) CHECK(e["type"] != "started");
  }
  for (int fd : all) ::close(fd);
  ::close(dgram_pair[1]);
  std::ifstream in(file);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "host\n");
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) != 0777);
  REQUIRE(::stat(sock_file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) != 0777);
  std::filesystem::remove(file);
  std::filesystem::remove(sock_file);
}

TEST_CASE("serve given: descriptors are counted and only a helper takes them", "[serve][helper]") {
  Pipe p;
  {
    // More named than came: refused, nothing runs.
    Daemon d(unclassified_sandbox(), helper_rules());
    auto c = d.connect();
    c.greet();
    REQUIRE(c.send_with_fds(
        {{"type", "exec"}, {"id", 1}, {"argv", {"/bin/true"}}, {"given", {"stdout", "stderr"}}},
        {p.fd[1]}));
    const auto e = c.until("error", 1).back();
    CHECK(e["message"] == "2 descriptors named in \"given\", 1 came with the line");
    // A name twice, or one that is no stream (a keyed connection closes on such a line; the
    // parser says why).
    paddock::serve::RequestRules rules;
    rules.given_descriptors = true;
    for (const auto& [given, why] :
         {std::pair{json{"stdout", "stdout"}, "named twice"},
          std::pair{json{"stdfoo"}, "not stdin"}, std::pair{json{"stdin"}, "at once"}}) {
      json line = {{"type", "exec"}, {"id", 2}, {"argv", {"/bin/cat"}}, {"given", given}};
      if (given == json{"stdin"}) line["stdin"] = "x";
      const auto parsed = paddock::serve::parse_request(line.dump(), rules);
      const auto* refused = std::get_if<paddock::serve::ProtocolError>(&parsed);
      REQUIRE(refused != nullptr);
      CHECK(refused->message.find(why) != std::string::npos);
    }
    // More descriptors than a command has streams: not a client of ours, closed.
    auto flood = d.connect();
    REQUIRE(
        flood.send_with_fds({{"type", "ping"}, {"id", 4}}, {p.fd[0], p.fd[1], p.fd[0], p.fd[1]}));
    CHECK(closed_by_daemon(flood));
  }
  {
    // A daemon for other users (paddock serve) takes no descriptors: the line is refused.
    Daemon d(unclassified_sandbox());
    auto c = d.connect();
    REQUIRE(c.send_with_fds(
        {{"type", "exec"}, {"id", 1}, {"argv", {"/bin/true"}}, {"given", {"stdout"}}}, {p.fd[1]}));
    const auto e = c.until("error", 1).back();
    CHECK(e["message"].get<std::string>().find("only a paddock run helper") != std::string::npos);
  }
}

// The same handing on, to `paddock serve` (a daemon for many users, which takes no
// descriptors): a client runs a sandboxed command of its own, in its own process, with its
// connection to the daemon as that command's stdout. The command's line closes the
// connection; what it asked never runs.
TEST_CASE("serve given: paddock serve refuses lines from a sandbox its client is not in",
          "[serve][helper]") {
  Daemon d(unclassified_sandbox());
  const std::string marker = test::socket_path("escaped-serve") + ".txt";
  auto c = d.connect();
  const std::string line = escape_line(marker);
  // Our hello is ours: accepted.
  c.send({{"type", "ping"}, {"id", "mine"}});
  CHECK(c.until("pong", "mine").size() == 1);
  paddock::ExecOptions o;
  o.stdout_fd = c.native_handle();
  o.timeout = std::chrono::seconds(20);
  auto r = d.h.exec(paddock::Command::exec({"/bin/sh", "-c", "printf '%s\\n' \"$0\"", line}),
                    std::move(o));
  CHECK(r.result.exit_code == 0);
  CHECK(closed_by_daemon(c));  // closed by the daemon
  CHECK_FALSE(std::filesystem::exists(marker));
  std::error_code ignored;
  std::filesystem::remove(marker, ignored);
}

// Hostile review helper-48: a copier (the CLI's relay under --max-output, `--connect`, a
// session run) writes a command's output onto the helper connection it was given as stdout,
// as itself: the writer is the client's own process. The helper's lines carry the key its
// hello gave that connection alone, which whoever only writes into it never read: a line
// without it, or with another connection's, closes the connection; nothing it asked runs.
TEST_CASE("serve given: the helper takes a line only with its connection's key",
          "[serve][helper]") {
  Daemon d(unclassified_sandbox(), helper_rules());
  const std::string marker = test::socket_path("escaped-copied") + ".txt";
  const std::string line = escape_line(marker);
  {
    auto c = d.connect();
    c.greet();
    c.send({{"type", "ping"}, {"id", "keyed"}});
    CHECK(c.until("pong", "keyed").size() == 1);
    c.send_raw(line + "\n");  // as a copier would write it: no key
    CHECK(closed_by_daemon(c));
  }
  {
    // Another connection's key is not this one's.
    auto a = d.connect();
    a.greet();
    auto b = d.connect();
    b.greet();
    auto forged = nlohmann::json::parse(line);
    forged["conn_key"] = "0123456789abcdef0123456789abcdef";
    b.send_raw(forged.dump() + "\n");
    CHECK(closed_by_daemon(b));
    a.send({{"type", "ping"}, {"id", "still"}});  // the other connection is untouched
    CHECK(a.until("pong", "still").size() == 1);
  }
  {
    // A line that is not the protocol's, from the client itself: someone else's bytes glued
    // to one of its own, or someone else's line; closed, never answered.
    auto c = d.connect();
    c.greet();
    c.send_raw("{\"type\": \"exec\", \"id\": 5, \"conn_key\": \"x\", \"argv\": [\n");
    CHECK(closed_by_daemon(c));
  }
  {
    // The first line must be the hello: nothing before it is taken.
    auto c = d.connect();
    c.send_raw(line + "\n");
    CHECK(closed_by_daemon(c));
  }
  CHECK_FALSE(std::filesystem::exists(marker));
  std::error_code ignored;
  std::filesystem::remove(marker, ignored);
}

// Hostile review helper-48: a client whose connecting process exits and leaves the connection
// to its child (a daemonizing or prefork client) was cut off. Its writers are compared with
// the namespaces the client had when it connected, not with a process still alive.
TEST_CASE("serve given: a client's child may go on after the client exits", "[serve][helper]") {
  Daemon d(unclassified_sandbox());
  Pipe result;
  const pid_t client = ::fork();
  if (client == 0) {
    auto c = test::LineClient::unix_socket(d.path);
    if (!c.connected()) ::_exit(2);
    const pid_t connected = ::getpid();
    if (::fork() != 0) ::_exit(0);  // the process that connected goes
    // The child waits until its parent is gone (it is someone else's child then), then
    // speaks on the connection.
    while (::getppid() == connected) ::usleep(1000);
    c.send({{"type", "ping"}, {"id", "orphan"}});
    const auto pong = c.next(std::chrono::seconds(10));
    const char* verdict = pong && (*pong)["type"] == "pong" ? "pong" : "closed";
    (void)!::write(result.fd[1], verdict, std::strlen(verdict));
    ::_exit(0);
  }
  REQUIRE(client > 0);
  int status = 0;
  REQUIRE(::waitpid(client, &status, 0) == client);
  result.close(1);
  CHECK(read_to_end(result.fd[0]) == "pong");
}
