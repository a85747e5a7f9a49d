// ExecOptions::keep_output = false: a streaming caller gets every byte through on_output and
// nothing is kept; max_output_bytes then bounds only what is streamed.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <limits>
#include <thread>

#include "support/harness.hpp"

namespace {

struct Streamed {
  std::string out, err;
};

paddock::BlockingResult stream(test::Harness& h, const std::string& script, std::size_t cap,
                               Streamed& got) {
  paddock::ExecOptions o;
  o.keep_output = false;
  o.max_output_bytes = cap;
  o.on_output = [&got](paddock::OutputStream s, std::string_view chunk) {
    (s == paddock::OutputStream::stdout_stream ? got.out : got.err).append(chunk);
  };
  return h.exec(test::sh(script), o);
}

}  // namespace

TEST_CASE("keep_output false: every byte is streamed, none kept", "[capture][streaming]") {
  test::Harness h(test::host_config());
  Streamed got;
  // 3 MiB, past the 1 MiB default that bounds kept output.
  auto r = stream(h, "head -c 3145728 /dev/zero; printf err >&2",
                  std::numeric_limits<std::size_t>::max(), got);
  REQUIRE_FALSE(r.ec);
  CHECK(got.out.size() == 3145728);
  CHECK(got.err == "err");
  CHECK(r.result.stdout_data.empty());
  CHECK(r.result.stderr_data.empty());
  CHECK_FALSE(r.result.truncated);
  CHECK(r.result.stdout_bytes_total == 3145728);
}

TEST_CASE("keep_output false with a cap: streaming stops at the cap, truncated is set",
          "[capture][streaming]") {
  test::Harness h(test::host_config());
  Streamed got;
  auto r = stream(h, "head -c 100000 /dev/zero; printf 0123456789 >&2", 10, got);
  REQUIRE_FALSE(r.ec);
  CHECK(got.out == std::string(10, '\0'));
  CHECK(got.err == "0123456789");
  CHECK(r.result.truncated);
  CHECK(r.result.stdout_bytes_total == 100000);
  CHECK(r.result.stdout_data.empty());
}

TEST_CASE("stdin_fd / stdout_fd: the caller's own descriptors, stdin streamed chunk by chunk",
          "[capture][streaming][spawn]") {
  for (bool sandboxed : {false, true}) {
    INFO("sandboxed " << sandboxed);
    test::Harness h(sandboxed ? test::unclassified() : test::host_config());
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    std::string sent;
    for (int i = 0; i < 2000; ++i) sent += "chunk " + std::to_string(i) + "\n";
    // Written in small pieces while the command runs, then closed: the command sees EOF.
    bool short_write = false;  // Catch's macros are not for other threads
    std::thread writer([&] {
      for (std::size_t at = 0; at < sent.size(); at += 100) {
        std::string_view piece = std::string_view(sent).substr(at, 100);
        if (::write(in[1], piece.data(), piece.size()) != static_cast<ssize_t>(piece.size())) {
          short_write = true;
        }
      }
      ::close(in[1]);
    });
    std::string got;
    std::thread reader([&] {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(out[0], buf, sizeof buf)) > 0)
        got.append(buf, static_cast<std::size_t>(n));
    });
    paddock::ExecOptions o;
    o.stdin_fd = in[0];
    o.stdout_fd = out[1];
    auto r = h.exec(test::argv({"/bin/cat"}), o);
    ::close(in[0]);  // ours: the command had its own copies
    ::close(out[1]);
    writer.join();
    reader.join();
    ::close(out[0]);
    CHECK_FALSE(short_write);
    REQUIRE_FALSE(r.ec);
    CHECK(r.result.exit_code == 0);
    CHECK(got == sent);
    CHECK(r.result.stdout_data.empty());  // not captured
    CHECK(r.result.stdout_bytes_total == 0);
  }
}

TEST_CASE("stdin_fd: a sandboxed command gets a pipe or socket only, /dev/null as its own",
          "[capture][streaming][spawn]") {
  test::Harness h(test::unclassified());
  const int file = ::open("/etc/hostname", O_RDONLY | O_CLOEXEC);
  REQUIRE(file >= 0);
  paddock::ExecOptions o;
  o.stdin_fd = file;
  auto refused = h.exec(test::argv({"/bin/cat"}), o);
  ::close(file);
  CHECK(refused.ec == paddock::errc::config_invalid);
  CHECK(refused.result.error.find("stdin_fd: only a pipe or a connected unix socket") !=
        std::string::npos);
  const int dir = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  paddock::ExecOptions d;
  d.stdout_fd = dir;
  CHECK(h.exec(test::argv({"/bin/true"}), d).ec == paddock::errc::config_invalid);
  ::close(dir);
  paddock::ExecOptions bad;
  bad.stderr_fd = 987654;
  CHECK(h.exec(test::argv({"/bin/true"}), bad).ec == paddock::errc::config_invalid);
  // /dev/null is accepted: the sandbox's own node is given instead.
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  paddock::ExecOptions n;
  n.stdin_fd = null;
  auto ok = h.exec(test::sh("cat; readlink /proc/self/fd/0"), n);
  ::close(null);
  CHECK_FALSE(ok.ec);
  CHECK(ok.result.stdout_data == "/dev/null\n");
}
