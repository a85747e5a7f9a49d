#include "paddock/exec_control.hpp"

namespace paddock {

bool ExecControl::signal(int sig) {
  std::function<void(int)> target;
  {
    std::lock_guard lock(mutex_);
    target = target_;
  }
  if (!target) return false;
  target(sig);  // posts to the command's strand: never runs the signal under our lock
  return true;
}

void ExecControl::attach(std::function<void(int)> target) {
  std::lock_guard lock(mutex_);
  target_ = std::move(target);
}

void ExecControl::detach() {
  std::lock_guard lock(mutex_);
  target_ = nullptr;
}

}  // namespace paddock
