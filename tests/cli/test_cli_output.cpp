// `paddock run` output: streamed output is not capped or kept unless --max-output says so, a
// cap that cuts says so, --json carries any bytes losslessly, and flag values that do not
// mean what they say are errors (issue 10, "Output caps" and "--json loses bytes").
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"
#include "runtime/text_encoding.hpp"

using test::contains;
using test::line_count;
using test::paddock_cli;

namespace {

// The bytes of a --json stream, whichever way they were carried.
std::string stream_bytes(const nlohmann::json& j, const std::string& name) {
  const std::string value = j.at(name).get<std::string>();
  if (!j.contains(name + "_encoding")) return value;
  REQUIRE(j.at(name + "_encoding") == "base64");
  auto decoded = paddock::base64_decode(value);
  REQUIRE(decoded.has_value());
  return *decoded;
}

}  // namespace

TEST_CASE("paddock run streams any amount of output: no cap, no line, exit 0", "[cli][output]") {
  // 3 MiB per stream: past the 1 MiB the CLI once cut silently.
  auto out = paddock_cli({"run", "--", "/bin/sh", "-c", "head -c 3145728 /dev/zero"});
  CHECK(out.result.exit_code == 0);
  CHECK(out.result.stdout_data.size() == 3145728);
  CHECK(out.result.stderr_data.empty());
  auto err = paddock_cli({"run", "--", "/bin/sh", "-c", "head -c 3145728 /dev/zero >&2"});
  CHECK(err.result.exit_code == 0);
  CHECK(err.result.stderr_data.size() == 3145728);  // the command's bytes, no paddock line
  CHECK(err.result.stdout_data.empty());
}

TEST_CASE("paddock run keeps nothing in memory while it streams", "[cli][output]") {
  if (!std::filesystem::exists("/usr/bin/time")) {
    WARN("no /usr/bin/time: peak memory not measured");
    return;
  }
  // 256 MiB through paddock: kept, it would show in paddock's peak RSS.
  auto r = test::Harness(test::host_config())
               .exec(test::sh(std::string("/usr/bin/time -f 'maxrss_kib=%M' ") + PADDOCK_BINARY +
                              " run -- /bin/sh -c 'head -c 268435456 /dev/zero' | wc -c"));
  INFO(r.result.stderr_data);
  CHECK(r.result.stdout_data == "268435456\n");
  auto at = r.result.stderr_data.find("maxrss_kib=");
  REQUIRE(at != std::string::npos);
  const long kib = std::stol(r.result.stderr_data.substr(at + 11));
  CHECK(kib < 64 * 1024);
}

TEST_CASE("paddock run --max-output caps streamed output and says so on stderr", "[cli][output]") {
  auto r = paddock_cli({"run", "--max-output", "1000", "--", "/bin/sh", "-c",
                        "head -c 5000 /dev/zero; printf 'ab' >&2"});
  CHECK(r.result.exit_code == 0);
  CHECK(r.result.stdout_data == std::string(1000, '\0'));
  CHECK(r.result.stderr_data ==
        "ab"
        "paddock: output cut: stdout: the first 1000 of 5000 bytes shown (--max-output "
        "1000)\n");
  // Units are binary; a stream that fits says nothing.
  auto k = paddock_cli({"run", "--max-output", "1K", "--", "/bin/sh", "-c",
                        "head -c 1024 /dev/zero; head -c 1025 /dev/zero >&2"});
  CHECK(k.result.exit_code == 0);
  CHECK(k.result.stdout_data.size() == 1024);
  CHECK(line_count(k.result.stderr_data) == 1);
  CHECK(contains(k.result.stderr_data,
                 "paddock: output cut: stderr: the first 1024 of 1025 bytes shown"));

  // --json keeps the output, so it is capped by default (1 MiB) and says so too.
  auto j = paddock_cli({"run", "--json", "--", "/bin/sh", "-c", "head -c 1048577 /dev/zero"});
  CHECK(j.result.exit_code == 0);
  auto obj = nlohmann::json::parse(j.result.stdout_data);
  CHECK(obj["truncated"] == true);
  CHECK(obj["stdout_bytes_total"] == 1048577);
  CHECK(stream_bytes(obj, "stdout").size() == 1048576);
  CHECK(j.result.stderr_data ==
        "paddock: output cut: stdout: the first 1048576 of 1048577 bytes kept in the JSON result "
        "(--max-output 1048576)\n");
}

TEST_CASE("paddock run: --timeout and --max-output values that mean nothing are errors",
          "[cli][output]") {
  for (const char* bad : {"0", "0.0", "-1", "nan", "NaN", "inf", "-inf", "1e3", "0x10", "+5", "abc",
                          "", "1.5x", "3601", "61m", "2h", "1e400", ".5"}) {
    INFO("--timeout '" << bad << "'");
    auto r = paddock_cli({"run", "--timeout", bad, "--", "/bin/echo", "ran"});
    CHECK(r.result.exit_code == 125);
    CHECK(line_count(r.result.stderr_data) == 1);
    CHECK(r.result.stderr_data.rfind("paddock: ", 0) == 0);
    CHECK(contains(r.result.stderr_data, "--timeout"));
    CHECK(r.result.stdout_data.empty());  // nothing ran
  }
  for (const char* bad : {"0", "0K", "-1", "-0", "18446744073709551615", "99999999999999999999",
                          "1099511627777", "1025G", "2T", "1.5M", "abc", "", "1 K", "0x10"}) {
    INFO("--max-output '" << bad << "'");
    auto r = paddock_cli({"run", "--max-output", bad, "--", "/bin/echo", "ran"});
    CHECK(r.result.exit_code == 125);
    CHECK(line_count(r.result.stderr_data) == 1);
    CHECK(r.result.stderr_data.rfind("paddock: ", 0) == 0);
    CHECK(contains(r.result.stderr_data, "--max-output"));
    CHECK(r.result.stdout_data.empty());
  }
  // What the values do mean.
  CHECK(paddock_cli({"run", "--timeout", "1h", "--", "/bin/true"}).result.exit_code == 0);
  CHECK(paddock_cli({"run", "--timeout", "90s", "--", "/bin/true"}).result.exit_code == 0);
  auto half = paddock_cli({"run", "--timeout", "0.3", "--", "/bin/sleep", "30"});
  CHECK(half.result.exit_code == 124);
  CHECK(contains(half.result.stderr_data, "timed out after 300 ms"));
  auto exact = paddock_cli({"run", "--max-output", "1099511627776", "--", "/bin/echo", "ok"});
  CHECK(exact.result.exit_code == 0);
  CHECK(exact.result.stdout_data == "ok\n");
}

TEST_CASE("paddock run --json carries bytes that are not UTF-8 as base64, losslessly",
          "[cli][output]") {
  auto r = paddock_cli({"run", "--json", "--", "/bin/sh", "-c",
                        "printf '\\377\\376ok\\000'; printf 'caf\\303\\251' >&2"});
  REQUIRE(r.result.exit_code == 0);
  auto j = nlohmann::json::parse(r.result.stdout_data);
  CHECK(j["stdout_encoding"] == "base64");
  CHECK(j["stdout"] == paddock::base64_encode(std::string("\xFF\xFEok\0", 5)));
  CHECK(stream_bytes(j, "stdout") == std::string("\xFF\xFEok\0", 5));
  // Valid UTF-8 stays text, with no encoding field (the contract's fields are unchanged).
  CHECK(j["stderr"] == "caf\xC3\xA9");
  CHECK_FALSE(j.contains("stderr_encoding"));

  // Every byte value comes back.
  auto all = paddock_cli({"run", "--json", "--", "/bin/sh", "-c",
                          "i=0; while [ $i -lt 256 ]; do printf \"\\\\$(printf %o $i)\"; "
                          "i=$((i+1)); done"});
  REQUIRE(all.result.exit_code == 0);
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  CHECK(stream_bytes(nlohmann::json::parse(all.result.stdout_data), "stdout") == bytes);

  // A cap that cuts a character in two: the kept bytes exactly, as base64.
  auto cut = paddock_cli(
      {"run", "--json", "--max-output", "4", "--", "/bin/sh", "-c", "printf 'abc\\303\\251'"});
  auto cj = nlohmann::json::parse(cut.result.stdout_data);
  CHECK(cj["truncated"] == true);
  CHECK(stream_bytes(cj, "stdout") == "abc\xC3");
}
