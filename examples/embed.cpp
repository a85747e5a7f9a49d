// Embedding paddock in an async program: the embedder's own io_context, a coroutine that
// streams a command's output as it happens, and a timeout.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <cstdio>

#include "paddock/errors.hpp"
#include "paddock/manager.hpp"

int main() try {
  asio::io_context io;
  // Throws paddock::Error when the event backend cannot start here (io_uring denied by a
  // container's seccomp profile, say): its message names the cause and the way out.
  paddock::Manager manager(io.get_executor(), paddock::DefaultConfig());

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        paddock::ExecOptions options;
        options.timeout = std::chrono::seconds(5);
        options.on_output = [](paddock::OutputStream s, std::string_view chunk) {
          std::printf("[%s] %.*s", s == paddock::OutputStream::stdout_stream ? "out" : "err",
                      static_cast<int>(chunk.size()), chunk.data());
        };
        auto result = co_await manager.async_exec(
            paddock::Command::shell_string("for i in 1 2 3; do echo tick $i; sleep 0.2; done"),
            options, asio::use_awaitable);
        std::printf("exit %d after %lld ms\n", result.exit_code,
                    static_cast<long long>(result.duration.count()));
      },
      asio::detached);
  io.run();
  return 0;
} catch (const paddock::Error& e) {
  std::fprintf(stderr, "embed: %s\n", e.what());
  return 1;
}
