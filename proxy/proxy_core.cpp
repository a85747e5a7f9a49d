#include "proxy/proxy_core.hpp"

#include <mutex>

namespace paddock::proxy {

ProxyCore::ProxyCore(const std::vector<std::string>& allowed,
                     const std::vector<std::string>& denied, NetworkHooks hooks)
    : rules_(std::make_shared<const net::DomainRules>(allowed, denied)), hooks_(std::move(hooks)) {}

ProxyCore::ProxyCore(const NetworkPolicy& policy, NetworkHooks hooks)
    : rules_(std::make_shared<const net::DomainRules>(policy.allowed_domains, policy.denied_domains,
                                                      net::rule_options(policy))),
      hooks_(std::move(hooks)) {}

Resolver& ProxyCore::resolver() const {
  std::call_once(resolver_once_,
                 [this] { resolver_ = hooks_.resolver ? hooks_.resolver : default_resolver(); });
  return *resolver_;
}

void ProxyCore::set_rules(const std::vector<std::string>& allowed,
                          const std::vector<std::string>& denied) {
  rules_.store(std::make_shared<const net::DomainRules>(allowed, denied));
}

void ProxyCore::set_rules(const NetworkPolicy& policy) {
  rules_.store(std::make_shared<const net::DomainRules>(
      policy.allowed_domains, policy.denied_domains, net::rule_options(policy)));
}

bool ProxyCore::try_open_connection() noexcept {
  std::size_t now = open_.load(std::memory_order_relaxed);
  do {
    if (now >= hooks_.limits.max_connections) return false;
  } while (!open_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  return true;
}

std::shared_ptr<Resolver> default_resolver() {
  static std::mutex mutex;
  static std::weak_ptr<Resolver> shared;
  std::lock_guard lock(mutex);
  auto r = shared.lock();
  if (!r) {
    r = make_thread_pool_resolver();
    shared = r;
  }
  return r;
}

}  // namespace paddock::proxy
