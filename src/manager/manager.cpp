#include "paddock/manager.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <cerrno>
#include <cstring>

#include "manager/audit_workers.hpp"
#include "manager/exec_operation.hpp"
#include "manager/manager_state.hpp"
#include "manager/session.hpp"
#include "manager/shutdown_guard.hpp"
#include "paddock/runtime.hpp"
#include "process/init_image.hpp"
#include "sandbox/working_directory.hpp"
#include "sandbox/write_guard.hpp"

namespace paddock {

namespace detail {

ManagerState::ManagerState(asio::any_io_executor ex, Config cfg, NetworkHooks hooks)
    : executor(std::move(ex)), config(std::move(cfg)), network_approval(hooks.approval != nullptr) {
  dev_null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (dev_null < 0) {
    throw Error(errc::spawn_failed, std::string("open /dev/null: ") + std::strerror(errno));
  }
  if (config.sandbox.enabled) {
    try {
      sandbox_context = std::make_shared<sandbox::SandboxContext>(
          config.sandbox, config.reuse_network_namespaces, config.mount_templates);
      // paddock-init's memfd, made once per process now rather than in the first command.
      // Without it no init can wait for a command: no sandboxes made ahead either.
      if (process::init_image_fd() >= 0 && sandbox_context->usable() && config.warm_sandboxes > 0) {
        warm = std::make_shared<manager::WarmSandboxes>(sandbox_context, config.warm_sandboxes,
                                                        config.warm_sandbox_max_age);
      }
      if (config.sandbox.network.mode == NetworkMode::filtered) {
        proxy_core = std::make_shared<proxy::ProxyCore>(config.sandbox.network, std::move(hooks));
      }
    } catch (...) {
      ::close(dev_null);
      throw;
    }
  }
}

ManagerState::~ManagerState() { ::close(dev_null); }

}  // namespace detail

Manager::Manager(asio::any_io_executor executor, Config config, NetworkHooks network) {
  validate(config);
  init_process_once();
  manager::start_audit_worker();
  start_event_backend(executor);
  state_ = std::make_shared<detail::ManagerState>(std::move(executor), std::move(config),
                                                  std::move(network));
  asio::use_service<detail::ShutdownGuard>(asio::query(state_->executor, asio::execution::context))
      .watch(state_);
  // After the guard, so shut down before it: work off the loop (audits, approval answers,
  // signals) is finished and refused before in-flight operations are abandoned.
  state_->off_loop = base::OffLoopWork::gate_of(state_->executor);
}

Manager::~Manager() { close(); }

std::shared_ptr<Session> Manager::open_session(SessionOptions options) {
  return std::make_shared<Session>(manager::open_session_core(state_, std::move(options)));
}

void Manager::async_open_session(SessionOptions options, SessionOpened done) {
  manager::off_loop_then_post(state_, [state = state_, options = std::move(options),
                                       done = std::move(done)]() mutable {
    std::shared_ptr<Session> session;
    std::error_code ec;
    std::string error;
    try {
      session = std::make_shared<Session>(manager::open_session_core(state, std::move(options)));
    } catch (const Error& e) {
      ec = e.code();
      error = e.what();
    } catch (const std::exception& e) {
      ec = errc::spawn_failed;
      error = e.what();
    }
    return std::function<void()>([done = std::move(done), ec, session = std::move(session),
                                  error = std::move(error)] { done(ec, session, error); });
  });
}

void Manager::close() {
  {
    // From any thread, the context maybe gone or going (base/off_loop_work.hpp): then its
    // shutdown has abandoned (or abandons) what runs, and nothing is posted to it.
    base::OffLoopTicket ticket(state_->off_loop);
    std::vector<std::shared_ptr<manager::ExecOperation>> running;
    {
      std::lock_guard lock(state_->mutex);
      state_->closed = true;
      if (ticket) {
        for (auto& [id, weak] : state_->in_flight) {
          if (auto op = weak.lock()) running.push_back(std::move(op));
        }
      }
    }
    for (auto& op : running) op->cancel();
    running.clear();  // before the ticket
  }
  if (state_->warm) state_->warm->close();
}

Manager::WarmSandboxCounts Manager::warm_sandbox_counts() const {
  if (!state_->warm) return {};
  return {state_->warm->hits(), state_->warm->misses(), state_->warm->waiting()};
}

Config Manager::config() const {
  std::lock_guard lock(state_->mutex);
  return state_->config;
}

void Manager::update_config(const Config& next) {
  validate(next);
  std::lock_guard updating(state_->update_mutex);
  {
    // What may change: the filesystem rules (not the home they protect), the domain rules, the
    // commands section. The rest shaped the Manager itself (its seccomp program, its proxy,
    // its fallback decision).
    Config same = next;
    std::lock_guard lock(state_->mutex);
    const Config& now = state_->config;
    auto& fs = same.sandbox.filesystem;
    const std::string home = fs.home;
    fs = now.sandbox.filesystem;
    if (home != fs.home) {
      throw Error(errc::config_invalid,
                  "update_config: filesystem.home cannot change on a running Manager");
    }
    auto& net = same.sandbox.network;
    net.allowed_domains = now.sandbox.network.allowed_domains;
    net.denied_domains = now.sandbox.network.denied_domains;
    net.denied_resolved_addresses = now.sandbox.network.denied_resolved_addresses;
    net.denied_domain_reasons = now.sandbox.network.denied_domain_reasons;
    net.strict_allowlist = now.sandbox.network.strict_allowlist;
    same.commands = now.commands;
    if (!(same == now)) {
      throw Error(errc::config_invalid,
                  "update_config: only the filesystem rules, the network domain rules "
                  "(allowedDomains, deniedDomains, deniedResolvedAddresses, "
                  "deniedDomainReasons, strictAllowlist) and the commands section can change on "
                  "a running Manager; make a new Manager for the rest");
    }
  }
  if (state_->proxy_core) state_->proxy_core->set_rules(next.sandbox.network);
  std::lock_guard lock(state_->mutex);
  // The next command uses these; one in flight keeps what it started with.
  state_->config.sandbox.filesystem = next.sandbox.filesystem;
  auto& net = state_->config.sandbox.network;  // field by field: the rest is read unlocked
  net.allowed_domains = next.sandbox.network.allowed_domains;
  net.denied_domains = next.sandbox.network.denied_domains;
  net.denied_resolved_addresses = next.sandbox.network.denied_resolved_addresses;
  net.denied_domain_reasons = next.sandbox.network.denied_domain_reasons;
  net.strict_allowlist = next.sandbox.network.strict_allowlist;
  state_->config.commands = next.commands;
}
asio::any_io_executor Manager::get_executor() const noexcept { return state_->executor; }

Classification Manager::check(const Command& command, const ExecOptions& options) const {
  Config config;
  {
    std::lock_guard lock(state_->mutex);
    config = state_->config;
  }
  const std::string home =
      state_->sandbox_context ? state_->sandbox_context->home() : std::string();
  return manager::classify_command(
      command, config.commands.custom,
      decision_context(with_call_policy(config.sandbox, options.policy), options, home,
                       state_->network_approval));
}

WriteCheck Manager::check_write(const std::string& path,
                                const std::optional<std::string>& cwd) const {
  // The cwd as a command's would be resolved (links checked), so the same policy applies.
  const auto dir = sandbox::resolve_working_directory(cwd.value_or(""));
  const std::string home =
      state_->sandbox_context ? state_->sandbox_context->home() : std::string();
  return sandbox::check_write(state_->sandbox_policy().filesystem, dir.path, home, path);
}

void Manager::set_approval(CommandApprovalCallback callback) {
  std::lock_guard lock(state_->mutex);
  state_->approval = std::move(callback);
}

std::shared_ptr<manager::ExecOperation> Manager::prepare_exec(ExecOptions options,
                                                              detail::ExecHandler handler) {
  return std::make_shared<manager::ExecOperation>(state_, std::move(options), std::move(handler));
}

void Manager::start_exec(const std::shared_ptr<manager::ExecOperation>& op, Command command) {
  op->start(std::move(command));
}

void Manager::cancel_exec(const std::weak_ptr<detail::ManagerState>& state,
                          const std::weak_ptr<manager::ExecOperation>& op) {
  // Any thread, any time (the cancellation slot): under a ticket of the context, the operation
  // dropped before it (the state holds nothing of the context: dropped after, harmless).
  const auto manager = state.lock();
  if (!manager) return;  // the Manager is gone: its close() cancelled everything
  base::OffLoopTicket ticket(manager->off_loop);
  if (!ticket) return;
  if (auto self = op.lock()) self->cancel();
}

BlockingResult run_blocking(Command command, ExecOptions options, Config config) {
  BlockingResult out;
  // A loop on the calling thread (no threads started), one per thread and reused: an io_uring ring
  // is charged to the user's RLIMIT_MEMLOCK and released asynchronously, so a fresh ring per call
  // would run an unprivileged caller out of locked memory after a handful of quick calls.
  thread_local asio::io_context io(1);
  try {
    Manager manager(io.get_executor(), std::move(config));
    manager.async_exec(std::move(command), std::move(options),
                       [&out](std::error_code ec, ExecResult r) {
                         out.ec = ec;
                         out.result = std::move(r);
                       });
    io.restart();
    io.run();
  } catch (const Error& e) {
    out.ec = e.code();
    out.result.error = e.what();
  }
  return out;
}

}  // namespace paddock
