// An embedder outside the paddock tree, built against an *installed* paddock (find_package or
// pkg-config): its own io_context, Asio included by the embedder itself, a command run
// through the Manager with the default (sandboxed) policy and its output streamed; and the
// daemon's client, from the installed headers, answering a missing daemon with an error.
#include <asio/io_context.hpp>
#include <cstdio>
#include <string>

#include "paddock/manager.hpp"
#include "paddock/serve_client.hpp"

int main() {
  asio::io_context io;
  paddock::Manager manager(io.get_executor(), paddock::DefaultConfig());
  std::string streamed;
  int status = 1;
  paddock::ExecOptions options;
  options.timeout = std::chrono::seconds(30);
  options.on_output = [&](paddock::OutputStream, std::string_view chunk) {
    streamed.append(chunk);
  };
  manager.async_exec(paddock::Command::exec({"/bin/echo", "consumer-ok"}), options,
                     [&](std::error_code ec, paddock::ExecResult r) {
                       if (!ec && r.exit_code == 0 && r.sandboxed &&
                           r.stdout_data == "consumer-ok\n" && streamed == r.stdout_data) {
                         status = 0;
                         return;
                       }
                       std::fprintf(stderr, "unexpected: %s, exit %d, sandboxed %d, [%s] [%s]\n",
                                    ec.message().c_str(), r.exit_code, r.sandboxed ? 1 : 0,
                                    r.stdout_data.c_str(), r.stderr_data.c_str());
                     });
  paddock::ServeClient client(io.get_executor());
  bool refused = false;
  client.async_connect("unix:/nonexistent/paddock-serve.sock", {},
                       [&](std::error_code ec) { refused = static_cast<bool>(ec); });
  io.run();
  if (!refused) {
    std::fprintf(stderr, "unexpected: ServeClient connected to a socket that does not exist\n");
    status = 1;
  }
  if (status == 0) std::puts("consumer: ran a sandboxed command through an installed paddock");
  return status;
}
