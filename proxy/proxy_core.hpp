// What every proxy session of a Manager (or of `paddock proxy`) shares: the rules, swapped
// whole on hot reload so the next request sees them; the resolver; the approval callback;
// the log sink; the connection budget.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/domain_rules.hpp"
#include "paddock/network.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock::proxy {

class ProxyCore {
 public:
  // Throws Error(config_invalid) naming a bad entry.
  ProxyCore(const std::vector<std::string>& allowed, const std::vector<std::string>& denied,
            NetworkHooks hooks);
  ProxyCore(const NetworkPolicy& policy, NetworkHooks hooks);

  std::shared_ptr<const net::DomainRules> rules() const { return rules_.load(); }
  // Hot reload: validated first (throws, keeping the old rules), then swapped atomically.
  void set_rules(const std::vector<std::string>& allowed, const std::vector<std::string>& denied);
  void set_rules(const NetworkPolicy& policy);

  // The embedder's, or the process-wide pool, started on first use: a `paddock run` whose
  // command never names a host does not pay for its threads.
  Resolver& resolver() const;
  const NetworkHooks& hooks() const noexcept { return hooks_; }
  const NetworkLimits& limits() const noexcept { return hooks_.limits; }

  // The connection budget across sessions.
  bool try_open_connection() noexcept;
  void close_connection() noexcept { open_.fetch_sub(1, std::memory_order_relaxed); }
  std::size_t open_connections() const noexcept { return open_.load(std::memory_order_relaxed); }

  // A throwing sink must not end the connection that reported (its answer would be lost).
  void emit(const NetworkEvent& e) const noexcept {
    if (!hooks_.on_event) return;
    try {
      hooks_.on_event(e);
    } catch (...) {
    }
  }

 private:
  std::atomic<std::shared_ptr<const net::DomainRules>> rules_;
  NetworkHooks hooks_;
  mutable std::once_flag resolver_once_;
  mutable std::shared_ptr<Resolver> resolver_;
  std::atomic<std::size_t> open_{0};
};

// The process-wide default resolver (one getaddrinfo pool shared by every Manager).
std::shared_ptr<Resolver> default_resolver();

}  // namespace paddock::proxy
