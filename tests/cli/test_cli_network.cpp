// Blocked network through the CLI: the sandbox's own loopback is the sandbox's (a test
// server and its client inside it work, as in srt), unless the settings file says
// `allowLocalBinding: false`; then binding and connecting are refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/cli_support.hpp"

namespace fs = std::filesystem;
using test::contains;
using test::paddock_cli;

namespace {

// The test server and a file it serves, somewhere the sandbox shows (a build tree under /tmp
// is hidden there: the sandbox's /tmp is private).
struct ServerCopy {
  ServerCopy() {
    const char* scratch = std::getenv("PADDOCK_TEST_SCRATCH");
    root = fs::path(scratch != nullptr ? scratch : TEST_SCRATCH_DIR) /
           ("loopback-" + std::to_string(::getpid()));
    fs::create_directories(root);
    std::ofstream(root / "hello.txt") << "hello from inside\n";
    fs::copy_file(HTTP_SERVER_BINARY, root / "http-server", fs::copy_options::overwrite_existing);
    settings = (root / "no-local-binding.json").string();
    std::ofstream(settings) << R"({"network": {"allowedDomains": [], "allowLocalBinding": false}})";
  }
  ~ServerCopy() { fs::remove_all(root); }

  // A server on 127.0.0.1:PORT and a client, both inside one sandbox.
  std::string script(int port) const {
    const std::string p = std::to_string(port);
    return (root / "http-server").string() + " " + root.string() + " " + p +
           " 30 >/tmp/server.out 2>&1 & server=$!; "
           "for i in $(seq 400); do grep -q ready /tmp/server.out && break; "
           "kill -0 $server 2>/dev/null || break; sleep 0.05; done; "
           "curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:" +
           p +
           "/hello.txt; "
           "echo \"curl=$?\"; kill $server 2>/dev/null; cat /tmp/server.out";
  }

  fs::path root;
  std::string settings;
};

}  // namespace

TEST_CASE("blocked network: a server on the sandbox's own loopback serves a client beside it",
          "[cli][network][loopback]") {
  ServerCopy s;
  // --yes: the server runs in the background (&), which the classifier escalates.
  for (auto args : {std::vector<std::string>{"run", "--yes", "--network", "blocked"},
                    {"run", "--yes", "--profile", "read-only"}}) {
    args.insert(args.end(), {"--", "/bin/sh", "-c", s.script(18080)});
    auto r = paddock_cli(args);
    INFO(r.result.stdout_data << r.result.stderr_data);
    CHECK(r.result.exit_code == 0);
    CHECK(contains(r.result.stdout_data, "hello from inside\ncurl=0\n"));
    CHECK(contains(r.result.stdout_data, "ready 18080"));
  }
}

TEST_CASE("blocked network with allowLocalBinding false refuses binding and connecting",
          "[cli][network][loopback]") {
  ServerCopy s;
  auto r = paddock_cli(
      {"run", "--yes", "--settings", s.settings, "--", "/bin/sh", "-c", s.script(18080)});
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.exit_code == 0);
  CHECK_FALSE(contains(r.result.stdout_data, "hello from inside"));
  CHECK_FALSE(contains(r.result.stdout_data, "curl=0"));
  // Landlock's refusal, not a server that was slow to start.
  CHECK(contains(r.result.stdout_data, "bind/listen failed: Permission denied"));
  CHECK_FALSE(contains(r.result.stdout_data, "ready"));
  // The same file with allowLocalBinding true (or absent) works: the flag is what refuses.
  std::ofstream(s.settings) << R"({"network": {"allowedDomains": [], "allowLocalBinding": true}})";
  auto on = paddock_cli(
      {"run", "--yes", "--settings", s.settings, "--", "/bin/sh", "-c", s.script(18081)});
  INFO("with allowLocalBinding true: " << on.result.stdout_data << on.result.stderr_data);
  CHECK(contains(on.result.stdout_data, "hello from inside\ncurl=0\n"));
}
