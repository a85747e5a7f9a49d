// An in-process `paddock serve` for the tests: a Server on the tests' runtime with its own
// Manager, listening on a unix socket in the scratch directory.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "serve/serve_client.hpp"
#include "serve/server.hpp"
#include "support/attack_fixture.hpp"
#include "support/harness.hpp"

namespace test {

inline std::string socket_path(const std::string& name) {
  static int counter = 0;
  const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
  std::filesystem::path dir = std::filesystem::path(base != nullptr ? base : TEST_SCRATCH_DIR);
  std::filesystem::create_directories(dir);
  return (dir /
          (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".sock"))
      .string();
}

// A daemon on the tests' runtime, with its own Manager.
struct Daemon {
  explicit Daemon(paddock::Config config = test::sandbox_config(),
                  paddock::serve::ServeOptions o = {})
      : h(std::move(config)) {
    path = socket_path("serve");
    if (o.listen.empty()) o.listen = {"unix:" + path};
    o.socket_activation = false;
    server = std::make_unique<paddock::serve::Server>(test::shared_runtime().executor(), h.manager,
                                                      std::move(o));
  }
  test::LineClient connect() {
    auto c = test::LineClient::unix_socket(path);
    REQUIRE(c.connected());
    return c;
  }
  test::Harness h;
  std::string path;
  std::unique_ptr<paddock::serve::Server> server;
};

inline paddock::Config unclassified_sandbox() {
  auto c = test::sandbox_config();
  c.commands.classify = false;
  return c;
}

}  // namespace test
