// What a Manager shares with the commands it started: they hold it by shared_ptr, so a
// Manager may be destroyed while its commands finish.
#pragma once

#include <asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "base/off_loop_work.hpp"
#include "manager/warm_sandboxes.hpp"
#include "paddock/command.hpp"
#include "paddock/config.hpp"
#include "paddock/network.hpp"
#include "proxy/proxy_core.hpp"
#include "sandbox/linux/plan_builder.hpp"

namespace paddock::manager {
class ExecOperation;
}

namespace paddock::detail {

struct ManagerState {
  ManagerState(asio::any_io_executor ex, Config cfg, NetworkHooks hooks);
  ~ManagerState();

  asio::any_io_executor executor;
  // Fixed for the Manager's life, except what update_config may change (the filesystem
  // rules, the domain rules, the commands section), rewritten under `mutex`: read those
  // through sandbox_policy() / under the lock.
  Config config;
  // The filtered network asks a DomainApproval hook about hosts its lists do not name.
  bool network_approval = false;
  int dev_null = -1;  // O_RDWR|O_CLOEXEC: stdin without data, stdout/stderr when discarded
  // Null when config.sandbox.enabled is false; not usable() under the warn fallback.
  std::shared_ptr<sandbox::SandboxContext> sandbox_context;
  // Sandboxes made ahead (warm_sandboxes.hpp); null when off or not sandboxing.
  std::shared_ptr<manager::WarmSandboxes> warm;
  // Filtered network: the rules and resolver every command's proxy session shares.
  std::shared_ptr<proxy::ProxyCore> proxy_core;
  // The gate of the executor's context for work off its loop (base/off_loop_work.hpp).
  std::shared_ptr<base::OffLoopGate> off_loop;

  // The sandbox policy the next command starts with: a copy taken under `mutex`.
  SandboxPolicy sandbox_policy() {
    std::lock_guard lock(mutex);
    return config.sandbox;
  }

  // Held through a whole update_config (check, proxy rules, config): two at once must not
  // leave the proxy enforcing one and config() reporting the other.
  std::mutex update_mutex;
  std::mutex mutex;  // guards the fields below, and config's reloadable parts
  bool closed = false;
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<manager::ExecOperation>> in_flight;
  CommandApprovalCallback approval;
  // Commands approved with Approval::approve_session, by their normalised form.
  std::set<std::string> approved_for_session;
};

}  // namespace paddock::detail
