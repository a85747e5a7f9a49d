// A `paddock run` helper's client gives the command its own standard streams (SCM_RIGHTS with
// the exec line, "given"): the command writes and reads them as a run in the client's process
// would, and nothing the client sends that way lets a sandboxed command reach a host inode
// (a file, a directory, a device other than /dev/null) or more descriptors than streams.
// Tagged [helper]: the suite runs again as nobody.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "serve/daemon_fixture.hpp"
#include "serve/serve_client.hpp"

using namespace std::chrono_literals;
using nlohmann::json;
using test::Daemon;
using test::unclassified_sandbox;

namespace {

paddock::serve::ServeOptions helper_rules() {
  paddock::serve::ServeOptions o;
  o.rules.parent_env = true;
  o.rules.given_descriptors = true;
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
  // deny rule), its O_PATH spelling, a device that is not /dev/null.
  const int file_fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  const int dir_fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int path_fd = ::open("/etc", O_PATH | O_CLOEXEC);
  const int zero_fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  REQUIRE(file_fd >= 0);
  REQUIRE(dir_fd >= 0);
  REQUIRE(path_fd >= 0);
  REQUIRE(zero_fd >= 0);
  int id = 0;
  for (const Attempt& a :
       {Attempt{"stdout", file_fd}, Attempt{"stderr", file_fd}, Attempt{"stdin", dir_fd},
        Attempt{"stdin", path_fd}, Attempt{"stdout", dir_fd}, Attempt{"stdin", zero_fd}}) {
    INFO(a.stream << " " << a.fd);
    auto c = d.connect();
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
  for (int fd : {file_fd, dir_fd, path_fd, zero_fd}) ::close(fd);
  std::ifstream in(file);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "host\n");
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) != 0777);
  std::filesystem::remove(file);
}

TEST_CASE("serve given: descriptors are counted and only a helper takes them", "[serve][helper]") {
  Pipe p;
  {
    // More named than came: refused, nothing runs.
    Daemon d(unclassified_sandbox(), helper_rules());
    auto c = d.connect();
    REQUIRE(c.send_with_fds(
        {{"type", "exec"}, {"id", 1}, {"argv", {"/bin/true"}}, {"given", {"stdout", "stderr"}}},
        {p.fd[1]}));
    const auto e = c.until("error", 1).back();
    CHECK(e["message"] == "2 descriptors named in \"given\", 1 came");
    // A name twice, or one that is no stream.
    c.send({{"type", "exec"}, {"id", 2}, {"argv", {"/bin/true"}}, {"given", {"stdout", "stdout"}}});
    CHECK(c.until("error", 2).back()["message"].get<std::string>().find("named twice") !=
          std::string::npos);
    c.send({{"type", "exec"}, {"id", 3}, {"argv", {"/bin/true"}}, {"given", {"stdfoo"}}});
    CHECK(c.until("error", 3).back()["message"].get<std::string>().find("not stdin") !=
          std::string::npos);
    // More descriptors than a command has streams: not a client of ours, closed.
    auto flood = d.connect();
    REQUIRE(
        flood.send_with_fds({{"type", "ping"}, {"id", 4}}, {p.fd[0], p.fd[1], p.fd[0], p.fd[1]}));
    while (flood.line(5s)) {
    }
    CHECK(flood.last_errno() == 0);  // the daemon closed it
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
