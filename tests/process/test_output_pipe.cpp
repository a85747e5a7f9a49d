// Output capture: the byte cap with bounded memory, streaming order and what a streaming
// caller sees past the cap.
#include <catch2/catch.hpp>
#include <mutex>

#include "support/harness.hpp"

TEST_CASE("200 MB of output is cut at the cap with bounded memory, the child exits normally",
          "[capture]") {
  test::Harness h;
  paddock::ExecOptions o;
  o.max_output_bytes = 1 << 20;
  test::reset_peak_rss();
  const auto before = test::rss_kib();
  auto r = h.exec(test::argv({"/usr/bin/head", "-c", "200000000", "/dev/zero"}), o);
  const auto peak = test::peak_rss_kib();

  REQUIRE_FALSE(r.ec);
  CHECK(r.result.exit_code == 0);  // drained to the end: head never blocked nor got SIGPIPE
  CHECK(r.result.truncated);
  CHECK(r.result.stdout_data.size() == (1u << 20));
  CHECK(r.result.stdout_bytes_total == 200000000u);
  INFO("rss before " << before << " KiB, peak " << peak << " KiB");
  CHECK(peak < before + 32 * 1024);  // far below the 195,312 KiB the output would take
}

TEST_CASE("output under the cap is kept whole and not marked truncated", "[capture]") {
  test::Harness h;
  auto r = h.exec(test::sh("printf out; printf err >&2"));
  CHECK(r.result.stdout_data == "out");
  CHECK(r.result.stderr_data == "err");
  CHECK_FALSE(r.result.truncated);
}

TEST_CASE("streaming delivers chunks in order, while the command runs", "[capture][stream]") {
  test::Harness h;
  std::mutex m;
  std::vector<std::pair<paddock::OutputStream, std::string>> chunks;
  std::chrono::steady_clock::time_point first_chunk_at{};
  paddock::ExecOptions o;
  o.on_output = [&](paddock::OutputStream s, std::string_view chunk) {
    std::lock_guard lock(m);
    if (chunks.empty()) first_chunk_at = std::chrono::steady_clock::now();
    chunks.emplace_back(s, std::string(chunk));
  };
  auto r = h.exec(test::sh("echo one; sleep 0.3; echo two >&2; sleep 0.3; echo three"), o);
  const auto done_at = std::chrono::steady_clock::now();
  REQUIRE_FALSE(r.ec);
  using S = paddock::OutputStream;
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0] == std::make_pair(S::stdout_stream, std::string("one\n")));
  CHECK(chunks[1] == std::make_pair(S::stderr_stream, std::string("two\n")));
  CHECK(chunks[2] == std::make_pair(S::stdout_stream, std::string("three\n")));
  // The first chunk was live, not replayed at the end.
  CHECK(std::chrono::duration<double>(done_at - first_chunk_at).count() > 0.4);
  // Streamed bytes are exactly the kept bytes.
  CHECK(r.result.stdout_data == "one\nthree\n");
}

TEST_CASE("a streaming caller sees exactly the kept bytes, then nothing past the cap",
          "[capture][stream]") {
  test::Harness h;
  std::string streamed;
  paddock::ExecOptions o;
  o.max_output_bytes = 5;
  o.on_output = [&](paddock::OutputStream, std::string_view c) { streamed.append(c); };
  auto r = h.exec(test::sh("printf 0123; sleep 0.1; printf 456789; sleep 0.1; printf more"), o);
  CHECK(streamed == "01234");
  CHECK(r.result.stdout_data == "01234");
  CHECK(r.result.truncated);
  CHECK(r.result.stdout_bytes_total == 14);
}

TEST_CASE("discard_output: status only, nothing captured, the command still runs", "[capture]") {
  test::Harness h;
  paddock::ExecOptions o;
  o.discard_output = true;
  auto r = h.exec(test::sh("echo lost; echo lost >&2; exit 9"), o);
  CHECK(r.result.exit_code == 9);
  CHECK(r.result.stdout_data.empty());
  CHECK(r.result.stderr_data.empty());
  CHECK(r.result.stdout_bytes_total == 0);
}
