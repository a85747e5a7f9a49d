// When the io_context a Manager runs on is destroyed with commands still in flight, Asio
// destroys their pending handlers, but an operation's own I/O objects (pipes, pidfd) would
// keep it, its child and its fds alive. This service, one per execution context, is shut down
// with the context and abandons every operation still in flight there: its process tree is
// SIGKILLed and reaped, its fds closed. No loop thread runs at that point, so touching the
// operations' strand state is safe.
#pragma once

#include <asio/execution_context.hpp>
#include <memory>
#include <mutex>
#include <vector>

namespace paddock::detail {

struct ManagerState;

class ShutdownGuard final : public asio::execution_context::service {
 public:
  using key_type = ShutdownGuard;
  static asio::execution_context::id id;

  explicit ShutdownGuard(asio::execution_context& context) : service(context) {}
  void watch(const std::shared_ptr<ManagerState>& manager);

 private:
  void shutdown() override;

  std::mutex mutex_;
  std::vector<std::weak_ptr<ManagerState>> managers_;
};

}  // namespace paddock::detail
