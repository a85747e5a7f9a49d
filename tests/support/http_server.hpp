// A small static-file HTTP/1.0 server for the network tests: the "host service" a sandboxed
// curl or git reaches through the proxy (in process, on its own thread), and the "server the
// command starts inside the sandbox" (as the paddock_test_http_server program). It records
// what it received so tests can check what the proxy forwarded.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test {

class HttpServer {
 public:
  // Serves files below `root` on 127.0.0.1:`port` (0: any free port).
  explicit HttpServer(std::string root, std::uint16_t port = 0);
  ~HttpServer();
  std::uint16_t port() const noexcept { return port_; }
  // Request heads received so far, in order.
  std::vector<std::string> requests();
  // Serves until stop() (or the destructor); run() blocks, start() uses a thread.
  void run();
  void start();
  void stop();

 private:
  void serve(int fd);
  std::string root_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> requests_;
};

}  // namespace test
