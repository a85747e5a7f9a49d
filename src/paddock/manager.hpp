// paddock's library entry point: a Manager runs commands on an executor and completes each
// with (std::error_code, ExecResult) through any Asio completion token.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/async_result.hpp>
#include <cstdint>
#include <memory>
#include <system_error>

#include "paddock/asio_config.hpp"  // first: the Asio macros this library was built with
#include "paddock/classifier.hpp"
#include "paddock/command.hpp"
#include "paddock/config.hpp"
#include "paddock/detail/unique_function.hpp"
#include "paddock/errors.hpp"
#include "paddock/exec_result.hpp"
#include "paddock/network.hpp"
#include "paddock/session.hpp"
#include "paddock/write_check.hpp"

namespace paddock {

namespace detail {
using ExecHandler = unique_function<void(std::error_code, ExecResult)>;
struct ManagerState;
}  // namespace detail
namespace manager {
class ExecOperation;
}

// Thread-safe; many per process. The executor must belong to an asio::io_context (the
// Manager's I/O objects live in its services): Runtime::executor() or the embedder's own.
// The io_context may be destroyed at any time: commands still in flight are killed and
// reaped; its destructor waits for work of this library off its loop (a post-run audit,
// bounded; an approval answer or ExecControl signal being delivered), and answers or signals
// given after that touch nothing. run() returns only once a finished command's audit worker
// has let go of it.
class Manager {
 public:
  // Validates the config; throws paddock::Error(errc::config_invalid) naming the field.
  // `network`: the filtered network's resolver, approval callback, log sink and bounds.
  Manager(asio::any_io_executor executor, Config config, NetworkHooks network = {});
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Runs `command` and completes with (error_code, ExecResult) once the command has exited
  // and both output pipes reached EOF (or the drain bound after exit passed).
  //  - ec empty: the command ran; its status is in the result (any exit code or signal).
  //  - errc::timeout: the timeout killed it; result holds everything captured.
  //  - errc::spawn_failed: nothing ran (not found: exit_code 127, not executable: 126,
  //    bad cwd, ...); result.error says why in one line.
  //  - asio::error::operation_aborted: cancelled through the token's cancellation slot.
  //  - errc::manager_closed: close() was called first.
  // The completion runs on the token's associated executor (default: the Manager's).
  template <typename CompletionToken>
  auto async_exec(Command command, ExecOptions options, CompletionToken&& token);

  // Stops accepting commands; those in flight are killed and complete normally.
  void close();

  // A sandbox that lives across commands (paddock/session.hpp): made now, on the calling
  // thread's time (a plan and a clone: milliseconds), and used through ExecOptions::session.
  // Throws Error: config_invalid (the options), unsupported_platform (no usable sandbox
  // here), spawn_failed (the sandbox could not be set up), manager_closed.
  std::shared_ptr<Session> open_session(SessionOptions options = {});
  // The same off the caller's thread (on a worker); `done` runs on the Manager's executor
  // with the session, or an error code and why (the codes above).
  using SessionOpened =
      std::function<void(std::error_code, std::shared_ptr<Session>, std::string error)>;
  void async_open_session(SessionOptions options, SessionOpened done);

  // Hot reload. The network's domain rules (allowedDomains, deniedDomains,
  // deniedResolvedAddresses, deniedDomainReasons, strictAllowlist) take effect for the next
  // proxied request (connections already tunnelling stay); the filesystem rules (all but
  // filesystem.home) and the commands section for the next command started (one in flight
  // keeps what it started with). Everything else shaped the Manager itself (seccomp program,
  // proxy, fallback): a `next` that differs there is refused with config_invalid, as is an
  // invalid entry (the old rules stay).
  void update_config(const Config& next);

  // Classifies without running, exactly as async_exec would decide it under this Manager's
  // policy and the call's options (Config::commands.classify decides nothing here: this is
  // the dry run).
  Classification check(const Command& command, const ExecOptions& options = {}) const;

  // The write guard for the agent's own file tools: may a host-side write reach `path`
  // (relative to `cwd`, default the supervisor's) under the filesystem policy a sandboxed
  // command there would have? Writable roots, denyWrite, protected paths existing or not,
  // symlinks resolved. Write to WriteCheck::path with O_NOFOLLOW, not to the given name.
  // Throws Error(config_invalid) where a command's policy would not resolve either.
  WriteCheck check_write(const std::string& path,
                         const std::optional<std::string>& cwd = std::nullopt) const;

  // Asked for every escalated command that has no ExecOptions::approve. Thread-safe; an
  // empty callback removes it (escalated commands are then refused).
  void set_approval(CommandApprovalCallback callback);

  // A copy: update_config may change its reloadable parts meanwhile.
  Config config() const;

  // Sandboxed commands that found a sandbox made ahead for their plan (Config::warm_sandboxes)
  // and those that made their own (totals), and how many wait now: for metrics, and to size
  // warm_sandboxes.
  struct WarmSandboxCounts {
    std::uint64_t used = 0, made_at_start = 0;
    std::size_t waiting = 0;
  };
  WarmSandboxCounts warm_sandbox_counts() const;
  asio::any_io_executor get_executor() const noexcept;

 private:
  // Two steps so a cancellation slot can be connected before anything starts.
  std::shared_ptr<manager::ExecOperation> prepare_exec(ExecOptions options,
                                                       detail::ExecHandler handler);
  static void start_exec(const std::shared_ptr<manager::ExecOperation>& op, Command command);
  // Safe from any thread, any time, also after completion.
  static void cancel_exec(const std::weak_ptr<detail::ManagerState>& state,
                          const std::weak_ptr<manager::ExecOperation>& op);

  std::shared_ptr<detail::ManagerState> state_;
};

// Blocking convenience for simple programs: runs one command on a private io_context on the
// calling thread. Never throws for a command's own failure; the error code says what happened.
struct BlockingResult {
  std::error_code ec;
  ExecResult result;
};
BlockingResult run_blocking(Command command, ExecOptions options = {},
                            Config config = DefaultConfig());

// What a command would run under, for the classifier: sandbox on or off, the network mode,
// the working directory, the home and its writability, re-exposed paths, the call's variables.
// async_exec, Manager::check and `paddock check` decide with the same one.
// `network_approval`: the filtered network has a DomainApproval hook, so a host its lists do
// not name may still be reached once approved (without one, such a host is refused).
ClassifyContext decision_context(const Config& config, const ExecOptions& options = {},
                                 bool network_approval = false);
ClassifyContext decision_context(const SandboxPolicy& policy, const ExecOptions& options,
                                 const std::string& home, bool network_approval = false);

}  // namespace paddock

#include "paddock/impl/manager.hpp"
