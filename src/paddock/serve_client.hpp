// A client of `paddock serve` (docs/serve-protocol.md): many commands over one connection to
// the daemon, each one's output streamed as it comes, completions on the caller's executor
// with any Asio completion token (callback, use_future, use_awaitable, deferred). The
// daemon's sandboxes are already made (its warm sandboxes, its seccomp program, its network
// namespaces), so a command costs a round trip instead of a process start.
//
//   paddock::ServeClient client(io.get_executor());
//   co_await client.async_connect("unix:/run/paddock/serve.sock", {}, asio::use_awaitable);
//   paddock::ServeClient::Exec e;
//   e.on_output = [](paddock::OutputStream, std::string_view bytes) { ... };
//   auto command = paddock::Command::exec({"make", "test"});
//   paddock::ExecResult r =
//       co_await client.async_exec(std::move(command), std::move(e), asio::use_awaitable);
//
// (GCC 12: build the Command and the Exec as named variables outside the co_await, as above.
// A braced initializer list inside a co_await expression does not compile there ("array used
// as initializer"), and a `{}` temporary Exec is destroyed twice at run time. Both are GCC 12
// bugs; later compilers take either.)
//
// Thread-safe: every call may come from any thread (the work runs on a strand). The open
// connection keeps its io_context busy (a read is always pending): call close() (or destroy
// the client) when done, or io_context::run() does not return. Closing ends the connection;
// the daemon then kills its commands, and those still running complete with
// asio::error::operation_aborted. A connection that failed or closed stays closed: make a new
// ServeClient to connect again.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_type.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "paddock/asio_config.hpp"  // first: the Asio macros this library was built with
#include "paddock/command.hpp"
#include "paddock/detail/completion.hpp"
#include "paddock/detail/unique_function.hpp"
#include "paddock/exec_result.hpp"

namespace paddock {

class ServeClient {
 public:
  explicit ServeClient(asio::any_io_executor executor);
  ~ServeClient();
  ServeClient(const ServeClient&) = delete;
  ServeClient& operator=(const ServeClient&) = delete;

  // `endpoint`: unix:PATH or tcp:HOST:PORT. `token`: what a TCP daemon (or one that asks for
  // it) wants in the hello. Completes with (error_code) once the daemon answered the hello:
  // a refused token or peer is an error with the daemon's message in error_message(), a
  // socket that cannot be reached the socket's error (also in error_message()).
  template <typename CompletionToken>
  auto async_connect(std::string endpoint, std::string token, CompletionToken&& completion);

  // One command. The daemon's policy applies (a request can only narrow it;
  // docs/serve-protocol.md).
  struct Exec {
    // The protocol's id; empty: the client picks one ("paddock-client-N"). Set it to name the
    // command in write_stdin(), close_stdin(), signal() and cancel().
    std::string id;
    std::optional<std::string> cwd;
    std::map<std::string, std::string> env;
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::size_t> max_output_bytes;
    std::optional<std::string> stdin_data;  // bytes given whole
    bool stdin_stream = false;              // write_stdin() chunks, then close_stdin()
    // Also collect it in ExecResult::stdout_data/stderr_data, up to max_output_bytes (1 MiB
    // when unset) per stream; past it ExecResult::truncated.
    bool keep_output = true;
    std::function<void(OutputStream, std::string_view)> on_output;  // each chunk, in order
    std::function<void(int pid)> on_started;
    // An escalated command waits for this; none, or no answer: denied.
    std::function<Approval(const CommandApprovalRequest&)> approve;
  };

  // Completes with (error_code, ExecResult) on the daemon's `exit` or `error` for it: ec as
  // for Manager::async_exec (errc::timeout, errc::spawn_failed, ...; E_OVERLOADED is
  // std::errc::resource_unavailable_try_again; a lost connection asio::error::eof or
  // operation_aborted). Terminal or partial cancellation through the token's slot sends
  // `cancel`.
  template <typename CompletionToken>
  auto async_exec(Command command, Exec exec, CompletionToken&& completion);

  // For a running command, by its id (Exec::id). Ignored for an id that is not running.
  void write_stdin(const std::string& id, std::string bytes);
  void close_stdin(const std::string& id);
  void signal(const std::string& id, int signal);  // to the command's whole sandbox
  void cancel(const std::string& id);

  void close();
  // The daemon's last connection-level error message (a refused hello, a protocol error).
  std::string error_message() const;
  asio::any_io_executor get_executor() const noexcept;

  struct State;

 private:
  using ConnectHandler = detail::unique_function<void(std::error_code)>;
  using ExecHandler = detail::unique_function<void(std::error_code, ExecResult)>;
  void start_connect(std::string endpoint, std::string token, ConnectHandler done);
  static void cancel_by(const std::weak_ptr<State>& state, const std::string& id);
  static std::string next_id();  // "paddock-client-N", unique in the process
  std::string start_exec(Command command, Exec exec, ExecHandler done);

  std::shared_ptr<State> state_;
};

template <typename CompletionToken>
auto ServeClient::async_connect(std::string endpoint, std::string token,
                                CompletionToken&& completion) {
  return asio::async_initiate<CompletionToken, void(std::error_code)>(
      [this](auto handler, std::string ep, std::string tok) {
        start_connect(std::move(ep), std::move(tok),
                      detail::completion_for<std::error_code>(std::move(handler), get_executor()));
      },
      completion, std::move(endpoint), std::move(token));
}

template <typename CompletionToken>
auto ServeClient::async_exec(Command command, Exec exec, CompletionToken&& completion) {
  return asio::async_initiate<CompletionToken, void(std::error_code, ExecResult)>(
      [this](auto handler, Command cmd, Exec e) {
        // The id first, and the slot connected before anything can complete.
        if (e.id.empty()) e.id = next_id();
        const std::string id = e.id;
        auto slot = asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected()) {
          slot.assign([weak = std::weak_ptr<State>(state_), id](asio::cancellation_type t) {
            if ((t & (asio::cancellation_type::terminal | asio::cancellation_type::partial)) !=
                asio::cancellation_type::none) {
              cancel_by(weak, id);
            }
          });
        }
        start_exec(std::move(cmd), std::move(e),
                   detail::completion_for<std::error_code, ExecResult>(std::move(handler),
                                                                       get_executor()));
      },
      completion, std::move(command), std::move(exec));
}

}  // namespace paddock
