#include "manager/shutdown_guard.hpp"

#include <algorithm>

#include "manager/exec_operation.hpp"
#include "manager/manager_state.hpp"

namespace paddock::detail {

asio::execution_context::id ShutdownGuard::id;

void ShutdownGuard::watch(const std::shared_ptr<ManagerState>& manager) {
  std::lock_guard lock(mutex_);
  std::erase_if(managers_, [](const auto& weak) { return weak.expired(); });
  managers_.push_back(manager);
}

void ShutdownGuard::shutdown() {
  std::vector<std::shared_ptr<manager::ExecOperation>> running;
  {
    std::lock_guard lock(mutex_);
    for (auto& weak : managers_) {
      auto state = weak.lock();
      if (!state) continue;
      std::lock_guard state_lock(state->mutex);
      state->closed = true;
      for (auto& entry : state->in_flight) {
        if (auto live = entry.second.lock()) running.push_back(std::move(live));
      }
    }
  }
  for (auto& op : running) op->abandon();
}

}  // namespace paddock::detail
