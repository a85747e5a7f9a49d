// paddock_test_http_server ROOT PORT SECONDS: the test HTTP server as a program, for a command
// to start inside its sandbox. Prints "ready" once it listens; exits after SECONDS.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "support/http_server.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ROOT PORT SECONDS\n", argv[0]);
    return 2;
  }
  test::HttpServer server(argv[1], static_cast<std::uint16_t>(std::atoi(argv[2])));
  std::printf("ready %u\n", server.port());
  std::fflush(stdout);
  server.start();
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[3])));
  server.stop();
  return 0;
}
