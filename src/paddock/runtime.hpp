// The event loop paddock runs on when the embedding program does not bring its own: one
// asio::io_context (io_uring backend by default) run by a small pool of threads.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "paddock/asio_config.hpp"  // first: the Asio macros this library was built with

namespace paddock {

// What the compiled-in event backend is and whether this kernel lets us use it.
struct IoBackendStatus {
  std::string backend;  // "io_uring" or "epoll"
  bool usable = true;
  std::string problem;  // one line naming the cause and the way out, when !usable
};

// Asio sets up its backend (the io_uring ring) lazily, at the first I/O object, which would
// throw from deep inside some later operation. This forces it now and turns a failure into
// paddock::Error(errc::dependency_missing) naming the cause and the way out. Runtime and
// Manager call it; idempotent per execution context. A ring refused with ENOMEM is asked for
// again for up to 2 s (a closed ring's memory is released asynchronously): it may block the
// calling thread that long, so call it before the loop's threads run, as Runtime does.
void start_event_backend(const asio::any_io_executor& executor);

// For `paddock doctor`: probes the compiled-in backend without constructing an io_context (Asio
// throws from deep inside its service when io_uring_setup is denied; we want to say why and what to
// do).
IoBackendStatus probe_io_backend();
// The same probe for io_uring whatever this copy was built with, with the ring size Asio asks
// for (the CLI runs on epoll and reports on the library's io_uring).
IoBackendStatus probe_io_uring();

// One line naming why io_uring could not be set up (errno from io_uring_setup) and the way out.
std::string explain_io_uring_failure(int err);

// Process-wide start-up every supervisor needs, done once: raise the soft RLIMIT_NOFILE to the
// hard limit (children get the original soft limit back), make sure fds 0-2 are open so no
// pipe we create can land on them, and ignore SIGPIPE (a command that stops reading its stdin
// must not kill the supervisor). Called by Runtime and Manager; safe to call again.
void init_process_once();

// Only the SIGPIPE part (a disposition the embedder chose is left alone): Asio's io_uring
// sends carry no MSG_NOSIGNAL, so a write to a socket whose peer has gone would kill the
// process. ServeClient calls it: an embedder with no Manager is a client of a daemon that may
// go away.
void ignore_sigpipe_unless_handled();

struct RuntimeOptions {
  unsigned threads = 2;
};

class Runtime {
 public:
  // Throws paddock::Error(errc::dependency_missing) when the backend cannot start.
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  asio::any_io_executor executor() { return io_.get_executor(); }
  asio::io_context& context() { return io_; }

  // Lets the threads finish once no work is left, and joins them.
  void join();

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

}  // namespace paddock
