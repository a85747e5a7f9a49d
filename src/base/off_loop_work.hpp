// Work that runs off an event loop (a worker thread, a resolver thread, a caller's thread
// answering an approval or sending a signal) and touches objects of that loop's execution
// context: strands, timers, operations holding them. Such work must be done before the
// context's services are destroyed, or a strand or timer is used (or destroyed) after its
// service is gone. Asio's own resolver does the same: the context's shutdown joins its thread.
//
// One gate per execution context (an Asio service). Off-loop work holds a Ticket while it may
// touch the context; the context's shutdown closes the gate (no ticket is given any more) and
// waits for the tickets out. The rule for the holder: drop every reference to the context's
// objects first, the ticket last. Header-only: a service's id, and nothing of a backend.
#pragma once

#include <asio/execution/context.hpp>
#include <asio/execution_context.hpp>
#include <asio/query.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

namespace paddock::base {

class OffLoopGate {
 public:
  // False once the context shuts down: the caller then touches nothing of it.
  bool try_enter() {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    ++inside_;
    return true;
  }
  void leave() {
    std::lock_guard lock(mutex_);
    if (--inside_ == 0) idle_.notify_all();
  }
  void close_and_wait() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    // A holder's work is short (a post, a bounded audit), but dropping a last reference runs
    // destructors (an operation's, user callbacks') under the ticket: they must not wait for
    // the thread destroying the context.
    idle_.wait(lock, [this] { return inside_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int inside_ = 0;
  bool closed_ = false;
};

// Held while off-loop work may touch the context; empty (false) when the gate was closed.
class OffLoopTicket {
 public:
  explicit OffLoopTicket(std::shared_ptr<OffLoopGate> gate) {
    if (gate && gate->try_enter()) gate_ = std::move(gate);
  }
  OffLoopTicket(OffLoopTicket&&) noexcept = default;  // into a job's lambda
  OffLoopTicket& operator=(OffLoopTicket&&) = delete;
  ~OffLoopTicket() { release(); }
  explicit operator bool() const noexcept { return gate_ != nullptr; }
  void release() noexcept {
    if (auto gate = std::move(gate_)) gate->leave();  // shared: alive through leave()
  }

 private:
  std::shared_ptr<OffLoopGate> gate_;
};

class OffLoopWork final : public asio::execution_context::service {
 public:
  using key_type = OffLoopWork;
  static inline asio::execution_context::id id;

  explicit OffLoopWork(asio::execution_context& context) : service(context) {}

  // The gate of the context `executor` runs on (the service is made on first use). Asio shuts
  // services down newest first but destroys none before all are shut down, so the order
  // against the scheduler, timer and strand services does not matter (a post to a strand
  // already shut down destroys the handler there, under the ticket); against the Manager's
  // ShutdownGuard it does: the Manager makes the gate after it, so work off the loop is done
  // before in-flight operations are abandoned.
  template <typename Executor>
  static std::shared_ptr<OffLoopGate> gate_of(const Executor& executor) {
    return asio::use_service<OffLoopWork>(asio::query(executor, asio::execution::context)).gate_;
  }

 private:
  void shutdown() override { gate_->close_and_wait(); }

  const std::shared_ptr<OffLoopGate> gate_ = std::make_shared<OffLoopGate>();
};

}  // namespace paddock::base
