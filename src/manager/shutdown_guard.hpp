// When the io_context a Manager runs on is destroyed with commands still in flight, Asio
// destroys their pending handlers, but an operation's own I/O objects (pipes, pidfd) would
// keep it, its child and its fds alive. This service, one per execution context, is shut down
// with the context and abandons every operation still in flight there: its process tree is
// SIGKILLed and reaped, its fds closed. No loop thread runs at that point, so touching the
// operations' strand state is safe.
//
// Work of the context's operations that runs off its loop (the post-run audits) holds the
// operation, and with it the context's objects (strand, timer): shutdown waits until that work
// has let go (OffLoopWork), or the operation could be destroyed on a worker after the context.
#pragma once

#include <asio/execution_context.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace paddock::detail {

struct ManagerState;

// A count of jobs off the loop that still hold something of this context. Shared (the last
// job's leave() may still be unlocking when shutdown returns and the service is destroyed).
class OffLoopWork {
 public:
  void enter();
  void leave();  // the job's last step: it touches nothing of the context afterwards
  void wait_idle();

  // enter() now, leave() at release() or when destroyed: a job carries one and lets it go last.
  class Ticket {
   public:
    explicit Ticket(std::shared_ptr<OffLoopWork> work) : work_(std::move(work)) { work_->enter(); }
    Ticket(Ticket&&) noexcept = default;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() { release(); }
    void release() {
      if (auto work = std::move(work_)) work->leave();
    }

   private:
    std::shared_ptr<OffLoopWork> work_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int running_ = 0;
};

class ShutdownGuard final : public asio::execution_context::service {
 public:
  using key_type = ShutdownGuard;
  static asio::execution_context::id id;

  explicit ShutdownGuard(asio::execution_context& context) : service(context) {}
  void watch(const std::shared_ptr<ManagerState>& manager);
  const std::shared_ptr<OffLoopWork>& off_loop() const { return off_loop_; }

 private:
  void shutdown() override;

  std::mutex mutex_;
  std::vector<std::weak_ptr<ManagerState>> managers_;
  const std::shared_ptr<OffLoopWork> off_loop_ = std::make_shared<OffLoopWork>();
};

}  // namespace paddock::detail
