// ExecOptions::keep_output = false: a streaming caller gets every byte through on_output and
// nothing is kept; max_output_bytes then bounds only what is streamed.
#include <catch2/catch.hpp>
#include <limits>

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
